"""Scoped message search and secret masking, on a real run of tests/data/search.robot.

The suite logs secrets in many shapes; robot runs it once with the listener at TRACE level
(every keyword's resolved arguments and return values logged) and writes output.xml, which
is imported into a second store. Both stores must answer the same, and no answer from any
view may carry a secret.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from hypothesis import given, settings
from hypothesis import strategies as st
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener import known_values
from rf_log_listener.importers import import_result
from rf_log_listener.masking import Redactor
from rf_log_listener.schema import SCHEMA_VERSION
from rf_log_listener.store import delete_run, open_store
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "search.robot"
SECRETS = [
    "hunter2-Secret!", "tok_9f8e7d6c5b4a", "c2lnbmF0dXJlMTIz", "AKfake123456", "abc123def",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "cs-777", "s3cr3t-Value", "xyz-987-secret",
    "pw-alice-1", "pw-bob-2", "LongSecretValue123",
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{'live': store written by the listener, 'import': store of the same run's output.xml}."""
    work = tmp_path_factory.mktemp("search")
    live = work / "live.sqlite3"
    done = robot("--loglevel", "TRACE", "--listener", f"rf_log_listener:db={live}",
                 "--output", str(work / "output.xml"), str(SUITE), cwd=work)
    assert done.returncode == 2, done.stderr  # two tests fail, on purpose
    imported = work / "import.sqlite3"
    with open_store(imported) as conn:
        import_result(conn, work / "output.xml")
    return {"live": live, "import": imported, "output": work / "output.xml"}


@pytest.fixture(scope="module")
def postgresql_store(stores: dict[str, Path], pg_server: Any) -> str:
    """The same run's output.xml imported into a PostgreSQL database: the same answers."""
    url = pg_server.new_database()
    conn = open_store(url)
    import_result(conn, stores["output"])
    conn.close()
    return str(url)


@pytest.fixture(params=["live", "import", "postgresql"])
def store(request: pytest.FixtureRequest, stores: dict[str, Path]) -> sqlite3.Connection:
    spec = request.getfixturevalue("postgresql_store") if request.param == "postgresql" \
        else stores[request.param]
    conn = open_store(spec)
    yield conn
    conn.close()


def dumped(response: Any) -> dict[str, Any]:
    data = response
    assert data["ok"], data.get("error")
    return data


def search(conn: sqlite3.Connection, **arguments: Any) -> dict[str, Any]:
    return dumped(service.search_messages(conn, run_id=1, page_size=200,
                                          **{"detail": "full", "budget": 50_000, **arguments}))


def texts(result: dict[str, Any]) -> list[str]:
    return [hit["text"] for hit in result["hits"]]


def node_id_of(conn: sqlite3.Connection, where: str) -> str:
    return conn.execute(f"SELECT node_id FROM nodes WHERE {where} ORDER BY key LIMIT 1").fetchone()[0]


# -- masking -------------------------------------------------------------------------------

def strings(data: Any) -> list[str]:
    """Every string in a response (keys too), for looking into it."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [*data, *(s for value in data.values() for s in strings(value))]
    if isinstance(data, list):
        return [s for item in data for s in strings(item)]
    return []


def every_answer(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every view of every node, every failure path, every message (TRACE up) of the run."""
    answers = [dumped(service.get_view(conn, "summary", run_id=1)),
               search(conn, min_level="TRACE")]
    for node_id, node_type in conn.execute("SELECT node_id, type FROM nodes WHERE run_id = 1"):
        answers.append(dumped(service.get_view(conn, "tree", run_id=1, selector=node_id,
                                               page_size=200, budget=50_000)))
        if node_type != "SUITE":
            answers.append(dumped(service.get_view(conn, "step_window", run_id=1,
                                                   selector=node_id, page_size=200, budget=50_000)))
    for test_id in ("s1-t1", "s1-t3"):
        answers.append(dumped(service.get_view(conn, "failure_path", run_id=1, selector=test_id)))
    return answers


def test_no_view_shows_a_secret_and_every_answer_says_what_it_masked(store: sqlite3.Connection) -> None:
    answers = every_answer(store)
    text = "\n".join(strings(answers))
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, leaked
    # the store itself keeps the run as it was
    stored = json.dumps(store.execute("SELECT text FROM messages").fetchall())
    assert all(secret in stored for secret in ("hunter2-Secret!", "tok_9f8e7d6c5b4a", "cs-777"))
    # names and context stay readable; the masks mark themselves
    for shown in ("password=*** user=bob", "Authorization: Bearer ***", '"api_key": "***"',
                  "https://admin:***@db.example.com:5432/app", "Cookie: ***",
                  "-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----",
                  "client_secret=***&grant_type=password", "${api_token} = ***",
                  "${db_password} = ***", "${SESSION_SECRET} = ***",
                  "Login failed for bob with password=***", "${locator}='id:pw' | ${text}='***'"):
        assert shown in text, shown
    # values that only look like secrets are left alone
    assert "token_count=5 and status passed, tokens used: 42" in text
    assert '"token_count": 5' in text
    summary = answers[0]
    assert summary["masked_values"] == 1  # the failed test's message
    assert summary["summary"]["failed_tests"][0]["message"] == "Login failed for bob with password=***"
    loop = dumped(service.get_view(store, "tree", run_id=1, selector=node_id_of(
        store, "type = 'FOR' AND assign LIKE '%password%'")))
    assert loop["tree"]["node"]["values"] == ["alice", "***", "bob", "***"]
    assert [c["assign"] for c in loop["tree"]["children"]] == [
        {"${user}": "alice", "${password}": "***"}, {"${user}": "bob", "${password}": "***"}]
    assert loop["masked_values"] == 4


def test_a_search_cannot_find_a_masked_value(store: sqlite3.Connection) -> None:
    for secret in ("hunter2", "tok_9f8e", "pw-alice", "cs-777", "xyz-987"):
        assert search(store, query=secret)["hits"] == [], secret
    assert len(search(store, query="password=***")["hits"]) >= 2  # the masked form is findable


# Messages after a secret's name that are no value of it: an operating system's error after
# a file's name, what passwd and chpasswd print after their own, a log's prose at a line's
# start that a device's configuration line would begin with ("password 0 x", "key 7 x")
_NO_VALUES = ["cat: /run/secrets/db_password: No such file or directory",
              "open /etc/ssl/tls.key: permission denied\nsecret.txt: Is a directory",
              "passwd: password updated successfully", "passwd: password unchanged",
              "passwd: all authentication tokens updated successfully.",
              "Locking password for user bob.\npasswd: Success", "passwd: Success.\nnext",
              "passwd: Authentication token manipulation error", "passwd: Unknown user name 'bob'.",
              "passwd: user 'bob' does not exist", "chpasswd: (user bob) pam_chauthtok() failed, error:",
              "key 1 of 3 rotated\nkey 0 not found\npassword 0 attempts remaining\nkey 7 times",
              # a state a check reports ("valid" was registered, then masked wherever it stood)
              "token: valid, auth=enabled; password: changed\napi_key: present, password: reset, Pw: OK",
              # a terminal's reply on its prompt's line ("Login", "Connection" were registered)
              "Password: Login incorrect\nbob@h's password: Connection closed by h\nPassword: Welcome to X",
              "Password: Access denied\ntoken: Unauthorized; password: timeout, api_key: forbidden",
              # libpwquality's and cracklib's verdict on a new password ("The", "it" were masked)
              "BAD PASSWORD: The password is shorter than 8 characters\nBAD PASSWORD: it is WAY too short",
              # a status or a placeholder where the value would be
              "token: expired; password: required, api_key: missing\nPassword: (none)",
              'password=invalid "secret": "[FILTERED]" token: <not set> <password>required</password>',
              # a web framework's validation message under the field's name
              '{"password": ["This field is required."], "api_key": ["This field may not be blank."]}',
              '{"errors": {"password": "must be at least 8 characters"}}',
              '{"password":["can\'t be blank","is too short (minimum is 8 characters)"]}',
              "{'password': 'The password field is required.'}",
              # a reference to the value in another tool's syntax
              'password: $DB_PASSWORD, token=%API_TOKEN% "secret": "{{ vault_secret }}"',
              "password: ${{ secrets.DB_PASSWORD }}\napi_key: $env:API_KEY; pwd=$(dbPassword)",
              "password: %(db_password)s\ntoken = os.getenv(\"TOKEN\")\npassword = getpass.getpass()",
              "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\ntoken: process.env.TOKEN",
              # a mapping under the name, a prompt: the next line is no value
              "properties:\n  password:\n    type: string\nenv:\n  DB_PASSWORD:\n    valueFrom: x",
              "Password:\nEnter new password:", "secrets:\n  token:\n    - a\npassword:\n  # set below",
              "token: not set, secret: not found\n${api_key} = not configured",
              # kubectl describe secret's sizes, Ansible's no_log placeholder, a scheme alone,
              # a file's path, a Windows account's SID
              "Data\n====\npassword:  8 bytes\ntoken:  954 bytes",
              '{"changed": false, "password": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"}',
              "auth: basic, auth=NTLM, api_key: (set)",
              "credentials: ~/.aws/credentials password: /run/secrets/db_password token: ./t.txt",
              "objectSid: S-1-5-21-1004336348-1177238915-682003330-512"]


