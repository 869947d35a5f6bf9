"""What replaces a value a secret's name makes secret (shared by both sides, through
``masking``): the value after ``password=`` or ``"token": `` (its quotes, escaped or not,
kept; a URL's host kept after a user name that names one), both values of RF's ``Key
password: a != b``, a collection under a plural name, the value OperatingSystem says it set
a secret-named environment variable to, the values of an HTML table's column a secret's
name heads (which the registry registers); what of such a value the registry registers (a
tuple's, list's or dict's strings: ``structured_secrets``, ``collection_items``); and where
a name or a URL's user begins. ``masking.Redactor`` finds the matches (``secret_names``'
patterns) and hands them here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rf_log_listener.known_values import registrable
from rf_log_listener.secret_names import SETTER_CALL, bare_key, credential_pair, no_value_at
from rf_log_listener.secret_shapes import MASK, TYPED_HEAD, lazy_pattern
from rf_log_listener.step_masking import is_reference

# The shell's working directories, PWD and OLDPWD, end with "pwd" (a password's short name:
# ODBC's ``UID=sa;PWD=x``) and hold an absolute path: known as a secret, the run's directory
# hid every path of the run (the Process library logs the environment a process gets).
_WORKING_DIRECTORIES = frozenset({"pwd", "oldpwd"})


def network_name(name: str) -> bool:
    """Whether ``name`` (as written: quoted, ``${...}`` or bare) is a Wi-Fi network's: SSID,
    BSSID, ESSID (``WIFI_SSID``, ``ap-ssid``) end with "sid", a session id's short name, and
    a router's or a device's tests log them everywhere; PHPSESSID ends with "ssid" too, and
    is a session."""
    bare = bare_key(name)
    return bare.endswith("ssid") and not bare.endswith("sessid")


def holds_no_secret(name: str, value: str) -> bool:
    """Whether ``name`` ends like a secret's and its ``value`` is none: a network's name
    (``network_name``), the shell's working directory (``working_directory``), or a
    setting of sessions (``session_setting``)."""
    return network_name(name) or working_directory(name, value) or session_setting(name, value)


def session_setting(name: str, value: str) -> bool:
    """Whether ``name`` ends with "session" (a framework's session cookie: ``_app_session``)
    and ``value`` is no session's id, which is random: letters and digits mixed, or long. A
    number or a switch is a setting (``max_session=10``), a word a handle's name (RF's
    ``${GITHUB_SESSION} = github``, RequestsLibrary's alias), which registered would hide
    that word wherever the run wrote it."""
    if not bare_key(name).endswith("session"):
        return False
    bare = value.strip("'\"")
    return len(bare) < 24 and not (any(c.isdigit() for c in bare) and any(c.isalpha() for c in bare))


def working_directory(name: str, value: str) -> bool:
    """Whether ``name`` (a key as written: quoted, ``${...}`` or bare) and its ``value`` are
    the shell's PWD or OLDPWD: that name alone, an absolute path (``/x``, ``C:\\x``,
    ``\\\\host``, perhaps after a quote). By string tests: robot's process imports this
    module, and a pattern compiled at import costs every run."""
    if bare_key(name) not in _WORKING_DIRECTORIES:
        return False
    path = value[1:] if value[:1] in ("'", '"') else value
    return path.startswith(("/", "\\\\")) or (
        path[:1].isascii() and path[:1].isalpha() and path[1:2] == ":" and path[2:3] in ("\\", "/"))


def masked_value(match: re.Match[str]) -> str:
    """The value of a name rule's match (``key_value``, ``whole_line``, ``xml_element``)
    masked, its quotes kept; a reference, a mask or the shell's working directory stays."""
    value = match["value"]
    quote = value[0] if len(value) > 1 and value[0] in "'\"" and value[-1] == value[0] else ""
    escaped = match["q"] if match.groupdict().get("bs") else None
    if escaped and value.startswith(escaped):  # \"token\": \"x\": its quotes stay
        closed = value.endswith(escaped) and len(value) >= 2 * len(escaped)
        inner = value[len(escaped):len(value) - len(escaped) * closed]  # or cut: to its end
        if is_reference(inner) or inner.strip().endswith(MASK):
            return match[0]
        head = match[0][: match.start("value") - match.start(0) + len(escaped)]
        return f"{head}{MASK}{escaped if closed else ''}"
    inner = value[1:-1] if quote else value
    if is_reference(inner) or inner.strip().endswith(MASK):
        return match[0]
    groups = match.groupdict()
    # whole_line's name is in its lead (``${WIFI_SSID} = ``), before the separator
    key = groups.get("key") or (groups.get("lead") or "").strip(" \t=:>*-")
    if (key and holds_no_secret(key, inner)) or no_value_at(match.string, *match.span("value")):
        return match[0]
    head = match[0][: match.start("value") - match.start(0)]
    if not quote and "@" in inner and in_url_user(match.string, match.start(0)):
        return f"{head}{MASK}{inner[inner.index('@'):]}"  # the URL's host and path stay
    return f"{head}{quote}{MASK}{quote}"


