"""A run's secret values, found while the writer streams it (capture side, writer stage).

CI systems register secret values and mask every occurrence; rf-log-mcp does the same. A
secret sits next to its name only where it is defined or assigned; elsewhere it is
interpolated into prose, passed on under another name, echoed in other keywords' TRACE
lines. So the writer hands every message and every closed step to a :class:`SecretRegistry`,
which keeps each value the run's own text proves secret:

* what the naming rules find in any message: ``password=x``, ``"token": "x"``,
  ``Authorization: Bearer x``, URL credentials, and RF's assignment lines ``${API_KEY} = x``
  (``${token} = Get Token``, ``VAR ${password} ...``, ``Set Test Variable ${API_KEY} ...``);
* a step's arguments that reference a secret-named variable (``${PASSWORD}``, inside any
  text: ``pw:${PASSWORD}``), aligned with the resolved text the run also holds: RF's TRACE
  ``Arguments: [ ... ]`` line, and the status message of ``Fail`` / ``Should Be Equal`` or
  the message of ``Log``, which RF builds from their arguments;
* named arguments with a secret's name and a literal value (``password=hunter2``), the
  values after the first of keywords a word of whose name ends like a secret's (``Input
  Password  id  hunter2``, ``Enter Password And Submit``; the read side's
  ``Redactor.keyword_names_secret``, so what it masks in them is masked everywhere), what
  such a keyword returns, whatever the variable's name (RF's ``${session} = x`` line, its
  TRACE ``Return:``), and so what a getter returns for a secret's name (``${v} = Get
  Environment Variable  DB_PASSWORD``), and the values a loop assigns to a secret-named loop
  variable;
* of an Authorization header's value (``Bearer x``), the credential alone (``x``), which
  runs also show without the scheme;
* a suite's or test's metadata under a secret's name (``--metadata api_token:x``).

* what a library keyword's signature says is secret (``secret_names.SIGNATURE_SECRETS``): a
  positional password (``SSHLibrary.Login  user  x``), the value after a secret's name among
  name-value pairs (``Set Environment Variable  DB_PASSWORD  x``, ``Set To Dictionary  ${d}
  password  x``), the text typed into a password field (``Fill Text  id=password  x``);
  given as a variable, its value as RF's TRACE line or the keyword's own message shows it.

Not registered: a value that merely follows a secret's name among another keyword's
arguments (``Should Be Equal  ${TOKEN}  expected``: "expected" is not secret; ``Get Element
Attribute  password  type``: a locator, then an attribute); where such a value is one
(``Set Test Variable  ${API_KEY}  x``), RF's assignment line names it.

Live capture and import run this same code on the same events, so they register the same
values; the listener adds what only robot's running context shows, the values of
secret-named variables in RF's scopes and the keywords' parameters named like secrets, and
an import reads what of these the run's files beside it still show
(``importers.suite_files``). The read side masks every registered value wherever it occurs
(``known_values.KnownValues``). Values too short or too common
(``known_values.registrable``) are never registered.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3

from . import events as ev
from .events import Node
from .known_values import HEAD_MARK, KnownValues, registrable
from .masking import Redactor, lazy_pattern
from .named_values import holds_no_secret, table_column_values
from .secret_names import (
    AUTH_SCHEMES,
    FIELD,
    PAIRS,
    credential_pair,
    secret_getter,
    signature_key,
    signature_secret,
)
from .step_masking import TRACE_ARGUMENTS, signature_position

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

# One item of RF's TRACE ``Arguments: [ a | b ]`` line: an optional name (``${pass}=`` of a
# user keyword's argument, ``password=`` of a named one) and a value as RF's ``prepr``
# writes it (a quoted repr for strings).
_TRACE_ITEM = lazy_pattern(r"""
    (?P<name> \$\{[^{}]*\}= | [\w -]+= )?
    (?P<value> '(?:[^'\\]|\\.)*' | "(?:[^"\\]|\\.)*" | .*? )
    (?: \ \|\ | $ )""", re.VERBOSE | re.DOTALL)
_REFERENCE = lazy_pattern(r"[$@&%]\{[^{}]*\}(?:\[[^\]]*\])*")
_NAMED = lazy_pattern(r"^([\w -]+)=(.*)$", re.DOTALL)
# The Browser library's Fill Text and Type Text (``logger.info(f"Fills the text '{txt}' in
# the given field.")``)
_TEXT_FILLED = lazy_pattern(r"(?:Fills|Types) the text '(.*)' in the given field\.", re.DOTALL)
# BuiltIn keywords whose status message or own message RF builds from their arguments:
# name -> templates of that text, as positions of the arguments ({0}, {1}, ...).
_BUILT_FROM_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "Fail": ("{0}",),
    "Should Be Equal": ("{2}: {0} != {1}", "{0} != {1}", "{2}"),
    "Should Be Equal As Strings": ("{2}: {0} != {1}", "{0} != {1}", "{2}"),
    "Should Not Be Equal": ("{2}: {0} == {1}", "{0} == {1}", "{2}"),
    "Should Contain": ("{2}", "{0} does not contain {1}"),
    "Should Be True": ("{1}",),
}
_LOGGED = ("Log",)  # their first message is their first argument, resolved
_TRACE_LINES = ("Arguments: [", "Return: ")
# A value an Authorization header carries: its scheme, then the credential
_AUTH_SCHEME = lazy_pattern(rf"(?:{AUTH_SCHEMES})\s+(\S+)", re.IGNORECASE)
_NOTHING, _MENTIONS, _SECRET_KEYWORD, _SIGNATURE = 0, 1, 2, 3


class SecretRegistry:
    """The secret values found so far in one run; ``take`` hands the new ones to the sink."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.known: set[str] = set()
        self.pending: list[str] = []
        self._secret_names: dict[str, bool] = {}
        # (owner, keyword name) -> positions of its parameters named like secrets: what live
        # capture read from the keywords robot imported (``robot_scope.SecretParameters``)
        self._parameters: dict[tuple[str, str], tuple[int, ...]] = {}
        # owner -> its keywords with embedded arguments named like secrets: (their name's
        # pattern, positions of its groups); a call is matched against its owner's only
        self._embedded: dict[str, list[tuple[re.Pattern[str], tuple[int, ...]]]] = {}

    def add(self, value: Any) -> None:
        text = str(value).strip()
        if " " in text and (scheme := _AUTH_SCHEME().fullmatch(text)) and registrable(scheme[1]):
            text = scheme[1]  # "Bearer x" of an Authorization header: x is the secret, anywhere
        if text not in self.known and registrable(text):
            self.known.add(text)
            self.pending.append(text)

    def secret_parameters(self, owner: str, name: str, positions: tuple[int, ...],
                          embedded: tuple[str, int] | None = None) -> None:
        """A keyword takes a secret at ``positions`` (``Post Login  user  password``; of
        ``embedded`` arguments, the groups of its name's pattern): the values its calls
        give there are registered (no output file has a keyword's parameters: live capture
        reads them from robot, an import from the run's files beside it)."""
        if embedded is None:
            self._parameters[signature_key(owner, name)] = tuple(positions)
        else:
            with contextlib.suppress(re.error, TypeError):
                self._embedded.setdefault(signature_key(owner, "")[0], []).append(
                    (re.compile(*embedded), tuple(positions)))

    def _embedded_values(self, name: str, owner: str | None) -> None:
        """The secrets a call of a keyword with embedded arguments gives in its name (after
        a BDD prefix, ``Given``, in whatever language: its first word)."""
        for pattern, positions in self._embedded.get(signature_key(owner, "")[0], ()):
            found = pattern.fullmatch(name) or (" " in name and pattern.fullmatch(name.split(" ", 1)[1]))
            if found:
                for position in positions:
                    value = found[position + 1]
                    if value and not _REFERENCE().search(value):
                        self.add(value)
                return

    def metadata(self, metadata: dict[str, Any]) -> None:
        """A suite's or test's metadata: the values of the names that name a secret
        (``Metadata  Deploy Token  x``, ``--metadata api_token:x``), as a secret-named
        variable's. The read side masks them in place by the same names (``assign``)."""
        for name, value in metadata.items():
            if isinstance(value, str) and self.names_secret(str(name)) \
                    and not _REFERENCE().search(value):
                self.add(value)

    def take(self) -> list[str]:
        taken, self.pending = self.pending, []
        return taken

    def _call_kind(self, name: str | None, args: tuple[Any, ...], owner: str | None) -> int:
        """What a call can show of a secret: a keyword named like one (Input Password: its
        values after the first), a library keyword whose signature says where one is
        (SSHLibrary.Login, Set Environment Variable, Fill Text), arguments that mention one,
        or nothing."""
        if self.redactor.keyword_names_secret(name or ""):
            return _SECRET_KEYWORD
        if signature_secret(owner, name) is not None or (
                self._parameters and signature_key(owner, name) in self._parameters):
            return _SIGNATURE
        joined = "\x00".join(map(str, args))
        # neither a variable nor a named argument: nothing of a secret can be in there
        if ("{" not in joined and "=" not in joined) or not self.redactor.mentions_secret(joined):
            return _NOTHING
        return _MENTIONS

    def names_secret(self, name: str) -> bool:
        known = self._secret_names.get(name)
        if known is None:
            known = self._secret_names[name] = self.redactor.names_secret(name)
        return known

    # -- what the writer hands over --------------------------------------------------------

    def message(self, text: str, html: bool = False) -> None:
        """A message of the run: what the naming rules find in it (the writer's hot path:
        one lower-casing and one search for most messages), and in an HTML table the
        values of a column whose header names a secret. RF's TRACE ``Arguments:`` and
        ``Return:`` lines, most messages of a TRACE run, are left to :meth:`step`, which
        reads them against the arguments they resolve."""
        if text.startswith(_TRACE_LINES):
            return
        lowered = text.lower()
        if self.redactor.may_name_a_value(text, lowered):
            assigned = text.startswith("${")  # RF's ``${API_TOKEN} = x``, perhaps cut
            for value in self.redactor.secret_values(text, lowered):
                self.add(_as_cut(value) if assigned and text.endswith(value) else value)
        if html and "</th>" in lowered:
            for value in table_column_values(text, self.names_secret):
                self.add(value)

    def step(self, node: Node, opening: list[str] | None,
             assigned: list[str] | None = None) -> None:
        """A closed keyword or iteration: the values its arguments and texts prove secret.
        ``opening``: its first two messages (a TRACE ``Arguments:`` line, what it logged);
        ``assigned``: its later lines of what it returned (``Return: …``, ``${x} = …``)."""
        if node.type == ev.ITERATION:
            if isinstance(node.assign, dict):
                for name, value in node.assign.items():
                    if self.names_secret(str(name)):
                        self.add(value)
            return
        if node.assign:
            named_by = self._returns_secret(node)
            if named_by is not None:
                self._returned(node.assign, (*(opening or ()), *(assigned or ())), named_by)
        if self._embedded and node.name and not node.args:  # a call's embedded values: its name
            self._embedded_values(node.name, node.owner)
        args = node.args
        if not args:
            return
        kind = self._call_kind(node.name, args, node.owner)
        if kind == _NOTHING:
            return
        secret_keyword = kind == _SECRET_KEYWORD
        signature = signature_secret(node.owner, node.name) if kind == _SIGNATURE else None
        traced = opening[0] if opening and opening[0].startswith("Arguments: [") else None
        logged = opening[-1] if opening and (traced is None or len(opening) > 1) else None
        args = [str(a) for a in args]
        secret_at = None if signature is None else signature_position(node.owner, node.name, args)
        parameters = self._parameters.get(signature_key(node.owner, node.name), ()) \
            if kind == _SIGNATURE and self._parameters else ()
        pairs = signature is not None and signature[0] == PAIRS
        pair_name = ""  # the argument before, when it is a secret's name (pairs only)
        given = []  # secret values given as references: registered as resolved below
        for index, arg in enumerate(args):
            named = _NAMED().match(arg)
            if named and self.names_secret(named[1]):  # Login  password=hunter2
                for value in self.redactor.secret_values(arg):
                    self.add(value)
            elif ((secret_keyword and index > 0) or (
                    (index == secret_at or index in parameters) and not named) or (
                    pair_name and not named and not holds_no_secret(pair_name, arg))):
                if not _REFERENCE().search(arg):
                    self.add(arg)  # Input Password  id  x; SSHLibrary.Login  user  x
                else:
                    given.append(arg)
            pair_name = arg if (pairs and not named and not pair_name
                                and self.redactor.names_secret(arg)) else ""
        if given or signature is not None:
            self._given_values(signature[0] if signature else None, given, args, traced, logged)
        for arg, template, resolved in self._pairs(node, args, traced, logged, opening):
            named = _NAMED().match(arg)
            if named and named[2] == template and self.names_secret(named[1]):
                if not holds_no_secret(named[1], resolved):  # password=${PW}: what was passed
                    self.add(resolved)
            else:
                self._align(template, resolved)

    def _given_values(self, kind: str | None, references: list[str], args: list[str],
                      traced: str | None, logged: str | None) -> None:
        """What secret values given as references stand for: RF's TRACE line has them
        resolved; at INFO (what most runs keep), the message a keyword logs with the value:
        the Browser library's ``Fill Text`` and ``Type Text`` (the text, without the field).
        (OperatingSystem's "Environment variable 'X' set to value 'x'." names the variable:
        :meth:`message` reads it, whichever keyword logged it.)"""
        if references and traced is not None:
            resolved = {arg: value for arg, _, value in _traced(args, traced)}
            for reference in references:
                if reference in resolved and not holds_no_secret(reference, resolved[reference]):
                    self.add(resolved[reference])
        if logged is not None and kind == FIELD and references:  # a password's field: see step
            found = _TEXT_FILLED().fullmatch(logged)
            if found:
                self.add(found[1])

    def _returns_secret(self, node: Node) -> str | None:
        """What says the keyword returns a secret: its name (``Get Auth Token For User``,
        given as ""), or the argument naming what a getter returns (``Get Environment
        Variable  DB_PASSWORD``, ``secret_names.SECRET_GETTERS``); None when nothing does."""
        if self.redactor.keyword_names_secret(node.name or ""):
            return ""
        at = secret_getter(node.owner, node.name)
        if at is None or len(node.args) <= at or not self.names_secret(str(node.args[at])):
            return None
        return str(node.args[at])

    def _returned(self, assign: Any, lines: tuple[str, ...], named_by: str) -> None:
        """What a keyword returned that ``named_by`` says is secret (``_returns_secret``),
        whatever the variable's name: RF's assignment lines, ``${x} = value`` (values robot
        cut, "..." after them, keep their head), ``@{x} = [ a | b ]``, ``&{x} = { k=v }``, and the
        TRACE ``Return: 'value'`` of a single variable; not the shell's working directory
        (``Get Environment Variable  PWD``)."""
        names = [str(name).rstrip("= ") for name in (
            assign if isinstance(assign, (list, tuple)) else [assign])]
        for line in lines:
            if line.startswith("Return: "):
                if len(names) == 1 and names[0].startswith("${"):
                    value = _literal(line[8:])
                    if not holds_no_secret(named_by, value):
                        self.add(value)
                continue
            name, equals, value = line.partition(" = ")
            if not equals or name not in names:
                continue
            if name[0] == "$":
                if not holds_no_secret(named_by, value):
                    self.add(_as_cut(value))
            elif value.startswith(("[ ", "{ ")) and value.endswith((" ]", " }")):
                for item in value[2:-2].split(" | "):
                    self.add(item.partition("=")[2] if name[0] == "&" else item)

    # -- alignment -------------------------------------------------------------------------

    def _pairs(self, node: Node, args: list[str], trace_arguments: str | None,
               first_message: str | None, opening: list[str] | None) -> list[tuple[str, str, str]]:
        """(argument as written, its template, the same resolved) wherever the run shows
        both; the template is the argument's value part for a named one. ``opening``: the
        step's first two messages (``Log Many`` logs each argument as one, in order: its
        first two arguments, or its first after a TRACE line, are read)."""
        pairs: list[tuple[str, str, str]] = []
        # no list or dictionary expanded: each argument written is one argument passed
        one_each = not any(a.startswith(("@{", "&{")) for a in args)
        if trace_arguments is not None and one_each:
            pairs += _traced(args, trace_arguments)
        name = node.name or ""
        builtin = node.owner in (None, "BuiltIn")
        if builtin and name in _BUILT_FROM_ARGUMENTS and node.message:
            for shape in _BUILT_FROM_ARGUMENTS[name]:
                used = [int(i) for i in re.findall(r"\{(\d)\}", shape)]
                if max(used) < len(args):
                    text = shape.format(*args, *[""] * 3)
                    pairs.append((text, text, node.message))
        if builtin and name in _LOGGED and first_message is not None:
            pairs.append((args[0], args[0], first_message))
        if builtin and name == "Log Many" and opening and one_each:
            # its TRACE line shows the arguments unresolved: the messages after it are them
            logged_each = [m for m in opening if not m.startswith(_TRACE_LINES)]
            pairs += [(arg, arg, message) for arg, message in zip(args, logged_each, strict=False)]
        return pairs

    def _align(self, template: str, resolved: str) -> None:
        """Register what the secret-named variables of ``template`` stand for in
        ``resolved``: the template's literal text must match around them exactly."""
        parts = _REFERENCE().split(template)
        names = _REFERENCE().findall(template)
        secret = [self._secret_reference(n) for n in names]
        if not any(secret):
            return
        pattern = "".join(
            re.escape(part) + (f"(?P<v{i}>.+?)" if i < len(names) else "")
            for i, part in enumerate(parts))
        match = re.fullmatch(pattern, resolved, re.DOTALL)
        if match is None:
            return
        for i, is_secret in enumerate(secret):  # not what such a name holds that is none
            if is_secret and not holds_no_secret(names[i], match[f"v{i}"]):  # (${API_SESSION} = api)
                self.add(match[f"v{i}"])

    def _secret_reference(self, name: str) -> bool:
        """A reference to a secret: ``${TOKEN}``, ``${CREDS}[password]``, or an item of
        secrets (``${API_TOKENS}[0]``, ``${SECRETS}[db]``)."""
        if self.names_secret(name):
            return True
        base, item, _ = name.partition("}[")
        if not item or not self.redactor.names_secrets(base + "}"):
            return False
        # a user's credentials by key (${CREDENTIALS}[user]): the key names the secret
        key = item[:-1].strip("'\"") if item.endswith("]") else item
        return key.isdigit() or not credential_pair(base + "}", 2) or self.names_secret(key)