@pytest.mark.parametrize(("text", "shown"), [
    ("password=hunter2 user=bob", "password=*** user=bob"),
    ("db_password: hunter2, host: db1", "db_password: ***, host: db1"),
    ('{"accessToken": "a.b.c", "expires_in": 3600}', '{"accessToken": "***", "expires_in": 3600}'),
    ("{'X-API-Key': 'k-123'}", "{'X-API-Key': '***'}"),
    ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"),
    ("Set-Cookie: sid=abc; HttpOnly\nHost: x", "Set-Cookie: ***\nHost: x"),
    ("GET /cb?code=1&access_token=abc123&state=2", "GET /cb?code=1&access_token=***&state=2"),
    ("ftp://user:pa55@host/file", "ftp://user:***@host/file"),
    ("${PASSWORD} = hunter2 with spaces", "${PASSWORD} = ***"),
    ("key ghp_" + "a" * 36, "key ***"),
    ("<Login><user>bob</user><ns:Password>pw-9</ns:Password></Login>",
     "<Login><user>bob</user><ns:Password>***</ns:Password></Login>"),
    ('<apiKey kind="x">\n  k-42\n</apiKey>', '<apiKey kind="x">\n  ***\n</apiKey>'),
    ("<PasswordExpiry>90</PasswordExpiry><td>token</td><password/>",
     "<PasswordExpiry>90</PasswordExpiry><td>token</td><password/>"),
    ("curl -s -u deploy:pw-7 https://x", "curl -s -u deploy:*** https://x"),
    ("curl --user 'bob:two words' -X POST", "curl --user 'bob:***' -X POST"),
    ("curl --user-agent a:b x; sort -u a:b", "curl --user-agent a:b x; sort -u a:b"),
    ("docker login -u ci -p dk-Pw-1 reg.example", "docker login -u ci -p *** reg.example"),
    ("podman login --username ci -p 'two words' r", "podman login --username ci -p '***' r"),
    ("sshpass -pSsh-Pw9 ssh deploy@host", "sshpass -p*** ssh deploy@host"),
    ("mkdir -p /a && mysql -u root -pDb-Pw7 -h db", "mkdir -p /a && mysql -u root -p*** -h db"),
    ("mysql -u root -p appdb; docker run -p 8080:80 x", "mysql -u root -p appdb; docker run -p 8080:80 x"),
    ("ssh -p 2222 host; psql -p 5432 -U app", "ssh -p 2222 host; psql -p 5432 -U app"),
    ("Typing text 'Tp-9x' into text field 'id=password'.",
     "Typing text '***' into text field 'id=password'."),
    ("Typing text 'a b' into text field 'css=#userPwd'.",
     "Typing text '***' into text field 'css=#userPwd'."),
    # "pw", a password field's short name (``id:pw``, ``#loginPw``); not inside a word
    ("Typing text 'Tp-8y' into text field 'id:pw'.", "Typing text '***' into text field 'id:pw'."),
    ("Typing text 'Tp-7z' into text field '#loginPw'.", "Typing text '***' into text field '#loginPw'."),
    ("Typing text 'Tp-6w' into text field 'css=input[name=\"pw\"]'.",
     "Typing text '***' into text field 'css=input[name=\"pw\"]'."),
    ("Typing text 'x1' into text field 'name=upward'.", "Typing text 'x1' into text field 'name=upward'."),
    ("Typing text 'bob' into text field 'id=username'.",
     "Typing text 'bob' into text field 'id=username'."),
    ("Typing text 'x' into text field 'id=bypassReason'.",
     "Typing text 'x' into text field 'id=bypassReason'."),
    ("CREATE USER app IDENTIFIED BY 'Sq-1x';", "CREATE USER app IDENTIFIED BY '***';"),
    ("alter user a identified with caching_sha2_password by Sq2x; x",
     "alter user a identified with caching_sha2_password by ***; x"),
    ("Element identified by 'id=login' not found; GRANT x; identified by y",
     "Element identified by 'id=login' not found; GRANT x; identified by y"),
    ("httpCredentials={'username': 'u', 'password': 'p-9x'}",
     "httpCredentials={'username': 'u', 'password': '***'}"),
    ("see https://hooks.slack.com/services/T01/B02/xYz9 now", "see https://hooks.slack.com/services/*** now"),
    ("https://discord.com/api/webhooks/123/AbC-d", "https://discord.com/api/webhooks/***"),
    ("login failed for bob with password Hunter2x.", "login failed for bob with password ***."),
    ("ALTER USER bob PASSWORD 'hunter';", "ALTER USER bob PASSWORD '***';"),
    ("git clone https://x-access-token:ghs_a1b2c3@github.com/o/r",
     "git clone https://x-access-token:***@github.com/o/r"),
    ("password=P@ssw0rd here", "password=*** here"),
    ("GET https://x/a?token=t@1.com", "GET https://x/a?token=***"),
    ('the password "letmein" expired', 'the password "***" expired'),
    ("the password 'abc' is short; password 'Reset.'", "the password 'abc' is short; password 'Reset.'"),
    # a prompt's string is no pair; what expect or pexpect sends to it is the password
    ('expect -c \'spawn ssh bob@h; expect "password:"; send "Ex-Pw1\\r"\'',
     'expect -c \'spawn ssh bob@h; expect "password:"; send "***\\r"\''),
    ("child.expect('Password:')\nchild.sendline('Px-Pw2')\nurl = \"https://h/?password=\" + pw",
     "child.expect('Password:')\nchild.sendline('***')\nurl = \"https://h/?password=\" + pw"),
    ('expect "*assword*" { send "$pw\\r" }', 'expect "*assword*" { send "$pw\\r" }'),
    # more tools' password options
    ("jarsigner -storepass Js-Pw3 -keypass Jk-Pw4 a.jar k\nhdbsql -u SYSTEM -p Hd-Pw5\ncqlsh -p Cq-Pw6",
     "jarsigner -storepass *** -keypass *** a.jar k\nhdbsql -u SYSTEM -p ***\ncqlsh -p ***"),
    ("isql -Usa -PSy-Pw7 -Ssrv; tsql -S h -U sa -P Ts-Pw8", "isql -Usa -P*** -Ssrv; tsql -S h -U sa -P ***"),
    # a framework's session cookie (Rails', Laravel's); a setting of sessions stays
    ("${cookies} = _shop_session=Rs-Sess1; theme=dark\n[{'name': 'laravel_session', 'value': 'Lv-Sess2'}]",
     "${cookies} = _shop_session=***; theme=dark\n[{'name': 'laravel_session', 'value': '***'}]"),
    *[(kept, kept) for kept in ["max_session=10, use_session=true, sessions: 4, session-timeout=30",
                                "${GITHUB_SESSION} = github"]],
    # DB2's CONNECT: the password after USING; a variable stays
    ("db2 connect to sample user db2inst1 using Db-Pw1\nCONNECT TO S USER bob USING 'Db Pw2';",
     "db2 connect to sample user db2inst1 using ***\nCONNECT TO S USER bob USING '***';"),
    *[(kept, kept) for kept in ["db2 connect to sample user bob using $PW",
                                "connect to the server using ssh"]],
    # a package manager's token or password set to keep; a shell's variable stays
    ("npm config set //registry.npmjs.org/:_authToken Np-Tk1\nyarn config set npmAuthToken Yn-Tk2\n"
     "poetry config pypi-token.pypi Pp-Tk3\npoetry config http-basic.corp bob Pb-Pw4",
     "npm config set //registry.npmjs.org/:_authToken ***\nyarn config set npmAuthToken ***\n"
     "poetry config pypi-token.pypi ***\npoetry config http-basic.corp bob ***"),
    *[(kept, kept) for kept in ["npm config set //r/:_authToken $NPM_TOKEN", "npm config set registry https://r",
                                "htpasswd -b f bob $HTPW"]],
    # Spanish's name as code spells it, Norwegian's
    ('{"usuario": "bob", "contrasena": "Es-Pw1"} brukernavn=bob passord=No-Pw2',
     '{"usuario": "bob", "contrasena": "***"} brukernavn=bob passord=***'),
    # a URL's scheme is no separator; Teams' (Office 365's) and Zapier's webhooks
    ("otpauth://totp/ACME:bob?secret=JBSWY3DPEHPK3PXP&issuer=ACME",
     "otpauth://totp/ACME:bob?secret=***&issuer=ACME"),
    ("POST https://outlook.office.com/webhook/a1@b2/IncomingWebhook/c3/d4 and https://hooks.zapier.com/hooks/catch/1/ab/",
     "POST https://outlook.office.com/webhook/*** and https://hooks.zapier.com/hooks/catch/***"),
    # a quoted one may hold spaces (a passphrase); a quoted sentence is none
    ("Login as ops with passphrase 'open sesame 7' failed", "Login as ops with passphrase '***' failed"),
    ("echo hunter2 | sudo -S apt update", "echo *** | sudo -S apt update"),
    ("echo -n 'two words' | sudo -kS ls", "echo -n '***' | sudo -kS ls"),
    ("echo hello | sudo -s ls; echo x | grep sudo -S", "echo hello | sudo -s ls; echo x | grep sudo -S"),
    # bash's here-string: sudo -S reads its password from it, as --password-stdin does
    ("sudo -S apt update <<< 'Hs-Pw1'; docker login -u ci --password-stdin <<< Hs-Pw2",
     "sudo -S apt update <<< '***'; docker login -u ci --password-stdin <<< ***"),
    ("cat <<< hello; sudo -s ls <<< x; grep -S a <<< b", "cat <<< hello; sudo -s ls <<< x; grep -S a <<< b"),
    ("openssl pkcs12 -passout pass:p12-Pw -out a.p12", "openssl pkcs12 -passout pass:*** -out a.p12"),
    ('openssl enc -pass "pass:two words" -in f', 'openssl enc -pass "pass:***" -in f'),
    ("openssl enc -passin env:KEY -in f; pass: 3", "openssl enc -passin env:KEY -in f; pass: 3"),
    ("the passphrase is 'correct-horse' here", "the passphrase is '***' here"),
    ("env: {'PWD': '/tmp/w', 'OLDPWD': 'C:\\w', 'DB_PWD': 'Pw-1'}",
     "env: {'PWD': '/tmp/w', 'OLDPWD': 'C:\\w', 'DB_PWD': '***'}"),
    ("PWD = /home/ci/ws\nUID=sa;PWD=Odbc-1;", "PWD = /home/ci/ws\nUID=sa;PWD=***;"),
    ("kubectl --token kt-Tk1 get pods; vault -token s.vt2 x",
     "kubectl --token *** get pods; vault -token *** x"),
    ("az ad sp create --client-secret 'two words' --api-key Ak-1",
     "az ad sp create --client-secret '***' --api-key ***"),
    # a flag without a value before an argument, a variable, another key: no secret
    ("gh auth login --with-token https://x; --token $TOKEN; --token-file /x; --sort-key name-1",
     "gh auth login --with-token https://x; --token $TOKEN; --token-file /x; --sort-key name-1"),
    ("redis-cli -h cache -a rd-Pw1 ping", "redis-cli -h cache -a *** ping"),
    ("redis-cli --pass 'two words' --scan", "redis-cli --pass '***' --scan"),
    ('sqlcmd -S db -U sa -P Sq-Pw1 -Q "SELECT 1"', 'sqlcmd -S db -U sa -P *** -Q "SELECT 1"'),
    ("bcp t out f -U sa -PBc-Pw2 -c", "bcp t out f -U sa -P*** -c"),
    ("mongosh mongodb://db -u admin -p Mg-Pw3 --quiet", "mongosh mongodb://db -u admin -p *** --quiet"),
    ("ldapsearch -x -D cn=admin,dc=x -w Ld-Pw4 -b dc=x", "ldapsearch -x -D cn=admin,dc=x -w *** -b dc=x"),
    ("ldappasswd -D cn=a -w Ld-Pw5 -a Old-Pw6 -s New-Pw7 uid=bob",
     "ldappasswd -D cn=a -w *** -a *** -s *** uid=bob"),
    ("keytool -importcert -keystore ks.jks -storepass Ks-Pw8 -keypass Kp-Pw9 -alias ca",
     "keytool -importcert -keystore ks.jks -storepass *** -keypass *** -alias ca"),
    ("ssh-keygen -p -f key -P Old-Pp1 -N New-Pp2", "ssh-keygen -p -f key -P *** -N ***"),
    ("zip -r -P Zp-Pw3 out.zip dir; unzip -P Zp-Pw3 out.zip",
     "zip -r -P *** out.zip dir; unzip -P *** out.zip"),
    ("7z a -p7z-Pw4 out.7z dir", "7z a -p*** out.7z dir"),
    ("az login --service-principal -u app -p Az-Pw5 --tenant t",
     "az login --service-principal -u app -p *** --tenant t"),
    ("echo Dk-Pw6 | docker login -u ci --password-stdin ghcr.io",
     "echo *** | docker login -u ci --password-stdin ghcr.io"),
    ("smbclient //fs/team -U 'CORP\\bob%Sm-Pw1' -c ls; net ads join -UAdmin%Sm-Pw2",
     "smbclient //fs/team -U 'CORP\\bob%***' -c ls; net ads join -UAdmin%***"),
    ("rpcclient --user=bob%Sm-Pw3 10.0.0.5", "rpcclient --user=bob%*** 10.0.0.5"),
    ("htpasswd -bc -C 10 .htpasswd alice Ht-Pw1; htpasswd -nbB bob 'two words'",
     "htpasswd -bc -C 10 .htpasswd alice ***; htpasswd -nbB bob '***'"),
    ("htpasswd -n -b -r 9 bob Ht-Pw2", "htpasswd -n -b -r 9 bob ***"),
    ("rabbitmqctl -n rabbit@h add_user bob Rb-Pw1; rabbitmqctl change_password bob Rb-Pw2",
     "rabbitmqctl -n rabbit@h add_user bob ***; rabbitmqctl change_password bob ***"),
    ("net use Z: \\\\fs\\team Nu-Pw1 /user:CORP\\bob; net user alice Nu-Pw2 /add",
     "net use Z: \\\\fs\\team *** /user:CORP\\bob; net user alice *** /add"),
    # Windows commands are any case: cmd.exe's own help and scripts write them in capitals
    ("NET USER alice Nu-Pw3 /ADD & Net User bob Nu-Pw4", "NET USER alice *** /ADD & Net User bob ***"),
    ("mysqladmin -u root -h db password My-Pw1; vault login hvs.Vt-Tk1",
     "mysqladmin -u root -h db password ***; vault login ***"),
    # the same commands without a password: nothing to mask
    ("smbclient -L fs -U bob -N; htpasswd -c .htpasswd alice; rabbitmqctl list_users",
     "smbclient -L fs -U bob -N; htpasswd -c .htpasswd alice; rabbitmqctl list_users"),
    ("net use \\\\fs\\ipc$ * /user:bob; net user alice; 50% done, net 10%",
     "net use \\\\fs\\ipc$ * /user:bob; net user alice; 50% done, net 10%"),
    ("mysqladmin -u root status; vault login -method=github; vault login -; vault status",
     "mysqladmin -u root status; vault login -method=github; vault login -; vault status"),
    # a tuple, list or call after a secret's name: the whole of it (before, its bracket alone)
    ("Arguments: [ 'api' | https://x | auth=('bob', 'Rq-Pw1') ]",
     "Arguments: [ 'api' | https://x | auth=*** ]"),
    ("auth=['CORP', 'bob', 'Nt-Pw2'], verify=True", "auth=***, verify=True"),
    ("session.auth = HTTPBasicAuth('bob', 'Rq-Pw3') # set", "session.auth = *** # set"),
    ("password=Pw(1) and password=(n0ne) and password=(Pw2)x",
     "password=*** and password=*** and password=***)x"),  # (Pw2: as before this stop
    # the same options of other commands, or other options of these: no password
    ("sqlcmd -S db -p -Q x; mysql -h db -P 3306 -pDb-7", "sqlcmd -S db -p -Q x; mysql -h db -P 3306 -p***"),
    ("ssh-keygen -t ed25519 -N '' -f key -n bob; redis-cli -a",
     "ssh-keygen -t ed25519 -N '' -f key -n bob; redis-cli -a"),
    ("zip -r out.zip dir -x a; 7z a -p out.7z; ls -a x; curl -s -w fmt x",
     "zip -r out.zip dir -x a; 7z a -p out.7z; ls -a x; curl -s -w fmt x"),
    ("python -m pytest -k test_login -p no:cacheprovider",
     "python -m pytest -k test_login -p no:cacheprovider"),
    ("echo hello | docker login -u ci; echo x | tee --password-stdin-log",
     "echo hello | docker login -u ci; echo x | tee --password-stdin-log"),
    ("Typing password into text field 'id:pw'.", "Typing password into text field 'id:pw'."),
    ("password is incorrect; password policy v2 ok", "password is incorrect; password policy v2 ok"),
    ("password=${PASSWORD}", "password=${PASSWORD}"),  # a variable's name is no secret
    ("token_count=5", "token_count=5"),
    ("tokens=4 passed=3", "tokens=4 passed=3"),
    ("AccountName=acct;AccountKey=Zm9vYmFy==;EndpointSuffix=core.windows.net",
     "AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net"),
    ("https://a.blob.core.windows.net/c/b?sv=2024&sp=r&sig=Ab%2B1x&se=1",
     "https://a.blob.core.windows.net/c/b?sv=2024&sp=r&sig=***&se=1"),
    ("signature=abc; the sig=x; design=1", "signature=abc; the sig=x; design=1"),
    # presigned URLs (S3, GCS, CloudFront, COS): the signature grants access until it expires
    ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=3f6a8b1c&x=1",
     "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=***&x=1"),
    ("https://storage.googleapis.com/b/o?X-Goog-Date=1&X-Goog-Signature=9e0f12ab",
     "https://storage.googleapis.com/b/o?X-Goog-Date=1&X-Goog-Signature=***"),
    ("https://d1.cloudfront.net/a.mp4?Expires=1&Signature=Ab~Cd-Ef__&Key-Pair-Id=K2",
     "https://d1.cloudfront.net/a.mp4?Expires=1&Signature=***&Key-Pair-Id=K2"),
    ("https://b.cos.ap-x.myqcloud.com/o?q-sign-algorithm=sha1&q-signature=7c1d",
     "https://b.cos.ap-x.myqcloud.com/o?q-sign-algorithm=sha1&q-signature=***"),
    ("?design=1&assignature=x&signature_version=4", "?design=1&assignature=x&signature_version=4"),
    # a secret's name in the plural before a collection: its values (a scalar counts)
    ("api_keys=['sk-a1b2c3', 'sk-d4e5f6'] ok", "api_keys=*** ok"),
    ('{"passwords": ["hunter2x", "pw-9"]}', '{"passwords": ***}'),
    ('{\n  "api_keys": [\n    "ak-1x",\n    "ak-2y"\n  ],\n  "n": 2\n}',
     '{\n  "api_keys": ***,\n  "n": 2\n}'),
    ("@{API_TOKENS} = [ tk-a1 | tk-b2 ]", "@{API_TOKENS} = ***"),
    ("&{SECRETS} = { db=pw-db-1 }", "&{SECRETS} = ***"),
    *[(counts, counts) for counts in ["tokens=[12, 40, 7]; ${tokens} = 1500; TOKENS=abc123def"]],
    # OperatingSystem's message (Set / Append To Environment Variable): the name is quoted
    ("Environment variable 'CI_SECRET' set to value 'Ev-Sc1:Ev-Sc2'.",
     "Environment variable 'CI_SECRET' set to value '***'."),
    *[(kept, kept) for kept in ["Environment variable 'PWD' set to value '/tmp/w'.",
                                "Environment variable 'PATH' set to value '/bin'."]],
    ("Environment variable 'API_KEY' set to a secret value.",
     "Environment variable 'API_KEY' set to a secret value."),
    ("Bearer authentication failed", "Bearer authentication failed"),
    # HTTP Basic credentials outside a header (base64 of user:password), words stay
    ("retrying with Basic dXNlcjpodW50ZXIyMDI0 now", "retrying with Basic *** now"),
    *[(kept, kept) for kept in ["Basic authentication failed", "basic plan12345678",
                                "Basic Zm9vYmFy (no colon)"]],
    # a name-value pair whose name names a secret: Kubernetes' env, AWS's parameters, .NET's
    # and Ant's settings, SeleniumLibrary's cookie; another name's value stays
    ("env:\n- name: DB_PASSWORD\n  value: K8s-Pw1\n- name: LOG_LEVEL\n  value: debug",
     "env:\n- name: DB_PASSWORD\n  value: ***\n- name: LOG_LEVEL\n  value: debug"),
    ('[{"Name": "/prod/db/password", "Value": "Ssm-Pw2", "Type": "SecureString"}]',
     '[{"Name": "/prod/db/password", "Value": "***", "Type": "SecureString"}]'),
    ("ParameterKey=DbPassword,ParameterValue=Cfn-Pw3 ParameterKey=Env,ParameterValue=prod",
     "ParameterKey=DbPassword,ParameterValue=*** ParameterKey=Env,ParameterValue=prod"),
    ('<add key="ApiKey" value="Cfg-Key4" /><add key="Retries" value="3" />',
     '<add key="ApiKey" value="***" /><add key="Retries" value="3" />'),
    ("name=sessionid\nvalue=Sess-Id5\npath=/", "name=sessionid\nvalue=***\npath=/"),
    # an XML element a secret's name names by its name or key attribute, or by the key or
    # name element before it: Java's properties, Android's strings, .NET's settings, Apple's
    # property lists, Hadoop's configuration; another name's element stays
    ('<entry key="db.password">Jp-Pw1</entry><entry key="db.user">app</entry>',
     '<entry key="db.password">***</entry><entry key="db.user">app</entry>'),
    ('<string name="api_key" translatable="false">An-Key2</string>',
     '<string name="api_key" translatable="false">***</string>'),
    ('<setting name="ApiKey" serializeAs="String">\n  <value>Nt-Key3</value>\n</setting>',
     '<setting name="ApiKey" serializeAs="String">\n  <value>***</value>\n</setting>'),
    ("<key>Password</key>\n<string>Pl-Pw4</string>\n<key>User</key>\n<string>bob</string>",
     "<key>Password</key>\n<string>***</string>\n<key>User</key>\n<string>bob</string>"),
    ("<property><name>fs.s3a.secret.key</name><value>Hd-Sk5</value></property>",
     "<property><name>fs.s3a.secret.key</name><value>***</value></property>"),
    ('<field name="password">Fd-Pw6</field><field name="user">bob</field>',
     '<field name="password">***</field><field name="user">bob</field>'),
    *[(kept, kept) for kept in ['<entry key="PWD">/tmp/w</entry>', '<key>Password</key><true/>',
                                '<input name="password">Forgot?</label>',
                                '<a name="token"><b>x</b></a>', "<name>token_count</name><value>4</value>"]],
    # a subscript's or PHP's [name], Ruby's, PHP's and Perl's => (print_r, a hash's inspect,
    # Data::Dumper), RF's item assignment
    ("Array\n(\n    [user] => bob\n    [password] => Php-Pw1\n)",
     "Array\n(\n    [user] => bob\n    [password] => ***\n)"),
    ('{"password"=>"Rb-Pw2", "user"=>"bob"} {:api_key=>"Rb-Key3"}',
     '{"password"=>"***", "user"=>"bob"} {:api_key=>"***"}'),
    ("$VAR1 = { 'password' => 'Pl-Pw4' };", "$VAR1 = { 'password' => '***' };"),
    ("config[\"password\"] = \"Py-Pw5\"; os.environ['API_TOKEN'] = 'Py-Tk6'",
     "config[\"password\"] = \"***\"; os.environ['API_TOKEN'] = '***'"),
    ("&{d}[password]=Rf-Pw7\n${creds}[password] = two words", "&{d}[password]=***\n${creds}[password] = ***"),
    *[(kept, kept) for kept in ["[tokens] => 4", "$x[password_hint] => ask", "a => b; [user] => bob"]],
    # after a bare name, => takes a quoted value (Perl's, Ruby's symbol keys): a JavaScript
    # arrow function whose parameter is so named is code
    ("password => 'Pl-Pw5', :token => \"Rb-Tk6\"", "password => '***', :token => \"***\""),
    *[(kept, kept) for kept in ["tokens.map(token => token.trim())", "const f = (a, secret) => secret.x"]],
    # Oracle's user/password@database in a JDBC URL and on its tools' command lines; SMTP's
    # AUTH PLAIN (base64 of NUL user NUL password), as smtplib's debug output shows it
    ("jdbc:oracle:thin:scott/Or-Pw1@db:1521/orcl; sqlplus -s scott/Or-Pw2@orcl",
     "jdbc:oracle:thin:scott/***@db:1521/orcl; sqlplus -s scott/***@orcl"),
    ("expdp userid=system/Or-Pw3 directory=d; rman target sys/Or-Pw4@prod",
     "expdp userid=system/*** directory=d; rman target sys/***@prod"),
    # SQL*Plus' CONNECT (a database or a role after the password)
    ("SQL> connect scott/Or-Pw5@orcl\nconn sys/Or-Pw6 as sysdba\nCONNECT app/Or-Pw7@//db:1521/pdb",
     "SQL> connect scott/***@orcl\nconn sys/*** as sysdba\nCONNECT app/***@//db:1521/pdb"),
    *[(kept, kept) for kept in ["connect to host/path failed", "connection to db/app@x refused"]],
    ("send: 'AUTH PLAIN AGJvYgBodW50ZXIy\\r\\n'", "send: 'AUTH PLAIN ***\\r\\n'"),
    # MySQL's SET PASSWORD FOR, as IDENTIFIED BY
    ("SET PASSWORD FOR 'app'@'%' = 'My-Pw1'; set password for bob='My-Pw2';",
     "SET PASSWORD FOR 'app'@'%' = '***'; set password for bob='***';"),
    ("the password for bob = 3 tries", "the password for bob = 3 tries"),
    *[(kept, kept) for kept in ["jdbc:oracle:thin:@db:1521:orcl", "sqlplus / as sysdba @x.sql",
                                "AUTH PLAIN text", "AUTH PLAIN dGV4dHRleHQ=", "plain textbook"]],
    # a password hash's or encoder's scheme before the value stays (LDAP, Spring Security)
    ("userPassword: {SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\nspring.security.user.password={noop}Sp-Pw1",
     "userPassword: {SSHA}***\nspring.security.user.password={noop}***"),
    ('"password": "{bcrypt}$2a$10$dXJ3SW6G7P50lGmMkk", password: {CRYPT}$6$rounds$Cr-Pw2',
     '"password": "***", password: {CRYPT}***'),
    *[(kept, kept) for kept in ["password: {{ vault_pw }}", "token: {}", "password={0}",
                                "credentials: {user: bob}"]],
    # Redis's requirepass and masterauth (redis.conf, CONFIG SET, redis-server's options), its
    # AUTH on a redis-cli command line or after its prompt
    ("requirepass Rd-Pw1\nmasterauth \"Rd Pw2\"\nCONFIG SET requirepass Rd-Pw3",
     "requirepass ***\nmasterauth \"***\"\nCONFIG SET requirepass ***"),
    ("redis-server --requirepass Rd-Pw4; redis-cli -h cache AUTH default Rd-Pw5",
     "redis-server --requirepass ***; redis-cli -h cache AUTH default ***"),
    ("127.0.0.1:6379> AUTH Rd-Pw6\nOK\n127.0.0.1:6379[2]> auth bob Rd-Pw7",
     "127.0.0.1:6379> AUTH ***\nOK\n127.0.0.1:6379[2]> auth bob ***"),
    # Jenkins' CLI and HTTPie: -auth user:token; chpasswd's user:password from its input
    ("java -jar jenkins-cli.jar -s http://j:8080/ -auth admin:Jk-Tk1 build; http --auth bob:Hp-Pw2 GET x",
     "java -jar jenkins-cli.jar -s http://j:8080/ -auth admin:*** build; http --auth bob:*** GET x"),
    ("echo 'bob:Ch-Pw1' | chpasswd; echo -e \"amy:Ch-Pw2\" | sudo chpasswd; chpasswd <<< 'al:Ch-Pw3'",
     "echo 'bob:***' | chpasswd; echo -e \"amy:***\" | sudo chpasswd; chpasswd <<< 'al:***'"),
    # SMTP's AUTH LOGIN: the client's line after the challenge "Password:" (base64)
    ("send: 'AUTH LOGIN Ym9i\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\n"
     "reply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: 'aHVudGVyMg==\\r\\n'\nreply: b'235 ok\\r\\n'",
     "send: 'AUTH LOGIN Ym9i\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\n"
     "reply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: '***\\r\\n'\nreply: b'235 ok\\r\\n'"),
    ("S: 334 VXNlcm5hbWU6\nC: Ym9i\nS: 334 UGFzc3dvcmQ6\nC: aHVudGVyMg==\nS: 235 ok",
     "S: 334 VXNlcm5hbWU6\nC: Ym9i\nS: 334 UGFzc3dvcmQ6\nC: ***\nS: 235 ok"),
    *[(kept, kept) for kept in ["java -jar jenkins-cli.jar -auth @creds.txt who-am-i",
                                "Auth failed for user bob", "the wire shows > auth x",
                                "requirepass is not set", "chpasswd failed for user bob",
                                "${env}[PWD] = /home/ci", "os.environ['PWD'] = '/home/x'"]],
    # a network device's configuration as show running-config prints it (Cisco, Arista)
    ("enable secret 5 $1$mERr$hx5r\nusername bob privilege 15 password 7 0822455D0A16\n"
     "snmp-server community Sn-Comm-1 RO\ntacacs-server host 10.1.1.1 key 7 \"Nx-Key-2\"\n"
     "line vty 0 4\n password 7 030752180500\n login\ncrypto isakmp key Ik-Key-3 address 10.0.0.2\n"
     " neighbor 10.0.0.2 password Bg-Pw-4\n ip ospf message-digest-key 1 md5 7 Os-Md5-5\n"
     "  key-string 7 Ks-Str-6\n key 7 13061E010803\nusername admin role network-admin secret sha512 $6$Eos",
     "enable secret 5 ***\nusername bob privilege 15 password 7 ***\n"
     "snmp-server community *** RO\ntacacs-server host 10.1.1.1 key 7 \"***\"\n"
     "line vty 0 4\n password 7 ***\n login\ncrypto isakmp key *** address 10.0.0.2\n"
     " neighbor 10.0.0.2 password ***\n ip ospf message-digest-key 1 md5 7 ***\n"
     "  key-string 7 ***\n key 7 ***\nusername admin role network-admin secret sha512 ***"),
    *[(kept, kept) for kept in ["key 1", "username bob", "The username field is empty",
                                "enable password", "Pressing Key 7 times",
                                " neighbor 10.0.0.3 remote-as 65001"]],
    # Sysinternals' PsExec and Windows' credential manager
    ("psexec \\\\win01 -u CORP\\admin -p Px-Pw1 cmd; cmdkey /add:srv /user:bob /pass:Ck-Pw2",
     "psexec \\\\win01 -u CORP\\admin -p *** cmd; cmdkey /add:srv /user:bob /pass:***"),
    *[(kept, kept) for kept in ["cmdkey /generic:x /user:bob /pass", "ls -p /tmp"]],
    # Windows Remote Shell, a scheduled task's run-as and remote passwords, FreeRDP, lftp
    ("winrs -r:srv -u:bob -p:Wr-Pw1 ipconfig; schtasks /create /s srv /u bob /p St-Pw2 /ru a /rp St-Pw3",
     "winrs -r:srv -u:bob -p:*** ipconfig; schtasks /create /s srv /u bob /p *** /ru a /rp ***"),
    ("xfreerdp /v:win01 /u:bob /p:'Rd Pw4' /cert:ignore; lftp -u bob,Lf-Pw5 sftp://h",
     "xfreerdp /v:win01 /u:bob /p:'***' /cert:ignore; lftp -u bob,*** sftp://h"),
    *[(kept, kept) for kept in ["schtasks /query /fo LIST /v", "lftp -u bob sftp://h",
                                "robocopy /p: x; ls; /rp y", "echo x | schtasks /rp *",
                                "xfreerdp /v:win01 /u:bob /cert:ignore"]],
    # a .netrc's entry, on one line or several: the password whole
    ("machine api.example.com login bob password Nr-Pw6!\nmachine h2\n  login al\n  password Nr-Pw7.",
     "machine api.example.com login bob password ***\nmachine h2\n  login al\n  password ***"),
    # a password printf pipes (its newline and its format stay)
    ("printf 'Pf-Pw8\\n' | kinit bob; printf '%s\\n' 'Pf-Pw9' | sudo -S id;"
     " printf 'al:Pf-Pw10\\n' | chpasswd",
     "printf '***\\n' | kinit bob; printf '%s\\n' '***' | sudo -S id; printf 'al:***\\n' | chpasswd"),
    # a management controller's tools (IPMI's -P; ipmitool's -p is its port), rdesktop
    ("ipmitool -I lanplus -H h -p 623 -U admin -P Ip-Pw1 sdr; racadm -r h -u root -p Rc-Pw2 getsysinfo",
     "ipmitool -I lanplus -H h -p 623 -U admin -P *** sdr; racadm -r h -u root -p *** getsysinfo"),
    ("redfishtool -r h -u root -p Rf-Pw3 Systems; rdesktop -u bob -p Rd-Pw4 win01",
     "redfishtool -r h -u root -p *** Systems; rdesktop -u bob -p *** win01"),
    # MQTT's clients (their -p is the port), RabbitMQ's CLI (its -V the vhost), curl's OAuth token
    ("mosquitto_pub -h h -p 1883 -u bob -P Mq-Pw1 -t t -m x; rabbitmqadmin -V / -u g -p Rb-Pw2 list",
     "mosquitto_pub -h h -p 1883 -u bob -P *** -t t -m x; rabbitmqadmin -V / -u g -p *** list"),
    ("curl -s --oauth2-bearer Cu-Tk3 https://api", "curl -s --oauth2-bearer *** https://api"),
    # OpenSSL's cipher's password (its -K is a key in hex, curl's -k insecure)
    ("openssl enc -aes-256-cbc -salt -k Os-Pw4 -in a; openssl aes-128-cbc -d -k Os-Pw5",
     "openssl enc -aes-256-cbc -salt -k *** -in a; openssl aes-128-cbc -d -k ***"),
    *[(kept, kept) for kept in ["curl -k https://h", "openssl x509 -k x", "openssl enc -K 00ff -iv 01"]],
    # a password piped to Kerberos' kinit and Red Hat's passwd --stdin; passwd's options stay
    ("echo 'Kr-Pw1' | kinit bob@CORP.EXAMPLE.COM; echo Kr-Pw2 | sudo passwd --stdin alice",
     "echo '***' | kinit bob@CORP.EXAMPLE.COM; echo *** | sudo passwd --stdin alice"),
    *[(kept, kept) for kept in ["passwd -l bob", "kinit -kt /etc/krb5.keytab host/x",
                                "echo hello | grep h"]],
    # Net-SNMP's community and v3 pass phrases (-a and -x name protocols)
    ("snmpwalk -v2c -c Sn-Comm-7 10.0.0.1; snmpget -v3 -a SHA -A Sn-Auth-8 -x AES -X Sn-Priv-9 h",
     "snmpwalk -v2c -c *** 10.0.0.1; snmpget -v3 -a SHA -A *** -x AES -X *** h"),
    # the secret's name in other languages; sshpass' variable; a registry's credentials
    ("${PASSWORT} = De-Pw-1\nSalasana: Fi-Pw-2\nwachtwoord=Nl-Pw-3 {\"senha\": \"Br-Pw-4\"} "
     "mot_de_passe=Fr-Pw-5",
     "${PASSWORT} = ***\nSalasana: ***\nwachtwoord=*** {\"senha\": \"***\"} mot_de_passe=***"),
    ("SSHPASS=Ss-Pw-6 sshpass -e ssh h\n.dockerconfigjson: eyJhdXRocyI6e30=",
     "SSHPASS=*** sshpass -e ssh h\n.dockerconfigjson: ***"),
    ("Typing text 'De-Pw-7' into text field 'css:#salasanaKentta'.",
     "Typing text '***' into text field 'css:#salasanaKentta'."),
    *[(kept, kept) for kept in ["Salasana on väärä", "Anna salasana"]],
    # a value JavaScript sets into a password field (SeleniumLibrary's Execute JavaScript)
    ("Executing JavaScript:\ndocument.getElementById('password').value='Js-Pw1'\nWithout any arguments.",
     "Executing JavaScript:\ndocument.getElementById('password').value='***'\nWithout any arguments."),
    ("document.querySelector(\"#loginPwd\").value = \"Js-Pw2\"; $('#pw').val('Js-Pw3')",
     "document.querySelector(\"#loginPwd\").value = \"***\"; $('#pw').val('***')"),
    *[(kept, kept) for kept in ["document.getElementById('username').value='bob'",
                                "document.getElementById('password').value=arguments[0]"]],
    # Go's and make's :=, ?=, +=, a comparison's ==
    ('Password := "Go-Pw1"; DB_PASSWORD ?= Mk-Pw2; TOKEN += Tk-3; if password == "Cm-Pw4":',
     'Password := "***"; DB_PASSWORD ?= ***; TOKEN += ***; if password == "***":'),
    ("dn: uid=bob,ou=people\nuserPassword:: e1NTSEF9YWJjZGVm", "dn: uid=bob,ou=people\nuserPassword:: ***"),
    # a compound name's words joined by a dot (Java's and Spring's properties, Hadoop's keys)
    ("fs.s3a.secret.key=Hd-Sk7 aws.secret.access.key: Aw-Sk8 stripe.api.key=Sp-Key9",
     "fs.s3a.secret.key=*** aws.secret.access.key: *** stripe.api.key=***"),
    ("the name: PWD\n value: /tmp/w", "the name: PWD\n value: /tmp/w"),
    # PowerShell's plain password made a SecureString; a variable stays
    ("$c = New-Object PSCredential('bob', (ConvertTo-SecureString 'Ps-Pw1' -AsPlainText -Force))",
     "$c = New-Object PSCredential('bob', (ConvertTo-SecureString '***' -AsPlainText -Force))"),
    ("ConvertTo-SecureString -AsPlainText -Force -String Ps-Pw2; ConvertTo-SecureString $pw -AsPlainText",
     "ConvertTo-SecureString -AsPlainText -Force -String ***; ConvertTo-SecureString $pw -AsPlainText"),
    # vendor tokens by their documented prefixes and lengths
    ("npm token npm_" + "a1B2" * 9, "npm token ***"),
    ("stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + ", rk_test_" + "x" * 24, "stripe ***, ***"),
    ("maps key AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY" + " loaded", "maps key *** loaded"),
    ("hf_" + "AbCd" * 8 + "Ef", "***"),
    ("SG." + "a" * 22 + "." + "b" * 43, "***"),
    ("shpat_" + "0f" * 16 + " and dop_v1_" + "ab" * 32, "*** and ***"),
    ("ya29.a0AfH6SMBx3kVYaLhBqZ2w_dE0123 xapp-1-A0123456789-1234567890123-" + "ab01" * 16,
     "*** ***"),
    ("glrt-" + "Ab1_" * 5 + " gldt-" + "Cd2x" * 5 + " hvs.CAESIJ" + "Ef3G" * 6
     + " ATATT3x" + "Gh4=" * 12 + "A1B2C3D4",
     "*** *** *** ***"),
    ("dapi" + "0f" * 16 + " glsa_" + "Ij5k" * 8 + "_0a1b2c3d NRAK-" + "L6MN" * 6 + "OPQ", "*** *** ***"),
    ("PMAK-" + "ab" * 12 + "-" + "cd" * 17 + " whsec_" + "Qr7s" * 7 + " sbp_" + "ef" * 20, "*** *** ***"),
    ("tskey-auth-k" + "T8uv" * 8 + " lin_api_" + "Wx9y" * 10 + " AGE-SECRET-KEY-1" + "Z" * 58,
     "*** *** ***"),
    *[(kept, kept) for kept in ["the rapid dapi test; hvs.example; ya29.short", "glrt-short"]],
    ("password=", "password="),
    ('"password": null', '"password": null'),
    # a Wi-Fi network's pre-shared key is a secret, its names (SSID, BSSID end with "sid")
    # are none; PHPSESSID, which ends with "ssid" too, is a session
    ('network={\n  ssid="HomeNet"\n  psk="Wifi-Psk1"\n}', 'network={\n  ssid="HomeNet"\n  psk="***"\n}'),
    *[(kept, kept) for kept in ["Connected: SSID: HomeNet, BSSID: aa:bb:cc:dd:ee:ff"]],
    ("${WIFI_SSID} = HomeNet\n${WIFI_PSK} = Wifi-Psk2", "${WIFI_SSID} = HomeNet\n${WIFI_PSK} = ***"),
    ("${PWD} = /home/ci/ws", "${PWD} = /home/ci/ws"),
    *[(kept, kept) for kept in _NO_VALUES],
    ('password: Success1\npasswd: hunter2\nkey 0 "a b"\n password 7 0822455D0A16',
     'password: ***\npasswd: ***\nkey 0 "***"\n password 7 ***'),
    ('token: expired-Tk1, password: "invalid.Pw2" {"password": "This-field-Pw3"}',
     'token: ***, password: "***" {"password": "***"}'),
    ("password: %Secr3t% token=$ecret-Tk1 pwd=$DB_PASSWORD-x",
     "password: *** token=*** pwd=***"),
    # a form's second copy of a new password (Django's, Rails', Laravel's, Angular's names)
    ('{"username": "bob", "password1": "Dj-Pw1", "password2": "Dj-Pw1"}',
     '{"username": "bob", "password1": "***", "password2": "***"}'),
    ("new_password2=Np-2&password_confirmation=Pc-3&passwordConfirm=Pc-4&password_again=Pa-5",
     "new_password2=***&password_confirmation=***&passwordConfirm=***&password_again=***"),
    *[(kept, kept) for kept in ["password3=x", "password_confirmed: true", "passwords: 2"]],
    ("auth: basic-Pw1 token: /9j/4AAQSkZJRgABAQ password: /Pa55/word password: ~Pw/1 sid: s-1-5x",
     "auth: *** token: *** password: *** password: *** sid: ***"),
    # YAML's value on the next line, indented: a block scalar's, a plain one's
    ("db:\n  password: |\n    Yb-Pw1\n  token:\n    Yp-Tk2\n  api_key: >-\n    Yf-Key3",
     "db:\n  password: |\n    ***\n  token:\n    ***\n  api_key: >-\n    ***"),
    # a block scalar's lines are its value, spaces, key-like text and all (the first word only before)
    ("password: >-\n  correct horse\n    battery staple\nuser: bob\ntoken: |2\n   user: x #1\n   two",
     "password: >-\n  ***\nuser: bob\ntoken: |2\n   ***"),
    *[(kept, kept) for kept in ["password: |\nnot indented", "token: > 5 chars", "password:\n  type: x"]],
    # such a word only begins a value that runs on: the value is no such word
    ('${password} = none of your business\n${token} = Bearer abc123xyz\npassword: "basic auth pw"',
     '${password} = ***\n${token} = ***\npassword: "***"'),
    ("Cookie: x=1\nset PHPSESSID=Php-Sess3", "Cookie: ***\nset PHPSESSID=***"),
    # PowerShell's variables and environment: a variable ($x) and a call stay, its string is read
    ('Set-Variable -Name "DB_PASSWORD" -Scope Global -Value "Ps pw 1" -Force\n'
     "Set-Item -Path Env:API_TOKEN -Value Ps-Tk2\n"
     '[Environment]::SetEnvironmentVariable("SECRET_KEY", "Ps-Key3", "User")\n'
     "New-Variable -Name token -Value $tok; Set-Variable -Name Password -Value (Get-Pw)",
     'Set-Variable -Name "DB_PASSWORD" -Scope Global -Value "***" -Force\n'
     "Set-Item -Path Env:API_TOKEN -Value ***\n"
     '[Environment]::SetEnvironmentVariable("SECRET_KEY", "***", "User")\n'
     "New-Variable -Name token -Value $tok; Set-Variable -Name Password -Value (Get-Pw)"),
    *[(kept, kept) for kept in ["Set-Variable -Name PasswordLength -Value 12",
                                "Get-Process -Name password-manager -Value x",
                                "SetEnvironmentVariable('API_TOKEN', $tok)"]],
    # a setter called with a name and its value, both quoted (a getter's second value is a default)
    ("localStorage.setItem('auth_token', 'Js-Tk1'); System.setProperty(\"db.password\", \"Jv-Pw2\")",
     "localStorage.setItem('auth_token', '***'); System.setProperty(\"db.password\", \"***\")"),
    *[(kept, kept) for kept in ['os.getenv("API_TOKEN", "dev-default")', 'reset("password", "x1")',
                                'setenv("API_TOKEN", token_value, 1);']],
    # a connection string's value runs to its ";", spaces and all; ODBC's braces quote one
    ("Server=db;User Id=app;Password=Cs pass phrase 1;Encrypt=True",
     "Server=db;User Id=app;Password=***;Encrypt=True"),
    ("DRIVER={ODBC Driver 18 for SQL Server};SERVER=db;UID=sa;PWD={Od;bc }}Pw2};Encrypt=yes",
     "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db;UID=sa;PWD=***;Encrypt=yes"),
    ("pyodbc.connect('DRIVER={ODBC Driver 18};SERVER=h;UID=u;PWD=Last pair 3')",
     "pyodbc.connect('DRIVER={ODBC Driver 18};SERVER=h;UID=u;PWD=***')"),
    # not a connection string: the value ends at its first blank, as before
    ("Login failed; password=Pw4x and then; more", "Login failed; password=*** and then; more"),
    *[(kept, kept) for kept in ["password={0}", "Server=h;PWD={password};", 'auth: {"type": "basic"};',
                                "host=db dbname=x; sslmode=require"]],
])
def test_secret_shapes(text: str, shown: str) -> None:
    masked, count = Redactor().text(text)
    assert masked == shown
    assert count == masked.count("***") - text.count("***")


