"""What an import reads beside its file (capture side, import stage): which keywords of the
run take a secret by position, from the suite files, resource files and library files the
run used, and the values of the secret-named variables their Variables sections and Python
variable files set, while they are still on disk; and, of the project's own libraries,
where each keyword is defined (live capture has it from RF's library model).

Live capture reads the parameter names of every keyword robot imported
(``robot_scope.SecretParameters``), so ``Login As  carol  x`` with ``[Arguments]  ${user}
${password}`` registers x. No output file has a keyword's parameters, so an import of the
same run showed x. This reads them where the run's suites were: each suite file's own
keywords (their names and arguments, by RF's lexer on the file's declarations: ~0.4 ms a
file, not its tests' rows or its keywords' steps), the resource files it imports (and
theirs), and library files imported by path or found beside the suite or the output file,
read as Python source (``ast``: no library code runs at import); an import made while the
run goes on (``Import Library``, ``Import Resource``, ``Import Variables`` in a test's or
keyword's steps, as live capture sees it in RF's namespace) is read as a setting's, and an
import's name with variables as robot resolved it where the files tell (``_spellings``).
Installed libraries are left to the signature table (``secret_names.SIGNATURE_SECRETS``).
The Variables sections are read as live capture reads RF's scopes
(``robot_scope.ScopeSecrets``), a value using a variable no section sets left out
(``--variable`` and ``--variablefile`` are not in any file beside the output). Files
changed since the run are read as they are now: a parameter named like a secret then or now
is masked, the safe side. Every file is read once an import; what cannot be read is
skipped; a suite in reStructuredText, Markdown or JSON is not read.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..events import keyword_key
from ..robot_scope import Definition, ScopeSecrets, SecretParameter, secret_parameter

_ROBOT_FILES = (".robot", ".resource", ".txt", ".tsv")
# A test or task section's header (English; a translated one is kept, and its rows lexed):
# its rows are what a suite file holds most and matter least here.
_TEST_HEADER = re.compile(r"\s*(?:\|\s*)?\*+\s*(?:test\s*cases?|tasks?)\b", re.IGNORECASE)
_HEADER = re.compile(r"\s*(?:\|\s*)?\*")
_KEYWORD_HEADER = re.compile(r"\*+\s*keywords?\b", re.IGNORECASE)
_BLANK = (" ", "\t", "\n", "\r", "#", "")  # a row that is no keyword's name
# A step that imports while the run goes on (BuiltIn's ``Import Library`` and its kin, spelt
# as RF matches a keyword: spaces and underscores, perhaps ``BuiltIn.``; in lower, title or
# upper case: a row is looked at only with "mport" or "MPORT" in it), on a lower-cased row:
# the rows kept for RF's lexer to split.
_IMPORT_CALL = re.compile(r"(?:^|[\s|])(?:builtin\.)?import[ _]?(?:library|resource|variables)"
                          r"(?=\s\s|\t|\s*\||\s*$)")
_NAME_CELL = re.compile(r"^\|[^|]*\||^[^\t]*?(?:  |\t)")  # a test's name before its first step
_IMPORTS_KEYWORD = "Imports While The Run Goes On"  # the keyword their steps are lexed in
_IMPORT_KEYWORDS = {"importlibrary": "LIBRARY", "importresource": "RESOURCE",
                    "importvariables": "VARIABLES"}
_A_PATH = re.compile(r"[/\\]|\.(?:py|robot|resource|txt|tsv|rst|md|json)$", re.IGNORECASE)
_SOURCE_KEY = re.compile(rb'"source"\s*:\s*("(?:[^"\\]|\\.)*")')
_LONGEST_PATH = 8192  # bytes kept between chunks: a key and its path cut by a chunk's end
CHUNK = 1 << 20
_NOT_PROJECT_FOLDERS = frozenset({"node_modules", "venv", "env", "site-packages", "results"})
_VARIABLE_FILE_KINDS = (("LIST__", "@"), ("DICT__", "&"))
_INIT_FILES = ("__init__.robot", "__init__.resource", "__init__.txt", "__init__.tsv")
MAX_FILES = 2_000  # files read per import at most: a run's own suites and resources
MAX_FILE_BYTES = 4 << 20  # a suite file of 4 MB is ~100,000 lines


class SuiteFiles:
    """Hands the registry the secret parameters of the keywords a suite could call and the
    values of the secret-named variables its Variables sections set, when the import opens
    the suite (``opened``)."""

    def __init__(self, sink: Any, output_dir: str | None) -> None:
        registry = getattr(sink, "secrets", None)  # the writer's SecretRegistry
        self.register: Callable[..., None] | None = getattr(registry, "secret_parameters", None)
        self.add_secret: Callable[[str], None] = getattr(registry, "add", _ignored)
        self.names_secret: Callable[[str], bool] = getattr(registry, "names_secret", bool)
        self.define: Callable[[Definition], None] = getattr(sink, "register_definition", _ignored)
        self.scope = ScopeSecrets(self.names_secret, getattr(
            getattr(registry, "redactor", None), "names_secrets", None))
        self.output_dir = Path(output_dir).resolve() if output_dir else None
        self.roots: list[Path] | None = None
        self.read: set[Path] = set()
        self.found: dict[tuple[str, Path], tuple[Path, str | None] | None] = {}

    def opened(self, source: str | None) -> None:
        if not source or self.register is None or len(self.read) >= MAX_FILES:
            return
        reading = _Reading()
        with contextlib.suppress(Exception):  # what cannot be read is skipped: the import goes on
            path = Path(source)
            if path.is_dir():
                path = next((init for name in _INIT_FILES if (init := path / name).is_file()), path)
            if path.is_file() and self._first_time(path):
                self._read_file(path, "", reading)  # a suite file's keywords' calls name no owner
        with contextlib.suppress(Exception):  # what was read before a file that could not be
            for found in reading.parameters:
                self.register(*found)
            for definition in reading.definitions:
                self.define(definition)
            if reading.sections:
                for value in self.scope.new_in(_variables(reading.sections).store, typed=True):
                    self.add_secret(value)

    def read_all(self, fh: BinaryIO) -> None:
        """Those of every suite an output.json names (robot writes a suite's ``source`` after
        its tests and child suites, so a suite's calls come before its file is known): one
        pass for the key, which inside a string would be escaped, then back to the start."""
        if self.register is None or _last_source_missing(fh):
            return
        sources: dict[str, None] = {}
        tail = b""
        while chunk := fh.read(CHUNK):
            data, after = tail + chunk, 0
            at = data.find(b'"source"')
            while at >= 0:
                if found := _SOURCE_KEY.match(data, at):
                    with contextlib.suppress(ValueError):
                        sources[json.loads(found[1])] = None
                    after = found.end()
                at = data.find(b'"source"', at + 8)
            tail = data[max(after, len(data) - _LONGEST_PATH):]
        fh.seek(0)
        for source in sources:
            self.opened(source)

    def _read_file(self, path: Path, owner: str, reading: _Reading) -> None:
        """What a suite or resource file (its keywords called with ``owner``) and the files it
        imports say, into ``reading``."""
        if path.suffix.lower() not in _ROBOT_FILES:
            return
        declared = _read(path)
        reading.sections.append(declared.variables)
        for name, parameters in declared.keywords:
            reading.parameters += _secret_positions(owner, name, parameters, self.names_secret)
        for kind, name, alias in declared.imports:
            name, found = next(((spelt, found) for spelt in self._spellings(name, reading)
                                if (found := self._find(spelt, path.parent))), (name, None))
            if found is None or not self._first_time(found[0]):
                continue
            imported, class_name = found
            with contextlib.suppress(Exception):  # one unreadable import: the others still count
                if kind == "RESOURCE":  # RF names a resource file by its name
                    self._read_file(imported, imported.stem, reading)
                elif kind == "VARIABLES" and imported.suffix in (".py", ".json"):
                    reading.sections.append(read_variable_file(imported))
                elif imported.suffix == ".py":  # a library: as RF names it: alias, file or module
                    library = alias or (Path(name).stem if _A_PATH.search(name) else name)
                    secret, defined = read_library(imported, library, self.names_secret, class_name)
                    reading.parameters += secret
                    reading.definitions += defined

    def _spellings(self, name: str, reading: _Reading) -> Iterator[str]:
        """An import's name with its variables set as RF sets them there: ``${/}``, the
        Variables sections and variable files read so far (``Resource  ${RESOURCES}/x.resource``),
        and ``${EXECDIR}``, which no output file records: robot's folder is usually the output
        file's (robot's default) or its parent's (``-d results``), so each is tried, the
        second only when the first spelling names no file."""
        if "{" not in name:
            yield name
            return
        spellings: list[str] = []
        for folder in [self.output_dir, self.output_dir.parent] if self.output_dir else [None]:
            # a resource read since may set more (an empty section, most resources', sets none)
            key = (folder, sum(1 for section in reading.sections if section))
            if key not in reading.variables:  # once: RF's model of 300 variables is ~5 ms
                given = {"${/}": os.sep, **({"${EXECDIR}": str(folder)} if folder else {})}
                reading.variables[key] = _variables(reading.sections, given, resolve=False)
            with contextlib.suppress(Exception):  # a variable not set (``--variable``): none
                if (spelt := reading.variables[key].replace_string(name)) not in spellings:
                    spellings.append(spelt)
                    yield spelt

    def _find(self, name: str, directory: Path) -> tuple[Path, str | None] | None:
        """Where RF would find an import named ``name`` (its variables set: ``_read`` set
        ``${CURDIR}``, ``_spellings`` the others), and a class named in it (``Library
        mymodule.MyClass``): a path, or a module name as a file, beside the importing file,
        else in the output file's folder, its parent, or a folder right under them (what
        ``--pythonpath`` names, which no output file records, is usually one of them)."""
        if not name or "{" in name:
            return None
        key = (name, directory)
        if key not in self.found:
            self.found[key] = next(((path.resolve(), class_name)
                                    for root in (directory, *self._roots())
                                    for candidate, class_name in _candidates(name)
                                    if (path := root / candidate).is_file()
                                    and "site-packages" not in path.parts), None)
        return self.found[key]

    def _roots(self) -> list[Path]:
        if self.roots is None:
            tops = [self.output_dir, self.output_dir.parent] if self.output_dir else []
            self.roots = [*tops, *(sub for top in tops for sub in _folders_in(top))]
        return self.roots

    def _first_time(self, path: Path) -> bool:
        """Whether ``path`` is to be read: not read before, and of a size a suite, resource
        or library file has (an output file is the user's to name: its sources may be any
        file)."""
        path = path.resolve()
        if path in self.read or len(self.read) >= MAX_FILES:
            return False
        self.read.add(path)
        try:
            return path.stat().st_size <= MAX_FILE_BYTES
        except OSError:
            return False


def _ignored(*_: Any) -> None:
    pass


@functools.cache
def _quiet_variable() -> type:
    """RF's model of a Variables row that keeps its problems to itself: RF reports a value
    using a variable it cannot resolve to its console logger, which an import would print
    as robot's error (and RF 6's listener imports inside robot, whose console is robot's)."""
    from robot.running import ResourceFile

    variable = type(ResourceFile().variables.create(name="${X}", value=()))
    return type("QuietVariable", (variable,), {
        "__slots__": (), "report_error": _ignored, "report_invalid_syntax": _ignored})  # RF 7, RF 6