def _traced(args: list[str], trace_arguments: str) -> list[tuple[str, str, str]]:
    """Arguments paired with their resolved values from RF's TRACE line: positional ones by
    position, named ones (``password=${PW}``, a user keyword's ``${pass}=``) by name."""
    line = TRACE_ARGUMENTS().match(trace_arguments)
    if line is None:
        return []
    items = [(m["name"], _literal(m["value"])) for m in _TRACE_ITEM().finditer(line[2])
             if m[0]]
    by_name = {name[:-1].strip("${}"): value for name, value in items if name}
    positional = [value for name, value in items if not name or name.startswith("${")]
    pairs = []
    position = 0
    for arg in args:
        named = _NAMED().match(arg)
        if named and named[1] in by_name:
            pairs.append((arg, named[2], by_name[named[1]]))
            continue
        if position < len(positional):
            pairs.append((arg, arg, positional[position]))
        position += 1
    return pairs


def _literal(text: str) -> str:
    """A value as RF's prepr wrote it, back to its text: a quoted repr unquoted."""
    text = text.strip()
    if len(text) > 1 and text[0] in "'\"" and text[-1] == text[0]:
        import ast  # here: a reading command that masks nothing quoted does not load it

        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text[1:-1]
        return value if isinstance(value, str) else text
    return text


def known_values(conn: sqlite3.Connection, run_ids: list[int]) -> KnownValues:
    """The values these runs proved secret (stored by the writer in ``secrets``): what every
    text drawn from them is masked with."""
    if not run_ids:
        return KnownValues(())
    marks = ",".join("?" * len(run_ids))
    try:
        rows = conn.execute(f"SELECT value FROM secrets WHERE run_id IN ({marks})", run_ids)
        return KnownValues(value for (value,) in rows)
    except sqlite3.OperationalError as exc:  # a read-only store of an older schema
        if "no such table" not in str(exc):
            raise
        return KnownValues(())


def _as_cut(value: str) -> str:
    """An assignment line's value as registered: robot cuts one longer than its
    ``--maxassignlength`` (200 unless given) and adds "...", so its head, marked as such,
    masks the whole token wherever it occurs."""
    return f"{value[:-3]}{HEAD_MARK}" if value.endswith("...") and registrable(value[:-3]) else value