@pytest.mark.parametrize(("table", "registered"), [
    ('<table><caption>2 rows</caption><tr><th scope="col">Row</th><th>id</th><th>API_TOKEN</th></tr>'
     '<tr><th scope="row">0</th><td>1</td><td><b>Tb-Tk-1</b></td></tr><tr><th>1</th><td>2</td>'
     '<td>Tb&amp;Tk-2</td></tr></table>', ["Tb-Tk-1", "Tb&Tk-2"]),
    ("<table><tr><th>id</th><th>name</th></tr><tr><td>1</td><td>Tb-Name-3</td></tr></table>", []),
    ("<table><tr><td>password</td><td>Tb-Pw-4</td></tr></table>", []),  # no header row
])
def test_a_table_column_named_like_a_secret_registers_its_values(table: str,
                                                                  registered: list[str]) -> None:
    """DatabaseLibrary logs a query's result as an HTML table: a column's name in the header
    row, its values in the rows below, where no name rule reads them."""
    from rf_log_listener.named_values import table_column_values

    assert table_column_values(table, Redactor().names_secret) == registered


@pytest.mark.parametrize(("text", "registered"), [
    ("Arguments: [ 'api' | auth=('bob', 'Rq-Pw1') ]", ["Rq-Pw1"]),  # the user is no secret
    ("@{auth} = [ bob | Rq-Pw2 ]", ["Rq-Pw2"]),
    ("${db_credentials} = ('CORP', 'bob', 'Nt-Pw3')", ["Nt-Pw3"]),
    ("${secret} = ('Sc-one-1', 'Sc-two-2')", ["Sc-one-1", "Sc-two-2"]),  # not a pair's name
    ("auth=['Au-one', 'Au-two', 'Au-three', 'Au-Pw4']", ["Au-one", "Au-two", "Au-three", "Au-Pw4"]),
    ("password=Pw(1), token=HTTPBasicAuth('u', 'Tk-5')", ["Pw(1)", "Tk-5"]),  # u: too short
    ("api_keys=['Ak-one-1', 'Ak-two-2']", ["Ak-one-1", "Ak-two-2"]),  # a plural: each
    ("&{SECRETS} = { db=Db-Pw-1 | api=Api-Tk-2 }", ["Db-Pw-1", "Api-Tk-2"]),  # not the keys
    ('{\n  "api_keys": [\n    "Ak-line-1",\n    "Ak-line-2"\n  ]\n}', ["Ak-line-1", "Ak-line-2"]),
    ("secrets = {'db': 'Db-Pw-3', 'n': 1}", ["Db-Pw-3"]),
    ("credentials=('alice', 'Cr-Pw-5')", ["Cr-Pw-5"]),  # a pair's name stays a pair's
    ("tokens=abcdef12 tokens: [12, 40]", []),
    ("Environment variable 'DEPLOY_TOKEN' set to value 'Ev-Tk-1'.", ["Ev-Tk-1"]),
    ("Environment variable 'OLDPWD' set to value '/tmp/x'.", []),
    ('ssid="HomeNet" psk="Wifi-Psk4"', ["Wifi-Psk4"]),  # registered, the network's name not
    ('{"name": "API_TOKEN", "value": "Nv-Tk-1"}, {"name": "REGION", "value": "eu-west-1"}',
     ["Nv-Tk-1"]),
    ('<entry key="db.password">Xp-Pw-1</entry><entry key="db.user">Xp-User-1</entry>', ["Xp-Pw-1"]),
    ("<key>API Token</key><string>Pl-Tk-2</string><key>Host</key><string>Pl-Host-2</string>",
     ["Pl-Tk-2"]),
    ('<entry key="OLDPWD">/tmp/x</entry>', []),
    ("${creds}[api_token] = Tk item 1\n[password] => Pr-Pw-2", ["Tk item 1", "Pr-Pw-2"]),
    ('{"secret"=>"Rb-Sec-3"}', ["Rb-Sec-3"]),
    ("sqlplus -s scott/Or-Pw-4@orcl; jdbc:oracle:oci:app/Or-Pw-5@db", ["Or-Pw-4", "Or-Pw-5"]),
    ("userPassword: {SSHA}W6ph5Mm5Pz8G=\npassword={noop}Sp-Pw-6", ["W6ph5Mm5Pz8G=", "Sp-Pw-6"]),
    ("requirepass Rd-Pw-7\n127.0.0.1:6379> AUTH bob Rd-Pw-8", ["Rd-Pw-7", "Rd-Pw-8"]),
    ("jenkins-cli -auth admin:Jk-Tk-9; echo 'bob:Ch-Pw-10' | chpasswd", ["Jk-Tk-9", "Ch-Pw-10"]),
    ("reply: b'334 UGFzc3dvcmQ6\\r\\n'\nsend: 'U20tUHctMTE=\\r\\n'", ["U20tUHctMTE="]),
    ("${env}[PWD] = /home/ci\nrequirepass is not set", []),
    ("tokens.map(token => token.trim()); password => 'Pl-Pw-13'", ["Pl-Pw-13"]),
    ("enable secret 5 $1$mERr$hx\n password 7 0822455D0A16", ["$1$mERr$hx", "0822455D0A16"]),
    ("snmpwalk -v2c -c public 10.0.0.1; snmpget -c Sn-Comm-12 h", ["Sn-Comm-12"]),  # a default
])
def test_a_structured_secret_registers_its_strings(text: str, registered: list[str]) -> None:
    """A tuple, list or call after a secret's name: its strings are what a run registers, of
    a user's credentials (``auth``, ``credentials``) only the last (before, the bracket)."""
    assert Redactor().secret_values(text) == registered