def _variables(sections: list[Any], given: dict[str, str] | None = None, resolve: bool = True) -> Any:
    """The Variables sections and variable files as RF sets them: the suite file's section
    first, then its resource and variable files' in their order (a name set earlier wins);
    a value is resolved when read, so one that uses a variable none of them sets
    (``--variable``) is left out. ``given``: RF's own (``${/}``), set first. Not
    ``resolve``: each value when it is first read (RF resolves a delayed one then)."""
    from robot.variables import Variables

    variables = Variables()
    for name, value in (given or {}).items():
        variables[name] = value
    for section in sections:
        if isinstance(section, dict):  # a variable file's
            for name, value in section.items():
                if name[2:-1] not in variables.store:
                    with contextlib.suppress(Exception):  # a name RF refuses ("" in a JSON file)
                        variables[name] = value
        else:
            set_from = getattr(variables, "set_from_variable_section", None)  # RF 6: ..._table
            (set_from or variables.set_from_variable_table)(section)
    if resolve:
        variables.resolve_delayed()  # a dictionary is one only once resolved
    return variables


def read_variable_file(path: Path) -> dict[str, Any]:
    """A variable file's variables: a JSON one's (RF 6.1+: its top-level names), a Python
    one's whose values are literals, read from its source (``PASSWORD = "x"``, ``LOGIN =
    {"user": "bob", "password": "x"}``; RF's ``LIST__`` and ``DICT__`` prefixes); not what
    its code computes (``get_variables``): no code runs. (A YAML one needs PyYAML: not read.)"""
    if path.suffix == ".json":
        data = json.loads(path.read_bytes())
        return {f"${{{name}}}": value for name, value in data.items()} if isinstance(data, dict) else {}
    found: dict[str, Any] = {}
    for statement in ast.parse(path.read_bytes(), str(path)).body:
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(
            statement.targets) == 1 else getattr(statement, "target", None)
        value = getattr(statement, "value", None)
        if not isinstance(target, ast.Name) or target.id.startswith("_") or value is None:
            continue
        with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            literal = ast.literal_eval(value)
            prefix, name = next(((mark, target.id[len(kind):]) for kind, mark in _VARIABLE_FILE_KINDS
                                 if target.id.startswith(kind)), ("$", target.id))
            found[f"{prefix}{{{name}}}"] = literal
    return found


