"""What a secret looks like by itself, shared by both sides through ``masking``: vendor
tokens, URL and curl credentials, a command's password option or an option named like a
secret, a password piped to a command, bearer tokens, JWTs, private keys, webhook URLs, a
password in prose and text typed into a password field, with what masks each; the names a
secret's value follows are in ``secret_names``. Every pattern is compiled at its first use
(issue #19).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from functools import cache

from .secret_names import (
    SEPARATOR,
    VALUE,
    VALUE_SCHEME,
    YAML_BLOCK,
    YAML_NEXT_LINE,
    escaped_value,
    name_steps,
    shared_prefixes,
)

MASK = "***"


# What prints a password into a pipe (``echo x |``, ``echo -n x |``, ``printf 'x\n' |``,
# ``printf '%s\n' x |``), and the password (group value): quoted where the caller's group q
# matched a quote, else a word; printf's ``\n`` after it is no part of it.
PIPED_HEAD = (r"""\b(?:echo[ \t]+(?:-[neE]{1,3}[ \t]+)*"""
              r"""|printf[ \t]+(?:--[ \t]+)?(?:(?:'%s(?:\\n)?'|"%s(?:\\n)?")[ \t]+)?)""")
PIPED_VALUE = (r"""(?P<value>(?(q)[^'"\n]+?(?=(?:\\n)?['"])"""
               r"""|[^\s'"|;&]+?(?=(?:\\n)?(?:[\s'"|;&]|$))))""")


def lazy_pattern(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A pattern compiled at its first use, not when its module is imported: a compilation
    costs every robot process that loads the listener 0.1-0.4 ms, and a short run uses few
    of these patterns (issue #19)."""
    return cache(lambda: re.compile(pattern, flags))


# Vendor tokens, masked wherever they occur: (prefix, body). The prefixes are also what
# Redactor._trigger looks for (``shape_marks``), so a token added here is never skipped by
# it; each is a sequence of characters and classes (``secret_names.name_steps``).
VENDOR_TOKENS = (
    ("gh[pousr]_", "[A-Za-z0-9]{30,}"), ("github_pat_", "[A-Za-z0-9_]{30,}"), ("AKIA", "[0-9A-Z]{16}"),
    ("xox[abprs]-", "[A-Za-z0-9-]{10,}"), ("sk-", "[A-Za-z0-9_-]{20,}"), ("glpat-", "[A-Za-z0-9_-]{20,}"),
    # npm, Stripe (secret and restricted keys), Google API keys, Hugging Face, PyPI, Docker
    # Hub, DigitalOcean, SendGrid, Shopify: each its documented prefix and length
    ("npm_", "[A-Za-z0-9]{36}"), ("[sr]k_live_", "[A-Za-z0-9]{16,}"), ("[sr]k_test_", "[A-Za-z0-9]{16,}"),
    ("AIza", "[0-9A-Za-z_-]{35}"), ("hf_", "[A-Za-z]{34}"), ("pypi-AgEI", "[A-Za-z0-9_-]{50,}"),
    ("dckr_pat_", "[A-Za-z0-9_-]{20,}"), ("dop_v1_", "[a-f0-9]{64}"),
    (r"SG\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    *((f"shp{kind}_", "[a-fA-F0-9]{32}") for kind in ("at", "ss", "ca", "pa")),
    # Google's OAuth access tokens, Slack's app-level tokens, GitLab's runner, deploy and
    # pipeline trigger tokens, HashiCorp Vault's service, batch and recovery tokens,
    # Atlassian's API tokens (Jira, Xray), Databricks, Grafana's service accounts, New Relic,
    # Postman, Stripe's webhook secrets, Tailscale, Supabase, Linear, age's secret keys
    (r"ya29\.", "[0-9A-Za-z_-]{20,}"), ("xapp-", "[0-9]-[A-Za-z0-9-]{20,}"),
    ("glrt-", "[A-Za-z0-9_-]{20,}"), ("gldt-", "[A-Za-z0-9_-]{20,}"), ("glptt-", "[0-9a-f]{40}"),
    (r"hv[sbr]\.", "[A-Za-z0-9_-]{24,}"), ("ATATT3", "[A-Za-z0-9_=-]{50,}"), ("dapi", "[a-f0-9]{32}"),
    ("glsa_", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"), ("NRAK-", "[A-Z0-9]{27}"),
    ("PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"), ("whsec_", "[A-Za-z0-9+/]{24,}"),
    ("tskey-", "[A-Za-z0-9-]{30,}"), ("sbp_", "[a-f0-9]{40}"), ("lin_api_", "[A-Za-z0-9]{40}"),
    ("AGE-SECRET-KEY-1", "[0-9A-Z]{58}"),
)
# HTTP Basic credentials out of a header (``masked_scheme``): the scheme, one blank, base64;
# SMTP's AUTH PLAIN (smtplib's debug output, ``send: 'AUTH PLAIN AGJvYgB4'``) alike
_BASIC_MARK = "basic[ \t]" + "[a-z0-9+/]" * 8
_PLAIN_MARK = "auth[ \t]plain[ \t]" + "[a-z0-9+/]" * 8
# Webhook URLs whose path is their credential (anyone holding one posts as the team): the
# URL's start, kept; the rest of it is masked.
_WEBHOOKS = (r"hooks\.slack\.com/(?:services|workflows|triggers)/",
             r"(?:[\w-]+\.)?discord(?:app)?\.com/api/webhooks/", r"[\w-]+\.webhook\.office\.com/",
             r"outlook\.office(?:365)?\.com/webhook/", r"hooks\.zapier\.com/hooks/catch/")
# Commands whose options take a password on their command line (a test logs the command it
# runs: Process, SSHLibrary, OperatingSystem): the command, a pattern as it is written before
# the option on its line; its password options, whose case matters (MySQL's -P is its port,
# sqlcmd's -p its statistics, ssh-keygen's -n its principals); how the value follows them:
# apart or attached (EITHER), attached only (MySQL's, MariaDB's and 7-Zip's -p: "-p" alone
# asks for it, the next word is the database or the archive), apart only (APART).
# ``docker run -p 8080:80``, ``mkdir -p``, ``ssh -p 2222`` and ``zip -r`` stay.
EITHER, ATTACHED, APART = "either", "attached", "apart"
PASSWORD_OPTIONS = (
    (r"(?:docker|podman|nerdctl)\b[^;|\n]{0,300}?\blogin", ("-p",), EITHER),
    (r"sshpass", ("-p",), EITHER),
    (r"(?:mysql|mariadb)\w*", ("-p",), ATTACHED),
    (r"7z[ar]?", ("-p",), ATTACHED),
    (r"redis-cli", ("-a", "--pass"), APART),
    (r"sqlcmd|bcp", ("-P",), EITHER),
    # FreeTDS' tsql and Sybase's isql (``isql -Usa -Px``; unixODBC's isql takes none), SAP
    # HANA's hdbsql, Cassandra's cqlsh, NcFTP
    (r"tsql|isql", ("-P",), EITHER), (r"hdbsql|cqlsh|ncftp\w*", ("-p",), APART),
    (r"mongo(?:sh|dump|restore|import|export|stat|top|files)?", ("-p",), APART),
    (r"ldap(?:search|add|modify|delete|modrdn|compare|whoami|passwd|exop)", ("-w",), APART),
    (r"ldappasswd", ("-a", "-s"), APART),  # the old and the new password
    (r"keytool|jarsigner", ("-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass",
                  "-destkeypass", "-new"), APART),
    (r"ssh-keygen", ("-N", "-P"), APART),  # the new and the old passphrase
    (r"zip|unzip|zipcloak", ("-P",), APART),
    (r"az\b[^;|\n]{0,300}?\blogin", ("-p",), APART),
    (r"(?:psexec(?:64)?|paexec)", ("-p",), APART),  # Sysinternals' PsExec: -u user -p x
    # a server's management controller (OpenBMC's and hardware labs' suites): IPMI's
    # ``ipmitool -U admin -P x``, Dell's ``racadm -u root -p x``, DMTF's ``redfishtool -p x``;
    # and ``rdesktop -p x``
    (r"ipmitool", ("-P",), APART), (r"racadm|redfishtool|rdesktop", ("-p",), APART),
    # MQTT's clients (``mosquitto_pub -u bob -P x``), RabbitMQ's CLI, curl's OAuth 2 token
    (r"mosquitto_(?:pub|sub|rr)", ("-P",), APART), (r"rabbitmqadmin", ("-p",), APART),
    (r"curl", ("--oauth2-bearer",), APART),
    (r"openssl[ \t]+(?:enc|aes-\d+-\w+|des3?\w*|bf\w*)", ("-k",), APART),  # ``openssl enc -k x``
    # Net-SNMP's tools: a v1/v2c community (its password), v3's authentication and privacy
    # pass phrases (-a and -x name their protocols)
    (r"snmp(?:walk|bulkwalk|get|getnext|bulkget|set|table|trap|inform|status|df|netstat|delta)",
     ("-c", "-A", "-X"), APART),
)
# The words a secret's option ends with (``--token``, ``--client-secret``, ``--api-key``):
# the option's value follows apart. Fewer than a secret's name (``--auth basic``, ``--cookie
# jar.txt``, ``--credentials file.json`` name no secret value).
_OPTION_WORDS = (r"token|secret|password|passwd|passphrase"
                 r"|(?:api|access|secret|private|signing|encryption)[-_]?key")
# What the other shapes cannot match without (lower-cased): URL credentials and webhooks, a bearer
# token, a JWT's header, a private key's armour, curl's credentials, SQL's IDENTIFIED BY, a
# password piped to ``sudo -S`` or ``--password-stdin``, OpenSSL's ``-passin pass:x``, an
# option named like a secret before a space, a signed URL's signature, a vendor token.
# (Patterns, bounded as the rules' own context is: CURL_REACH.) A command's password option
# is looked for apart (``may_hold_password_option``): as a mark, its fifteen commands made
# the scan of every text a third slower and its compiling 1 ms longer.
SHAPE_MARKS = ("://", "bearer", "eyj", "private key", "ls0tls1crudjti", "curl",
               r"identified[ \t]+(?:by|with)\b", r"set[ \t]+password[ \t]+for\b", r"\|[ \t]*sudo\b",
               "password-stdin", "<<<", r"\|[ \t]*(?:sudo[ \t]+)?kinit\b", "--stdin\\b",
               r"-pass(?:in|out)?[ \t]+['\"]?pass:",
               r"-[\w-]*?(?:token|secret|passw|passphrase|key)[ \t]", "sig(?:nature)?=")


@functools.cache
def shape_marks(others: tuple[str, ...]) -> tuple[str, ...]:
    """SHAPE_MARKS and, as one tree of their shared prefixes, the vendor tokens' prefixes,
    HTTP Basic credentials' and AUTH PLAIN's marks, PowerShell's ``ConvertTo-SecureString``
    and ``others`` (the gated shapes' marks: ``gated_shapes.TRIGGER_MARKS``, each a sequence
    of characters and classes): ``re`` tries an alternation's branches one by one at each
    position, so fifteen prefixes as branches made the trigger scan 2.5 → 3.2 µs a text; as
    a tree 2.4."""
    marks = [[step.lower() for step in steps] for steps in _vendor_prefix_steps()]
    return (*SHAPE_MARKS, shared_prefixes(
        marks + _steps_of((_BASIC_MARK, _PLAIN_MARK, "convertto-securestring", *others))))


@functools.cache
def _vendor_prefix_steps() -> list[list[str]]:
    """Each vendor token's prefix as its steps: the trigger's tree (lower-cased) and the
    tokens' pattern are made of them."""
    return _steps_of(prefix for prefix, _ in VENDOR_TOKENS)


def _steps_of(patterns: Iterable[str]) -> list[list[str]]:
    """Patterns as their steps (``secret_names.name_steps``), each a sequence of characters
    and classes, as a tree of shared prefixes is made of."""
    steps = [name_steps(pattern) for pattern in patterns]
    assert all(steps), "a mark is more than characters and classes"
    return steps  # type: ignore[return-value]


class _Shapes:
    """Secrets by their shape, and what follows a secret's name: compiled when first used
    (an answer masked, a message that mentions a secret), not by every robot process that
    loads the listener."""

    def __init__(self) -> None:
        # the user may be empty: Redis' ``redis://:password@cache:6379/0``
        self.url_credentials = re.compile(
            r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*://[^\s:/@]*:)([^\s/@]+)(@)")
        # a bearer token, and HTTP Basic credentials out of a header (a header's value is its
        # name's): base64 of "user:password", told from a word by decoding (``masked_scheme``)
        self.scheme_credentials = re.compile(
            r"(?i)\b(Bearer\s+|Basic[ \t]|AUTH[ \t]PLAIN[ \t])([A-Za-z0-9\-._~+/]{8,}=*)")
        self.private_key = re.compile(
            r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)(.*?)"
            r"(-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL,
        )
        # -u/--user user:password, masked on a curl command line only (``curl_credentials``):
        # found from the option, so a line of many "curl"s is not scanned from each of them
        self.curl_user = re.compile(
            r"""(?P<head>(?<![\w-])(?:-u|--user)(?:[ \t=]+|(?=[^\s-]))(?P<q>['"])?[^\s:'"]+:)"""
            r"""(?P<value>(?(q)[^'"\n]+|[^\s'"]+))""")
        # a password option, masked on the line of a command whose option it is
        # (``command_passwords``)
        options = sorted({o for _, opts, _ in PASSWORD_OPTIONS for o in opts}, key=len, reverse=True)
        self.password_option = re.compile(
            rf"""(?P<head>(?<![\w-])(?P<option>{'|'.join(options)})(?P<gap>[ \t]+)?(?P<q>['"])?)"""
            r"""(?P<value>(?(q)[^'"\n]+|[^\s'"-][^\s'"]*))""")
        # SQL's CREATE/ALTER USER ... IDENTIFIED [WITH plugin] BY password (Oracle, MySQL),
        # masked in such a statement only (``sql_passwords``)
        self.identified_by = re.compile(  # and MySQL's SET PASSWORD FOR 'u'@'h' = 'x'
            r"""(?i)(?P<head>(?:\bidentified[ \t]+(?:with[ \t]+\w+[ \t]+)?by[ \t]+"""
            r"""|(?P<set>\bset[ \t]+password[ \t]+for[ \t]+[^\s=]+[ \t]*=[ \t]*))(?P<q>['"])?)"""
            r"""(?P<value>(?(q)[^'"\n]+|[^\s;'"]+))""")
        # echo password | sudo -S ... (-S: sudo reads the password from its standard input;
        # printf 'password\n' | too),
        # echo password | docker login --password-stdin (and podman's, helm's), echo password |
        # kinit user@REALM (Kerberos reads it from its input), echo password | passwd --stdin
        # user (Red Hat's)
        self.sudo_stdin = re.compile(
            rf"""(?P<head>{PIPED_HEAD}(?P<q>['"])?){PIPED_VALUE}"""
            r"""(?=(?:\\n)?(?(q)['"])[ \t]*\|[ \t]*(?:sudo\b[^\n;|&]{0,300}?(?<![\w-])-[A-Za-z]*S\b"""
            r"""|[\w-]+\b[^\n;|&]{0,300}?(?<![\w-])--password-stdin(?![\w-])"""
            r"""|(?:sudo[ \t]+)?kinit\b|(?:sudo[ \t]+)?passwd\b[^\n;|&]{0,300}?(?<![\w-])--stdin\b))""")
        # the same commands given it by bash's here-string: sudo -S cmd <<< password,
        # docker login -u ci --password-stdin <<< password
        self.stdin_herestring = re.compile(
            r"""(?P<head>(?:\bsudo\b[^\n;|&]{0,300}?(?<![\w-])-[A-Za-z]*S\b"""
            r"""|(?<![\w-])--password-stdin(?![\w-]))[^\n;|&<]{0,300}?<<<[ \t]*(?P<q>['"])?)"""
            r"""(?P<value>(?(q)[^'"\n]+|[^\s'"|;&]+))""")
        # OpenSSL's pass phrase given on its command line: -passin pass:x, -passout, -pass
        self.openssl_pass = re.compile(
            r"""(?P<head>(?<![\w-])-pass(?:in|out)?[ \t]+(?P<q>['"])?pass:)"""
            r"""(?P<value>(?(q)[^'"\n]+|[^\s'"]+))""")
        # PowerShell's plain password made a SecureString on its command line
        # (``ConvertTo-SecureString 'x' -AsPlainText -Force``, ``-String "x"``); not a variable
        self.secure_string = re.compile(
            r"""(?i)(?P<head>\bConvertTo-SecureString(?:[ \t]+-(?:AsPlainText|Force)\b)*[ \t]+"""
            r"""(?:-String[ \t]+)?(?P<q>['"])?)(?P<value>(?(q)[^'"\n]+|[^\s'");|$-][^\s'");|]*))""")
        # a command's option named like a secret, its value apart (``kubectl --token x``,
        # ``--client-secret x``, Go's ``-token x``; with "=" the name rules read it): masked
        # when the value is no word, path, URL or variable (``secret_option_value``)
        self.secret_option = re.compile(
            rf"""(?i)(?P<head>(?<![\w-])--?(?:[a-z0-9]+[-_])*(?:{_OPTION_WORDS})[ \t]+(?P<q>['"])?)"""
            r"""(?P<value>(?(q)[^'"\n]+|[^\s'"-][^\s'"]*))""")
        self.webhook = re.compile(rf"(?i)(?P<head>\bhttps?://(?:{'|'.join(_WEBHOOKS)}))(?P<value>[^\s'\"<>]+)")
        # a signed URL's signature, in its query: Azure's SAS (``...&sig=x``), S3's and GCS's
        # presigned URLs (``X-Amz-Signature=``, ``X-Goog-Signature=``), CloudFront's and OSS's
        # ``Signature=``, COS's ``q-signature=``: the URL grants access until it expires
        self.sas_signature = re.compile(
            r"(?i)(?P<head>[?&](?:[a-z0-9]+-)*sig(?:nature)?=)(?P<value>[^&\s'\"<>#]+)")
        self.jwt = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
        # a PEM block in base64 ("-----BEGIN " is "LS0tLS1CRUdJTi"): kubeconfig's
        # client-key-data, a Kubernetes secret's tls.key (``masked_base64_key``)
        self.base64_pem = re.compile(r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}")
        # one tree of the prefixes, each ending with its body; no \b before it (``re`` then
        # skips to the positions whose character may begin one: 2.8 → 2.6 µs a JSON
        # response, with twice the tokens): ``masked_vendor_token`` checks that boundary
        self.vendor_tokens = re.compile(shared_prefixes(
            [[*steps, f"(?:{body})"] for steps, (_, body) in zip(_vendor_prefix_steps(), VENDOR_TOKENS,
                                                                 strict=True)]) + r"\b")
        # What follows a secret's name: a closing quote, perhaps escaped (``bs``), or brace
        # (``"token":``, ``\"token\":``, ``${token} =``), the separator, an auth scheme, the
        # value (between escaped quotes after an escaped one: ``escaped_value``).
        self.after_name = re.compile(
            r"""(?P<close>(?P<bs>\\{1,3})?["']|[}])? (?P<item>\])? [ \t]*(?:(?P<arrow>=>)|(?!=>)"""
            + SEPARATOR + r""")""" + YAML_NEXT_LINE + r"""[ \t]*
                (?:""" + VALUE_SCHEME + r""")?
                (?(arrow)(?(close)|(?(item)|(?=["']))))
                (?P<value> (?(block) """ + YAML_BLOCK + r""" | (?(bs) """ + escaped_value("close")
            + " | (?:" + VALUE + r""") ) ) )""",
            re.IGNORECASE | re.VERBOSE)


compiled_shapes = functools.cache(_Shapes)
# A password in prose, without a separator: "login failed for bob with password Hunter2x".
# The value is masked only when it cannot be an English word (``looks_random``: a digit or
# one of ._-+/=) or is quoted, so "password field", "password is incorrect" and "password
# reset" stay.
# Compiled on its own: robot's writer asks it of every message that holds "pass".
# A quoted one may hold spaces, a passphrase ("with passphrase 'open sesame'" was shown).
_PROSE_WORDS = r"pass(?:word|wd|phrase)[ \t]+(?:(?:is|was|of)[ \t]+)?"
_PROSE_CHAR = r"""[^\s'",;:=()\[\]{}<>]"""
_PROSE_QUOTED = r"""[^'"\n]{3,99}[^'"\n.!?]"""  # a sentence quoted ('Reset.') is none
_PROSE_PLAIN = rf"""{_PROSE_CHAR}{{3,}}[^\s'",;:=()\[\]{{}}<>.!?]"""
PROSE_PASSWORD = lazy_pattern(
    rf"""(?i)\b(?P<lead>{_PROSE_WORDS}(?P<quote>['"])?)"""
    rf"""(?P<value>(?(quote)(?:{_PROSE_QUOTED}(?=(?P=quote))|{_PROSE_PLAIN})|{_PROSE_PLAIN}))""")
# What the trigger scan looks for of it: the lead and a value with a digit or one of
# _-+/ (or a dot inside it), so "Password Reset" in a test's name compiles no rule.
PROSE_MARK = (rf"""{_PROSE_WORDS}(?:['"]?{_PROSE_CHAR}*?(?:[0-9_+/-]|\.{_PROSE_CHAR})"""
              rf"""|'{_PROSE_QUOTED}'|"{_PROSE_QUOTED}")""")


def masked_base64_key(match: re.Match[str]) -> str:
    """A PEM block in base64 when its armour says it is a private key (a certificate, public,
    stays)."""
    import base64
    import binascii

    head = match[0][:96]
    try:
        armour = base64.b64decode(head[:len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return match[0]
    return MASK if b"PRIVATE KEY" in armour.split(b"\n", 1)[0] else match[0]


def masked_key(match: re.Match[str]) -> str:
    """A private key's body, its armour kept (an empty body stays empty)."""
    return f"{match[1]}{MASK if match[2].strip() else match[2]}{match[3]}"


def masked_credentials(match: re.Match[str]) -> str:
    """A URL's password, the scheme, user and host kept."""
    return match[0] if match[2] == MASK else f"{match[1]}{MASK}{match[3]}"


# How far before a command's option (curl's -u, a -p) its command may be on its line, or
# before IDENTIFIED BY its CREATE/ALTER USER: the context is looked for in that part only,
# so a long text of many options costs each of them this much at most.
CURL_REACH = 300
_CURL = lazy_pattern(r"(?i)\bcurl\b")


@functools.cache
def _commands_of(option: str) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """The commands (PASSWORD_OPTIONS) whose ``option`` takes its value apart, and those
    whose option takes it attached: each a pattern of what is before the option, or None."""
    def commands(*ways: str) -> re.Pattern[str] | None:
        found = [command for command, options, way in PASSWORD_OPTIONS
                 if option in options and way in ways]
        return re.compile(rf"(?i)\b(?:{'|'.join(found)})\b") if found else None
    return commands(EITHER, APART), commands(EITHER, ATTACHED)


# What a text must hold for the password options' rule to match: one of the options where
# an option starts (a pattern that starts with "-" is scanned nearly as fast as a find),
# then one of the commands (a scan for them costs ~3 µs a message: looked for only where an
# option is; in the lower-cased text, as a case-insensitive alternation is three times
# slower). A text that holds both compiles every rule in a reading command (~10 ms).
_PASSWORD_OPTION = lazy_pattern("-(?:{})".format("|".join(sorted(
    {option[1:] for _, options, _ in PASSWORD_OPTIONS for option in options}, key=len, reverse=True))))
_COMMANDS = "|".join(command for command, _, _ in PASSWORD_OPTIONS)
_PASSWORD_COMMANDS = lazy_pattern(rf"(?:{_COMMANDS})\b")
_PASSWORD_COMMANDS_ANY_CASE = lazy_pattern(rf"(?i)(?:{_COMMANDS})\b")


def may_hold_password_option(text: str, lowered: str | None) -> bool:
    """Whether the password options' rule may match in ``text`` (``lowered``: the text
    lower-cased, if it is ASCII; else None): an option and, anywhere, one of the commands."""
    for option in _PASSWORD_OPTION().finditer(text):
        # where an option starts, as the rule has it (``site-packages`` holds no -p): asked
        # here, as a lookbehind made the scan six times slower
        at = option.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_-"):
            break
    else:
        return False
    if lowered is None:
        return _PASSWORD_COMMANDS_ANY_CASE().search(text) is not None
    return _PASSWORD_COMMANDS().search(lowered) is not None


_USER_STATEMENT = lazy_pattern(r"(?i)\b(?:create|alter)[ \t]+user\b")


def _before(match: re.Match[str], cuts: str = "\n;|") -> str:
    """What is before ``match`` in its command (or statement): on its line, after the last
    of ``cuts``, within CURL_REACH characters."""
    text, at = match.string, match.start()
    part = text[max(0, at - CURL_REACH):at]
    return part[max(part.rfind(cut) for cut in cuts) + 1:]


def on_curl_line(match: re.Match[str]) -> bool:
    """Whether the -u option ``match`` found is curl's: "curl" before it in its command."""
    return _CURL().search(_before(match)) is not None


def on_password_command(match: re.Match[str]) -> bool:
    """Whether the option ``match`` found is a password option of its command, its value
    apart or attached as that command takes it."""
    apart, attached = _commands_of(match["option"])
    commands = apart if match["gap"] is not None else attached
    return commands is not None and commands.search(_before(match)) is not None


def in_user_statement(match: re.Match[str]) -> bool:
    """Whether the IDENTIFIED BY ``match`` found is in a CREATE or ALTER USER statement (SET
    PASSWORD FOR is one by itself)."""
    return match["set"] is not None or _USER_STATEMENT().search(_before(match, "\n;")) is not None


def found_in_context(pattern: re.Pattern[str], text: str,
                     in_context: Callable[[re.Match[str]], bool]) -> list[str]:
    """The values of ``pattern``'s matches in ``text`` that ``in_context`` says are secrets."""
    return [m["value"] for m in pattern.finditer(text) if in_context(m)]


def masked_in_context(match: re.Match[str], in_context: Callable[[re.Match[str]], bool]) -> str:
    """``match`` with its value masked after its head, if ``in_context`` says it is a secret."""
    return masked_credentials_after(match) if in_context(match) else match[0]


def curl_credentials(text: str) -> list[str]:
    """The passwords of curl's -u/--user options in ``text``."""
    return found_in_context(compiled_shapes().curl_user, text, on_curl_line)


def masked_curl_user(match: re.Match[str]) -> str:
    return masked_in_context(match, on_curl_line)


def command_passwords(text: str, lowered: str | None = None) -> list[str]:
    """The values of commands' password options (PASSWORD_OPTIONS, OpenSSL's -passin
    pass:x) in ``text`` (lower-cased as ``lowered``)."""
    found = []
    if " -" in text and may_hold_password_option(text, text.lower() if lowered is None else lowered):
        found = found_in_context(compiled_shapes().password_option, text, on_password_command)
    if "pass:" in text:
        found += [m["value"] for m in compiled_shapes().openssl_pass.finditer(text)]
    return found


def masked_password_option(match: re.Match[str]) -> str:
    return masked_in_context(match, on_password_command)


def sql_passwords(text: str, lowered: str) -> list[str]:
    """The passwords of CREATE/ALTER USER ... IDENTIFIED BY and SET PASSWORD FOR in ``text``."""
    return found_in_context(compiled_shapes().identified_by, text, in_user_statement) \
        if "identified" in lowered or "password" in lowered else []


def masked_identified_by(match: re.Match[str]) -> str:
    return masked_in_context(match, in_user_statement)


def secret_options(text: str, lowered: str) -> list[str]:
    """The values of options named like a secret, apart from them (``--token x``)."""
    if not ("token" in lowered or "secret" in lowered or "key" in lowered
            or "passw" in lowered or "passphrase" in lowered):  # no generator: every message
        return []
    return [m["value"] for m in compiled_shapes().secret_option.finditer(text)
            if secret_option_value(m)]


def secret_option_value(match: re.Match[str]) -> bool:
    """Whether an option's value is a secret's: quoted, or one that cannot be a word and is
    no path, URL, variable or file reference (a flag without a value before an argument:
    ``--with-token https://x``, ``--no-password ./setup.sh``)."""
    value = match["value"]
    if value == MASK:
        return False
    if match["q"]:
        return True
    return looks_random(value) and not value.startswith(("/", ".", "~", "$", "@", "%", "&")) \
        and "://" not in value


def masked_secret_option(match: re.Match[str]) -> str:
    return f"{match['head']}{MASK}" if secret_option_value(match) else match[0]


def secure_strings(text: str, lowered: str) -> list[str]:
    """Plain passwords PowerShell's ``ConvertTo-SecureString`` is given on a command line."""
    if "securestring" not in lowered:
        return []
    return [m["value"] for m in compiled_shapes().secure_string.finditer(text)]


def piped_passwords(text: str) -> list[str]:
    """Passwords piped to a command that reads them from its standard input: ``echo x |
    sudo -S``, ``echo x | docker login --password-stdin``, ``echo x | kinit bob``, ``echo x |
    passwd --stdin bob``, or given it by a here-string
    (``sudo -S cmd <<< x``)."""
    if not ("sudo" in text or "password-stdin" in text or "kinit" in text or "--stdin" in text):
        return []
    shapes = compiled_shapes()
    found = [m["value"] for m in shapes.sudo_stdin.finditer(text)]
    return found + [m["value"] for m in shapes.stdin_herestring.finditer(text)] \
        if "<<<" in text else found


# SeleniumLibrary's Input Text logs the text it types, with the field's locator (Input
# Password logs no value): the text is masked when the locator names a password field. Read
# by finds, not a pattern: one pass over the message, whatever it holds.
TYPED_HEAD, _TYPED_INTO, _TYPED_END = "Typing text '", "' into text field '", "'."
_LOCATOR_WORDS = lazy_pattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PASSWORD_FIELD_WORDS = frozenset(("password", "passwd", "pass", "pw", "pwd", "passphrase",
                                   "passcode", "secret", "pin", "otp",
                                   # other languages' words (``secret_names.SECRET_WORDS``)
                                   "passwort", "kennwort", "wachtwoord", "salasana", "senha",
                                   "adgangskode", "heslo", "motdepasse"))
# each word as a piece of the locator: a cheap search before the word split
_PASSWORD_FIELD_PIECES = lazy_pattern(f"(?i){'|'.join(sorted(_PASSWORD_FIELD_WORDS))}")


def typed_password(text: str) -> tuple[int, int] | None:
    """Where the text typed into a password field is in SeleniumLibrary's message (start,
    end), or None."""
    if not (text.startswith(TYPED_HEAD) and text.endswith(_TYPED_END)):
        return None
    into = text.rfind(_TYPED_INTO)
    if into < len(TYPED_HEAD) or text[len(TYPED_HEAD):into] == MASK:
        return None
    locator = text[into + len(_TYPED_INTO):-len(_TYPED_END)]
    return (len(TYPED_HEAD), into) if password_field(locator) else None


def password_field(locator: str) -> bool:
    """A locator of a password field: a word of it is one of _PASSWORD_FIELD_WORDS
    (``id=password``, ``css:#loginPwd``, ``//input[@name='otp']``)."""
    if _PASSWORD_FIELD_PIECES().search(locator) is None:  # most fields: no word split
        return False
    return not _PASSWORD_FIELD_WORDS.isdisjoint(
        word.lower() for word in _LOCATOR_WORDS().findall(locator))


def masked_span(text: str, span: tuple[int, int] | None) -> tuple[str, int]:
    """``text`` with its ``span`` (start, end) masked, and how many were (none without one)."""
    if span is None:
        return text, 0
    return f"{text[:span[0]]}{MASK}{text[span[1]:]}", 1


def masked_credentials_after(match: re.Match[str]) -> str:
    """The value after its head (curl's ``-u user:``, a webhook's host) masked."""
    return match[0] if match["value"] == MASK else f"{match['head']}{MASK}"


def prose_passwords(text: str, lowered: str) -> list[str]:
    """The passwords ``PROSE_PASSWORD`` finds in ``text`` (lower-cased as ``lowered``)."""
    if "pass" not in lowered:  # most messages: no regex at all
        return []
    return [m["value"] for m in PROSE_PASSWORD().finditer(text) if _prose_value(m)]


def masked_prose_password(match: re.Match[str]) -> str:
    return f"{match['lead']}{MASK}" if _prose_value(match) else match[0]


def _prose_value(match: re.Match[str]) -> bool:
    """A password's value after "password": one that cannot be an English word and is no
    command's option (``passwd -l bob``, ``passwd --stdin``), or any word quoted (``PASSWORD
    'hunter'`` of SQL's CREATE ROLE, "the password 'hunter' expired")."""
    value = match["value"]
    if value == MASK:
        return False
    if match["quote"] and match.string.startswith(match["quote"], match.end()):
        return True
    return looks_random(value) and not value.startswith("-")


def masked_scheme(match: re.Match[str]) -> str:
    """A scheme's credentials masked: a bearer token that is no English word (``Bearer
    authentication`` stays), Basic's when they decode to ``user:password`` (``Basic
    authentication`` stays), AUTH PLAIN's when they decode to user and password."""
    if match[1][1] in "eE":  # Bearer
        return f"{match[1]}{MASK}" if looks_random(match[2]) else match[0]
    import base64
    import binascii

    encoded = match[2]
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return match[0]
    if match[1][:1] in "aA":  # AUTH PLAIN: [authorization id] NUL user NUL password
        _user, nul, password = decoded.partition("\0")[2].partition("\0")
        return f"{match[1]}{MASK}" if nul and password and password.isprintable() else match[0]
    _user, colon, password = decoded.partition(":")
    return f"{match[1]}{MASK}" if colon and password and decoded.isprintable() else match[0]


def masked_vendor_token(match: re.Match[str]) -> str:
    """A vendor's token masked where it begins a word (``xghp_...`` is none)."""
    before = match.string[match.start() - 1:match.start()]
    return match[0] if before and (before.isalnum() or before == "_") else MASK


def looks_random(token: str) -> bool:
    """A bearer credential, not an English word after "Bearer" (``Bearer authentication``).
    ASCII digits, as the trigger's marks read them: ``str.isdigit`` also takes "²", which no
    mark did (a password in prose "???²" was masked only when every rule ran)."""
    return any(c in "0123456789._-+/=" for c in token)