def test_messages_after_a_name_that_are_no_value_register_nothing() -> None:
    """Registered, their first words ("Permission", "Success", "attempts") were masked
    wherever the run showed them; a value the same words begin is still one."""
    redactor = Redactor()
    assert [redactor.secret_values(text) for text in _NO_VALUES] == [[]] * len(_NO_VALUES)
    assert redactor.secret_values("passwd: Success1\n password 0 cisco\nkey 7 0822455D0A16") == [
        "Success1", "cisco", "0822455D0A16"]
    assert redactor.secret_values('${password} = none of your business\npassword: "basic auth pw"') == [
        "none of your business", "basic auth pw"]
    assert redactor.secret_values("db:\n  password: |\n    Yb-Pw1\n  token:\n    Yp-Tk2") == [
        "Yb-Pw1", "Yp-Tk2"]
    assert redactor.secret_values('Set-Variable -Name Password -Value "Ps pw 1"\n'
                                  "[Environment]::SetEnvironmentVariable('API_KEY', 'Ps-Key2')") == [
        "Ps pw 1", "Ps-Key2"]
    # a verdict on a password, or one everybody may type: masked where it stands, not registered
    assert redactor.text("token: default; password: wrong; password: same") == (
        "token: ***; password: ***; password: ***", 3)
    assert redactor.secret_values("token: default; password: wrong; password: same; password: weak") == []
    # a block scalar as the application reads it: ``|`` keeps its lines, ``>`` folds them
    assert redactor.secret_values("password: |\n  Yb pw 1\n    Yb pw 2\ntoken: >-\n  Yf tk\n  3") == [
        "Yb pw 1\n  Yb pw 2", "Yf tk 3"]