def _candidates(name: str) -> list[tuple[str, str | None]]:
    """The files an import's name may be, relative to a folder of the module search path,
    each with the class it names, if any."""
    if _A_PATH.search(name):
        return [(name, None)]
    module = name.replace(".", "/")
    found: list[tuple[str, str | None]] = [(f"{module}.py", None), (f"{module}/__init__.py", None)]
    if "." in name:
        parent, class_name = module.rsplit("/", 1)
        found += [(f"{parent}.py", class_name), (f"{parent}/__init__.py", class_name)]
    return found


def _folders_in(top: Path) -> list[Path]:
    """The folders right under ``top`` where a project keeps its libraries and resources
    (not hidden ones, virtual environments, or more than the first 100)."""
    with contextlib.suppress(OSError):
        return [folder for folder in itertools.islice(top.iterdir(), 100)
                if folder.is_dir() and not folder.name.startswith((".", "_"))
                and folder.name not in _NOT_PROJECT_FOLDERS]
    return []


def _last_source_missing(fh: BinaryIO) -> bool:
    """Whether the last suite the file names (the root suite, which robot writes last) is not
    on this machine: a run imported from elsewhere, whose files need not be looked for (the
    pass costs ~0.6 ms a MB, JSON's quotes defeating a fast search)."""
    size = fh.seek(0, 2)
    fh.seek(max(0, size - CHUNK))
    tail = fh.read()
    fh.seek(0)
    *_, last = (None, *_SOURCE_KEY.finditer(tail))
    try:
        return last is not None and not Path(json.loads(last[1])).exists()
    except (ValueError, OSError):
        return False