# An Authorization header's parameters after its scheme: Digest's (``username="bob",
# response="..."``), AWS's Signature Version 4 (``AWS4-HMAC-SHA256 Credential=...,
# Signature=...``), OAuth 1's (``OAuth oauth_consumer_key="...", oauth_token="..."``)
_AUTH_PARAMETERS = lazy_pattern(r"""[\w-]+=["']|[\w-]+[ \t]+[\w-]+=""")


def auth_parameters_at(text: str, start: int) -> bool:
    """Whether an Authorization header's value at ``start`` is a list of parameters: the
    whole line is masked, and nothing of it is the credential to register (Digest's
    "username=" and AWS's scheme "AWS4-HMAC-SHA256" were, then masked wherever they stood:
    ``?username=bob`` became ``?***bob``); a parameter that is one registers by its own name
    (``oauth_token``)."""
    return _AUTH_PARAMETERS().match(text, start) is not None


_SETTER_CALL = lazy_pattern(rf"(?<![\w-]){SETTER_CALL}")


def setter_call(text: str, lowered: str) -> bool:
    """Whether ``text`` (lower-cased as ``lowered``) may call a setter with a name and its
    value (``secret_names.SETTER_CALL``); by a substring first: the writer asks every message."""
    return "(" in text and _SETTER_CALL().search(lowered) is not None


def block_scalar(value: str, style: str, indent: str) -> str:
    """A YAML block scalar's value (``secret_names.YAML_BLOCK``) as the application reads it:
    its lines without the block's indentation, kept apart by ``|``, folded into one by ``>``."""
    lines = [line.rstrip("\r").removeprefix(indent) for line in value.split("\n")]
    return ("\n" if style == "|" else " ").join(lines)


def unquoted(value: str) -> str:
    """A value without the quotes around it, if it has them: ODBC's braces too (``PWD={p;w}``:
    ``secret_names.CONNECTION_VALUE``, the only value that begins with one), "}}" in them a brace."""
    if len(value) > 1 and value[0] == "{" and value[-1] == "}":
        return value[1:-1].replace("}}", "}")
    return value[1:-1] if len(value) > 1 and value[0] in "'\"" and value[-1] == value[0] else value


def masked_compared(match: re.Match[str]) -> str:
    """Both values of RF's ``Key password: a != b``, references and masks kept."""
    head = match[0][:match.start("first") - match.start(0)]
    first, second = (side if is_reference(compared_side(side)) else MASK
                     for side in (match["first"], match["second"]))
    return f"{head}{first} != {second}"


def may_compare(text: str) -> bool:
    """Whether ``text`` may hold RF's comparison under a name (``compared_values``): by
    substrings, so a failure such as "Expected status: 500 != 200" compiles no pattern."""
    return " != " in text and ("Key " in text or "Index " in text
                               or "Value of dictionary key '" in text)


def compared_side(side: str) -> str:
    """A value as RF's failure shows it, without the quotes and type it adds where two
    values print alike (``'1' (string) != 1 (integer)``)."""
    typed = _TYPED_SIDE().match(side)
    return typed[1] if typed else side


_TYPED_SIDE = lazy_pattern(r"^'?(.*?)'? \(\w+\)$", re.DOTALL)


def masked_collection(match: re.Match[str]) -> str:
    """A collection under a plural secret's name masked whole, when it holds a value that may
    be a secret (``tokens=[12, 40, 7]`` stays: counts)."""
    if not any(registrable(item) for item in collection_items(match["value"])):
        return match[0]
    return f"{match[0][:match.start('value') - match.start(0)]}{MASK}"


def whole_name(lowered: str, mention: re.Match[str]) -> str:
    """The name a secret's word ends (``oldpwd`` of ``'OLDPWD': x``): the name characters
    before it, too."""
    start = mention.start("name")
    while start > 0 and (lowered[start - 1].isalnum() or lowered[start - 1] in "_.-"):
        start -= 1
    return lowered[start:mention.end("name")]


def prompt_string(text: str, name_start: int, after: re.Match[str]) -> bool:
    """Whether a bare name at ``name_start`` begins a string that its separator ends, the
    value ``after`` read beginning with that string's quote: a prompt (``expect
    "password:"; send "x"``), not a pair (``secret_names.PROMPT_END``, the masking rule's)."""
    quote = text[name_start - 1:name_start]
    start = after.start("value")
    return (bool(quote) and quote in "'\"" and not after["close"] and text.startswith(quote, start)
            and text[start - 1] in ":=>")


def in_url_user(text: str, at: int) -> bool:
    """Whether ``at`` is in a URL's user name (``https://x-access-token:x@github.com/o/r``):
    the value after it ends at ``@``, as URL credentials do."""
    start = text.rfind("://", max(0, at - 200), at + 1)
    return start >= 0 and not any(c in text[start + 3:at] for c in " \t\n/@")


# OperatingSystem's Set Environment Variable and Append To Environment Variable, RF 4-7:
# ``self._info(f"Environment variable '{name}' set to value '{value}'.")`` (RF 7.4's
# ``Secret`` values log "set to a secret value."). The name is in quotes, not before a
# separator, so the name rules do not read it; found by finds: it is one of many messages.
ENVIRONMENT_HEAD, _ENVIRONMENT_SET_TO, _ENVIRONMENT_END = (
    "Environment variable '", "' set to value '", "'.")