def test_an_authorization_header_s_parameters_register_no_names() -> None:
    """Digest's ``username="bob"`` registered "username=" and AWS's scheme "AWS4-HMAC-SHA256"
    was registered: each was then masked wherever the run showed it (``?username=bob``
    became ``?***bob``). The line is masked whole; a parameter that is a secret registers
    by its own name (OAuth 1's ``oauth_token``)."""
    redactor = Redactor()
    digest = 'Authorization: Digest username="bob", realm="api", nonce="n1", response="6629fae4"'
    aws = ("Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/eu-west-1/s3/aws4_request, "
           "SignedHeaders=host, Signature=fe5f80f7")
    assert [redactor.text(text)[0] for text in (digest, aws)] == [
        "Authorization: Digest ***", "Authorization: ***"]
    assert redactor.secret_values(digest) == []
    assert "AWS4-HMAC-SHA256" not in redactor.secret_values(aws)
    assert redactor.secret_values('Authorization: OAuth oauth_consumer_key="k1", oauth_token="Oa-Tk1"') == [
        "Oa-Tk1"]
    assert redactor.secret_values("Authorization: Bearer Br-Tk2\nProxy-Authorization: Basic Ym9iOng=") == [
        "Br-Tk2", "Ym9iOng="]


def test_a_cookie_header_registers_its_values_not_its_names() -> None:
    """``sessionid=`` of a cookie a logout empties was registered, then masked wherever the
    run showed it: ``sessionid=abc`` elsewhere became ``***abc``."""
    redactor = Redactor()
    assert redactor.secret_values("Set-Cookie: sessionid=; Max-Age=0; Path=/") == []
    assert set(redactor.secret_values("Set-Cookie: sessionid=Ss-Val1; Path=/")) == {"Ss-Val1"}
    assert redactor.secret_values('{"cookie": "sid=Ck-Val2"}') == ["Ck-Val2", "Ck-Val2"]


@pytest.mark.parametrize(("value", "registrable"), [
    ("invalid", False), ("Required", False), ("(none)", False), ("[FILTERED]", False),
    ("<redacted>", False), ("not set", False), ("invalid-Pw1", True), ("(n0ne)", True)])
def test_a_status_or_a_placeholder_is_never_a_run_s_secret(value: str, registrable: bool) -> None:
    """Registered by a keyword's signature (WebDemo's ``Input Password  field  invalid``),
    such a word was masked wherever the run showed it."""
    assert known_values.registrable(value) is registrable


# Each rule's shape alone, pieces of shapes and names, and letters that match others only
# under case-insensitive matching (the long s, the Kelvin sign, dotless and dotted i).
_SHAPES = ["ftp://user:pa55@host/f", "Bearer Zm9vYmFyYmF6cXV4", "eyJhbGciOi.eyJzdWIiOi.c2ln",
           "ghp_" + "a1" * 18, "AKIA" + "B" * 16, "sk-" + "c" * 24, "xoxb-1234567890ab",
           "glpat-" + "d" * 20, "Basic dXNlcjpodW50ZXIy", "npm_" + "e" * 36, "sk_live_" + "f" * 24,
           '{"name": "api_token", "value": "v-1"}', "- name: DB_PASSWORD\n  value: v-2",
           "ConvertTo-SecureString 'v-3' -AsPlainText",
           "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
           "password=hunter2", "Set-Cookie: a=1", "Authorization: Basic dXNlcjpw", "${db_pwd} = x y",
           '"api-key": "k-123"', "pin: 1234", "otp=123456", "pa\u017fsword=hunter2", "api-\u212aey: v-4567",
           "<ns:Token>t-1</ns:Token>", "curl -u a:pw-2", "https://hooks.slack.com/services/T1/B2/x3",
           "with password pw-42x", "sshpass -p pw-1 ssh h", "mysql -pDb-7", "docker login -p d-1",
           "Typing text 't-1' into text field 'id=pwd'.", "create user u identified by 'q-1'",
           "password 'hunter'", "echo pw | sudo -S x", "-passin pass:pw-1", "redis-cli -a rd-1",
           "sqlcmd -P Sq-1", "keytool -storepass ks-1", "ssh-keygen -N pp-1", "7z a -p7-1",
           "echo pw | docker login --password-stdin", "--token tk-1", "-client-secret cs-1",
           "smbclient -U a%pw-1", "htpasswd -nb u pw-1", "rabbitmqctl add_user u pw-1",
           "https://a.blob.core.windows.net/c?sv=1&sig=Ab%2B1", "AccountKey=Zm9v==",
           '<entry key="db.password">v-5</entry>', "<key>Token</key><string>v-6</string>",
           "<name>x.secret.key</name><value>v-7</value>", "api.key=v-8", "[password] => v-9",
           '{"token"=>"v-10"}', "${d}[pwd] = v 11", "token ?= v-12", "pw := v-13",
           "sqlplus u/v-14@db", "jdbc:oracle:thin:u/v-15@h", "connect u/v-46@db",
           "AUTH PLAIN AGJvYgBodW50ZXIy",
           "set password for u = 'v-16'", "userPassword: {SSHA}v-17", "requirepass v-18",
           "127.0.0.1:6379> AUTH v-19", "-auth u:v-20", "echo u:v-21 | chpasswd",
           "334 UGFzc3dvcmQ6\nC: djIy", "enable secret 5 v-23", "username u password v-24",
           " password 7 0A25", "snmpwalk -c v-26 h", "passwort=v-27", "SSHPASS=v-28",
           "ya29." + "a" * 20, "hvs." + "b" * 24, "ATATT3" + "c" * 50, "AGE-SECRET-KEY-1" + "D" * 58,
           "$('#pw').val('v-29')", "getElementById('pwd').value='v-30'", "psexec -p v-31",
           "cmdkey /pass:v-32", "echo v-33 | kinit u", "echo v-34 | passwd --stdin u",
           "ipmitool -P v-35", "racadm -p v-36", "winrs -p:v-37", "schtasks /rp v-38",
           "xfreerdp /p:v-39", "lftp -u u,v-40", "machine h login u password v-41",
           "printf 'v-42\\n' | kinit u", "mosquitto_pub -P v-43", "rabbitmqadmin -p v-44",
           "curl --oauth2-bearer v-45", "Set-Variable -Name pw -Value v-47",
           "SetEnvironmentVariable('token', 'v-48')", "setItem('pwd', 'v-51')", "password: >-\n  v 49\n  x",
           "openssl enc -k v-50", "Server=h;Password=v 52;", "a;PWD={v;53}",
           "with passphrase 'v 54 x'", "https://outlook.office.com/webhook/v@55/IncomingWebhook/x/y",
           'expect "assword:"; send "v-56\\r"', "jarsigner -storepass v-57", "hdbsql -p v-58",
           "isql -Pv-59", "connect to db user u using v-60",
           "_app_session=v-61", "npm config set //r/:_authToken v-62"]
_PIECES = [*_SHAPES, "-Name ", " -Value ", "Env:", "SetEnvironmentVariable(", ".setItem(", ": |\n  ",
           ";PWD=", ";Password=", "{v;1}", "}}", ";Server=h", "v 2;", 'expect "', 'password:"',
           "; send ", "sendline('", "\\r", "jarsigner ", "hdbsql ", "cqlsh ", "isql ", "connect to ",
           " user ", " using ",
           "openssl enc ", " -k ", "password", "token", "auth", "cookie", "x-Session-Id", "=", ": ", '"', "'",
           "${", "}", " ", "\n", "Bearer ", "://", "@", "user:pa55", "eyJ", ".fghij", "ghp_",
           "\u0130", "\u0131", "plain words", "42", "inside", "Author", "sid", "\t", "\u00a0",
           "PRIVATE KEY", "-----BEGIN RSA ", "-----", " BLOCK", "<", ">", "</", "<password>",
           "</password>", "curl ", " -u ", "--user=", "hooks.slack.com/services/", "https://",
           "password ", "passphrase is ", "x9", "sshpass ", " -p ", "-p", "docker login ", "mysql ",
           "Typing text '", "' into text field '", "'.", "id=password", "create user ",
           " identified by ", "{", "[", "password '", "hunter", " | sudo -S", "echo ", "pass:",
           "-passin ", " -pass ", "redis-cli ", " -a ", "sqlcmd ", " -P ", "keytool ", " -storepass ",
           "ssh-keygen ", " -N ", "7z a", "zip ", "az login ", " --pass ", " | docker login",
           " --password-stdin", "ldappasswd ", " -s ", "--token ", " -api-key ", "--with-token ",
           "_secret ", "key ", "smbclient ", " -U ", "%", "htpasswd ", " -b ", "rabbitmqctl ",
           " add_user ", "net use ", "\\\\", "net user ", "mysqladmin ", " password ",
           "vault login ", "sudo -S ", " <<< ", "<<<", "passwords", "api_keys", "s", "]", "(",
           ")", "[ a1b2 | c3d4 ]", "['x1y2z3']", "{ db=p4q5 }", "&sig=", "?sig=", "sig", "AccountKey",
           "&X-Amz-Signature=", '"name": ', '"value": ', "name: ", "\n  value: ", "ParameterValue=",
           "ConvertTo-SecureString ", " -AsPlainText", '<entry key="', '">', "<key>", "</key>",
           "<name>", "</name>", "<value>", "</value>", ".key", "secret.", '<string name="', "=>",
           " => ", "]", "[password]", "}[", '"]', ":=", "?=", "+=", "==", "jdbc:oracle:thin:",
           "sqlplus ", "/", "AUTH PLAIN ", "AGJvYgBodW50ZXIy", "SET PASSWORD FOR ", "'u'@'h' = ",
           "{SSHA}", "{noop}", "requirepass ", "masterauth ", "CONFIG SET ", "--requirepass ",
           "redis-cli ", " AUTH ", "6379> ", "-auth ", "--auth=", "u:", "chpasswd", " | chpasswd",
           "chpasswd <<< ", "334 UGFzc3dvcmQ6", "\nsend: '", "C: ", "enable ", "secret ", " 5 ",
           " 7 ", "username ", " privilege 15", "snmp-server community ", " key ", "key-string ",
           "tacacs-server ", "neighbor ", "snmpwalk ", " -c ", " -A ", " -X ", "salasana", "senha",
           "getElementById('", "').value = '", "$('#", "').val('", "[0].value='",
           "psexec ", "cmdkey ", " /pass:", "/user:", " | kinit ", "kinit", " --stdin", "passwd ",
           "winrs ", " -p:", "schtasks ", " /rp ", "xfreerdp ", " /p:", "lftp ", " -u ", "u,",
           "machine ", " login ", "printf ", "'%s\\n' ", "\\n'"]


def _every_rule(words: tuple[str, ...]) -> Redactor:
    """A redactor whose every rule runs on every text (its trigger matches anything)."""
    redactor = Redactor(extra_words=words)
    redactor.__dict__["_trigger"] = redactor.__dict__["_ascii_trigger"] = re.compile("")
    return redactor