@dataclass
class _Reading:
    """What the files a suite uses say, gathered as they are read."""

    parameters: list[SecretParameter] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    sections: list[Any] = field(default_factory=list)  # Variables sections, variable files'
    variables: dict[Any, Any] = field(default_factory=dict)  # ``_spellings``' RF models of them


@dataclass
class _Declared:
    """What a suite or resource file declares that is read here."""

    keywords: list[tuple[str, list[str]]] = field(default_factory=list)  # name, positional
    imports: list[tuple[str, str, str | None]] = field(default_factory=list)  # type, name, alias
    variables: Any = None  # RF's Variables section, as its parser makes it


def _read(path: Path) -> _Declared:
    """A suite, init or resource file's declarations from RF's lexer (its tokens only: RF's
    model of the file costs three times more); a format that is not plain text
    (reStructuredText, Markdown, JSON) is not read."""
    from robot.api import get_init_tokens, get_resource_tokens, get_tokens
    from robot.running import ResourceFile

    lexer = get_resource_tokens if path.suffix.lower() == ".resource" else (
        get_init_tokens if path.stem == "__init__" else get_tokens)
    declared = _Declared(variables=ResourceFile().variables)
    text, import_calls = _declarations(path.read_text(encoding="utf-8-sig"))
    if import_calls:  # steps, as a keyword's: every kind of file may have a Keywords section
        text += f"\n*** Keywords ***\n{_IMPORTS_KEYWORD}\n{import_calls}"
    for statement in _statements(lexer(text, data_only=True)):
        kind, values = statement[0].type, [token.value.replace("${CURDIR}", str(path.parent))
                                           for token in statement[1:]]
        if kind in ("LIBRARY", "RESOURCE", "VARIABLES") and values:
            types = [token.type for token in statement[1:]]  # ``AS`` (or ``WITH NAME``) alias
            alias = values[types.index("AS") + 1] if "AS" in types[:-1] else None
            declared.imports.append((kind, values[0], alias))
        elif kind == "VARIABLE":
            declared.variables.append(_quiet_variable()(name=statement[0].value, value=tuple(values)))
        elif kind == "KEYWORD NAME":
            declared.keywords.append((statement[0].value, []))
        elif kind == "ARGUMENTS" and declared.keywords:
            declared.keywords[-1][1].extend(_positional(values))
        elif imported := _import_call(kind, statement[0].value, values):
            declared.imports.append(imported)
    if declared.keywords and declared.keywords[-1][0] == _IMPORTS_KEYWORD:
        declared.keywords.pop()
    return declared


