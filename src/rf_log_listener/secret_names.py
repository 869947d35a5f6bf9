"""What a secret's name looks like (shared by both sides, through ``masking``): the words a
secret's name ends with, and what is derived from a name's pattern: its steps, the pattern
that matches reversed texts, its literal spellings (``str.endswith`` instead of a search
for most names), and the patterns that find a named value (``key=value``, a header or an
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
    r"password", r"passwd", r"passphrase", r"pwd", r"pw", r"[-_]pass", r"secret", r"token",
    r"api[-_ ]?key",
    r"access[-_ ]?key", r"secret[-_ ]?key", r"private[-_ ]?key", r"ssh[-_ ]?key",
    r"signing[-_ ]?key", r"encryption[-_ ]?key", r"auth", r"authorization", r"credentials?",
    r"cookie", r"session[-_ ]?id", r"sessid", r"sid",
)


# Every text SECRET_WORDS match (``spellings``), written out: the listener asks whether each
# variable name of robot's scopes ends with one, and spelling them (and compiling the step
# pattern) cost every robot run ~0.5-1 ms at its first suite (issue #19). The tests hold it
# equal to what ``spellings`` makes of SECRET_WORDS.
SECRET_WORD_SPELLINGS = (
    "encryption-key", "encryption_key", "encryption key", "encryptionkey", "private-key",
    "private_key", "private key", "privatekey", "signing-key", "signing_key", "signing key",
    "signingkey", "access-key", "access_key", "access key", "accesskey", "secret-key",
    "secret_key", "secret key", "secretkey", "session-id", "session_id", "session id",
    "sessionid", "authorization", "api-key", "api_key", "api key", "apikey", "ssh-key",
    "ssh_key", "ssh key", "sshkey", "credentials", "credential", "passphrase", "password",
    "passwd", "secret", "cookie", "sessid", "token", "auth", "pwd", "sid", "-pass", "_pass",
    "pw",
)


# Library keywords one of whose positional arguments is a secret though neither the keyword's
# name nor the argument says so (``SSHLibrary.Login  deploy  hunter2``): the library as robot
# names it and the keyword, normalized (lower case, no spaces or underscores), to the
# argument's position, from each library's own signature.
POSITIONAL_SECRETS = {
    ("sshlibrary", "login"): 1,  # username, password
    ("sshlibrary", "loginwithpublickey"): 2,  # username, keyfile, password (the key's)
    ("databaselibrary", "connecttodatabase"): 3,  # module, database, user, password, host
}


# Library keywords that take names and their values as positional pairs: the value after a
# secret's name is a secret (``Set Environment Variable  DB_PASSWORD  x``). Only these: after
# any other keyword a secret-like word is often a locator and the next argument no value
# (``Get Element Attribute  password  type``).
PAIR_KEYWORDS = frozenset({
    ("operatingsystem", "setenvironmentvariable"),  # name, value
    ("collections", "settodictionary"),  # dictionary, key, value, key, value...
    ("builtin", "createdictionary"),  # key, value, ... (and key=value)
    ("seleniumlibrary", "addcookie"), ("browser", "addcookie"),  # name, value
})


@functools.lru_cache(maxsize=4096)  # asked for every keyword call the writer sees
def positional_secret(owner: str | None, keyword_name: str | None) -> int | None:
    """Which positional argument of the library keyword is a secret by its signature."""
    if not owner or not keyword_name:
        return None
    return POSITIONAL_SECRETS.get((_normalized(owner), _normalized(keyword_name)))


@functools.lru_cache(maxsize=4096)  # asked for every keyword call the writer sees
def takes_pairs(owner: str | None, keyword_name: str | None) -> bool:
    """The library keyword takes names and their values as positional pairs (PAIR_KEYWORDS)."""
    return bool(owner and keyword_name) and (
        _normalized(owner), _normalized(keyword_name)) in PAIR_KEYWORDS  # type: ignore[arg-type]


def _normalized(name: str) -> str:
    return "".join(name.lower().split()).replace("_", "")


def alternation(words: Iterable[str]) -> str:
    """Names as one pattern's alternatives."""
    return "|".join(words)


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


def reversed_name(name: str) -> str | None:
    """A name's pattern matching the reversed texts (``api[-_ ]?key`` → ``yek[-_ ]?ipa``),
    or None when it is more than a sequence of steps (_name_step)."""
    steps = _steps(name)
    return None if steps is None else "".join(step[0] for step in reversed(steps))


def spellings(name: str) -> list[str] | None:
    """Every text a name's pattern matches (``api[-_ ]?key`` → ``apikey``, ``api-key``,
    ``api_key``, ``api key``), or None when it is more than a sequence of characters and
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


def key_value(name: str) -> re.Pattern[str]:
    """``name=value``, ``name: value``, ``"name": "value"``, ``&{d}[name]=value``; the value may
    be quoted (then it may hold spaces). Groups: key, sep, value.

    A bare name starts only where a run of name characters starts (the lookbehind), so a
    long identifier-like text (an id, base64) is scanned once, not once per character."""
    return re.compile(
        rf"""(?ix)
        (?P<key> [$@&%]\{{ {name} \}} | (?P<q>["']) {name} (?P=q) | (?<![\w$.-]) {name} )
        (?![\w-])
        (?P<sep> \s*[:=]\s* (?:(?:Bearer|Basic|Digest|Token|Negotiate|NTLM)[ \t]+)? )
        (?P<value> [$@&%]\{{[^{{}}]*\}}(?:\[[^\]]*\])?
                 | "(?:[^"\\\n]|\\.)*" | '(?:[^'\\\n]|\\.)*' | [^\s,;&'"<>)\]}}|{{\[][^\s,;&'"<>)\]}}|]* )
        """
    )


def whole_line(name: str) -> re.Pattern[str]:
    """Values that run to the end of the line: HTTP headers at the start of a line
    (``Cookie: a=1; b=2``, ``Authorization: Bearer …``, the scheme stays) and RF's own
    assignment lines (``${password} = value``)."""
    return re.compile(
        rf"""(?imx)
        (?P<lead> (?:^[ \t>*-]*|(?<=\n)) (?:(?:proxy-)?authorization|(?:set-)?cookie|x-[\w-]*?(?:{name}))
              [ \t]*:[ \t]* (?:(?:Bearer|Basic|Digest|Token|Negotiate|NTLM)[ \t]+)?
        | [$@&%]\{{ [\w .-]*?(?:{name}) \}} [ \t]+=[ \t]+ )
        (?P<value> [^\r\n]+ )
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