@pytest.mark.parametrize("shape", _SHAPES)
def test_each_shape_alone_reaches_its_rule(shape: str) -> None:
    """Texts in which no secret's name or shape occurs skip the rules (issue #19: compiling
    them was most of a reading command's work); each shape alone still gets them all."""
    masked, count = Redactor(extra_words=("pin", "otp")).text(shape)
    assert count >= 1 and "***" in masked
    assert (masked, count) == _every_rule(("pin", "otp")).text(shape)


def test_every_gated_shape_s_marks_pass_the_gate_before_them() -> None:
    """``gated_shapes.may_hold_any`` asks a few substrings instead of every row's marks:
    each mark holds one of them (else a row's text would never reach its rule); with the
    row's ``needs`` and an option (rows of commands' options ask for " -" or " /" first)."""
    from rf_log_listener.gated_shapes import GATED_SHAPES, may_hold_any

    marks = [(mark, shape.needs) for shape in GATED_SHAPES for mark in shape.marks]
    assert len(marks) > 15
    assert all(may_hold_any(f"{mark} -x /:{needs}", f"{mark} -x /:{needs}".lower()) for mark, needs in marks)
    assert not may_hold_any("Clicking element 'id=submit'.", "clicking element 'id=submit'.")


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=12),
       st.sampled_from([(), ("pin",), ("user", "otp")]))
def test_masking_only_skips_texts_no_rule_can_match(pieces: list[str], words: tuple[str, ...]) -> None:
    text = "".join(pieces)
    redactor = Redactor(extra_words=words)
    assert redactor.text(text) == _every_rule(words).text(text)
    # an ASCII text is asked lower-cased, case-sensitively: the same answer as case-insensitively
    ascii_text = text.encode("ascii", "ignore").decode()
    assert redactor._ascii_trigger is not None
    assert (redactor._ascii_trigger.search(ascii_text.lower()) is None) == \
        (redactor._trigger.search(ascii_text) is None)


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=12))
def test_the_writer_s_check_passes_every_text_with_a_value(pieces: list[str]) -> None:
    """The writer registers a message's values only when ``may_name_a_value`` lets it
    through: a text with a value it turned away left that value shown wherever the run showed
    it again (``--token x`` at a message's start; ``SetEnvironmentVariable('token', 'x')``)."""
    redactor = Redactor()
    for text in (*_SHAPES, "".join(pieces)):
        assert not redactor.secret_values(text) or redactor.may_name_a_value(text, text.lower()), text


def test_long_texts_of_repeated_shapes_are_masked_in_one_pass() -> None:
    """A rule that scanned on from every "curl" (or every secret word, for an XML tag's end)
    was quadratic: 140 KB of "curl x " took 100 s to mask. Each shape repeated into a long
    text: masked whole and correctly, in a time that grows with the text (no timed
    assertion: such a rule makes this test take minutes)."""
    redactor = Redactor()
    masked, count = redactor.text("curl -s -u deploy:pw-7a x | " * 5000)
    assert count == 5000 and masked == "curl -s -u deploy:*** x | " * 5000
    assert redactor.text("curl x " * 20000) == ("curl x " * 20000, 0)
    assert redactor.text("sort -u a:b " * 20000) == ("sort -u a:b " * 20000, 0)
    assert redactor.text("password " * 50000) == ("password " * 50000, 0)
    assert redactor.text(("<token " + "a " * 300) * 500)[1] == 0
    assert redactor.text("<password>" + "a" * 200_000) == ("<password>" + "a" * 200_000, 0)
    masked, count = redactor.text("login failed with password x9-y. " * 20000)
    assert count == 20000 and masked == "login failed with password ***. " * 20000
    masked, count = redactor.text("mysql -pDb-7 x; " * 20000)
    assert count == 20000 and masked == "mysql -p*** x; " * 20000
    assert redactor.text(" -p x" * 50000) == (" -p x" * 50000, 0)
    masked, count = redactor.text("create user u identified by q-1; " * 10000)
    assert count == 10000 and masked == "create user u identified by ***; " * 10000
    assert redactor.text("identified by x " * 20000) == ("identified by x " * 20000, 0)
    masked, count = redactor.text("echo pw-1 | sudo -S x; " * 20000)
    assert count == 20000 and masked == "echo *** | sudo -S x; " * 20000
    assert redactor.text("echo x | sudo " * 20000) == ("echo x | sudo " * 20000, 0)
    masked, count = redactor.text("keytool -storepass ks-1 x; " * 20000)
    assert count == 20000 and masked == "keytool -storepass *** x; " * 20000
    assert redactor.text("zip -p x " * 20000) == ("zip -p x " * 20000, 0)
    masked, count = redactor.text("echo pw-1 | docker login --password-stdin; " * 20000)
    assert count == 20000 and masked == "echo *** | docker login --password-stdin; " * 20000
    masked, count = redactor.text("--token tk-1 " * 20000)
    assert count == 20000 and masked == "--token *** " * 20000
    masked, count = redactor.text("smbclient -U a%pw-1 x; " * 20000)
    assert count == 20000 and masked == "smbclient -U a%*** x; " * 20000
    masked, count = redactor.text("net smbclient -U a%pw-1 " * 2000)  # each command finds one
    assert count == 2000 and masked == "net smbclient -U a%*** " * 2000
    masked, count = redactor.text("htpasswd -b f u pw-1; htpasswd -c f u; " * 10000)
    assert count == 10000 and masked == "htpasswd -b f u ***; htpasswd -c f u; " * 10000
    assert redactor.text("--a-b-c-d-e-f " * 20000 + "token") == ("--a-b-c-d-e-f " * 20000 + "token", 0)
    masked, count = redactor.text("-passin pass:pw-1 " * 20000)
    assert count == 20000 and masked == "-passin pass:*** " * 20000
    masked, count = redactor.text("the password 'pw' " * 20000)
    assert count == 0
    typed = "Typing text '" + "' into text field '" * 20000
    assert redactor.text(typed) == (typed, 0)


def test_prose_that_holds_a_short_name_compiles_no_rule() -> None:
    """``sid`` in "Inside", ``auth`` in "author": a name with no separator after it names no
    value, so the rules are neither run nor compiled (a reading command's summary compiled
    all seven for a test called "Failing Inside If", issue #19)."""
    redactor = Redactor()
    for prose in ("Failing Inside If", "The author's token count", "password reset", "Cookie jar",
                  # an option's letters inside a word, a command's name in a file's
                  "PYTHONPATH:\n  /usr/lib/python311.zip\n  /venv/lib/site-packages",
                  "python -m pytest -k test_login --junitxml out-1.xml",
                  # an Oracle tool's name inside a word ("perfoRMANce"), not before a blank
                  "Performance report of /opt/sqlplus_home/bin"):
        assert redactor.text(prose) == (prose, 0)
    assert not {"_key_value", "_whole_line"} & redactor.__dict__.keys()
    assert redactor.text("Set-Cookie\t: a=1") == ("Set-Cookie\t: ***", 1)
    assert {"_key_value", "_whole_line"} <= redactor.__dict__.keys()


def test_an_operator_word_beyond_ascii_is_matched_case_insensitively() -> None:
    redactor = Redactor(extra_words=("pa\u017f",))  # the long s matches 's' only case-insensitively
    assert redactor._ascii_trigger is None
    assert redactor.text("PAS=hunter42") == ("PAS=***", 1)


_NAMING = ["password", "Pass-Word", "api key", "api_key", "credential", "credentials", "sid", "pin",
           "a.b c", "x|y", "=", ":", " = ", '"', "'", "}", "\t", " ", "${", "\n", "value", "inside",
           "passwords", "tokens", "s", "\\", '\\"', "\\\\'"]


@pytest.mark.parametrize(("text", "named"), [
    ('{"Password": "x"}', True), ("api key' = 1", True), ("credentials}\t:", True),
    ("SID  =", True), ("a.b c=", True), ("x|y:", True), ("my pin:", True), ("ftp://u:p@h", True),
    ("password x = 1", False), ("inside=1", False), ("a.b  c=", False), ("pin", False),
    ('password"" = 1', False), ('{\\"token\\": \\"x\\"}', True), ("b'{\\\\'pw\\\\': 1", True),
])
def test_a_secret_name_followed_by_a_separator(text: str, named: bool) -> None:
    redactor = Redactor(extra_words=("pin", "a.b c", "x|y"))
    assert redactor.may_name_a_value(text, text.lower()) is named


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(_NAMING), st.text(max_size=4)), max_size=12),
       st.sampled_from([(), ("pin",), ("a.b c", "x|y")]))
def test_a_secret_name_and_separator_are_found_backwards_as_forwards(
        pieces: list[str], words: tuple[str, ...]) -> None:
    """The writer asks every message whether a secret's name is followed by a separator;
    it searches the reversed text from the separators (issue #19: twice as fast).
    The answer is the forward search's."""
    text = "".join(pieces)
    redactor = Redactor(extra_words=words)
    assert redactor._named_value_backwards is not None  # the fast way is the one taken
    lowered = text.lower()
    forwards = redactor._named_value.search(lowered) is not None or ("://" in text and "@" in text)
    assert redactor.may_name_a_value(text, lowered) == forwards


_NAME_ENDINGS = ["password", "PassWord", "api-key", "Api Key", "apikey", "credentials", "sid",
                  "session_id", "pin", "a.b c", "x|y", "key", "api", "\u017f", "K", "_", "}", " ", "-",
                  ":", "1", "s", "word", "pass"]


@settings(max_examples=600, deadline=None, database=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(_NAME_ENDINGS), st.text(max_size=3)), max_size=6),
       st.sampled_from([(), ("pin",), ("a.b c", "x|y"), ("ключ",), ("key-",)]))
def test_a_secret_name_is_told_by_its_endings_as_by_the_pattern(
        pieces: list[str], words: tuple[str, ...]) -> None:
    """Whether a name is a secret's (every scope variable, every argument) is answered from
    the names' literal spellings for ASCII texts (issue #19: robot's process no longer
    compiles the pattern); the answer is the pattern's, for any text and operator words."""
    text = "".join(pieces)
    redactor = Redactor(extra_words=words)
    if words in ((), ("pin",), ("a.b c", "x|y")):
        assert redactor._secret_endings is not None  # the fast way is the one taken
    assert redactor.names_secret(text) == bool(redactor._names_secret.search(text))


@pytest.mark.parametrize(("text", "secret"), [
    ("${DB_PASSWORD}", True), ("X-Api-Key", True), ("api key:", True), ("auth_token_", True),
    ("credential", True), ("token_count", False), ("tokens", False), ("secretary", False),
    ("pa\u017f\u017fword", True), ("sessionid", True), ("session-ids", False), ("", False),
    ("${WIFI_SSID}", False), ("bssid", False), ("PHPSESSID", True), ("wpa_psk", True)])
def test_names_that_are_and_are_not_a_secrets(text: str, secret: bool) -> None:
    assert Redactor().names_secret(text) is secret


@pytest.mark.parametrize(("text", "secrets"), [
    ("@{API_TOKENS}", True), ("passwords", True), ("&{db_secrets}", True), ("api_keys", True),
    ("tokens", True), ("token", False), ("keys", False), ("bypasses", False), ("sessions", False)])
def test_names_of_secrets_in_the_plural(text: str, secrets: bool) -> None:
    assert Redactor().names_secrets(text) is secrets


def test_a_list_or_dict_named_like_secrets_in_a_step_shows_no_value() -> None:
    """``Set Test Variable  @{API_TOKENS}  a  b`` and ``VAR  &{SECRETS}  db=x``: the values
    (a dict's keys stay, references stay); a scalar so named counts (``${tokens}``). A
    reference named like a secret is a value elsewhere, not a name before its value: what
    follows it stays (a pattern it is checked against, a failure message)."""
    redactor = Redactor()
    assert redactor.args("Set Test Variable", ["@{API_TOKENS}", "tk-a1", "${X}"]) == (
        ["@{API_TOKENS}", "***", "${X}"], 1)
    assert redactor.args("Set Test Variable", ["${tokens}", "1500"]) == (["${tokens}", "1500"], 0)
    # a reference is a name before its value only where a keyword sets a variable by it
    assert redactor.args("BuiltIn.Set Suite Variable", ["${API_TOKEN}", "tk-9"]) == (
        ["${API_TOKEN}", "***"], 1)
    checked = ["${password}", "^Al1ce", "wrong password for ${username}"]
    assert redactor.args("Should Match Regexp", checked) == (checked, 0)
    assert redactor.args("Input Text", ["id:password", "pw-9x"]) == (["id:password", "***"], 1)
    assert redactor.var_values("&{SECRETS}", ["db=pw-1", "api=${K}"]) == (["db=***", "api=${K}"], 1)
    assert redactor.var_values("@{items}", ["a1b2"]) == (["a1b2"], 0)


def test_operator_words_without_ascii_endings_are_told_by_the_pattern() -> None:
    """An operator's word that ends in a separator, or is not ASCII, has no literal ending
    to compare ([\\W_]*$ would strip it; case-folding goes beyond ASCII): the pattern answers."""
    assert Redactor(extra_words=("key-",)).names_secret("my_key-") is True
    assert Redactor(extra_words=("ключ",)).names_secret("API_КЛЮЧ") is True
    assert Redactor(extra_words=("\u017fig",)).names_secret("api_sig") is True


def test_a_text_without_a_separator_names_no_value_and_compiles_nothing() -> None:
    """Most messages hold neither ':' nor '=': they are answered before any pattern is
    compiled (the listener in robot's process logs such a message first, most often)."""
    redactor = Redactor()
    assert not redactor.may_name_a_value("password token secret", "password token secret")
    assert "_named_value_backwards" not in vars(redactor)
    assert not redactor.names_secret("user_name")
    assert "_names_secret" not in vars(redactor)
    assert redactor.may_name_a_value("password token=1", "password token=1")