def _import_call(kind: str, first: str, values: list[str]) -> tuple[str, str, str | None] | None:
    """A step ``Import Library  ${CURDIR}/Gate.py  url  AS  G`` (or a setup or teardown
    calling it: ``Suite Setup  Import Library  …``) as the Library setting it makes."""
    if kind == "KEYWORD":
        keyword, arguments = first, values
    elif kind.endswith(("SETUP", "TEARDOWN")) and values:
        keyword, *arguments = values
    else:
        return None
    setting = _IMPORT_KEYWORDS.get(keyword_key(keyword).removeprefix("builtin."))
    if setting is None or not arguments:
        return None
    alias = arguments[-1] if setting == "LIBRARY" and len(arguments) > 2 and arguments[-2] in (
        "AS", "WITH NAME") else None
    return setting, arguments[0], alias


def _statements(tokens: Iterable[Any]) -> Iterator[list[Any]]:
    statement: list[Any] = []
    for token in tokens:
        if token.type == "EOS":
            if statement:
                yield statement
            statement = []
        elif token.type != "EOL":
            statement.append(token)


def _positional(arguments: list[str]) -> list[str]:
    """The names of a user keyword's positional arguments (``${user}``, ``${pw}=default``,
    RF 7.3's ``${count: int}``), before its ``@{varargs}``, ``@{}`` or ``&{kwargs}``."""
    names = []
    for argument in arguments:
        if not argument.startswith("${"):
            break
        names.append(argument[2:].split("}", 1)[0].split(":", 1)[0].strip())
    return names