# How the library messages that name their secret by a field or variable begin
# (``secret_shapes.typed_password``, ``environment_value``)
LIBRARY_MESSAGES = (TYPED_HEAD, ENVIRONMENT_HEAD)


def environment_value(text: str, names_secret: Callable[[str], bool]) -> tuple[int, int] | None:
    """Where the value is in OperatingSystem's message that an environment variable whose
    name ``names_secret`` was set (start, end), or None (another message, another name, the
    shell's working directory, a value already masked)."""
    if not (text.startswith(ENVIRONMENT_HEAD) and text.endswith(_ENVIRONMENT_END)):
        return None
    at = text.find(_ENVIRONMENT_SET_TO, len(ENVIRONMENT_HEAD))
    if at < 0:
        return None
    name = text[len(ENVIRONMENT_HEAD):at]
    start, end = at + len(_ENVIRONMENT_SET_TO), len(text) - len(_ENVIRONMENT_END)
    value = text[start:end]
    if value == MASK or not names_secret(name) or holds_no_secret(name, value):
        return None
    return start, end


# An HTML table's rows and cells (DatabaseLibrary 2.x logs a query's result as one, with
# html=True: a header row of <th scope="col"> names, then rows of a <th scope="row"> number
# and <td> values); a cell's markup.
_TABLE_ROW = lazy_pattern(r"(?is)<tr\b[^>]*>(.*?)</tr\s*>")
_TABLE_CELL = lazy_pattern(r"(?is)<(t[hd])\b[^>]*>(.*?)</t[hd]\s*>")
_MARKUP = lazy_pattern(r"<[^>]*>")


def table_column_values(html: str, names_secret: Callable[[str], bool]) -> list[str]:
    """The values of an HTML table's columns whose header names a secret (a query's
    ``api_token`` column): the name is in the header row, its values in the rows below, so
    no name rule reads them. The table's first row of header cells names the columns."""
    columns: list[int] | None = None
    found: list[str] = []
    for row in _TABLE_ROW().finditer(html):
        cells = _TABLE_CELL().findall(row[1])
        if columns is None:
            if cells and all(kind.lower() == "th" for kind, _ in cells):
                columns = [at for at, (_, name) in enumerate(cells) if names_secret(_cell_text(name))]
                if not columns:
                    return []
            continue
        found += [_cell_text(cells[at][1]) for at in columns if at < len(cells)]
    return found


def _cell_text(markup: str) -> str:
    import html  # its entities' table: only for a message that holds a table

    return html.unescape(_MARKUP().sub("", markup)).strip()


_STRUCTURED = lazy_pattern(r"(?:[A-Za-z_][\w.]*)?[(\[].*[)\]]", re.DOTALL)
_QUOTED_ELEMENT = lazy_pattern(r"'((?:[^'\\\n]|\\.)*)'" + r'|"((?:[^"\\\n]|\\.)*)"')


def structured_secrets(name: str, value: str) -> list[str]:
    """What of ``name``'s secret value to register: the value itself, or of a tuple, list
    or call (``('bob', 'x')``, ``['bob', 'x']``, ``HTTPBasicAuth('bob', 'x')``, RF's ``[ bob |
    x ]``) its strings, of a user's credentials (``credential_pair``) the last."""
    if value[-1:] not in (")", "]") or _STRUCTURED().fullmatch(value) is None:
        return [value]
    inner = value[value.index("[" if value[-1] == "]" else "(") + 1:-1]
    items = [m[1] if m[1] is not None else m[2] for m in _QUOTED_ELEMENT().finditer(inner)]
    if not items and " | " in inner:  # RF's own list: [ bob | x ]
        items = [part.strip() for part in inner.split(" | ")]
    if not items:  # no strings in it (``Pw(1)``, ``(none)``): the value as it is
        return [value]
    return items[-1:] if credential_pair(name, len(items)) else items


_DICT_VALUE = lazy_pattern(r"""[:=]\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")""")


def collection_items(value: str) -> list[str]:
    """The values of a collection as ``secret_names.COLLECTION`` finds it: RF's ``[ a | b ]``
    and ``{ k=a | j=b }`` (a dict's values, not its keys), a Python list's or tuple's strings,
    a dict's string values (``{'db': 'x'}``: the key names the value)."""
    inner = value[1:-1].strip()
    if not inner:
        return []
    quoted = inner[:1] in ("'", '"')
    if value[0] == "{":
        if not quoted:  # RF's { db=x | api=y }
            return [part.partition("=")[2].strip() for part in inner.split(" | ")]
        return [m[1] if m[1] is not None else m[2] for m in _DICT_VALUE().finditer(inner)]
    if not quoted and (" | " in inner or value[1:2] == " "):  # RF's [ a | b ]
        return [part.strip() for part in inner.split(" | ")]
    return [m[1] if m[1] is not None else m[2] for m in _QUOTED_ELEMENT().finditer(inner)]
