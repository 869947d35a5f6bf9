"""What a secret's name looks like (shared by both sides, through ``masking``): the words a
secret's name ends with, and what is derived from a name's pattern: its steps, the names'
shared prefixes (forwards and for reversed texts), its literal spellings (``str.endswith``
instead of a search for most names), and the patterns that find a named value (``key=value``, a header or an
assignment line).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# Words that make a field name secret when the name ends with them (``db_password``,
# ``X-Auth-Token``, ``accessToken``). ``token_count`` and ``tokens`` do not end with one.
# "pass" only after a separator (``DB_PASS``, ``admin-pass``): ``bypass``, ``compass`` and
# the status word (``pass: 10``, ``Should Pass``) are not secrets.
SECRET_WORDS = (
    r"password", r"passwd", r"passphrase", r"passcode", r"pwd", r"pw", r"[-_]pass", r"secret",
    r"token",
    # a form's second copy of a new password: Django's ``password1``/``password2`` (and
    # ``new_password2``), Rails' and Laravel's ``password_confirmation``, ``passwordConfirm``,
    # ``password_again``, ``password_repeat``
    r"password[12]", r"password[-_]?confirm", r"password[-_]?confirmation", r"password[-_]?again",
    r"password[-_]?repeat",
    r"api[-_. ]?key",
    r"access[-_. ]?key", r"secret[-_. ]?key", r"private[-_. ]?key", r"ssh[-_. ]?key",
    r"account[-_. ]?key",  # Azure Storage's connection string: AccountKey=...
    # Azure API Management's Ocp-Apim-Subscription-Key (a header, or ?subscription-key=) and
    # Azure Functions' x-functions-key: each grants the API to whoever holds it
    r"subscription[-_. ]?key", r"functions[-_. ]?key",
    r"signing[-_. ]?key", r"encryption[-_. ]?key", r"auth", r"authorization", r"credentials?",
    r"cookie", r"session[-_. ]?id", r"sessid", r"sid",
    r"[-_]session",  # a framework's session cookie: Rails' ``_app_session``, ``laravel_session``
    r"psk",  # a Wi-Fi network's pre-shared key (wpa_supplicant's psk="x", NetworkManager's)
    r"sshpass",  # sshpass -e reads the password from SSHPASS
    # a Kubernetes secret's registry credentials: base64 of a JSON that holds them
    r"dockerconfigjson", r"dockercfg",
    # the word in other languages, where it is one word and ASCII (German, Dutch, Finnish,
    # Portuguese, Danish, Czech and Slovak, French, Norwegian), or as names in code spell it
    # without its accent (Spanish "contraseña"): a name beyond ASCII would make the trigger
    # scan of every text case-fold, ten times slower; each word whose first letters the other
    # names do not begin with costs that scan too (Swedish "losenord", Polish "haslo", Turkish
    # "sifre", Hungarian "jelszo": +0.3 us a message, 2%); an operator's words may be any
    # (RF_LOG_MCP_SECRET_KEYS)
    r"passwort", r"kennwort", r"wachtwoord", r"salasana", r"senha", r"adgangskode", r"heslo",
    r"mot[-_ ]?de[-_ ]?passe", r"passord", r"contrasena",

)

def bare_key(name: str) -> str:
    """A key as written (quoted, ``${...}``, bare, an item's ``${env}[PWD]``) lower-cased
    without its decoration."""
    bare = name.strip("'\"${}%@&").lower()
    if bare.endswith("]") and "[" in bare:  # an item: its own name (``os.environ['PWD']``)
        bare = bare[bare.rindex("[") + 1:-1].strip("'\"")
    return bare


# Names of a user's credentials as a pair (or a domain, a user and a password): ``auth``,
# ``credentials``. A tuple or list of two or three under such a name is RequestsLibrary's
# and NTLM's auth: its last item is the password, the others name the user (no secret:
# registered, the user's name would be masked everywhere in the run).
_PAIR_ENDINGS = ("auth", "credentials", "credential", "creds", "cred")


def credential_pair(name: str, items: int) -> bool:
    """Whether ``items`` values under ``name`` (as written: quoted, ``${...}`` or bare) are
    a user's credentials, the last one the secret."""
    return 2 <= items <= 3 and bare_key(name).endswith(_PAIR_ENDINGS)


# Every text SECRET_WORDS match (``spellings``), written out: the listener asks whether each
# variable name of robot's scopes ends with one, and spelling them (and compiling the step
# pattern) cost every robot run ~0.5-1 ms at its first suite (issue #19). The tests hold it
# equal to what ``spellings`` makes of SECRET_WORDS.
SECRET_WORD_SPELLINGS = (
    "encryption-key", "encryption_key", "encryption.key", "encryption key", "encryptionkey",
    "private-key", "private_key", "private.key", "private key", "privatekey", "signing-key",
    "signing_key", "signing.key", "signing key", "signingkey", "access-key", "access_key",
    "access.key", "access key", "accesskey", "account-key", "account_key", "account.key",
    "account key", "accountkey", "subscription-key", "subscription_key", "subscription.key",
    "subscription key", "subscriptionkey", "functions-key", "functions_key", "functions.key",
    "functions key", "functionskey", "secret-key", "secret_key", "secret.key", "secret key",
    "secretkey", "session-id", "session_id", "session.id", "session id", "sessionid",
    "authorization", "api-key", "api_key", "api.key", "api key", "apikey", "ssh-key", "ssh_key",
    "ssh.key", "ssh key", "sshkey", "credentials", "credential", "passphrase", "password",
    "passwd", "passcode", "secret", "cookie", "sessid", "token", "auth", "pwd", "sid", "-pass",
    "_pass", "-session", "_session", "pw", "psk", "dockerconfigjson", "mot-de-passe", "mot-de_passe",
    "mot-de passe",
    "mot_de-passe", "mot_de_passe", "mot_de passe", "mot de-passe", "mot de_passe",
    "mot de passe", "adgangskode", "mot-depasse", "mot_depasse", "mot depasse", "motde-passe",
    "motde_passe", "motde passe", "wachtwoord", "motdepasse", "dockercfg", "passwort",
    "kennwort", "salasana", "sshpass", "senha", "heslo", "passord", "contrasena",
    "password1", "password2",
    "password-confirm", "password_confirm", "passwordconfirm", "password-confirmation",
    "password_confirmation", "passwordconfirmation", "password-again", "password_again",
    "passwordagain", "password-repeat", "password_repeat", "passwordrepeat",
)


# What a library keyword's signature says is secret among its positional arguments, where
# neither the keyword's name nor the argument says so: the library as robot names it and the
# keyword, normalized (lower case, no spaces or underscores), to (kind, position), from each
# library's own signature and messages.
POSITION = "position"  # the argument at the position is a password (SSHLibrary.Login  user  x)
PAIRS = "pairs"  # names and their values as pairs: the value after a secret's name is secret
FIELD = "field"  # the text typed into the field the first argument locates, when the locator
#                  names a password field (secret_shapes.password_field)
SIGNATURE_SECRETS = {
    ("sshlibrary", "login"): (POSITION, 1),  # username, password
    ("sshlibrary", "loginwithpublickey"): (POSITION, 2),  # username, keyfile, password (the key's)
    ("databaselibrary", "connecttodatabase"): (POSITION, 3),  # module, database, user, password
    ("telnet", "login"): (POSITION, 1),  # username, password, ...
    ("ftplibrary", "ftpconnect"): (POSITION, 2),  # host, user, password, ...
    ("rpa.email.imapsmtp", "authorize"): (POSITION, 1),  # account, password, ...
    # Only these take pairs: after another keyword a secret-like word is often a locator and
    # the next argument no value (``Get Element Attribute  password  type``).
    ("operatingsystem", "setenvironmentvariable"): (PAIRS, 0),  # name, value
    ("collections", "settodictionary"): (PAIRS, 0),  # dictionary, key, value, key, value...
    ("builtin", "createdictionary"): (PAIRS, 0),  # key, value, ... (and key=value)
    ("seleniumlibrary", "addcookie"): (PAIRS, 0), ("browser", "addcookie"): (PAIRS, 0),
    # the Browser library logs the text without the field ("Fills the text 'x' in the given
    # field."); SeleniumLibrary with it (secret_shapes.typed_password)
    ("browser", "filltext"): (FIELD, 1), ("browser", "typetext"): (FIELD, 1),
    ("seleniumlibrary", "inputtext"): (FIELD, 1), ("appiumlibrary", "inputtext"): (FIELD, 1),
    ("rpa.browser.selenium", "inputtext"): (FIELD, 1),
}


# Library keywords that return the value their argument at the position names: what they
# return is secret when that argument names a secret (``${v} = Get Environment Variable
# DEPLOY_PASSWORD``: RF's ``${v} = x`` names no secret). The same normalized keys.
SECRET_GETTERS = {
    ("operatingsystem", "getenvironmentvariable"): 0,  # name, default
    ("collections", "getfromdictionary"): 1,  # dictionary, key, default
    ("builtin", "getvariablevalue"): 0,  # name, default
}


@functools.lru_cache(maxsize=4096)
def secret_getter(owner: str | None, keyword_name: str | None) -> int | None:
    """The position of the argument naming what the library keyword returns
    (SECRET_GETTERS), if it is one of them."""
    if not owner or not keyword_name:
        return None
    return SECRET_GETTERS.get((_normalized(owner), _normalized(keyword_name)))


@functools.lru_cache(maxsize=4096)  # asked for every keyword call the writer sees
def signature_secret(owner: str | None, keyword_name: str | None) -> tuple[str, int] | None:
    """What the library keyword's signature says is secret (SIGNATURE_SECRETS), if anything."""
    if not owner or not keyword_name:
        return None
    return SIGNATURE_SECRETS.get((_normalized(owner), _normalized(keyword_name)))


@functools.lru_cache(maxsize=4096)  # asked for every call the writer closes in a run that has one
def signature_key(owner: str | None, keyword_name: str | None) -> tuple[str, str]:
    """A library's or resource's keyword as the signature tables key it."""
    return _normalized(owner or ""), _normalized(keyword_name or "")


def _normalized(name: str) -> str:
    return "".join(name.lower().split()).replace("_", "")


def alternation(words: Iterable[str]) -> str:
    """Names as one pattern's alternatives."""
    return "|".join(words)


def shared_prefixes(names: Iterable[list[str]]) -> str:
    """Names, each as its steps (``name_steps``), as one pattern whose alternatives share
    their prefixes (``pass(?:w(?:ord|d)|phrase|code)``): ``re`` tries an alternation's
    branches one by one at each position whose first character fits, so the secret words
    cost the read side's trigger scan 3.8 µs a message as branches and 2.3 as one tree (the
    same texts match); steps, not every spelling, keep it as quick to compile as the list."""
    tree: dict[str | None, dict] = {}
    for steps in names:
        node = tree
        for step in steps:
            node = node.setdefault(step, {})
        node[None] = {}  # a name ends here
    return _branches(tree)


def _branches(node: dict[str | None, dict]) -> str:
    branches = [step + _branches(node[step]) for step in sorted(s for s in node if s is not None)]
    if not branches:
        return ""
    ends_here = None in node
    if len(branches) == 1 and not ends_here:
        return branches[0]
    return f"(?:{'|'.join(branches)}){'?' if ends_here else ''}"


def name_steps(name: str) -> list[str] | None:
    """A name's pattern as its steps (a character, escaped or not, or a class, perhaps
    optional), or None when it is more than a sequence of them."""
    steps = _steps(name)
    return None if steps is None else [step[0] for step in steps]


@functools.cache
def _name_step() -> re.Pattern[str]:
    """One step of a name: a character (escaped or not) or a class, perhaps optional."""
    return re.compile(r"(\[[^\]]*\]|\\.|[^\\\[\](){}?*+|^$])\??")


def _steps(name: str) -> list[re.Match[str]] | None:
    """A name's pattern as its steps (_name_step), or None when it is more than that."""
    steps, at = [], 0
    while at < len(name):
        step = _name_step().match(name, at)
        if step is None:
            return None
        steps.append(step)
        at = step.end()
    return steps


def spellings(name: str) -> list[str] | None:
    """Every text a name's pattern matches (``api[-_. ]?key`` → ``apikey``, ``api-key``,
    ``api_key``, ``api.key``, ``api key``), or None when it is more than a sequence of characters and
    classes of plain characters (_name_step), each at most optional."""
    steps = _steps(name)
    if steps is None:
        return None
    spelled = [""]
    for step in steps:
        unit = step[1]
        if unit.startswith("["):
            chars = unit[1:-1]
            if not chars or chars.startswith("^") or "\\" in chars or "-" in chars[1:-1]:
                return None
        elif unit.startswith("\\"):
            chars = unit[1]
            if chars.isalnum():  # \d, \w, \b...: a class or an assertion, not a character
                return None
        else:
            chars = unit
        options = list(chars) + ([""] if step[0].endswith("?") else [])
        spelled = [done + char for done in spelled for char in options]
    return spelled


# The schemes an Authorization value names before its credential (``Bearer x``): kept when
# the credential is masked, and the credential alone is what a run registers.
AUTH_SCHEMES = r"Bearer|Basic|Digest|Token|Negotiate|NTLM|ApiKey|Bot"
# What stays shown before a value: an auth scheme, or a password hash's or encoder's scheme in
# braces, followed by the value itself: LDAP's userPassword (``{SSHA}W6ph…``, ``{CRYPT}$6$…``),
# Spring Security's encoders (``{bcrypt}$2a$…``, ``{noop}x``: the password itself), Dovecot's
# ``{SHA512-CRYPT}``. A value that began with "{" was taken for a dict, and nothing was masked.
VALUE_SCHEME = (rf"""(?:(?:{AUTH_SCHEMES})[ \t]+"""
                r"""|\{[A-Za-z][\w.-]{0,19}\}(?=[^\s,;&'"<>()\]}|{\[]))""")
# A value that is a Python tuple, list or call on one line (RequestsLibrary's ``auth=('bob',
# 'x')``, RF's TRACE arguments ``auth=['bob', 'x']``, ``HTTPBasicAuth('bob', 'x')``): the
# whole of it, not the bracket alone (which left the password after it shown). A plain value
# may begin with "(" but not with a quoted string's: ``(abc)x`` is one, ``('bob'`` no value.
STRUCTURED_VALUE = (r"(?:\([^()\n]{0,300}\)|\[[^\[\]\n]{0,300}\]"
                    r"|[A-Za-z_][\w.]{0,60}\([^()\n]{0,300}\))"
                    r"(?=[\s,;&'\"<>)\]}|]|$)")  # whole: ``Pw(1)x`` is a plain value
# Words that stand where a secret's value would and are none: a status or a placeholder
# (``token: expired``, ``password: required``, ``api_key: missing``, Rails' ``[FILTERED]``,
# ``passwd: Success``), alone or in brackets. Neither masked beside the name nor registered
# ("required" was then masked wherever the run showed it: ``known_values``); a value they
# only begin (``invalid-Pw1``) is one. Ansible's placeholder for a ``no_log`` value; an
# authentication scheme's name alone (``auth: basic``, ``auth=ntlm``: the scheme, no
# credential). A state a check reports (``token: valid``, ``auth=enabled``, ``password:
# changed``, ``api_key: present``) registered "valid", and "Login With Valid Credentials"
# lost its word.
NO_VALUE_WORDS = ("required", "optional", "expired", "invalid", "missing", "unknown", "unset",
                  "set", "n/a", "none", "null", "undefined", "hidden",
                  "redacted", "masked", "omitted", "filtered", "success", "ok",
                  "valid", "incorrect", "enabled", "disabled", "active", "inactive", "present",
                  "provided", "configured", "changed", "unchanged", "updated", "refreshed", "reset",
                  "rotated", "revoked", "locked", "unlocked", "verified", "accepted", "rejected",
                  "granted", "denied", "failed", "saved", "cleared", "removed", "deleted", "created",
                  "generated", "ignored", "matched", "mismatch", "timeout", "unauthorized", "forbidden",
                  "value_specified_in_no_log_parameter",
                  "basic", "bearer", "digest", "negotiate", "ntlm", "kerberos", "oauth", "oauth2")
# A message after a name that is no value of it (masked, its first word was registered:
# "Permission", "Authentication", "user" were then masked wherever the run showed them):
# an operating system's error after a file's name (``cat: /run/secrets/db_password: No
# such file or directory``, ``tls.key: Permission denied``); what ``passwd`` and
# ``chpasswd`` print after their own name (shadow's, Linux-PAM's: ``passwd: password updated
# successfully``, ``passwd: Authentication token manipulation error``) and libpwquality's and
# cracklib's verdict on a new one (``BAD PASSWORD: The password is shorter than 8
# characters``, ``BAD PASSWORD: it is based on a dictionary word``); a terminal's reply on
# its prompt's line (SSHLibrary's and Telnet's output: ``Password: Login incorrect``,
# ``bob@h's password: Connection closed by h``, ``Password: Welcome to Ubuntu``); a web framework's
# validation message under the field's name, quoted or in a list (Django REST framework's
# ``{"password": ["This field is required."]}``, Rails' ``"can't be blank"``, Laravel's,
# Joi's, Bean Validation's ``must not be blank``).
_NO_VALUE_MESSAGES = (
    r"no\ such\ file\ or\ directory|permission\ denied|is\ a\ directory|not\ a\ directory"
    r"|operation\ not\ permitted|read-only\ file\ system|input/output\ error|file\ exists"
    r"|no\ space\ left\ on\ device|too\ many\ open\ files|directory\ not\ empty"
    r"|(?:all\ authentication\ tokens|password)\ updated\ successfully|password\ unchanged"
    r"|password\ expiry\ information\ changed|authentication\ token\ manipulation\ error"
    r"|authentication\ failure|have\ exhausted\ maximum|unknown\ user\ name|bad\ password"
    r"|user\ '[^'\n]*'\ does\ not\ exist|you\ may\ not\ view\ or\ modify|only\ root\ can"
    r"|the\ password\ (?:is|fails|contains|differs|does)\b|it\ (?:is|does)\ (?:based|too|way|not|all)\b"
    r"|login\ incorrect|access\ denied|connection\ (?:closed|reset|refused|timed\ out|lost)|welcome\ to"
    r"|not\ (?:set|found|configured|provided)")  # placeholders of two words: a plain value ends at "not"
_VALIDATION_MESSAGES = (
    r"this\ (?:field|password|value)\ |ensure\ this\ |size\ must\ |doesn't\ match\ "
    r"|the\ [\w\ ]{1,40}?\ (?:field\ is|must|may\ not|confirmation)\ |should\ not\ be\ "
    r"|must\ (?:be|not|contain|have|match|include)\ |can't\ be\ |cannot\ be\ "
    r"|is\ (?:required|invalid|too|not|missing)\b"
    r"|\d+\ (?:bytes|characters|chars)\b")  # kubectl describe secret's ``password:  8 bytes``
# A reference to a value kept elsewhere, in another tool's syntax: a shell's or a CI's
# environment variable (``$DB_PASSWORD``, ``%PASSWORD%``, ``$env:TOKEN``, Azure Pipelines'
# ``$(TOKEN)``), a template's (Jinja's and Ansible's ``{{ vault_db_password }}``, GitHub
# Actions' ``${{ secrets.TOKEN }}``), Python's ``%(password)s``, Ansible's ``!vault``, code
# that reads the environment or asks (``os.getenv("TOKEN")``, ``process.env.TOKEN``,
# ``getpass.getpass()``). It names where the value came from, which a failing run's reader
# wants; registered, the reference was masked wherever a command or a file showed it. Case
# matters: ``%Secr3t%`` is a password. A file's path is such a reference too
# (``credentials: ~/.aws/credentials``, ``key: /etc/ssl/private/server.key``: relative,
# home's, or under a system's directory), and a Windows account's SID, which Active
# Directory's ``objectSid`` names, is no session id.
_REFERENCES = (
    r"\$[A-Z_][A-Z0-9_]*|%[A-Z_][A-Z0-9_]*%|\$env:[A-Za-z_]\w*|\$\([A-Za-z_][\w.]*\)"
    r"|(?:~|\.\.?|/(?:etc|run|var|home|root|tmp|opt|usr|srv|mnt|secrets|Users))/[^\s'\"]*"
    r"|[A-Z]:\\[^\s'\"]*|S-1-\d+(?:-\d+)+"
    r"|\$?\{\{[^{}\n]{1,100}\}\}|%\(\w+\)s|!vault|process\.env\.\w+"
    r"|(?:os\.(?:getenv|environ(?:\.get)?)|getpass\.getpass|System\.getenv|ENV(?:\.fetch)?|env)"
    r"""[(\[][^()\[\]\n]{0,100}[)\]]""")
_NO_VALUE_MESSAGE = (rf"(?:{_NO_VALUE_MESSAGES})\b|\(user\ [^()\n]*\)\ pam_"
                     rf"""|(?:\[\s*)?["']?(?:{_VALIDATION_MESSAGES})"""
                     rf"""|["']?(?-i:{_REFERENCES})(?=\.?(?:[\s,;}}\]"'<]|$))""")
_NO_VALUE_WORD = (r"""["']?[\[(<]?(?:""" + "|".join(re.escape(word) for word in NO_VALUE_WORDS)
                  + r""")[\])>]?\.?["']?\s*""")


@functools.cache
def _no_value() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return (re.compile(_NO_VALUE_MESSAGE, re.IGNORECASE), re.compile(_NO_VALUE_WORD, re.IGNORECASE))


def no_value_at(text: str, start: int, end: int) -> bool:
    """Whether a rule's value in ``text`` (``start`` to ``end``) is none: a message or a
    reference begins there (the messages above, which a plain value's first word is cut
    from; ``_REFERENCES``, which a value's characters may cut: ``${{``), or a word is the
    whole of it (``NO_VALUE_WORDS``; as a whole only: ``${pw} = none of your business`` and
    ``"Basic dXNl..."`` are values). Asked of a rule's match, not inside its pattern: its
    copies in every rule that reads a value made a reading command's compiling of them
    17 → 31 ms."""
    message, word = _no_value()
    return message.match(text, start) is not None or word.fullmatch(text, start, end) is not None


# In a connection string (ODBC's, ADO.NET's: ``Server=h;UID=u;PWD=x;``) a value runs to
# its ";", spaces and all (``Password=my pass phrase;``), and ODBC's braces quote one with
# ";" or "}}" in it (``PWD={p;w}``; not a dict's, with ":" or a quote, nor a format's field,
# ``{0}``): where a ";" and the next pair, a quote or the line's end follow the value, or
# the string's last pair is ODBC's or ADO.NET's password (``...;PWD=two words'``).
_CONNECTION_ONE = (r"""(?:\{(?!(?-i:\d*|[a-z_][a-z0-9_]*)\})(?:[^{}\n:'"]|\}\}){1,200}\}"""
                   r"""|[^\s;&'"<>=(){}\[\]|][^;&'"<>=\n]{0,200}?)""")
CONNECTION_VALUE = (rf"""{_CONNECTION_ONE}(?=[ \t]*;[ \t]*(?:[A-Za-z][\w .-]{{0,40}}=|["'\n]|$))"""
                    rf"""|(?:(?<=;pwd=)|(?<=;password=)){_CONNECTION_ONE}(?=[ \t]*(?:["'\n]|\)?$))""")
# The value after a secret's name and its separator, as the masking rule (``key_value``) and
# the registry (``secret_shapes``' ``after_name``) both read it: quoted, structured, in a
# connection string, or plain.
VALUE = (r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|""" + STRUCTURED_VALUE
         + "|" + CONNECTION_VALUE
         + r"""|(?:\((?!['"])|[^\s,;&'"<>()\]}|{\[])[^\s,;&'"<>)\]}|]*""")


# A quote escaped inside a string: JSON held in a JSON string (``"echo": "{\"password\":
# \"x\"}"``, an API echoing its request) and a Python repr of that (RequestsLibrary logs a
# request's body as bytes: ``b'"{\\"password\\": \\"x\\"}"'``).
ESCAPED_QUOTE = r"""\\{1,3}["']"""
# After a name, before its separator: a closing quote (perhaps escaped) or brace.
NAME_CLOSE = rf"""(?:{ESCAPED_QUOTE}|["'}}\]]|["']\])"""
# Between a name and its value: ``=`` or ``:``, Ruby's, PHP's and Perl's ``=>`` (a hash's
# inspect, ``print_r``, Data::Dumper), Go's and make's ``:=``, ``?=``, ``+=``, a comparison's
# ``==``, LDIF's ``::`` before a base64 value (``userPassword:: e1NTSEF9...``). The masking's
# trigger scan and the registry's prefilter take ``?`` and ``+`` before ``:`` or ``=``. A
# URL's scheme is none: ``otpauth://totp/ACME:bob?secret=x`` (an authenticator's secret, as a
# test of MFA logs it) had its whole URL masked as "otpauth"'s value, and registered.
SEPARATOR = r"(?:=>|::|[:?+=]?=|:(?!//))"
# Where a name's line ends at its separator, YAML's value may be on the next line, indented
# more: a block scalar's (``password: |`` then ``  x``) or a plain one's; not a mapping's
# key (``password:`` then ``  type: string``), a list's item, or a line not indented (a
# prompt, ``Password:`` then ``Enter new password:``); a block scalar's lines are its value
# whatever they hold. The masking rule and the registry.
# Groups: block, a block scalar's indicator; indent, the value's line's indentation.
YAML_NEXT_LINE = (r"""(?:(?:[ \t]*(?P<block>[|>])[-+1-9]{0,2})?[ \t]*\r?\n(?P<indent>[ \t]+)(?![ \t])"""
                  r"""(?(block)|(?![^\s:]+:(?:[ \t]|\r?\n|$)|-[ \t]|[#\r\n])))?""")
# A block scalar's value (after YAML_NEXT_LINE's block): its first line and each next one
# indented as much (or more), spaces and all: ``password: >-`` then ``  correct horse`` and
# ``  battery staple`` is one value, not the word "correct".
YAML_BLOCK = r"[^\r\n]*(?:\r?\n(?P=indent)[^\r\n]*)*"
# After a bare name (not quoted, bracketed or RF's ``${...}``), ``=>`` takes only a quoted
# value: Ruby's and Perl's hashes quote their strings (``:password => "x"``), while
# JavaScript's arrow function after a parameter so named is code (``token => token.trim()``).
# Groups arrow, q (the name's quote), rf (RF's variable), item (``]``) decide.
BARE_ARROW = r"""(?(arrow)(?(q)|(?(rf)|(?(item)|(?=["'])))))"""


def escaped_value(quote: str) -> str:
    """The value after a name between escaped quotes, as a pattern: from the escaped quote
    the group ``quote`` holds to the same one (not one escaped once more, ``\\\"`` inside
    ``\"...\"``), on its line and within 300 characters, or to the line's end (a text cut
    there). One grammar for the masking rule (``key_value``) and the registry
    (``secret_shapes``' ``after_name``)."""
    return (rf"(?P={quote})(?:(?!(?<!\\)(?P={quote}))[^\n]){{0,300}}"
            rf"(?:(?<!\\)(?P={quote})|(?=\n|\Z))")


# A bare name beginning a string its separator ends is a prompt (``expect "password:"; send
# "x\r"``: "; send" was the value), not a pair. Group open: the name begins a string.
PROMPT_END = r"""(?(open)(?!["']))"""


def key_value(name: str) -> re.Pattern[str]:
    """``name=value``, ``name: value``, ``"name": "value"``, ``&{d}[name]=value``, a
    subscript's or PHP's ``[name] => value``, Ruby's ``{"name"=>"value"}``, and with
    escaped quotes (``\\"name\\": \\"value\\"``, ESCAPED_QUOTE); the value may be quoted (then it
    may hold spaces); not a prompt's string (``PROMPT_END``). Groups: key, sep, value; q,
    the key's quote, and bs, its backslashes when it is escaped (the value then is between
    the same: one copy of the names fewer than an alternative of its own, which cost every
    command that masks 1 ms to compile).

    A bare name starts only where a run of name characters starts (the lookbehind), so a
    long identifier-like text (an id, base64) is scanned once, not once per character."""
    return re.compile(
        rf"""(?ix)
        (?P<key> (?P<rf>[$@&%])\{{ {name} \}} | (?P<q>(?P<bs>\\{{1,3}})?["']) {name} (?P=q)
               | (?<![\w$.-]) (?:(?P<open>(?<=["']))|(?<!["'])) {name} )
        (?![\w-])
        (?P<sep> (?P<item>\])?\s*(?:(?P<arrow>=>)|(?!=>){SEPARATOR}){PROMPT_END}
                 {YAML_NEXT_LINE}[ \t]* {VALUE_SCHEME}? )
        {BARE_ARROW}
        (?P<value> (?(block) {YAML_BLOCK}
                   | (?(bs) {escaped_value("q")}
                          | (?:[$@&%]\{{[^{{}}]*\}}(?:\[[^\]]*\])? | {VALUE} ) ) ) )
        """
    )


# A collection, not nested: a Python list, tuple or dict (``['a', 'b']``, ``{'db': 'x'}``),
# RF's own (``[ a | b ]``, ``{ db=x }``), a JSON array printed over several lines.
COLLECTION = r"\[[^\[\]]{0,300}\]|\([^()]{0,300}\)|\{[^{}]{0,300}\}"


def plural_collection(name: str) -> re.Pattern[str]:
    """A secret's name in the plural before a collection (``api_keys=['a', 'b']``,
    ``"passwords": [...]``, RF's ``@{API_TOKENS} = [ a | b ]`` and ``&{SECRETS} = { db=x
    }``): every value of it is one. Only a collection: ``tokens=4`` and ``${tokens} = 1500``
    count something. Groups: key, value."""
    return re.compile(
        rf"""(?ix)
        (?P<key> [$@&%]\{{ [\w .-]*?(?:{name})s \}} | (?P<q>["'])[\w.-]*?(?:{name})s(?P=q)
               | (?<![\w$.-])[\w.-]*?(?:{name})s )
        (?![\w-]) \s*[:=]\s* (?P<value> {COLLECTION} )
        """
    )


def whole_line(name: str) -> re.Pattern[str]:
    """Values that run to the end of the line: HTTP headers at the start of a line
    (``Cookie: a=1; b=2``, ``Authorization: Bearer …``, the scheme stays) and RF's own
    assignment lines (``${password} = value``, an item's ``${creds}[password] = value``)."""
    return re.compile(
        rf"""(?imx)
        (?P<lead> (?:^[ \t>*-]*|(?<=\n)) (?:(?:proxy-)?authorization|(?:set-)?cookie|x-[\w-]*?(?:{name}))
              [ \t]*:[ \t]* (?:(?:{AUTH_SCHEMES})[ \t]+)?
        | [$@&%]\{{ (?:[\w .-]*\}}\[)? [\w .-]*?(?:{name}) [}}\]] [ \t]+=[ \t]+ )
        (?P<value> [^\r\n]+ )
        """
    )


def compared_values(name: str) -> re.Pattern[str]:
    """RF's line of two values that differ under a secret's name (Collections' ``Dictionaries
    Should Be Equal``: ``Key password: a != b``; ``Lists Should Be Equal`` with names:
    ``Index 2 (Password): a != b``; ``Dictionary Should Contain Item``: ``Value of dictionary
    key 'password' does not match: a != b``): both are the secret's. Groups: first, second."""
    return re.compile(  # the names once: compiling them is most of the pattern's cost
        rf"""(?imx)
        ^(?:Key\ | Index\ \d+\ \( | Value\ of\ dictionary\ key\ ') [\w .-]*?(?:{name})
         (?:\) | '\ does\ not\ match)? :[ ]
        (?P<first> [^\n]*? ) [ ]!=[ ] (?P<second> [^\n]* )$
        """
    )


# Between a name-value pair's name and its value key: a comma or semicolon (JSON, AWS's
# ``ParameterKey=x,ParameterValue=y``), blanks (XML attributes), a line break and YAML's
# indent (``- name: x`` then ``  value: y``), up to three short fields on one line each
# (AWS SSM's ``"Name": x, "Type": "SecureString", "Value": y``), the value key's quote
_PAIR_GAP = r"""[ \t]*[,;]?[ \t]*(?:\r?\n[ \t]*)?"""
_PAIR_VALUE_KEY = r"""["']?(?:parameter)?value["']?\s*[:=]"""
_PAIR_FIELD = (rf"""(?!{_PAIR_VALUE_KEY})["']?[\w-]+["']?[ \t]*[:=][ \t]*"""
               r"""(?:"[^"\n]{0,100}"|'[^'\n]{0,100}'|[\w./-]{1,100})""" + _PAIR_GAP)
PAIR_BETWEEN = rf"""["']?{_PAIR_GAP}(?:{_PAIR_FIELD}){{0,3}}{_PAIR_VALUE_KEY}"""
# PowerShell's: the parameters between ``-Name x`` (or ``-Path Env:x``) and ``-Value``, up to
# three (``-Scope Global``, ``-Force``)
PARAMETERS_BETWEEN = (r"""(?:[ \t]+-(?!value\b)\w+(?:[ \t]+(?!-)(?:"[^"\n]*"|'[^'\n]*'|\S+))?){0,3}"""
                      r"""[ \t]+-value[ \t]+""")
# A setter called with a name and its value, both quoted: .NET's environment, Java's
# properties, the browser's storage (``Execute JavaScript  localStorage.setItem('token',
# 'x')``: a test that signs in by its token), a map's, a header's, a cookie's, C's and
# Python's environment (``setenv``, ``putenv``). Not a getter: its second argument is a default.
SETTER_CALL = (r"""(?:set(?:environmentvariable|property|item|cookie|header|requestheader|env)?"""
               r"""|put(?:env)?|add_?header|set_(?:cookie|header|item))\(\s*(?=["'])""")


def name_value_pair(name: str) -> re.Pattern[str]:
    """A name-value pair whose name names a secret, its value the secret: a Kubernetes
    container's env (``- name: DB_PASSWORD`` then ``value: x``, in YAML or JSON), AWS's
    parameters (``{"Name": "/prod/db/password", "Value": "x"}``, ``ParameterKey=DbPassword,
    ParameterValue=x``), .NET's and Ant's settings (``<add key="ApiKey" value="x"/>``,
    ``<property name="db.password" value="x"/>``), a cookie as SeleniumLibrary lists it
    (``{'name': 'sessionid', 'value': 'x'}``), PowerShell's variables and environment
    (``Set-Variable -Name Password -Value x``, ``Set-Item -Path Env:API_TOKEN -Value x``,
    ``[Environment]::SetEnvironmentVariable("DB_PASSWORD", "x", "User")``; ``$x`` is a
    variable, a value in parentheses a call: ``secret_shapes``' SecureString reads its
    string), a setter's call (``SETTER_CALL``: ``localStorage.setItem('token', 'x')``,
    ``System.setProperty("db.password", "x")``). Groups: key (the secret's name), value."""
    return re.compile(
        rf"""(?ix)
        (?<![\w-]) (?: (?P<call> {SETTER_CALL} )
                     | (?P<ps> -name[ \t]+ | -path[ \t]+(?=["']?env:) )
                     | ["']? (?:parameter)?(?:name|key) ["']? \s*[:=]\s* ) (?P<q>["']?) (?(ps) (?:env:\\?)? )
        (?P<key> [\w./-]*?(?:{name}) ) (?P=q)
        (?(call) \s*,\s*(?=["'])
                 | (?(ps) {PARAMETERS_BETWEEN} (?!\s*[($]) | (?= {PAIR_BETWEEN} ) {PAIR_BETWEEN} ) )
        \s* {VALUE_SCHEME}?
        (?P<value> {VALUE} )
        """
    )


def xml_element(name: str) -> re.Pattern[str]:
    """An XML element named like a secret, its text the value (``<password>x</password>``,
    ``<ns:AuthToken type="t">x</ns:AuthToken>``: SOAP and XML bodies), closed by its own
    name (which is what the masking's trigger scan looks for: ``name>``). Groups: tag, value."""
    return re.compile(
        rf"""(?ix)
        <(?P<tag> (?:[\w.-]+:)? [\w.-]*?(?:{name}) ) (?![\w.-]) (?:\s[^<>]{{0,500}})? >
        \s* (?P<value> [^<\s][^<]*? ) (?=\s*</(?P=tag)\s*>)
        """
    )


def xml_named_text(name: str) -> re.Pattern[str]:
    """An XML element whose ``name`` or ``key`` attribute names a secret, its text the value:
    Java's properties in XML (``<entry key="db.password">x</entry>``), Android's resources
    (``<string name="api_key">x</string>``), .NET's settings (``<setting name="ApiKey"
    serializeAs="String"><value>x</value></setting>``); or an element after a ``<key>`` or
    ``<name>`` element that names one: Apple's property lists (``<key>Password</key>
    <string>x</string>``), Hadoop's configuration (``<name>fs.s3a.secret.key</name>
    <value>x</value>``). What the masking's trigger scan looks for: the name, then a quote and
    the tag's end, or ``</key>``/``</name>``. Groups: key (the secret's name), value."""
    return re.compile(  # the names once: compiling them is most of the pattern's cost
        rf"""(?ix)
        (?: <(?P<tag> (?:[\w.-]+:)? [\w.-]+ ) \s [^<>]{{0,500}}? (?<![\w-]) (?:name|key) \s*=\s*
            (?P<q>["']) | <(?P<label> key|name )> \s* )
        (?P<key> [\w./ -]*?(?:{name}) )
        (?(q) (?P=q) [^<>]{{0,500}}? > (?:\s*<(?P<inner> value )>)?
            | \s*</(?P=label)> \s* <(?P<next> (?:[\w.-]+:)? [\w.-]+ ) (?:\s[^<>]{{0,500}})? > )
        \s* (?P<value> [^<\s][^<]*? ) (?=\s*</ (?(inner) value | (?(tag) (?P=tag) | (?P=next) ) ) \s*>)
        """
    )