def _declarations(text: str) -> tuple[str, str]:
    """What of a suite or resource file is read here: its settings (imports) and variables, and of its
    keywords their names and settings (``[Arguments]``, with its ``...`` rows); not its
    tests' rows nor its keywords' steps, which are most of a file and of RF's work on it,
    but the steps among them that import (``_IMPORT_CALL``, with their ``...`` rows), apart.
    A file in the pipe-separated format, or whose headers are translated, keeps more."""
    kept, calls, section, setting, calling = [], [], "", False, False
    piped = text.startswith("|") or "\n|" in text
    for line in text.splitlines(keepends=True):
        if _HEADER.match(line):
            section = "tests" if _TEST_HEADER.match(line) else (
                "keywords" if _KEYWORD_HEADER.match(line) and not piped else "")
            kept.append(line)
            continue
        if section == "":
            kept.append(line)
            continue
        cells = line.lstrip()
        if section == "keywords" and (line[:1] not in _BLANK or cells.startswith("[") or (
                setting and cells.startswith("..."))):
            kept.append(line)
            setting = line[:1] in _BLANK
            continue
        setting = False
        calling = (calling and cells.startswith("...")) or (  # the substrings first: 40x quicker
            ("mport" in line or "MPORT" in line) and bool(_IMPORT_CALL.search(line.lower())))
        if calling:
            calls.append(line if line[:1] in _BLANK else _NAME_CELL.sub(
                "| |" if line[:1] == "|" else "    ", line, 1))
    return "".join(kept), "".join(calls)


def read_library(path: Path, library: str, names_secret: Callable[[str], bool],
                 class_name: str | None = None) -> tuple[list[SecretParameter], list[Definition]]:
    """A library written in Python, read from its source (RF's rules: the class named, else
    a class named as the module, else the module's functions; ``@keyword("Name")`` renames;
    ``self`` is no argument): its keywords whose parameters are named like secrets, and
    where each keyword is defined (its ``def`` line, as RF's library model gives it to live
    capture: ``robot_scope.Definitions``)."""
    tree = ast.parse(path.read_bytes(), str(path))
    wanted = class_name or (path.parent.name if path.name == "__init__.py" else path.stem)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == wanted]
    functions = classes[0].body if classes else tree.body
    secret: list[SecretParameter] = []
    defined: list[Definition] = []
    for function in functions:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name.startswith("_"):
            continue
        parameters = [arg.arg for arg in (*function.args.posonlyargs, *function.args.args)]
        if classes and not _is_static(function):
            parameters = parameters[1:]
        name = _keyword_name(function) or function.name.replace("_", " ")
        secret += _secret_positions(library, name, parameters, names_secret)
        defined.append((library, keyword_key(name), str(path), function.lineno))
    return secret, defined


def _secret_positions(library: str, name: str, parameters: list[str],
                      names_secret: Callable[[str], bool]) -> list[SecretParameter]:
    embedded = None
    if "${" in name:  # embedded arguments: ``@keyword('Log in with password "${pwd}"')``
        from robot.running.arguments.embedded import EmbeddedArguments

        embedded = EmbeddedArguments.from_name(name)
        if embedded is None:
            return []
    found = secret_parameter(library, name, parameters, embedded, names_secret)
    return [found] if found else []


def _is_static(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)


def _keyword_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``@keyword("Name")`` or ``@keyword(name="Name")``'s name."""
    for decorator in function.decorator_list:
        called = getattr(decorator, "func", None)
        if getattr(called, "id", getattr(called, "attr", "")) == "keyword":
            assert isinstance(decorator, ast.Call)
            given = decorator.args[:1] or [k.value for k in decorator.keywords if k.arg == "name"]
            if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
                return given[0].value
    return None
