"""Masking the structured parts of a step (shared by both sides, through ``masking``): a
keyword's arguments and RF's TRACE lines of them, a loop's values, an iteration's or a VAR's
assignments. Which argument is secret follows from the keyword's name (``Input Password``),
an argument naming a secret (``${TOKEN}``, ``password=...``), or a library keyword's
signature (``SSHLibrary.Login  user  x``); variable references stay (names, not values).
``StepMasking`` is mixed into ``masking.Redactor``: it uses the redactor's ``text``,
``names_secret`` and ``keyword_names_secret``.
"""

from __future__ import annotations

import re

from rf_log_listener.events import keyword_key
from rf_log_listener.secret_names import PAIRS, POSITION, signature_secret
from rf_log_listener.secret_shapes import MASK, lazy_pattern, password_field

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

_NOT_SECRET = frozenset({"", MASK, "null", "none", "true", "false", "[]", "{}", "''", '""'})
_VARIABLE = lazy_pattern(r"^[$@&%]\{[^{}]+\}(\[[^\]]*\])?$")


# RF's TRACE lines: ``Arguments: [ 'id:pw' | 'hunter2' ]`` and ``Return: 'hunter2'``.
TRACE_ARGUMENTS = lazy_pattern(r"^(Arguments: \[ )(.*)( \])$", re.DOTALL)
_RETURN = lazy_pattern(r"^(Return: )(.+)$", re.DOTALL)
# How those two start: a message that starts otherwise is masked as any text (a caller need
# not decode the keyword's arguments for it).
TRACE_LINE_STARTS = ("Arguments: [ ", "Return: ")
_NAMED_ARG = lazy_pattern(r"^([$@&%]?\{?[\w .-]+\}?=)(.*)$", re.DOTALL)


