"""A value once known to be secret is masked everywhere it appears in the run.

tests/data/secrets/leaks.robot handles credentials the ordinary way, in these leak shapes:
(1) interpolated into prose, (2) into a test's documentation, (3) passed on under another
name (``${pass}``), (4) echoed in other keywords' TRACE ``Arguments:`` lines, (5) passed
through two user-keyword levels, (6) in ``Fail``'s message, (7) in the failure message of
a nested keyword, carried up to the test's, (8) in ``Should Be Equal``'s message, (9) a
literal assigned with ``${secret} = Set Variable``, (10) produced by a keyword
(``${token} = Get Token From Vault``, its TRACE ``Return:``), (11) ``VAR ${private_key}``,
(12) ``Set Test Variable ${API_TOKEN}``, (13) a FOR loop's values, (14) inside a JSON body,
(15) in a URL's path, (16) inside a longer word, (17) a dict item ``${CREDS}[password]``,
(18) ``password=x`` and the value again alone, (19) a Bearer header and again alone,
(20) URL credentials and again alone, (21) a named argument ``password=x``, (22) a
keyword named like a secret (``Input Password  id:pw  x``) and again alone, (23) a run
error (WARN), (24) a library logging the value it was given, (25) an XML element named like
a secret (a SOAP body) and again alone, (26) curl's ``-u user:password`` and again alone,
(27) a Slack webhook URL (its path is the credential), (28) a password in prose ("with
password x") and again alone, (29) sshpass's ``-p password`` and again alone, (30) text
SeleniumLibrary's Input Text typed into a password field and again alone, (31) SSHLibrary's
``Login  user  password`` (positional: the library's signature says it) and again alone, (32)
SQL's ``CREATE USER ... IDENTIFIED BY 'x'`` and again alone, (33) ``${DB_PASS}`` and
(34) ``${API_PW}``, the short names, interpolated into prose, (35) ``Set Environment
Variable  DB_PASSWORD  x``, then read into a variable of no secret's name, (36) the same
with the value given by such a variable (RF logs the value it set), (37) ``Set To Dictionary
${d}  api_token  x``, then read into such a variable, (38) the Browser library's ``Fill
Text`` into a password field (its message does not name the field) and (39) ``Type Text``
into an OTP field, the text given by a variable of no secret's name, and what keywords named
like a secret by a word of their name pass or return, whatever the variable's name: (40)
``${session} = Get Auth Token For User`` (its TRACE ``Return:`` and ``${session} = x``), (41)
``Enter Password And Submit  id=pw  x``, (42) the token of a ``Bearer x`` header value,
(43) ``${key} = Fetch Api Key`` and (44) ``@{keys} = Fetch Api Keys``, each again alone;
(45) SQL's ``PASSWORD 'x'`` (a word, quoted), (46) ``echo x | sudo -S`` and (47) OpenSSL's
``-passout pass:x`` on a logged command line, (48) a token as a URL's password under a user
name that names one (``https://x-access-token:x@github.com/...``: the host and path stay),
the password options of (49) ``redis-cli -a x``, (50) ``sqlcmd -P x`` and (51) ``keytool
-storepass x``, (52) ``echo x | docker login --password-stdin``, (53) a password in the
environment the Process library logs, (54) ODBC's ``PWD=x``, (55) ``kubectl --token x``,
the passwords commands take as arguments, (56) Samba's ``-U user%x``, (57) ``htpasswd -b
file user x`` and (58) ``rabbitmqctl add_user user x``, (59) the password of a user and
password pair assigned to a secret-named variable (``${auth} = ['user', 'x']``,
RequestsLibrary's ``auth``), (60) ``NET USER name password``, (61) ``mysqladmin ...
password x``, (62) ``vault login x``, (63) ``sudo -S ... <<< x``, and collections under a
secret's name in the plural: (64) ``api_keys=['a', 'b']`` in a message, (65) ``VAR
@{API_TOKENS}  a  b``, (66) ``&{SECRETS} = Create Dictionary  db=x`` and (67) ``@{passwords}
= Create List  a  b``, (68) Azure Storage's ``AccountKey=x`` in a connection string, each
again alone; (69) an Azure SAS URL's ``sig=x`` (by its shape); JSON in a string, its quotes
escaped: (70) an API's echo of its request (``"echo": "{\\"password\\": \\"x\\"}"``) and
(71) RequestsLibrary's request body as bytes (``b'"{\\\\"api_token\\\\": ...}"'``), (72) a
Redis URL's password without a user (``redis://:x@cache``), (73) Azure API Management's
``Ocp-Apim-Subscription-Key`` and (74) Azure Functions' ``x-functions-key`` in a request's
headers, (75) a ``passcode=x``, values RF's comparisons name (Collections): (76) ``Key
api_token: a != b`` of two dictionaries and (77) ``Index 1 (Password): a != b`` of two lists
with names, each again alone; (78) a PEM private key in base64 (kubeconfig's
``client-key-data``, by its shape), (79) ``aws configure set aws_secret_access_key x``, (80)
``Append To Environment Variable  CI_SECRET  x`` (OperatingSystem's message names the
variable) and (81) ``${v} = Get Environment Variable  DEPLOY_PASSWORD`` of a secret the
environment held (the getter's argument names it), each again alone; by their shapes,
(82) HTTP Basic credentials out of a header and (83) an npm token; name-value pairs whose
name names a secret: (84) a Kubernetes container's env in YAML (``- name: DB_PASSWORD`` then
``value: x``; the next variable's value, L35, stays) and (85) AWS SSM's parameter in JSON
(``"Name": "/prod/api/token", "Type": "SecureString", "Value": "x"``), each again alone;
(86) a Wi-Fi network's pre-shared key in wpa_supplicant's configuration (its SSID, L36,
ends with "sid" and stays); (87, 88) the values of a query result's ``api_token`` column in
DatabaseLibrary's HTML table (the name in the header row, the values below; the ``name``
column's L37 stays), and again in ``${rows} = [(1, 'L37-user-alice', 'S87-...'), ...]``;
(89) an S3 presigned URL's ``X-Amz-Signature=x`` (by its shape; the bucket's name, L38,
stays); (92) ``Log Many  ${SMTP_PASSWORD}  item``, which logs each argument as a message
(the item, L39, stays); (93) a suite's metadata named like a secret (``Metadata Deploy Token
x``, what ``--metadata`` sets; ``Token Count``'s L40 stays); (94) Java's properties in XML
(``<entry key="db.password">x</entry>``; ``db.user``'s L41 stays), (95) Hadoop's
configuration (``<name>fs.s3a.secret.key</name><value>x</value>``; the endpoint's L42 stays)
and (96) a compound name's words joined by dots (``stripe.api.key=x``; the database's URL,
L43, stays), (97) RF's item assignment ``${creds}[password] =  Set Variable  x`` (the
dictionary's user, L44, stays), (98) PHP's ``print_r``, ``[password] => x``, and (99) Ruby's
hash, ``{"api_token"=>"x"}`` (the user and region beside them, L45 and L46, stay), each again
alone; (100) Oracle's ``sqlplus -s user/x@db`` (the user and the database, L47 and L48,
stay), again alone; (101) SMTP's ``AUTH PLAIN`` credentials in base64 (by their shape);
(102) an LDAP password hash after its scheme (``userPassword: {SSHA}x``) and (103) Spring
Security's ``{noop}x`` (the uid and user beside them, L49 and L50, stay), (104) Redis's ``AUTH
user x`` at redis-cli's prompt (the user, L51, stays) and (105) ``CONFIG SET requirepass x``,
(106) Jenkins' CLI ``-auth user:x`` (the user, L52, stays), (107) ``echo 'user:x' |
chpasswd`` (the user, L53, stays), (108) SMTP's ``AUTH LOGIN`` password line in base64 after
the challenge "Password:", each again alone; a network device's configuration as
``show running-config`` prints it: (109) ``enable secret 5 x``, (110) ``username u privilege
15 password 7 x`` and (111) ``snmp-server community x RO`` (the host's and the user's names,
L55 and L56, stay); Net-SNMP's v3 (112) ``-A x`` and (113) ``-X x`` (the user, L57, stays);
the secret's name in other languages, (114) German's ``${PASSWORT}`` and (115) Portuguese's
``"senha": "x"`` (the user beside it, L58, stays); (116) ``SSHPASS=x sshpass -e`` (the host,
L59, stays); each again alone; (117) an Atlassian API token and (118) a Vault token (by
their prefixes); (119) a value SeleniumLibrary's ``Execute JavaScript`` sets into a password
field (``getElementById('password').value='x'``; the user name set beside it, L60, stays),
again alone; (120) a password piped to Kerberos' ``kinit`` (the principal, L61, stays), again
alone; (121) IPMI's ``ipmitool ... -P x`` (the host, L62, stays), again alone; Windows'
(122) ``winrs -p:x``, (123) ``schtasks ... /rp x`` and (124) ``xfreerdp /p:x`` (the host,
L73, stays), (125) ``lftp -u user,x``, (126) a .netrc's ``machine h login u password x!``
(the host, L74, stays; the password with its "!"), (127) ``printf 'x\\n' | kinit``, each
again alone; a form's second copy of a new password, (128) Django's ``password1`` and
``password2`` (the user, L77, stays) and (129) Rails' ``password_confirmation``, again alone;
(130) MQTT's ``mosquitto_pub ... -P x`` (the broker, L78, stays), (131) SQL*Plus' ``SQL>
connect user/x@db`` (the user, L79, stays), each again alone; (132) a passphrase in a
YAML block scalar (``password: >-`` then two lines; the user after it, L80, stays), again
alone, folded; (133) PowerShell's ``Set-Variable -Name ApiToken -Value x`` on a command
line (``Set-Item -Path Env:BUILD_ID -Value x`` beside it, L81, stays), again alone;
(134) a token a test puts into the browser's storage (``localStorage.setItem("auth_token",
"x")``; a setting beside it, L84, stays), again alone; (135) ODBC's braced password in a
connection string (``PWD={x;y}}z}``: ";" and "}" its own) and (136) ADO.NET's with spaces
(``Password=x y z;``; the server, L85, stays), again alone; (137) a passphrase quoted in
prose (``with passphrase 'x y'``; the user, L86, stays), again alone; (138) an
authenticator's secret in its ``otpauth://`` URL (the account, L87, stays: the URL was taken
for "otpauth"'s value), again alone; (139) what an expect script sends to a password
prompt (``expect "password:"; send "x\\r"``: "; send" was registered, the password shown;
the user, L88, stays), (140) SAP HANA's ``hdbsql -p x`` (the host, L89, stays) and (141)
DB2's ``db2 connect to db user u using x`` (the database, L90, stays), each again alone;
(142) a framework's session cookie as the Browser library's ``Get Cookies`` returns it
(``'name': 'laravel_session', 'value': 'x'``; the domain, L91, and ``max_session=10``
stay), again alone; a handle's name in a variable so named (``${API_SESSION}``, an alias:
Lninetytwo, no digit in it) stays; (143) npm's token set to keep (``npm config set
//registry/:_authToken x``; the registry, L93, stays), again alone; (144) a user's
credentials in a dict so named (``VAR &{DB_CREDENTIALS} user=... password=x``: live capture
registered the user, L94, too, which the imports did not), its user logged.
A Digest Authorization header registers no parameter's name ("username=" was, and masked
the query's ``username=``, L82). A state a check reports under a secret's name (``token:
valid``, ``auth=enabled``, ``password: changed``, ``secret: default``) is not registered
("valid" was, and masked wherever the run wrote it: L83). Ninety-four values only look like
secrets (look-alike names, values too short or too common, a keyword's name holding a
secret's, ``Open Sidebar``'s "sid", a word after "password" among another keyword's
arguments, text filled into a user-name field, ``Count Tokenizer Rules``' return, a
repository's name after such a URL's host, the value of sqlcmd's ``-S`` beside its ``-p``
that is no password, the shell's working directories ``PWD`` and ``OLDPWD``: paths the run
shows everywhere, the value of a ``--sort-key`` option, the user name htpasswd is given, the
user name of a secret-named pair, a plural name's single value: ``${tokens}`` and
``tokens=x`` count, an Azure account's name, a ``function_key``, a certificate in base64,
the region ``aws configure set`` is given, a Wi-Fi network's name, a user's name in a
query's result, the entries beside a secret's in XML, a database's URL, the working
directory an item assignment sets, ``${shell}[PWD] = /path``; the words of messages after a
secret's name that are no value of it, an operating system's error after a file's name
(``db_password: No such file or directory``, ``private.key: Permission denied``), what
``passwd`` prints after its own name (``passwd: Success``, the user it locks, L63), a log's
"password 0 attempts remaining"; a status where a value would be, ``"token": "expired"``, a
web framework's validation message, ``{"password": ["This field is required."]}``, a
negative test's wrong password, ``Enter Password And Submit  id=pw  invalid``; a reference
to the value in another tool's syntax, a shell's ``$L71_DB_PASSWORD``, a template's ``{{
L72_vault_api_key }}``, a file's path, ``credentials: ~/.aws/L75-credentials``, an
authentication scheme alone, ``auth: basic`` (L76): registered, their words, L64-L76, were
masked everywhere) and must stay readable.

Live capture and the imports of output.xml and output.json register the same values, and
every tool, view, projection, resource and CLI command answers without any of them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, without_keys
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "secrets" / "leaks.robot"
SECRETS = ("S01-Hunter2-pass", "S03-deep-Pw-9", "S05-set-var-Sec", "S07-var-pk-1234",
           "S08-test-var-Tok", "S09-loop-pw-a", "S09-loop-pw-b", "S11-db-Pw-rt5",
           "S12-apisecret-44", "S14-kv-pw-77", "S15-bearer-tok-9q", "S16-url-pw-5",
           "S17-named-Pw", "S18-input-pw-x", "S20-actual-Tk8", "S22-dict-Pw3",
           "vault-tok-6Hq2Lw9Zr", "S25-xml-Pw-61", "S26-curl-Pw-8", "S28-prose-Pw9",
           "S29-ssh-Pw-3", "S30-typed-Pw4", "S31-ssh-Login-Pw",
           "S32-sql-User-Pw", "S33-db-pass-Qw7", "S34-api-pw-Rt2",
           "S35-env-Pw-8", "S36-env-ref-Tk", "S37-dict-set-Tk", "S38-filled-Pw-5",
           "S39-typed-ref-Pw", "S40-auth-tok-Zq", "S41-enter-pw-Kx", "S42-bearer-dict-Tk",
           "S43-fetched-key-Vx", "S44-key-one-Aa", "S44-key-two-Bb", "SfortyfiveQuoted",
           "S46-sudo-Pw", "S47-p12-Pw", "S48-clone-Tk", "S49-redis-Pw", "S50-sqlcmd-Pw",
           "S51-store-Pw", "S52-stdin-Pw", "S53-env-Pw", "S54-odbc-Pw",
           "S55-kube-Tk", "S56-smb-Pw", "S57-htpasswd-Pw", "S58-rabbit-Pw",
           "S59-auth-Pw", "S60-netuser-Pw", "S61-mysqladmin-Pw", "S62-vault-Tk",
           "S63-herestring-Pw", "S64-plural-key-a", "S64-plural-key-b", "S65-var-tokens-a",
           "S65-var-tokens-b", "S66-dict-secret-Pw", "S67-list-Pw-a", "S67-list-Pw-b",
           "S68-azure-Key==", "S70-escaped-json-Pw", "S71-repr-json-Tk", "S72-redis-Pw",
           "S73-apim-Key", "S74-func-Key", "S75-mfa-Code", "S76-returned-Tk", "S77-row-Pw",
           "S79-aws-Secret", "S80-appended-Sec", "S81-ci-env-Pw", "S84-k8s-env-Pw",
           "S85-ssm-Tk", "S86-wifi-Psk", "S87-db-column-Tk", "S88-db-column-Tk",
           "S92-log-many-Pw", "S93-metadata-Tk", "S94-props-xml-Pw", "S95-hadoop-Sk",
           "S96-dotted-key-Kx", "S97-item-assign-Pw", "S98-print-r-Pw", "S99-ruby-hash-Tk",
           "S100-ora-Pw", "S102ldapHashQx=", "S103-noop-Pw", "S104-redis-auth-Pw",
           "S105-redis-req-Pw", "S106-jenkins-Tk", "S107-chpasswd-Pw",
           # (108) SMTP's AUTH LOGIN: the password's line in base64, registered as it is
           "UzEwOC1zbXRwLWxvZ2luLVB3",
           "$1$S109iosHash$x", "S110IosType7", "S111-snmp-comm", "S112-snmp-auth", "S113-snmp-priv",
           "S114-passwort-Pw", "S115-senha-Pw", "S116-sshpass-Pw", "S119-js-field-Pw",
           "S120-kinit-Pw", "S121-ipmi-Pw", "S122-winrs-Pw", "S123-task-Pw", "S124-rdp-Pw",
           "S125-lftp-Pw", "S126-netrc-Pw!", "S127-printf-Pw", "S128-django-Pw", "S129-rails-Pw",
           "S130-mqtt-Pw", "S131-connect-Pw", "S132-yaml correct horse-Pw",
           "S133-ps-Tk", "S134-storage-Tk", "S135;odbc}Pw", "S136 ado pass phrase",
           "S137 open sesame", "S138MFASEED", "S139-expect-Pw", "S140-hana-Pw",
           "S141-db2-Pw", "S142-laravel-Sess",
           "S143-npm-Tk", "S144-dict-cred-Pw")
# Masked by its shape wherever it occurs, so never registered as a run's value.
BY_SHAPE = ("S27webhooksecret99", "S69sasSignature%2B9", "S89presignedSig0a1b",
            # (82) HTTP Basic credentials out of a header, (83) an npm token
            "Y2ktYm90OlM4Mi1iYXNpYy1Qdw==", "npm_S83npmTokenAbCdEfGhIjKlMnOpQrStUvWxY",
            # (117, 118) Atlassian's API token and a Vault token
            "ATATT3xFfGF0S117atlassianTokenAbCdEfGhIjKlMnOpQrStUvWxYz0123456789=A1B2C3D4",
            "hvs.CAESIS118vaultTokenAbCdEfGhIjKl",
            # (101) SMTP's AUTH PLAIN as smtplib's debug output shows it
            "AGNpLWJvdABTMTAxLXNtdHAtUHc=",
            # (78) kubeconfig's client-key-data: a PEM private key in base64
            "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NB")
LOOKALIKES = ("L01-54321-count", "L02-all-tests-passed", "L03-bypass-enabled",
              "L04-whitespace-tokenizer", "L05-ask-the-admin", "L06-feature-flag-on", "L7x",
              "True", "None", "1234", "L11-sessions-open-3", "L12-jane-and-john",
              "L13-pw-policy-v2", "L14-appdb-name", "L15-user-name",
              "L16-row-key-7", "L17-sidebar-entry", "L18-sidebar-open",
              "L19-build-label", "L20-after-the-word", "L21-filled-user",
              "L22-tokenizer-rules", "L23-clone-repo", "L24-sql-host",
              "L25-work-dir", "L26-old-dir", "L27-sort-key", "L28-web-user",
              "L29-auth-user", "L30-plural-scalar", "L31-acct-name", "L32-fkey-f5",
              "L34-eu-region", "L35-debug-level", "L36-lab-wifi", "L37-user-alice",
              "L38-reports", "L39-log-many-item", "L40-meta-count", "L41-props-user",
              "L42-s3-endpoint", "L43-h2-db", "L44-item-user", "L45-php-user", "L46-ruby-region",
              "L47-ora-user", "L48-orcl", "L49-ldap-uid", "L50-spring-user", "L51-redis-user",
              "L52-jenkins-user", "L53-chp-user", "L54-item-pwd-dir", "L55-edge-router",
              "L56-ios-user", "L57-snmp-user", "L58-br-user", "L59-ssh-host", "L60-js-user",
              "L61-krb-user", "L62-bmc-host", "L63-locked-user", "L64-Permission-kept",
              "L65-Success-kept", "L66-Authentication-kept", "L67-attempts-kept",
              "L68 This field is required.", "L69-expired-kept", "L70-invalid-login-kept",
              "$L71_DB_PASSWORD", "{{ L72_vault_api_key }}", "L73-win-host", "L74-sftp-host",
              "~/.aws/L75-credentials", "L76-basic-auth-kept", "L77-new-user", "L78-mqtt-broker",
              "L79-ora-app", "L80-yaml-user", "L81-build-kept",
              "username=L82-query-user", "L83 valid login, enabled and changed by default",
              "L84-theme", "L85-sql-host", "L86-ops-user", "L87-mfa-user",
              "L88-exp-user", "L89-hana-host", "L90-db2-db",
              "L91-shop-host", "Lninetytwo-api-alias",
              "L93-npm-registry", "L94-db-user",
              # kubeconfig's client-certificate-data: a certificate in base64, public
              "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM1ekNDQWMrZ0F3SUJB")
# What differs between the stores by nature: ids of the run, where it came from, times.
_BY_NATURE = {"run_id", "source_path", "origin", "generator", "start_time", "elapsed",
              "elapsed_ms", "estimated_tokens", "next_cursor", "prev_cursor", "time", "seconds",
              "source_format", "rf_version", "first_pre",
              # a library keyword's definition: live runs only (test_sources.py)
              "definition_source", "definition_lineno"}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """live (the run that wrote output.xml), xml and json (imports of two runs' files)."""
    work = tmp_path_factory.mktemp("secrets")
    found = {}
    for output in ("output.xml", "output.json"):
        done = robot("--loglevel", "TRACE", "--listener",
                     f"rf_log_listener:db={work / f'live-{output}.sqlite3'}", "--output",
                     str(work / output), str(SUITE), cwd=work)
        assert done.returncode == 1, done.stdout + done.stderr  # one test fails on purpose
        assert "rf_log_listener" not in done.stderr
        imported = work / f"{output}.sqlite3"
        assert import_result(open_store(imported), work / output, stable_window=0).run_id == 1
        found[output.split(".")[1]] = imported
    found["live"] = work / "live-output.xml.sqlite3"
    found["live-json"] = work / "live-output.json.sqlite3"
    return found


def answers(conn: Any) -> list[dict[str, Any]]:
    """Every answer the tools give about run 1: each view of each node under each
    projection, every failure path, every message, a search for every secret and look-alike."""
    def dumped(response: Any) -> dict[str, Any]:
        assert response.ok, response.error
        return response

    (source,) = conn.execute("SELECT source_path FROM runs WHERE run_id = 1").fetchone()
    again = dumped(service.parse_result(conn, source))  # the file robot wrote: the same run
    assert again["run_id"] == 1 and again["deduplicated"]
    got = [again, dumped(service.list_runs(conn))]
    cursor = None
    while True:
        page = dumped(service.get_view(conn, "summary", run_id=1, page_size=2, cursor=cursor))
        got.append(page)
        if not (cursor := page.get("next_cursor")):
            break
    while True:
        page = dumped(service.get_view(conn, "failure_path", run_id=1, cursor=cursor))
        got.append(page)
        if not (cursor := page.get("next_cursor")):
            break
    for node_id, node_type in conn.execute("SELECT node_id, type FROM nodes WHERE run_id = 1"):
        for projection in ("all", "failures", "warnings"):
            got.append(dumped(service.get_view(conn, "tree", run_id=1, selector=node_id,
                                               projection=projection, page_size=200, budget=50_000)))
        if node_type != "SUITE":
            got.append(dumped(service.get_view(conn, "step_window", run_id=1, selector=node_id,
                                               page_size=200, budget=50_000)))
        if node_type == "TEST":
            got.append(dumped(service.get_view(conn, "failure_path", run_id=1, selector=node_id)))
    got.append(dumped(service.get_view(conn, "tree", run_id=1)))
    got.append(dumped(service.search_messages(conn, run_id=1, min_level="TRACE", page_size=200,
                                              budget=50_000)))
    for value in (*SECRETS, *LOOKALIKES):
        got.append(dumped(service.search_messages(conn, value, run_id=1, page_size=200,
                                                  budget=50_000)))
    return got


def leaks(text: str) -> list[str]:
    return [secret for secret in (*SECRETS, *BY_SHAPE) if secret in text]


@pytest.mark.parametrize("kind", ["live", "xml", "json", "live-json"])
def test_no_answer_shows_a_known_secret_and_look_alikes_stay(stores: dict[str, Path], kind: str) -> None:
    conn = open_store(stores[kind])
    registered = {v for (v,) in conn.execute("SELECT value FROM secrets WHERE run_id = 1")}
    assert registered == set(SECRETS)  # nothing more: look-alikes are not secrets
    got = answers(conn)
    text = json.dumps(got, ensure_ascii=False)
    assert not leaks(text), leaks(text)
    stored = json.dumps(conn.execute("SELECT text FROM messages").fetchall())
    assert not [s for s in (*SECRETS, *BY_SHAPE) if s not in stored + json.dumps(  # the store keeps them all
        conn.execute("SELECT args, message, fields FROM nodes").fetchall())]
    for value in LOOKALIKES:
        assert value in text, value
    searches = got[-len(SECRETS) - len(LOOKALIKES):]
    assert [len(s["hits"]) for s in searches[:len(SECRETS)]] == [0] * len(SECRETS)  # no oracle
    assert all(s["hits"] for s in searches[len(SECRETS):])  # look-alikes are found
    assert all(s["query"] == "***" for s in searches[:len(SECRETS)])  # not echoed either


def test_live_and_imports_answer_alike(stores: dict[str, Path]) -> None:
    """The masked answers are the same, whatever recorded the run."""
    def normalized(data: Any) -> Any:
        return without_keys(data, _BY_NATURE)

    reference = normalized(answers(open_store(stores["xml"])))
    for kind in ("live", "json", "live-json"):
        other = normalized(answers(open_store(stores[kind])))
        assert len(other) == len(reference)
        for mine, theirs in zip(other, reference, strict=True):
            assert mine == theirs, kind


@pytest.mark.anyio
async def test_the_mcp_server_and_its_resources_show_none(stores: dict[str, Path]) -> None:
    async with server(stores["xml"].parent, env={"RF_LOG_MCP_DB": str(stores["xml"])}) as client:
        shown = [await call(client, "list_runs"),
                 await call(client, "get_view", run_id=1, view="summary"),
                 await call(client, "get_view", run_id=1, view="failure_path"),
                 await call(client, "get_view", run_id=1, view="tree", selector="s1",
                            projection="failures"),
                 await call(client, "search_messages", run_id=1, min_level="TRACE",
                            page_size=200, budget=50_000),
                 await call(client, "search_messages", run_id=1, query=SECRETS[0])]
        resources = [await client.read_resource("rf://runs/1/summary")]
        for number in range(1, 8):
            resources.append(await client.read_resource(f"rf://runs/1/tests/s1-t{number}"))
    text = json.dumps(shown) + "".join(r.contents[0].text for r in resources)  # type: ignore[union-attr]
    assert not leaks(text), leaks(text)
    assert "L02-all-tests-passed" in text and shown[-1]["hits"] == []


def test_the_command_line_shows_none(stores: dict[str, Path]) -> None:
    db = stores["json"]
    commands = [("runs",), ("summary", "1"), ("failures", "1"), ("tree", "1", "s1"),
                ("search", "1", "--min-level", "TRACE", "--page-size", "200"),
                ("search", "1", SECRETS[0])]
    commands += [("tree", "1", f"s1-t{n}") for n in range(1, 8)]
    commands += [("window", "1", f"s1-t{n}", "--page-size", "200") for n in range(1, 8)]
    out = []
    for command in commands:
        for json_flag in ((), ("--json",)):
            done = cli(*command, *json_flag, db=db)
            assert done.returncode == 0, (command, done.stderr)
            out.append(done.stdout)
    text = "\n".join(out)
    assert not leaks(text), leaks(text)
    assert "L04-whitespace-tokenizer" in text


def test_known_values_are_deleted_with_their_run(stores: dict[str, Path]) -> None:
    db = stores["live-json"]
    copy = db.with_name("pruned.sqlite3")
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    assert open_store(copy).execute("SELECT count(*) FROM secrets").fetchone()[0] == len(SECRETS)
    done = subprocess.run([sys.executable, "-m", "rf_log_mcp", "prune", "--run", "1", "--db",
                           str(copy)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert open_store(copy).execute("SELECT count(*) FROM secrets").fetchone() == (0,)


def test_metadata_named_like_a_secret_is_masked_by_its_name(stores: dict[str, Path]) -> None:
    """A run stored before its metadata's values were registered (or pushed by an older
    listener) still lists ``Deploy Token: ***``: masked by the name, as tree masks it; the
    summary's first page shows the root suite's metadata so too."""
    copy = stores["xml"].with_name("unregistered.sqlite3")
    with sqlite3.connect(stores["xml"]) as source, sqlite3.connect(copy) as target:
        source.backup(target)
        target.execute("DELETE FROM secrets")
    conn = open_store(copy)
    shown = {"Contact": "ops team", "Deploy Token": "***", "Token Count": "L40-meta-count"}
    assert service.list_runs(conn)["runs"][0]["metadata"] == shown
    assert service.get_view(conn, "summary", run_id=1)["summary"]["metadata"] == shown
    page = service.get_view(conn, "summary", run_id=1, selector="failed")["summary"]
    assert "metadata" not in page  # the first page only
    printed = cli("summary", "1", db=copy).stdout.splitlines()
    assert "  metadata: Contact=ops team, Deploy Token=***, Token Count=L40-meta-count" in printed


def test_what_keywords_named_like_secrets_return_is_known_at_info(tmp_path: Path) -> None:
    """At INFO, what most runs keep, RF's ``${session} = x`` line is all a run shows of what
    a keyword returned: live capture and both imports register it from there, whatever the
    variable's name, when a word of the keyword's name names a secret."""
    returned = ("S40-auth-tok-Zq", "S41-enter-pw-Kx", "S42-bearer-dict-Tk", "S43-fetched-key-Vx",
                "S44-key-one-Aa", "S44-key-two-Bb")
    stores = {}
    for output in ("output.xml", "output.json"):
        live = tmp_path / f"live-{output}.sqlite3"
        done = robot("--listener", f"rf_log_listener:db={live}", "--output",
                     str(tmp_path / output), "--test", "Returned By Keywords Named Like Secrets",
                     str(SUITE), cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        stores[f"live ({output})"] = open_store(live)
        stores[output] = open_store(tmp_path / f"{output}.sqlite3")
        import_result(stores[output], tmp_path / output, stable_window=0)
    for origin, conn in stores.items():
        registered = {v for (v,) in conn.execute("SELECT value FROM secrets")}
        # the suite's secret-named variables: live from RF's scopes, an import from the
        # suite file beside it (the test below); its metadata's, from the suite (S93)
        assert registered - set(returned) == {
            v for v in SECRETS if v.partition("-")[0] in (
                "S01", "S03", "S11", "S12", "S20", "S22", "S33", "S34", "S92", "S93")}, origin
        assert set(returned) <= registered, origin
        shown = [hit.text for hit in service.search_messages(conn, "in use", run_id=1).hits]
        assert shown == ["keys in use: ***, *** and ***"], origin
        shown = [hit.text for hit in service.search_messages(conn, "tokenizer", run_id=1).hits]
        assert shown == ["${rules} = L22-tokenizer-rules", "L22-tokenizer-rules"], origin


def test_live_capture_also_knows_the_secret_variables_in_rfs_scopes(tmp_path: Path) -> None:
    """A value that reaches a text without passing through any step's arguments or an
    assignment (a library reading ``${VAULT_PASSWORD}`` itself) is secret only by its
    variable's name, which RF's scopes show to live capture and no output file shows: live
    masks it; an import reads the Variables sections of the suite files beside it, not what
    a variable file or ``--variable`` gave (README, "Secrets are masked")."""
    (tmp_path / "Reader.py").write_text(
        "from robot.libraries.BuiltIn import BuiltIn\nfrom robot.api import logger\n\n\n"
        "def connect():\n    value = BuiltIn().get_variable_value('${VAULT_PASSWORD}')\n"
        "    logger.info(f'connecting with {value}')\n")
    # a dictionary whose key names a secret, from a variable file: no step shows it either
    (tmp_path / "vars.py").write_text("LOGIN = {'user': 'bob', 'password': 'S31-dict-pw-8'}\n")
    (tmp_path / "scope.robot").write_text(
        "*** Settings ***\nLibrary    Reader.py\n\n*** Variables ***\n"
        "${VAULT_PASSWORD}    S30-scope-only-9\n"
        # a list or dict named like secrets in the plural: its values; a scalar so named counts
        "@{DEPLOY_TOKENS}    S32-scope-tok-a    S32-scope-tok-b\n&{DB_SECRETS}    main=S33-scope-db\n"
        "${TOKENS}    L33-plural-scalar\n\n*** Test Cases ***\nConnects\n    Connect\n")
    done = robot("--listener", f"rf_log_listener:db={tmp_path / 'live.sqlite3'}", "--variablefile",
                 str(tmp_path / "vars.py"), "--output", str(tmp_path / "out.xml"),
                 str(tmp_path / "scope.robot"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    live = open_store(tmp_path / "live.sqlite3")
    assert live.execute("SELECT value FROM secrets ORDER BY value").fetchall() == [
        ("S30-scope-only-9",), ("S31-dict-pw-8",), ("S32-scope-tok-a",), ("S32-scope-tok-b",),
        ("S33-scope-db",)]
    found = service.search_messages(live, "connecting", run_id=1)
    assert [hit.text for hit in found.hits] == ["connecting with ***"]
    imported = open_store(tmp_path / "imported.sqlite3")
    import_result(imported, tmp_path / "out.xml", stable_window=0)
    # the suite file's Variables section, read beside the output; not the variable file's
    assert imported.execute("SELECT value FROM secrets ORDER BY value").fetchall() == [
        ("S30-scope-only-9",), ("S32-scope-tok-a",), ("S32-scope-tok-b",), ("S33-scope-db",)]
    assert [hit.text for hit in service.search_messages(imported, "connecting", run_id=1).hits] == [
        "connecting with ***"]


@pytest.mark.parametrize("version", ["", "7.0.1"])  # RF 7.0 calls no library_import
def test_live_capture_knows_the_parameters_keywords_take_secrets_at(tmp_path: Path,
                                                                     version: str) -> None:
    """``Post Login    bob    hunter2`` of a library's ``post_login(user, password)``, a
    resource's ``Login As  [Arguments]  ${username}  ${password}``, a library imported while
    the run goes on (``Import Library  ${CURDIR}/Gate.py``, then ``Login  admin  x``; not
    RF's Telnet, which Python 3.13 cannot import), an embedded
    argument (``Given user "dave" logs in with password "x"``): the value is
    secret by the parameter it is given to, which RF's keywords show to live capture and no
    output file shows. Live masks it wherever it occurs; an import of the run's file, its
    suite files still beside it, reads the same parameters from them. RF 7.0 tells
    listeners of no import while the run goes on: the library is read when its step ends."""
    (tmp_path / "Bank.py").write_text(
        "from robot.api import logger\n\n\ndef post_login(user, password):\n"
        "    logger.info(f'POST /login user={user}')\n    return 503\n")
    (tmp_path / "Gate.py").write_text(
        "def login(username, password, prompt='$'):\n    raise AssertionError('No connection')\n")
    (tmp_path / "keys.resource").write_text(
        "*** Keywords ***\nLogin As\n    [Arguments]    ${username}    ${password}\n"
        "    ${status} =    Post Login    ${username}    ${password}\n    RETURN    ${status}\n")
    (tmp_path / "bank.robot").write_text(
        "*** Settings ***\nLibrary    Bank.py\nResource    keys.resource\n\n*** Test Cases ***\n"
        "Library Keyword\n    ${s} =    Post Login    bob    S93-param-1a2b\n"
        "    Log    again S93-param-1a2b\n    Should Be Equal As Integers    ${s}    200\n"
        "User Keyword\n    ${s} =    Login As    carol    S94-param-3c4d\n"
        "    Log    carol's password was S94-param-3c4d\n"
        "    Should Be Equal As Integers    ${s}    200\n"
        "Imported Later\n    Import Library    ${CURDIR}/Gate.py\n    Gate.Login    admin    S95-param-5e6f\n"
        "Suite File's Own\n    Open Vault    S96-param-7g8h    trace\n"
        "Embedded\n    Given user \"dave\" logs in with password \"S97-param-9i0j\"\n\n"
        "*** Keywords ***\nOpen Vault\n    [Arguments]    ${vault_token}    ${mode}\n    Log    ${mode}\n"
        "User \"${user}\" logs in with password \"${password}\"\n    Log    logging in ${user}\n")
    done = robot("--listener", f"rf_log_listener:db={tmp_path / 'live.sqlite3'}", "--pythonpath",
                 str(tmp_path), "--output", str(tmp_path / "out.xml"), str(tmp_path / "bank.robot"),
                 cwd=tmp_path, version=version)
    assert done.returncode == 3, done.stdout + done.stderr
    live = open_store(tmp_path / "live.sqlite3")
    assert live.execute("SELECT value FROM secrets ORDER BY value").fetchall() == [
        ("S93-param-1a2b",), ("S94-param-3c4d",), ("S95-param-5e6f",), ("S96-param-7g8h",),
        ("S97-param-9i0j",)]
    tree = cli("tree", "s1-t5", "--db", str(tmp_path / "live.sqlite3")).stdout
    assert 'Given user "dave" logs in with password "***"' in tree, tree
    assert [hit.text for hit in service.search_messages(live, "again", run_id=1).hits] == ["again ***"]
    failures = cli("failures", "1", "--db", str(tmp_path / "live.sqlite3")).stdout
    assert "from: s1-t1-k1 ${s} = Post Login  bob  ***\n" in failures, failures
    assert "KEYWORD s1-t3-k2  Login  [FAIL]" in failures and "args: admin  ***\n" in failures
    assert "S9" not in failures and "trace" not in failures  # a test that passed
    imported = open_store(tmp_path / "imported.sqlite3")
    import_result(imported, tmp_path / "out.xml", stable_window=0)
    assert imported.execute("SELECT value FROM secrets ORDER BY value").fetchall() == [
        ("S93-param-1a2b",), ("S94-param-3c4d",), ("S95-param-5e6f",), ("S96-param-7g8h",),
        ("S97-param-9i0j",)]


def test_an_import_reads_which_parameters_take_secrets_from_the_run_s_files(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """An import has no keyword's parameters in its file: it reads them from the suite
    files, resource files and library files of the run where they still are (a directory
    suite's ``__init__.robot``, a resource importing another by ``${CURDIR}``, a class
    library imported by module name through ``--pythonpath`` with ``@keyword("Sign In")``,
    a library file's embedded keyword, a class named in a module: ``tools.Keys``), for
    output.xml and output.json alike, and no library code runs; and the values of the
    secret-named variables their Variables sections and Python variable files set (literals:
    no code runs; JSON ones), quietly leaving out one it cannot resolve (set by ``--variable``).
    Imported from elsewhere, the files gone, it knows what its rules find only."""
    project = tmp_path / "project"
    (project / "suites" / "resources").mkdir(parents=True)
    (project / "libs").mkdir()
    (project / "libs" / "Vault.py").write_text(
        "from robot.api.deco import keyword\nraise SystemExit('an import must not run me')\n\n\n"
        "class Vault:\n    @keyword('Sign In')\n    def sign_in(self, user, passphrase):\n        pass\n\n"
        "    def unlock(self, vault_token, mode='r'):\n        pass\n\n"
        "    @keyword('Rotate key \"${api_key}\"')\n    def rotate(self, api_key):\n        pass\n")
    (project / "libs" / "Vault.py").rename(project / "libs" / "Vault_source.py")
    (project / "libs" / "Vault.py").write_text((project / "libs" / "Vault_source.py").read_text().replace(
        "raise SystemExit('an import must not run me')\n", ""))
    (project / "libs" / "tools.py").write_text(
        "class Keys:\n    def store_key(self, label, master_password):\n        pass\n")
    (project / "suites" / "resources" / "base.resource").write_text(
        "*** Keywords ***\nConnect Db\n    [Arguments]    ${dsn}    ${db_password}\n    No Operation\n")
    (project / "suites" / "resources" / "app.resource").write_text(
        "*** Settings ***\nResource    ${CURDIR}/base.resource\n\n*** Variables ***\n"
        "${API_TOKEN}    P08-unresolved-${ENV_NAME}\n${SERVICE_PASSWORD}    P09-resvar-1a2b\n\n"
        "*** Keywords ***\n"
        "Log In\n    [Arguments]    ${name}    ${secret}\n    Log    hello ${name}\n")
    (project / "suites" / "settings.py").write_text(
        "import os\nDB = {'host': 'db1', 'password': 'P10-varfile-3e4f'}\n"
        "API_TOKEN = os.environ.get('NONE', 'P11-computed-5a6b')\n")
    (project / "suites" / "env.json").write_text('{"smtp": {"user": "ops", "password": "P12-json-7c8d"}}')
    (project / "suites" / "__init__.robot").write_text(
        "*** Settings ***\nSuite Setup    Prime Cache    P01-init-4f5e\n\n*** Keywords ***\n"
        "Prime Cache\n    [Arguments]    ${cache_token}\n    No Operation\n")
    (project / "suites" / "accounts.robot").write_text(
        "*** Settings ***\nLibrary    Vault\nLibrary    tools.Keys\nResource    resources/app.resource\n"
        "Variables    settings.py\nVariables    ${CURDIR}/env.json\n\n"
        "*** Test Cases ***\n"
        "Everything\n    Log In    erin    P02-res-6a7b\n    Connect Db    db1    P03-nested-8c9d\n"
        "    Sign In    erin    P04-deco-0e1f\n    Unlock    P05-lib-2a3b\n"
        "    Rotate key \"P06-embed-4c5d\"\n    Store Key    main    P07-dotted-6e7f\n    Fail    done\n")
    done = robot("--pythonpath", "libs", "--variable", "ENV_NAME:qa", "--output", "out.xml", "suites",
                 cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    (project / "libs" / "Vault_source.py").replace(project / "libs" / "Vault.py")  # run: no; import: read
    expected = [("P01-init-4f5e",), ("P02-res-6a7b",), ("P03-nested-8c9d",), ("P04-deco-0e1f",),
                ("P05-lib-2a3b",), ("P06-embed-4c5d",), ("P07-dotted-6e7f",), ("P09-resvar-1a2b",),
                ("P10-varfile-3e4f",), ("P12-json-7c8d",)]
    subprocess.run([sys.executable, "-m", "robot.rebot", "--output", "out.json", "--log", "NONE",
                    "--report", "NONE", "out.xml"], cwd=project, capture_output=True, check=False)
    capfd.readouterr()
    for name in ("out.xml", "out.json"):
        store = open_store(tmp_path / f"{name}.sqlite3")
        import_result(store, project / name, stable_window=0)
        assert store.execute("SELECT value FROM secrets ORDER BY value").fetchall() == expected, name
    assert capfd.readouterr() == ("", "")
    tree = cli("tree", "s1-s1-t1", "--db", str(tmp_path / "out.xml.sqlite3")).stdout
    assert "P0" not in tree and 'Rotate key "***"' in tree and "Log In  [PASS]  erin  ***" in tree, tree
    elsewhere = tmp_path / "elsewhere.xml"
    (project / "out.xml").replace(elsewhere)
    (project / "suites").rename(tmp_path / "moved")
    store = open_store(tmp_path / "elsewhere.sqlite3")
    import_result(store, elsewhere, stable_window=0)
    assert store.execute("SELECT value FROM secrets").fetchall() == []


def test_an_import_follows_import_names_with_variables_as_robot_resolved_them(
        tmp_path: Path) -> None:
    """``Resource  ${RESOURCES}${/}keys.resource`` with ``${RESOURCES}`` from the Variables
    section, ``Library  ${EXECDIR}/libs/Bank.py``, ``Library  ${VAULT}`` whose value uses
    ``${EXECDIR}`` (robot's folder, which no output file records: the output file's parent
    with ``-d results``): the import reads the files robot imported, so it registers what
    live capture registers (it followed no name with a variable but ``${CURDIR}``)."""
    project = tmp_path / "project"
    for folder in ("resources", "libs", "tests"):
        (project / folder).mkdir(parents=True)
    (project / "resources" / "keys.resource").write_text(
        "*** Keywords ***\nLogin As\n    [Arguments]    ${user}    ${password}\n    Log    ${user}\n")
    (project / "libs" / "Bank.py").write_text("def post_login(user, password):\n    return 503\n")
    (project / "libs" / "Vault.py").write_text("def unlock(vault_token):\n    pass\n")
    (project / "tests" / "bank.robot").write_text(
        "*** Settings ***\nResource    ${RESOURCES}${/}keys.resource\n"
        "Library    ${EXECDIR}/libs/Bank.py\nLibrary    ${VAULT}\n\n"
        "*** Variables ***\n${RESOURCES}    ${CURDIR}/../resources\n"
        "${VAULT}    ${EXECDIR}${/}libs${/}Vault.py\n\n*** Test Cases ***\n"
        "Everything\n    Login As    carol    V01-res-1a2b\n    Post Login    bob    V02-lib-3c4d\n"
        "    Unlock    V03-var-5e6f\n")
    done = robot("--listener", f"rf_log_listener:db={tmp_path / 'live.sqlite3'}", "-d", "results",
                 "tests", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    expected = [("V01-res-1a2b",), ("V02-lib-3c4d",), ("V03-var-5e6f",)]
    live = open_store(tmp_path / "live.sqlite3")
    assert live.execute("SELECT value FROM secrets ORDER BY value").fetchall() == expected
    imported = open_store(tmp_path / "imported.sqlite3")
    import_result(imported, project / "results" / "output.xml", stable_window=0)
    assert imported.execute("SELECT value FROM secrets ORDER BY value").fetchall() == expected


def test_an_import_reads_the_imports_steps_make_while_the_run_goes_on(tmp_path: Path) -> None:
    """``Import Library``, ``Import Resource`` and ``Import Variables`` in a test's or a
    keyword's steps (as RF matches a keyword's name, in lower, title or upper case: spaces,
    underscores, ``BuiltIn.``; a ``...`` row; in a setup, on a test's name row, in the pipe
    format) are read as the settings they make (``importers.suite_files``); other steps are
    not, nor an import that a step runs through another keyword."""
    from rf_log_listener.importers.suite_files import _read

    suite = tmp_path / "suite.robot"
    suite.write_text(
        "*** Settings ***\nSuite Setup    Import Library    ${CURDIR}/Setup.py\n\n"
        "*** Test Cases ***\nNamed Row    Import Library    ${CURDIR}/Gate.py    url    AS    G\n"
        "    [Setup]    Import Resource    setup.resource\n    Log    import library    x.py\n"
        "    BuiltIn.Import_Resource\n    ...    ${CURDIR}/keys.resource\n"
        "    IMPORT VARIABLES    vars.py\n    Run Keyword    Import Library    Hidden.py\n"
        "| Piped | Import Library | Piped.py |\n\n"
        "*** Keywords ***\nSign In\n    [Arguments]    ${password}\n"
        "    import library    ${CURDIR}/Vault.py    WITH NAME    V\n")
    declared = _read(suite)
    assert declared.keywords == [("Sign In", ["password"])]
    assert declared.imports == [
        ("LIBRARY", f"{tmp_path}/Setup.py", None), ("LIBRARY", f"{tmp_path}/Vault.py", "V"),
        ("LIBRARY", f"{tmp_path}/Gate.py", "G"), ("RESOURCE", "setup.resource", None),
        ("RESOURCE", f"{tmp_path}/keys.resource", None), ("VARIABLES", "vars.py", None),
        ("LIBRARY", "Piped.py", None)]


def test_an_import_reads_a_suite_file_s_declarations_only(tmp_path: Path) -> None:
    """What of a suite file an import reads (``importers.suite_files``): keywords' names and
    positional arguments as RF's lexer splits them (defaults, RF 7.3's types, a varargs
    ending them, ``...`` rows), imports with an ``AS`` alias, Variables rows; the pipe
    format too; not the tests' rows nor the keywords' steps."""
    from rf_log_listener.importers.suite_files import _declarations, _read

    suite = tmp_path / "suite.robot"
    suite.write_text(
        "*** Settings ***\nLibrary    libs/Bank.py    AS    B\nResource    ${CURDIR}/x.resource\n\n"
        "*** Variables ***\n${API_KEY}    k-1\n\n*** Test Cases ***\nT\n    Log    x\n\n"
        "*** Keywords ***\nLog In\n    [Documentation]    logs in\n    [Arguments]    ${user}\n"
        "    ...    ${pin: int}=0    @{rest}    ${after}\n    Log    ${user}\n"
        "Other\n    [Arguments]    @{}    ${named_only}\n    No Operation\n")
    assert "Log    x" not in _declarations(suite.read_text())[0]
    assert "Log    ${user}" not in _declarations(suite.read_text())[0]
    declared = _read(suite)
    assert declared.keywords == [("Log In", ["user", "pin"]), ("Other", [])]
    assert declared.imports == [("LIBRARY", "libs/Bank.py", "B"),
                                ("RESOURCE", f"{tmp_path}/x.resource", None)]
    assert [(v.name, v.value) for v in declared.variables] == [("${API_KEY}", ("k-1",))]
    piped = tmp_path / "piped.robot"
    piped.write_text("| *** Keywords *** |\n| Sign In | [Arguments] | ${name} | ${password} |\n"
                     "| | Log | ${name} |\n")
    assert _read(piped).keywords == [("Sign In", ["name", "password"])]
    # an output file is the user's to name: a "suite" the size no suite file has is not read
    from rf_log_listener.importers import suite_files
    from rf_log_listener.masking import registering_redactor
    from rf_log_listener.registry import SecretRegistry

    for limit, expected in ((piped.stat().st_size - 1, {}), (piped.stat().st_size, {("", "signin"): (1,)})):
        registry = SecretRegistry(registering_redactor())
        suite_files.MAX_FILE_BYTES, kept = limit, suite_files.MAX_FILE_BYTES
        try:
            suite_files.SuiteFiles(type("Writer", (), {"secrets": registry})(), None).opened(str(piped))
        finally:
            suite_files.MAX_FILE_BYTES = kept
        assert registry._parameters == expected, limit
    # RF 7.4+: a Secret-typed variable, whatever its name, as live capture reads it at a test's end
    pytest.importorskip("robot.utils.secret")
    typed = tmp_path / "typed.robot"
    typed.write_text("*** Variables ***\n${CONN: Secret}    %{RF_LOG_MCP_TEST_CONN}\n${HOST}    db1.test\n")
    registry = SecretRegistry(registering_redactor())
    os.environ["RF_LOG_MCP_TEST_CONN"] = "S98-typed-secret"
    try:
        suite_files.SuiteFiles(type("Writer", (), {"secrets": registry})(), None).opened(str(typed))
    finally:
        del os.environ["RF_LOG_MCP_TEST_CONN"]
    assert registry.known == {"S98-typed-secret"}


def test_a_scope_reads_as_robot_framework_iterates_it() -> None:
    """The listener reads RF's variable scopes through NormalizedDict's own dicts (its
    iteration sorts the keys every time); the names and dictionaries are the ones RF's
    iteration gives, and any other mapping is read the ordinary way."""
    from robot.utils import NormalizedDict

    from rf_log_listener.robot_scope import scope as _scope

    login = {"password": "y2"}
    scope = NormalizedDict({"DB_Password": "x1", "user": login, "Count": 3}, ignore="_")
    scope["db password"] = "x2"  # the same variable: RF keeps the first spelling
    assert _scope(scope)[:2] == ({"DB_Password", "user", "Count"}, [("user", login)])
    names, dictionaries, raws = _scope(scope)
    assert (names, dictionaries) == ({k for k in scope}, [(k, scope[k]) for k in scope if k == "user"])
    assert sorted(map(repr, raws)) == sorted(repr(scope[k]) for k in scope)
    assert _scope({"a": 1, "b": {"token": "t"}}) == ({"a", "b"}, [("b", {"token": "t"})],
                                                     [1, {"token": "t"}])
    Secret = pytest.importorskip("robot.utils.secret").Secret  # RF 7.4+: any name; alone, in a dict, a list
    from rf_log_listener.robot_scope import secret_values

    typed = {"a": Secret("x1"), "b": {"k": Secret("y2"), "n": 1}, "c": [Secret("z3"), "w"],
             "big": [Secret("not-read")] * 65}  # a collection of test data is not searched
    searched: set[tuple[int, int]] = set()
    assert secret_values(_scope(typed)[2], searched) == ["x1", "y2", "z3"]
    assert secret_values(_scope(typed)[2], searched) == ["x1"]  # its collections: once
    typed["c"].append(Secret("z4"))  # a collection that grew is looked into again
    assert secret_values(_scope(typed)[2], searched) == ["x1", "z3", "z4"]


def test_live_capture_knows_robot_framework_secret_values_whatever_their_names(tmp_path: Path) -> None:
    """RF 7.4+ ``Secret`` variables (``${X: Secret}  %{ENV}``) show as ``<secret>`` in the
    log, but a test that passes on ``${X.value}`` (or a library that logs it) writes the
    value itself: live capture registers the value of every ``Secret`` in RF's scopes,
    whatever its name, and never the placeholder ``<secret>``."""
    pytest.importorskip("robot.utils.secret", reason="Secret is new in Robot Framework 7.4")
    (tmp_path / "secret.robot").write_text(
        "*** Variables ***\n${X: Secret}    %{RF_LOG_TEST_X}\n${TOKEN: Secret}    %{RF_LOG_TEST_T}\n\n"
        "*** Test Cases ***\nLeak\n    Log    ${X}\n    Log    leaked ${X.value} here\n"
        "    Log    and ${TOKEN.value} too\n    Should Be Equal    ${X.value}    nope\n")
    done = robot("--listener", f"rf_log_listener:db={tmp_path / 'live.sqlite3'}", "secret.robot",
                 cwd=tmp_path, env={"RF_LOG_TEST_X": "S40-typed-Zq8v", "RF_LOG_TEST_T": "S41-typed-Hy7R"})
    assert done.returncode == 1, done.stdout + done.stderr
    live = open_store(tmp_path / "live.sqlite3")
    assert live.execute("SELECT value FROM secrets ORDER BY value").fetchall() == [
        ("S40-typed-Zq8v",), ("S41-typed-Hy7R",)]
    found = service.search_messages(live, "leaked", run_id=1)
    assert [hit.text for hit in found.hits] == ["leaked *** here"]
    assert [hit.text for hit in service.search_messages(live, " too", run_id=1).hits] == ["and *** too"]
    assert [hit.text for hit in service.search_messages(live, "secret>", run_id=1).hits] == ["<secret>"]
    failures = cli("failures", "1", "--db", str(tmp_path / "live.sqlite3"))
    assert "*** != nope" in failures.stdout and "S40" not in failures.stdout


def test_a_returned_secret_robot_cut_shorter_than_its_default_is_masked_whole(tmp_path: Path) -> None:
    """``robot --maxassignlength 24`` cuts RF's ``${token} = ...`` line at 24 characters and
    adds "...": the cut value was registered with its dots (only the default 200's cut was
    known), so the whole token, logged later, was shown; so was a secret-named variable's
    (``${API_KEY} = ...``) in an import. Live and imported alike."""
    (tmp_path / "cut.robot").write_text(
        "*** Test Cases ***\nCut\n    ${t} =    Get Api Token\n    Log    sending ${t} now\n"
        "    ${API_KEY} =    Fetch Blob\n    ${copy} =    Set Variable    ${API_KEY}\n"
        "    Run Keyword And Expect Error    *    Should Be Equal    ${copy}    other\n\n"
        "*** Keywords ***\nGet Api Token\n    RETURN    S90-cut-token-Qw7-0123456789-abcdefghij\n"
        "Fetch Blob\n    RETURN    S91-cut-key-Zx4-9876543210-jihgfedcba\n")
    done = robot("--maxassignlength", "24", "--listener", f"rf_log_listener:db={tmp_path / 'live.sqlite3'}",
                 "cut.robot", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    imported = open_store(tmp_path / "imported.sqlite3")
    import_result(imported, tmp_path / "output.xml", stable_window=0)
    for conn in (open_store(tmp_path / "live.sqlite3"), imported):
        assert [hit.text for hit in service.search_messages(conn, "sending", run_id=1).hits] == [
            "sending *** now"]
        assert [hit.text for hit in service.search_messages(conn, "${t} =", run_id=1).hits] == [
            "${t} = ***"]
        assert [hit.text for hit in service.search_messages(conn, "!= other", run_id=1).hits] == [
            "*** != other"]  # Should Be Equal's failure
        assert ("S90-cut-token-Qw7-012345\u2026",) in conn.execute("SELECT value FROM secrets")