def test_operator_settings_add_key_words_and_patterns(store: sqlite3.Connection,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RF_LOG_MCP_SECRET_KEYS", "user")
    monkeypatch.setenv("RF_LOG_MCP_SECRET_PATTERNS", r'["cell (\\d)/"]')
    assert "password=*** user=***" in texts(search(store, query="password=", level="INFO"))
    (folded,) = search(store, query="/2", level="INFO")["hits"]  # three repeats, masked alike
    assert (folded["text"], folded["count"], folded["last"]["text"]) == ("cell ***/2", 3, "cell ***/2")


def test_an_unusable_operator_pattern_stops_the_command_line(tmp_path: Path) -> None:
    env = {**os.environ, "RF_LOG_MCP_DB": str(tmp_path / "s.db"), "RF_LOG_MCP_SECRET_PATTERNS": "(unclosed"}
    done = subprocess.run([sys.executable, "-m", "rf_log_mcp", "runs"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "INVALID_SETTING" in done.stderr and "(unclosed" in done.stderr


# -- search --------------------------------------------------------------------------------

def test_scoped_search_inside_the_failing_iteration(store: sqlite3.Connection) -> None:
    failing = node_id_of(store, "type = 'ITERATION' AND status = 'FAIL' AND assign LIKE '%col%'")
    result = search(store, query="cell", selector=failing)
    assert result["scope"] == "subtree" and result["selector"] == failing
    assert all(hit["id"].startswith(failing + "-") for hit in result["hits"])
    assert [t for t in texts(result) if not t.startswith(("Arguments", "Traceback"))] == [
        "cell 1/2", "about to fail in cell 1/2", "bad cell 1/2"]
    warn = next(hit for hit in result["hits"] if hit["level"] == "WARN")
    assert warn["iteration"] == {"node_id": failing, "values": {"${col}": "2"}}
    assert warn["branch"]["type"] == "IF"
    assert warn["branch"]["condition"] == "${row} == 1 and ${col} == 2"
    assert warn["call_path"] == ("Nested Loops With One Failing Iteration > ITERATION ${row}=1 > "
                                 "ITERATION ${col}=2 > IF ${row} == 1 and ${col} == 2 > Log")
    owner = next(n for n in result["nodes"] if n["node_id"] == warn["node_id"])
    assert owner["name"] == "Log" and owner["status"] == "PASS" and owner["libname"] == "BuiltIn"
    # the same node, three scopes
    log = warn["node_id"]
    assert texts(search(store, query="cell", selector=log, scope="node")) == [
        "Arguments: [ 'about to fail in cell 1/2' | 'WARN' ]", "about to fail in cell 1/2"]
    arguments = {"query": "cell", "selector": log, "scope": "test", "level": "INFO"}
    (folded,) = search(store, **arguments)["hits"]  # equal but for their numbers: one hit
    assert (folded["text"], folded["count"], folded["last"]["text"]) == ("cell 0/0", 9, "cell 2/2")
    whole_test = texts(search(store, **arguments, cursor=folded["unfold_cursor"]))
    assert whole_test == [f"cell {r}/{c}" for r in range(3) for c in range(3)]
    assert search(store, query="cell", selector="s1-t1")["hits"] == []


def test_level_searches_need_no_query(store: sqlite3.Connection) -> None:
    worse = search(store, min_level="WARN")
    assert worse["levels"] == ["SKIP", "WARN", "ERROR", "FAIL"]
    assert {hit["level"] for hit in worse["hits"]} == {"WARN", "FAIL"}
    assert texts(worse)[-1] == "about to fail in cell 1/2"  # the run error, after the messages
    assert worse["hits"][-1]["id"] == "errors-m1" and "node_id" not in worse["hits"][-1]
    assert "Login failed for bob with password=***" in texts(worse)
    traces = search(store, query="", level="TRACE", selector="s1-t4")
    assert traces["hits"] and {hit["level"] for hit in traces["hits"]} == {"TRACE"}
    fails = search(store, level="FAIL", query="cell")
    assert texts(fails) == ["bad cell 1/2"]


@pytest.mark.parametrize(("arguments", "code"), [
    ({}, "INVALID_QUERY"),
    ({"query": "  "}, "INVALID_QUERY"),
    ({"level": "WARN", "min_level": "INFO"}, "INVALID_QUERY"),
    ({"level": "LOUD"}, "INVALID_QUERY"),
    ({"query": "x", "scope": "test"}, "SELECTOR_REQUIRED"),
    ({"query": "x", "selector": "s1-t99"}, "NODE_NOT_FOUND"),
    ({"query": "x", "selector": "s1", "scope": "test"}, "NODE_NOT_IN_TEST"),
    ({"query": "x", "selector": "ig:s1-t3-k1:9-1"}, "NODE_NOT_FOUND"),
])
def test_bad_search_arguments(store: sqlite3.Connection, arguments: dict[str, Any], code: str) -> None:
    result = service.search_messages(store, run_id=1, **arguments)
    assert not result.ok and result.error is not None and result.error.code == code
    assert result.error.hint


def test_literal_and_unicode_matching(store: sqlite3.Connection) -> None:
    literal = "discount 50% off_peak for user_1 \\ back"
    for query in ("50%", "OFF_PEAK", "user_1 \\", "% off"):
        assert literal in texts(search(store, query=query, level="INFO")), query
    for query in ("50_", "off%peak", "user%1", "5O%"):
        assert search(store, query=query)["hits"] == [], query
    assert texts(search(store, query="登录", level="INFO")) == ["登录失败: 用户不存在"]
    assert texts(search(store, query="用户不存在", level="INFO")) == ["登录失败: 用户不存在"]
    assert texts(search(store, query="ärger", level="INFO")) == ["Ärger im Büro"]
    assert texts(search(store, query="ÄRGER IM BÜRO", level="INFO")) == ["Ärger im Büro"]
    assert "OK" in texts(search(store, query="ok", level="INFO", selector="s1-t4"))
    roomy = search(store, query="needle-in-haystack", level="INFO")
    assert not roomy["message_truncated"] and "y" * 1000 in texts(roomy)[0]  # the budget has room
    long = search(store, query="needle-in-haystack", level="INFO", budget=500)
    assert long["message_truncated"] and len(long["hits"]) == 1
    excerpt = long["hits"][0]["text"]
    assert "needle-in-haystack" in excerpt and "password=***" in excerpt and len(excerpt) < 500
    assert excerpt.startswith("[") and "characters cut]" in excerpt and "LongSecret" not in excerpt


def test_pages_follow_execution_order_with_bound_cursors(store: sqlite3.Connection) -> None:
    whole = search(store, level="INFO")
    seqs, cursor = [], None
    while True:
        page = dumped(service.search_messages(store, run_id=1, level="INFO", page_size=4,
                                              cursor=cursor, detail="full"))
        seqs += [hit["seq"] for hit in page["hits"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
        other = service.search_messages(store, run_id=1, min_level="INFO", cursor=cursor,
                                        detail="full")
        assert other.error is not None and other.error.code == "INVALID_CURSOR"
    assert seqs == [hit["seq"] for hit in whole["hits"]] == sorted(seqs)
    assert len(seqs) == len(set(seqs)) > 8
    small = dumped(service.search_messages(store, run_id=1, min_level="TRACE", budget=500))
    assert small["budget_truncated"] and small["estimated_tokens"] <= 500


def test_live_and_imported_runs_answer_the_same(stores: dict[str, Path]) -> None:
    def answers(path: Path) -> list[Any]:
        with open_store(path) as conn:
            found = [search(conn, min_level="TRACE"), search(conn, query="cell", selector="s1-t3")]
        return [[{k: v for k, v in hit.items() if k != "time"} for hit in f["hits"]] for f in found]
    assert answers(stores["live"]) == answers(stores["import"])


@pytest.mark.anyio
async def test_search_and_masking_over_stdio(stores: dict[str, Path], tmp_path: Path) -> None:
    with sqlite3.connect(stores["live"]) as source, sqlite3.connect(tmp_path / "store.sqlite3") as copy:
        source.backup(copy)  # the server opens tmp_path's store
    async with server(tmp_path) as client:
        found = await call(client, "search_messages", run_id=1, min_level="WARN", page_size=2,
                           detail="full")
        assert found["ok"] and len(found["hits"]) == 2 and found["next_cursor"]
        assert found["hits"][0]["text"] == "Login failed for bob with password=***"
        owner = next(n for n in found["nodes"] if n["node_id"] == found["hits"][0]["node_id"])
        assert owner["message"] == "Login failed for bob with password=***"  # its status too
        assert found["masked_values"] == 2 and "hunter2" not in json.dumps(found)
        nothing = await call(client, "search_messages", run_id=1)
        assert nothing["error"]["code"] == "INVALID_QUERY"
        resource = await client.read_resource("rf://runs/1/tests/s1-t1")
        body = resource.contents[0].text  # type: ignore[union-attr]
        assert "password=***" in body and "hunter2" not in body


@pytest.mark.parametrize("extra", [1, 20])
def test_a_cut_never_makes_a_text_longer(extra: int) -> None:
    """A text barely over a limit is shown whole: a mark saying "[1 characters cut]" is
    longer than what it replaces."""
    from rf_log_mcp.shaping import CUT_MARK, Shaper
    from rf_log_mcp.views.search import _HIT_CHARS, _excerpt, make_filter

    shaper = Shaper()
    text = "x" * (_HIT_CHARS + extra)
    assert shaper.cut(text, _HIT_CHARS) == text
    assert _excerpt(text, make_filter("xx", None, None), shaper, 0, len(text)) == text
    assert _excerpt(text, make_filter(None, "INFO", None), shaper, 0, len(text)) == text
    assert not shaper.texts_cut
    longer = "y" * (_HIT_CHARS + CUT_MARK + 1)
    assert len(shaper.cut(longer, _HIT_CHARS)) < len(longer) and shaper.texts_cut


def test_the_secret_words_spelled_out_are_their_spellings() -> None:
    """secret_names.SECRET_WORD_SPELLINGS (what robot's process reads instead of spelling the
    words at each run) is every text the words match, and a redactor without operator words
    answers by it as one that spells them."""
    from rf_log_listener import secret_names

    spelled = [s for word in secret_names.SECRET_WORDS for s in secret_names.spellings(word) or ()]
    assert sorted(secret_names.SECRET_WORD_SPELLINGS) == sorted(spelled)
    assert len(set(spelled)) == len(spelled)
    default, extended = Redactor(), Redactor(["pin"])
    assert default._secret_endings == (secret_names.SECRET_WORD_SPELLINGS, 21)  # password-confirmation
    assert set(extended._secret_endings[0]) == {*spelled, "pin"}
    for name in ("db_password", "X-Api-Key", "sessionId", "pin", "tokens", "author", "SID"):
        assert default.names_secret(name) == (name != "pin" and extended.names_secret(name))
    # the words as one tree of their shared prefixes match what their alternation matches
    tree, backwards = re.compile(default._names_tree), re.compile(default._reversed_names)
    for text in (*spelled, "pass", "apikeys", "api--key", "session", "passcodes", "credentialss"):
        words = re.fullmatch(f"(?:{default._words})", text) is not None
        assert (tree.fullmatch(text) is not None) == words == (text in spelled), text
        assert (backwards.fullmatch(text[::-1]) is not None) == words, text


# -- embedded data -------------------------------------------------------------------------

EMBEDDING_LIBRARY = '''
import base64, io, os
from PIL import Image
from robot.api import logger

def embed_screenshot():
    """As SeleniumLibrary's and Browser's EMBED write a screenshot into the log."""
    image = Image.frombytes("RGB", (400, 400), os.urandom(400 * 400 * 3))
    png = io.BytesIO()
    image.save(png, "PNG")
    payload = base64.b64encode(png.getvalue()).decode()
    logger.info('<img alt="qzx checkout page" class="robot-seleniumlibrary-screenshot" '
                f'src="data:image/png;base64,{payload}" width="800px">', html=True)

def save_screenshot():
    """As SeleniumLibrary's Capture Page Screenshot: a file in the output folder."""
    from robot.libraries.BuiltIn import BuiltIn
    folder = BuiltIn().get_variable_value("${OUTPUT_DIR}")
    Image.frombytes("RGB", (30, 20), os.urandom(30 * 20 * 3)).save(os.path.join(folder, "shot-1.png"))
    logger.info('<a href="shot-1.png"><img src="shot-1.png" width="800px"></a>', html=True)
'''


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose log holds an embedded screenshot, its output.xml and live store."""
    work = tmp_path_factory.mktemp("embedded")
    (work / "Embedding.py").write_text(EMBEDDING_LIBRARY)
    (work / "shots.robot").write_text(
        "*** Settings ***\nLibrary    Embedding.py\n\n*** Test Cases ***\nShot\n"
        "    Embed Screenshot\n    Log    after the qzx screenshot\n    Save Screenshot\n"
        "    Fail    checkout failed\n")
    done = robot("--listener", f"rf_log_listener:db={work / 'live.sqlite3'}", "shots.robot", cwd=work)
    assert done.returncode == 1, done.stdout + done.stderr
    return work


def _payload(conn: sqlite3.Connection) -> str:
    (text,) = conn.execute("SELECT text FROM messages WHERE html = 1").fetchone()
    return re.search(r";base64,([A-Za-z0-9+/=]+)", text).group(1)  # type: ignore[union-attr]


def _indexed(conn: sqlite3.Connection, token: str) -> int:
    return conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?",
                        (token,)).fetchone()[0]


def _deleted_cleanly(conn: sqlite3.Connection) -> None:
    """Deleting the run leaves nothing in the index: FTS5 was given the text it indexed."""
    delete_run(conn, 1)
    conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
    assert _indexed(conn, "qzx") == 0


@pytest.mark.parametrize("origin", ["live", "import", "postgresql"])
def test_embedded_screenshots_are_kept_whole_and_searchable_around_their_payload(
        embedded: Path, tmp_path: Path, origin: str, request: pytest.FixtureRequest) -> None:
    """The base64 payload of a data URI is not in the full-text index (its trigrams cost
    robot's process about a second a megabyte at the run's end): the message is stored
    whole, the markup around it is found, the payload is not."""
    db: Path | str = tmp_path / "store.sqlite3"
    if origin == "live":
        db.write_bytes((embedded / "live.sqlite3").read_bytes())  # type: ignore[union-attr]
    else:
        db = request.getfixturevalue("pg_url") if origin == "postgresql" else db
        import_result(open_store(db), embedded / "output.xml", stable_window=0)
    conn = open_store(db)
    payload = _payload(conn)
    assert len(payload) > 400_000  # stored whole
    assert [hit["id"] for hit in search(conn, query="qzx checkout page")["hits"]] == ["s1-t1-k1-m1"]
    assert [hit["id"] for hit in search(conn, query="qzx")["hits"]] == ["s1-t1-k1-m1", "s1-t1-k2-m1"]
    assert search(conn, query="data:image/png;base64,")["hits"]
    assert search(conn, query=payload[5000:5040])["hits"] == []
    if origin != "postgresql":  # FTS5's own view of its index
        assert _indexed(conn, "qzx") == 2
        _deleted_cleanly(conn)


def test_a_store_that_indexed_payloads_is_migrated_to_index_around_them(
        embedded: Path, tmp_path: Path) -> None:
    """A store of schema 10 indexed each message's whole text: opening it forgets the
    payloads' trigrams (as they were indexed) and indexes the text around them."""
    db = tmp_path / "store.sqlite3"
    conn = open_store(db)
    import_result(conn, embedded / "output.xml", stable_window=0)
    payload = _payload(conn)
    conn.execute("INSERT INTO messages_fts (messages_fts, rowid, text) SELECT 'delete', key,"
                 " rf_indexed_text(text) FROM messages WHERE html = 1")
    conn.execute("INSERT INTO messages_fts (rowid, text) SELECT key, text FROM messages WHERE html = 1")
    conn.execute("ALTER TABLE runs DROP COLUMN dry_run")  # schema 12's
    conn.execute("ALTER TABLE runs DROP COLUMN copy_of")  # schema 13's
    conn.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    def indexed_payload() -> int:  # the trigram index answers LIKE: what it indexed
        return conn.execute("SELECT count(*) FROM messages_fts WHERE text LIKE ?",
                            (f"%{payload[5000:5040]}%",)).fetchone()[0]

    assert indexed_payload() == 1  # as schema 10 had it
    conn.close()
    conn = open_store(db)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),)
    assert indexed_payload() == 0
    assert search(conn, query=payload[5000:5040])["hits"] == []
    assert [hit["id"] for hit in search(conn, query="qzx checkout page")["hits"]] == ["s1-t1-k1-m1"]
    _deleted_cleanly(conn)


HTML_SUITE = """\
*** Variables ***
${LINK}    <a href="https://shop.example/o/42">shop</a>
${TABLE}    <div><table><caption>Query returned 2 rows</caption>
...    <tr><th>Row</th><th>id</th><th>name</th></tr><tr><th>0</th><td>1</td><td>alice</td></tr>
...    <tr><th>1</th><td>2</td><td>bob</td></tr></table></div>Done

*** Test Cases ***
Order
    Log    <b>Order</b> <i>42</i> failed &amp; rolled back<br>by the ${LINK}    html=True
    Log    Order 42 retried in plain text
    Fail    *HTML* <span class="reason">Payment</span> <b>declined</b> for order 42

Login
    Log    <b>Login</b> with password=Qx-77-html    html=True
    Log    ${TABLE}    html=True
"""


@pytest.mark.parametrize("origin", ["live", "xml", "json", "postgresql"])
def test_html_log_messages_are_searched_as_they_show(
        tmp_path: Path, origin: str, request: pytest.FixtureRequest) -> None:
    """An HTML log message (``html=True``, a library's ``*HTML*``) is found by the text it
    shows (words the markup separates, characters written as entities) and by its links, never
    by its tags and attributes; a keyword's ``*HTML*`` failure is its logged message, not
    again its status."""
    (tmp_path / "html.robot").write_text(HTML_SUITE)
    live = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={live}", "--output", "output.xml",
                 "html.robot", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    db: Path | str = live
    if origin != "live":
        db = request.getfixturevalue("pg_url") if origin == "postgresql" else tmp_path / "i.sqlite3"
        source = tmp_path / "output.xml"
        if origin == "json":
            from robot.api import ExecutionResult
            ExecutionResult(source).save(source := tmp_path / "output.json")
        import_result(open_store(db), source, stable_window=0)
    conn = open_store(db)

    def found(query: str, **arguments: Any) -> list[tuple[str, str | None]]:
        return [(hit["id"], hit.get("kind")) for hit in search(conn, query=query, **arguments)["hits"]]

    shown = "Order 42 failed & rolled back\nby the shop"
    hits = search(conn, query="order 42 FAILED & rolled")["hits"]
    assert [(hit["id"], hit["text"], hit["html"]) for hit in hits] == [("s1-t1-k1-m1", shown, True)]
    assert [a["reference"] for a in hits[0]["attachments"]] == ["https://shop.example/o/42"]
    assert found("back by the shop") == []  # a line break is not a space
    assert found("shop.example/o/42") == [("s1-t1-k1-m1", None)]  # its link, as answers show it
    assert found("order 42") == [("s1-t1-k1-m1", None), ("s1-t1-k2-m1", None),
                                 ("s1-t1-k3-m1", None)]  # the test's status is k3's: said below
    assert found("Payment declined") == [("s1-t1-k3-m1", None)]  # not k3's status again
    assert found("payment", level="FAIL") == [("s1-t1-k3-m1", None)]
    for markup in ("<b>", "span", "reason", "&amp;", "href", "<br>", "i>42"):
        assert found(markup) == [], markup
    assert found("shop", scope="node", selector="s1-t1-k1") == [("s1-t1-k1-m1", None)]
    grouped = dumped(service.search_messages(conn, "order 42 failed", run_id=1, group_by="node"))
    assert [(g["node_id"], g["count"], g["first"]["text"], g["first"]["html"])
            for g in grouped["groups"]] == [("s1-t1-k1", 1, shown, True)]
    # a masked value is counted once, in a grouped search as in the plain one
    plain = dumped(service.search_messages(conn, "login with", run_id=1))  # compact, as grouped
    assert [(h["id"], h["text"]) for h in plain["hits"]] == [("s1-t2-k1-m1", "Login with password=***")]
    grouped = dumped(service.search_messages(conn, "login with", run_id=1, group_by="node"))
    assert grouped["groups"][0]["first"]["text"] == "Login with password=***"
    assert plain["masked_values"] == grouped["masked_values"] == 1
    # a table (DatabaseLibrary's query results) shows a row a line, its cells apart
    table = search(conn, query="alice")["hits"]
    assert [(hit["id"], hit["text"]) for hit in table] == [(
        "s1-t2-k2-m1", "Query returned 2 rows\nRow | id | name\n0 | 1 | alice\n1 | 2 | bob\nDone")]
    assert found("1alice") == found("rowsRow") == []
    if origin == "live":
        out = cli("search", "1", "42 failed & rolled", "--db", str(db))
        assert out.returncode == 0 and "s1-t1-k1-m1" in out.stdout and "<b>" not in out.stdout, out


def test_the_command_line_shows_screenshots_and_saves_them(embedded: Path, tmp_path: Path) -> None:
    """log.html shows a screenshot inline; a terminal names it, with the command that
    writes it to a file (an embedded one cannot be opened from the log's text)."""
    db = str(embedded / "live.sqlite3")
    failures = cli("failures", "1", "--db", db)
    assert failures.returncode == 0, failures.stderr
    assert "image data:image/png;base64,…, " in failures.stdout
    assert "rf-log-mcp attachment 1 s1-t1-k1-m1 0" in failures.stdout
    assert "image shot-1.png, " in failures.stdout
    assert "rf-log-mcp attachment 1 s1-t1-k3-m1 0" in failures.stdout
    found = cli("search", "1", "qzx checkout", "--db", db)
    assert "rf-log-mcp attachment 1 s1-t1-k1-m1 0" in found.stdout, found.stdout
    shown = cli("message", "1", "s1-t1-k1-m1", "--db", db)  # its text is the image alone
    assert shown.stdout.startswith("image data:image/png;base64,…, "), shown.stdout
    with open_store(db) as conn:
        part = dumped(service.get_view(conn, "message", run_id=1, selector="s1-t1-k3-m1"))
    assert part["message"]["attachments"] == [{
        "message_id": "s1-t1-k3-m1", "index": 0, "kind": "image", "reference": "shot-1.png",
        "embedded": False, "media_type": "image/png",
        "size_bytes": (embedded / "shot-1.png").stat().st_size, "exists": True}]
    conn = open_store(db)
    payload = _payload(conn)
    conn.close()
    for message_id, expected in (("s1-t1-k1-m1", base64.b64decode(payload)),
                                 ("s1-t1-k3-m1", (embedded / "shot-1.png").read_bytes())):
        saved = tmp_path / f"{message_id}.png"
        done = cli("attachment", "1", message_id, "--save", str(saved), "--db", db)
        assert done.returncode == 0, done.stderr
        assert f"saved {len(expected):,} bytes to {saved}" in done.stdout
        assert saved.read_bytes() == expected
    refused = cli("attachment", "1", "s1-t1-k1-m1", "--save", str(tmp_path / "no" / "x.png"), "--db", db)
    assert refused.returncode == 2 and "INVALID_ARGUMENT" in refused.stderr


def test_a_library_keyword_s_positional_secret_is_masked_by_its_signature() -> None:
    """SSHLibrary's ``Login  user  password`` and DatabaseLibrary's ``Connect To Database``
    name no secret, but their signatures do: that argument is masked (in the node's args and
    RF's TRACE line), only for that library, never a variable's name."""
    redactor = Redactor()
    assert redactor.args("Login", ["deploy", "Hunt3r-x", "True"], "SSHLibrary") == (
        ["deploy", "***", "True"], 1)
    assert redactor.args("login", ["deploy", "Hunt3r-x"], "ssh_library") == (["deploy", "***"], 1)
    assert redactor.args("Login", ["deploy", "Hunt3r-x"], "Shop") == (["deploy", "Hunt3r-x"], 0)
    assert redactor.args("Login", ["deploy", "${SSH_CRED}"], "SSHLibrary") == (
        ["deploy", "${SSH_CRED}"], 0)
    assert redactor.args("Login", ["deploy", "look_for_keys=True"], "SSHLibrary") == (
        ["deploy", "look_for_keys=True"], 0)
    assert redactor.args("Connect To Database", ["pymysql", "app", "root", "Db-Pw9", "db", "3306"],
                         "DatabaseLibrary") == (["pymysql", "app", "root", "***", "db", "3306"], 1)
    assert redactor.trace_message("Arguments: [ 'deploy' | 'Hunt3r-x' ]", "Login",
                                  ["deploy", "${SSH_CRED}"], None, "SSHLibrary") == (
        "Arguments: [ 'deploy' | *** ]", 1)
    # the text typed into a password field (a word of the locator names one)
    assert redactor.args("Fill Text", ["id=pin", "9911"], "Browser") == (["id=pin", "***"], 1)
    assert redactor.args("Input Text", ["css:#loginOtp", "9911"], "SeleniumLibrary") == (
        ["css:#loginOtp", "***"], 1)
    assert redactor.args("Type Text", ["id=username", "bob-1"], "Browser") == (
        ["id=username", "bob-1"], 0)
    assert redactor.args("Fill Text", ["id=pin", "9911"], "Shop") == (["id=pin", "9911"], 0)
    # FtpLibrary's and RPA.Email.ImapSmtp's passwords, AppiumLibrary's typed text
    assert redactor.args("Ftp Connect", ["ftp.example.com", "bob", "Ftp-Pw1"], "FtpLibrary") == (
        ["ftp.example.com", "bob", "***"], 1)
    assert redactor.args("Authorize", ["bot@example.com", "Imap-Pw2"], "RPA.Email.ImapSmtp") == (
        ["bot@example.com", "***"], 1)
    assert redactor.args("Input Text", ["accessibility_id=password", "Ap-Pw3"], "AppiumLibrary") == (
        ["accessibility_id=password", "***"], 1)


@pytest.mark.parametrize(("name", "secret"), [
    ("Input Password", True), ("SeleniumLibrary.Input Password", True), ("Set Api Key", True),
    ("Get Auth Token For User", True), ("input_password", True), ("Set Tokens", True),
    ("Enter Password And Submit", True), ("Get Session Id", True), ("Add Cookie", True),
    ("Open Sidebar", False), ("Click Inside Frame", False), ("Should Be Authentic", False),
    ("Tokenize Text", False), ("Consider Order", False), ("Test Should Pass", False),
    ("Passwordless Login", False), ("Check Sessions", False),
])
def test_a_keyword_names_a_secret_by_a_word_not_a_piece_of_one(name: str, secret: bool) -> None:
    """A keyword whose name's word ends with a secret's name (or its plural) takes secret
    values after its first argument, and returns one; a word that only holds one ("sid" in
    Sidebar and Inside, "auth" in Authentic) does not make the keyword's arguments secret."""
    redactor = Redactor()
    masked = ["id:x", "***"] if secret else ["id:x", "Main-Menu-7"]
    assert redactor.args(name, ["id:x", "Main-Menu-7"]) == (masked, int(secret))
    assert redactor.trace_message("Return: 'Main-Menu-7'", name)[0] == (
        "Return: ***" if secret else "Return: 'Main-Menu-7'")


@pytest.mark.parametrize(("text", "shown"), [
    ("db_pass=Qw7-x user=app", "db_pass=*** user=app"), ("${DB_PASS} = Qw7-x", "${DB_PASS} = ***"),
    ('{"admin-pass": "Qw7-x"}', '{"admin-pass": "***"}'), ("api_pw: Qw7-x", "api_pw: ***"),
    ("PW=Qw7-x", "PW=***"),
    ("Tests: pass=10, fail=2", None), ("bypass=localhost", None), ("compass=north", None),
    ("first pass: ok", None), ("passed=12", None),
])
def test_short_password_names_are_secret_names(text: str, shown: str | None) -> None:
    """``PASS`` after a separator and ``PW`` name passwords; "pass" alone is the status word
    and the end of other words."""
    assert Redactor().text(text)[0] == (shown or text)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.lists(st.text("abcd-1", min_size=4, max_size=9), min_size=1, max_size=40),
       st.lists(st.text("abcd-1 x", max_size=30), min_size=1, max_size=8))
def test_many_known_values_mask_a_text_as_a_search_for_each_would(
        values: list[str], texts: list[str]) -> None:
    """A run with many known values (a data-driven run's passwords) reads a text for the
    values' starts instead of searching it for each (5,000 values: 227 → 16 µs a text): the
    same masks, the longest value first, whichever way; a value inside another goes with it."""
    import rf_log_listener.known_values as known

    many = [*values, *(f"filler-{i:04d}" for i in range(known.INDEXED_FROM))]
    indexed = known.KnownValues(many)
    searched = known.KnownValues(many)
    searched._starts = None  # each value searched for, as below INDEXED_FROM
    for text in texts:
        for shown in (text, text * 40):  # short and long: each takes its cheaper way
            assert indexed.mask(shown) == searched.mask(shown)
    whole = known.KnownValues([*many, "abcd-abcd", "abcd"])
    assert whole.mask("x abcd-abcd y abcd") == ("x *** y ***", 2)


def test_the_head_of_a_value_robot_cut_masks_its_whole_token() -> None:
    """A secret robot cut at ``--maxassignlength`` is registered as its head (ending with
    ``HEAD_MARK``): masked with the rest of its token, up to a space, quote, markup or a
    pairs' separator, wherever it occurs; values registered whole are masked as before."""
    from rf_log_listener.known_values import HEAD_MARK, KnownValues

    known = KnownValues([f"tok-0123{HEAD_MARK}", "plain-pw-9"])
    assert known.mask('{"t": "tok-0123456789abc", "p": "plain-pw-9"} tok-0123x&y=1 <b>tok-0123z</b>') == (
        '{"t": "***", "p": "***"} ***&y=1 <b>***</b>', 4)
    assert known.mask("tok-012 stays") == ("tok-012 stays", 0)
    assert KnownValues([f"tok-0123{HEAD_MARK}"]) and not KnownValues([f"ab{HEAD_MARK}"])