class StepMasking:
    """A keyword's arguments, its TRACE lines, a loop's and a VAR's values, masked."""

    if TYPE_CHECKING:  # what masking.Redactor gives the methods below
        def text(self, value: str) -> tuple[str, int]: ...
        def names_secret(self, text: str) -> bool: ...
        def names_secrets(self, text: str) -> bool: ...
        def keyword_names_secret(self, name: str) -> bool: ...

    def args(self, keyword_name: str | None, args: list[str],
             owner: str | None = None) -> tuple[list[str], int]:
        """A keyword's arguments. Values after a secret-sounding keyword name (``Input
        Password``) or after an argument naming a secret (``${TOKEN}``, ``id:password``) are
        masked, and a library keyword's positional secret (``secret_names.SIGNATURE_SECRETS``:
        ``SSHLibrary.Login  user  x``); variable references stay (they are names, not values)."""
        out, count = [], 0
        secret_follows = bool(keyword_name and self.keyword_names_secret(keyword_name))
        secret_at = signature_position(owner, keyword_name, args)
        named_arg = _NAMED_ARG().match
        for index, arg in enumerate(args):
            masked, n = self.text(arg)
            named = named_arg(arg)
            if n == 0 and ((secret_follows and index > 0) or index == secret_at) \
                    and not is_reference(arg):
                if named and not is_reference(named[2]) and secret_follows:
                    masked, n = f"{named[1]}{MASK}", 1
                elif not named:
                    masked, n = MASK, 1
            if not named and (self.names_secret(arg) or self._collection_of_secrets(arg)) and (
                    not _VARIABLE().match(arg.strip()) or _sets_a_variable(keyword_name)):
                # ``id:password  x``, ``Set Test Variable  @{API_TOKENS}  a  b``; a reference
                # elsewhere is a value, not a name before one (``Should Match Regexp
                # ${password}  ^Al1ce  msg`` hid the pattern and the message it failed with)
                secret_follows = True
            out.append(masked)
            count += n
        return out, count

    def trace_message(self, text: str, keyword_name: str | None = None,
                      args: list[str] | None = None, assign: Any = None,
                      owner: str | None = None) -> tuple[str, int]:
        """A log message of a keyword. RF's TRACE lines ``Arguments: [ … ]`` and ``Return: …``
        carry resolved values: an argument is masked where the keyword's own argument is
        (``Input Password``), names a secret (``${TOKEN}``, ``password=${PW}``) or follows one;
        the return value when the keyword's name or an assigned variable's is a secret's."""
        match = TRACE_ARGUMENTS().match(text)
        if match and (keyword_name or args):
            secret = self.secret_positions(keyword_name, args or [], owner)
            items, count = [], 0
            for index, item in enumerate(match[2].split(" | ")):
                masked, n = self.text(item)
                named = _NAMED_ARG().match(item)
                if n == 0 and (index in secret or (named and self.names_secret(named[1][:-1]))) \
                        and not is_reference((named[2] if named else item).strip("'")):
                    masked, n = (f"{named[1]}{MASK}" if named else MASK), 1
                items.append(masked)
                count += n
            return f"{match[1]}{' | '.join(items)}{match[3]}", count
        match = _RETURN().match(text)
        if match and not is_reference(match[2].strip("'\"")) and (
                (keyword_name and self.keyword_names_secret(keyword_name))
                or any(self.names_secret(str(name)) for name in _names_of(assign))):
            return f"{match[1]}{MASK}", 1
        return self.text(text)

    def _collection_of_secrets(self, name: str) -> bool:
        """A list or dict variable named like secrets in the plural (``@{API_TOKENS}``,
        ``&{SECRETS}``): each of its values is one."""
        return name[:2] in ("@{", "&{") and self.names_secrets(name)

    def secret_positions(self, keyword_name: str | None, args: list[str],
                         owner: str | None = None) -> set[int]:
        """Positions of ``args`` whose values are secrets: masked by :meth:`args`, or a
        reference to a secret-named variable, or a named argument with a secret's name, or
        the library keyword's positional secret."""
        masked, _ = self.args(keyword_name, args, owner)
        positions = set()
        for index, (arg, shown) in enumerate(zip(args, masked, strict=True)):
            named = _NAMED_ARG().match(arg)
            if shown != arg or (named and self.names_secret(named[1][:-1])) or (
                    _VARIABLE().match(arg.strip()) and self.names_secret(arg)) or (
                    not named and index == signature_position(owner, keyword_name, args)):
                positions.add(index)
        return positions

    def for_values(self, assign: Any, flavor: str | None, values: list[str]) -> tuple[list[str], int]:
        """A FOR loop's values: those that land in a secret-named loop variable are masked
        (``FOR ${user} ${password} IN alice pw1 bob pw2``)."""
        names = [str(n) for n in _names_of(assign)]
        if flavor == "IN ENUMERATE":
            names = names[1:]
        if flavor in (None, "IN", "IN ZIP", "IN ENUMERATE") and names and any(
                self.names_secret(n) for n in names):
            out = [MASK if self.names_secret(names[i % len(names)]) and not is_reference(v)
                   else v for i, v in enumerate(values)]
            return out, sum(a != b for a, b in zip(out, values, strict=True))
        return self.args(None, values)

    def assign(self, assign: Any) -> tuple[Any, int]:
        """ITERATION loop values ``{"${password}": "x"}`` and similar name-to-value maps."""
        if not isinstance(assign, dict):
            return assign, 0
        count, out = 0, {}
        for name, value in assign.items():
            if self.names_secret(str(name)) and not is_reference(str(value)):
                out[name], n = MASK, 1
            elif isinstance(value, str):
                out[name], n = self.text(value)
            else:
                out[name], n = value, 0
            count += n
        return out, count

    def var_values(self, name: str | None, values: list[str]) -> tuple[list[str], int]:
        """A VAR's values: all masked when the variable's name is a secret's (a loop over
        one variable, as far as masking goes), or a list's or dict's is one in the plural
        (``VAR  @{API_TOKENS}  a  b``; a dict's keys stay)."""
        if name and self._collection_of_secrets(name):
            out = [_masked_item(value, name[0] == "&") for value in values]
            return out, sum(a != b for a, b in zip(out, values, strict=True))
        return self.for_values(name, None, values)


# BuiltIn's keywords that take a variable's name, then its value (``Set Test Variable
# ${TOKEN}  x``), as RF matches names (``events.keyword_key``)
_SETS_A_VARIABLE = frozenset({"settestvariable", "settaskvariable", "setsuitevariable",
                              "setglobalvariable", "setlocalvariable"})


def _sets_a_variable(keyword_name: str | None) -> bool:
    return keyword_key((keyword_name or "").rpartition(".")[2]) in _SETS_A_VARIABLE


def _masked_item(value: str, keyed: bool) -> str:
    """An item of a collection of secrets (``key=value`` in a dict's VAR): references stay."""
    key, equals, item = value.partition("=") if keyed else ("", "", value)
    if is_reference(item if equals else value):
        return value
    return f"{key}={MASK}" if equals else MASK


def signature_position(owner: str | None, keyword_name: str | None,
                       args: list[str]) -> int | None:
    """The position of the argument the library keyword's signature says is a password: its
    password argument, or the text it types into a password field (``secret_names``)."""
    signature = signature_secret(owner, keyword_name)
    if signature is None or signature[0] == PAIRS:
        return None
    kind, position = signature
    return position if kind == POSITION or (args and password_field(args[0])) else None


def _names_of(assign: Any) -> list[Any]:
    if isinstance(assign, dict):
        return list(assign)
    if isinstance(assign, list):
        return assign
    return [assign] if assign else []


def is_reference(value: str) -> bool:
    """A variable name or nothing worth hiding (``${PASSWORD}``, ``None``, ``***``)."""
    value = value.strip()
    return value.casefold() in _NOT_SECRET or bool(_VARIABLE().match(value))
