"""What the live listener reads from robot's running context besides results (capture side,
inside robot): variables (``${OUTPUT_DIR}``, pabot's), the values of secret-named variables
in RF's scopes, where the library keywords run so far are defined, which keywords take a
secret by position (their parameters' names), and a suite file's fingerprint. No output
file holds any of these; an import reads what the run's files beside it still show
(``importers.suite_files``: keywords' parameters, Variables sections).

Every read goes through RF internals that differ between versions, so each one gives up
quietly (nothing read) rather than failing: the run matters more than the capture.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .events import INSTALLED, keyword_key
from .named_values import holds_no_secret
from .secret_names import credential_pair

Definition = tuple[str, str, "str | None", "int | None"]  # library, keyword key, file, line


def variable(name: str) -> object:
    """A variable's value in robot's current scope (None: not set, or robot not running).
    ``${NAME}`` is looked for in the scope first: RF's lookup of a variable that is not set
    (pabot's, in most runs) ranks every variable's name for a "did you mean" (~0.2 ms)."""
    from robot.libraries.BuiltIn import BuiltIn, RobotNotRunningError
    from robot.running.context import EXECUTION_CONTEXTS

    with contextlib.suppress(Exception):  # an RF whose internals differ: ask BuiltIn
        if name[2:-1] not in EXECUTION_CONTEXTS.current.variables.current.store:
            return None
    try:
        return BuiltIn().get_variable_value(name)
    except RobotNotRunningError:
        return None


def dry_run() -> bool | None:
    """Whether robot runs with ``--dryrun`` (keywords checked, not run); None: not known."""
    from robot.running.context import EXECUTION_CONTEXTS

    with contextlib.suppress(Exception):
        return bool(EXECUTION_CONTEXTS.current.dry_run)
    return None


def output_dir() -> str | None:
    """``${OUTPUT_DIR}``: libraries write screenshots there (attachments are read there)."""
    value = variable("${OUTPUT_DIR}")
    return str(value) if value else None


def suite_fields(data: Any) -> dict[str, Any] | None:
    """A suite's source, and the fingerprint of its file (size, mtime_ns, sha256): readers
    resolve steps' lines from the file only while it is the one robot ran."""
    if not data.source:
        return None
    source = str(data.source)
    try:
        stat = os.stat(source)
        if not Path(source).is_file():
            return {"source": source}
        with open(source, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()  # a suite file: small
    except OSError:
        return {"source": source}
    return {"source": source, "_fingerprint": [stat.st_size, stat.st_mtime_ns, digest]}


def scope(data: Any) -> tuple[set[str], list[tuple[str, dict[Any, Any]]], list[Any]]:
    """A variable scope's names, its variables whose value is a dictionary, and its values.
    RF's NormalizedDict (6.1-7.x) sorts its keys each time it is iterated and normalizes
    each name it is asked for: read through its two plain dicts instead, it costs a few
    microseconds, not 30 a call, and the listener reads the scope at every test's start and
    end (a suite of 1,000 short tests: 100 → 36 ms)."""
    values, names = getattr(data, "_data", None), getattr(data, "_keys", None)
    if type(values) is dict and type(names) is dict and values.keys() == names.keys():
        return set(names.values()), [(names[key], raw) for key, raw in values.items()
                                     if isinstance(raw, dict)], list(values.values())
    pairs = [(name, data[name]) for name in list(data)]
    return ({name for name, _ in pairs}, [pair for pair in pairs if isinstance(pair[1], dict)],
            [raw for _, raw in pairs])


# Typed secrets in a collection (``&{LOGIN: str=Secret}``) are a few credentials; a test
# data list of thousands is not searched.
_SECRETS_IN_A_COLLECTION = 64


def secret_values(raws: list[Any], searched: set[tuple[int, int]]) -> list[str]:
    """The values of RF 7.4+ ``Secret`` objects among a scope's values (``${X: Secret}``),
    alone or in a small list or dictionary: those RF has resolved (it resolves a variable
    at its first use). ``searched``: the collections (id, length) already looked into, left
    out (the listener looks at every test's end; a type test per value is C)."""
    secret = secret_type()
    if secret is None:
        return []
    kinds = set(map(type, raws))
    found = [raw.value for raw in raws if type(raw) is secret] if secret in kinds else []
    for raw in [raw for raw in raws if isinstance(raw, (dict, list, tuple))]:
        key = (id(raw), len(raw))
        if key in searched or key[1] > _SECRETS_IN_A_COLLECTION:
            continue
        searched.add(key)
        items = list(raw.values()) if isinstance(raw, dict) else raw
        if secret in set(map(type, items)):
            found += [item.value for item in items if type(item) is secret]
    return [value for value in found if isinstance(value, str) and value]


def secret_type() -> type | None:
    """RF's ``Secret`` (7.4+): it prints as ``<secret>``; its ``value`` is the secret."""
    global _SECRET
    if _SECRET is False:
        try:
            from robot.utils import secret

            _SECRET = secret.Secret
        except ImportError:  # RF before 7.4
            _SECRET = None
    return _SECRET  # type: ignore[return-value]


_SECRET: type | bool | None = False  # not looked up yet


class ScopeSecrets:
    """The values of secret-named variables in RF's scopes (the Variables table, --variable,
    variable files, what tests set), each text once per run."""

    def __init__(self, names_secret: Callable[[str], bool],
                 names_secrets: Callable[[str], bool] | None = None) -> None:
        self.names_secret = names_secret
        self.names_secrets = names_secrets  # a plural name: its list's or dict's values
        self.sent: set[str] = set()
        self.names_seen: set[str] = set()  # variable names already met in RF's scopes
        self.secret_names: set[str] = set()  # those of them that name a secret
        self.plural_names: set[str] = set()  # those that name secrets (@{API_TOKENS})
        self.searched: set[tuple[int, int]] = set()  # collections looked into for Secrets

    def new_values(self, typed: bool = False) -> list[str]:
        """The secret values in robot's current scope not returned before; a variable RF
        cannot resolve is left alone. ``typed``: also the values of ``Secret`` objects (read
        at a test's end only: answers mask a run's known values whenever they became known,
        so once a test is enough)."""
        try:
            from robot.running.context import EXECUTION_CONTEXTS

            context = EXECUTION_CONTEXTS.current
            if context is None:
                return []
            store = context.variables.current.store
        except Exception:  # an RF whose internals differ: nothing to read, capture goes on
            return []
        return self.new_in(store, typed)

    def new_in(self, store: Any, typed: bool = False) -> list[str]:
        """Those of one RF variable store (an import reads a suite file's Variables section
        into one: ``importers.suite_files``)."""
        try:
            names, dictionaries, raws = scope(store.data)
            values_of_secrets = secret_values(raws, self.searched) if typed else []
        except Exception:  # an RF whose internals differ: nothing to read, capture goes on
            return []
        # Most names were classified at an earlier read: only new ones meet the name rule,
        # and the scope's secret names are one set intersection (C), not a call per name.
        names_secret = self.names_secret
        unseen = names - self.names_seen
        if unseen:
            self.names_seen |= unseen
            self.secret_names.update(filter(names_secret, unseen))
            if self.names_secrets is not None:
                self.plural_names.update(filter(self.names_secrets, unseen - self.secret_names))
        secret = names & self.secret_names
        values: list[Any] = []
        for name in sorted(secret | (names & self.plural_names)):
            try:
                value = store[name]
            except Exception:  # a variable RF cannot resolve here
                continue
            if isinstance(value, (list, tuple)):  # a user's credentials: the password
                values += value[-1:] if name in secret and credential_pair(name, len(value)) else value
            elif isinstance(value, dict):  # a user's credentials: the values of secrets' keys
                named = [v for k, v in value.items() if names_secret(str(k))] if name in secret else []
                values += named or value.values()  # (&{SECRETS}: every value)
            elif name in secret and not holds_no_secret(name, str(value)):  # ${PWD}: a path
                values.append(value)  # (a plural name's single value counts something: `tokens=4`)
        for name, raw in dictionaries:  # &{USER} with a password key
            if name not in secret:
                try:
                    values += [v for k, v in raw.items() if names_secret(str(k))
                               and not holds_no_secret(str(k), str(v))]  # os.environ's PWD
                except Exception:
                    continue
        secret = secret_type()
        new = []
        for item in [*values, *values_of_secrets]:
            text = item.value if secret is not None and type(item) is secret else str(item)
            if text not in self.sent:
                self.sent.add(text)
                new.append(text)
        return new


class Definitions:
    """Where the library keywords run so far are defined (RF 7's library model: each
    keyword's file and line), each once per run: readers show the definition of a library
    keyword, which no output file has. Installed libraries (site-packages) are left out, as
    readers leave them out of answers."""

    def __init__(self) -> None:
        self.sent: set[tuple[str, str]] = set()  # (library, keyword name)

    def new(self, keywords_run: set[tuple[str, str]]) -> list[Definition]:
        """Definitions of the keywords in ``keywords_run`` (library, name) not looked up before."""
        from robot.running import EXECUTION_CONTEXTS

        wanted: dict[str, set[str]] = {}
        for owner, name in keywords_run - self.sent:
            wanted.setdefault(owner, set()).add(keyword_key(name))
        self.sent |= keywords_run
        if not wanted:
            return []
        try:
            found: list[Definition] = []
            context = EXECUTION_CONTEXTS.current
            for library in getattr(getattr(context, "namespace", None), "libraries", ()):
                names = wanted.get(library.name)
                if not names or INSTALLED.search(str(getattr(library, "source", "") or "")):
                    continue
                found += [(library.name, key, *_defined_at(library, keyword))
                          for keyword in getattr(library, "keywords", ())
                          if (key := keyword_key(keyword.name)) in names]
        except Exception:  # a library RF itself cannot describe: the run matters more
            return []
        return found


def _defined_at(library: Any, keyword: Any) -> tuple[str | None, int | None]:
    """A library keyword's file and line, as RF gives them, without making an instance of its
    library: RF reads them from the keyword's method on the library's instance, and makes
    one when the library's scope has dropped its own (a TEST or SUITE scoped class after its
    test or suite), running the library's ``__init__`` once more than the run did (its side
    effects; its logging, which calls this listener back). Such a keyword's method is read
    from the class instead; a dynamic library's keywords, which only an instance can place,
    are left without."""
    import inspect  # loaded by RF's library code already

    if getattr(library, "_instance", True) is not None or not inspect.isclass(library.code):
        return str(keyword.source) if keyword.source else None, keyword.lineno
    method = getattr(library.code, getattr(keyword, "method_name", None) or "", None)
    if method is None:
        return None, None
    method, source, lineno = inspect.unwrap(method), None, None
    with contextlib.suppress(TypeError):
        source = inspect.getsourcefile(method)
    with contextlib.suppress(TypeError, OSError):
        lines, first = inspect.getsourcelines(method)
        # RF's line: the ``def``'s, past the decorators above it
        lineno = next((first + n for n, line in enumerate(lines) if line.strip().startswith("def ")),
                      first)
    owner_source = getattr(library, "source", None)  # RF's when the method's file is unknown
    return os.path.normpath(source) if source else (str(owner_source) if owner_source else None), lineno


# library or resource, keyword, positions; for embedded arguments (``User "${user}" logs in
# with "${password}"``) their pattern and flags, the positions counting its groups
SecretParameter = tuple[str, str, tuple[int, ...], "tuple[str, int] | None"]


class SecretParameters:
    """Where the keywords of the libraries and resource files robot imported take a secret
    by position: a parameter named like one (``Post Login  bob  hunter2`` calling ``def
    post_login(self, user, password)``; a user keyword's ``[Arguments]  ${user}  ${pin}``;
    an embedded argument, ``Given user "bob" logs in with password "x"``). The registry
    registers what their calls give there. Each library or resource file is read once (its
    keywords' parameter names only: RF has parsed them at import)."""

    def __init__(self, names_secret: Callable[[str], bool]) -> None:
        self.names_secret = names_secret
        self.read: dict[int, Any] = {}  # id -> library or resource file (kept: ids are reused)

    def in_namespace(self, suite_file: Any = None) -> list[SecretParameter]:
        """Those of the current suite's imports and of ``suite_file``'s own keywords (whose
        calls name no owner) not read before."""
        from robot.running.context import EXECUTION_CONTEXTS

        try:
            store = EXECUTION_CONTEXTS.current.namespace._kw_store
            owners = [(owner.name, owner) for owner in (*store.libraries.values(), *store.resources.values())]
        except Exception:  # an RF whose internals differ: nothing read, capture goes on
            owners = []
        if suite_file is not None:
            owners.append(("", suite_file))
        return [found for name, owner in owners for found in self.of(name, owner)]

    def of(self, name: str | None, owner: Any) -> list[SecretParameter]:
        """The keywords of one library or resource file that take a secret by position."""
        if id(owner) in self.read:
            return []
        self.read[id(owner)] = owner
        found = []
        try:
            for keyword in owner.keywords:
                embedded = getattr(keyword, "embedded", None)
                one = secret_parameter(name or "", keyword.name, () if embedded else keyword.args.positional,
                                       embedded, self.names_secret)
                if one:
                    found.append(one)
        except Exception:  # a library RF itself cannot describe: the run matters more
            return []
        return found


def secret_parameter(owner: str, name: str, parameters: Sequence[str], embedded: Any,
                     names_secret: Callable[[str], bool]) -> SecretParameter | None:
    """A keyword that takes a secret by position: the positions of its parameters (of its
    ``embedded`` arguments, RF's EmbeddedArguments, when it has them) named like secrets;
    None when none is. Live capture reads the keywords robot imported, an import the run's
    files (``importers.suite_files``)."""
    positions = tuple(at for at, parameter in enumerate(embedded.args if embedded else parameters)
                      if names_secret(parameter))
    if not positions:
        return None
    return owner, name, positions, (embedded.name.pattern, embedded.name.flags) if embedded else None
