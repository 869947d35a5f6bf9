"""What an import reads beside its file (capture side, import stage): which keywords of the
run take a secret by position, from the suite files, resource files and library files the
run used, and the values of the secret-named variables their Variables sections set, while
they are still on disk.

Live capture reads the parameter names of every keyword robot imported
(``robot_scope.SecretParameters``), so ``Login As  carol  x`` with ``[Arguments]  ${user}
${password}`` registers x. No output file has a keyword's parameters, so an import of the
same run showed x. This reads them where the run's suites were: each suite file's own
keywords (its test sections skipped: only keywords and imports matter), the resource files
it imports (and theirs), and library files imported by path or found beside the suite or
the output file, read as Python source (``ast``: no library code runs at import). Installed
libraries are left to the signature table (``secret_names.SIGNATURE_SECRETS``). The
Variables sections are read as live capture reads RF's scopes (``robot_scope.ScopeSecrets``),
a value using a variable no section sets left out (``--variable`` and variable files are
not in any file beside the output). Files
changed since the run are read as they are now: a parameter named like a secret then or now
is masked, the safe side. Every file is read once an import; what cannot be read is skipped.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..robot_scope import ScopeSecrets, SecretParameter, SecretParameters

_ROBOT_FILES = (".robot", ".resource", ".txt", ".tsv")
# A test or task section's header (English; a translated one is kept and the file is
# then parsed whole): its rows are what a suite file holds most and matter least here.
_TEST_HEADER = re.compile(r"\s*(?:\|\s*)?\*+\s*(?:test\s*cases?|tasks?)\b", re.IGNORECASE)
_HEADER = re.compile(r"\s*(?:\|\s*)?\*")
_A_PATH = re.compile(r"[/\\]|\.(?:py|robot|resource|txt|tsv|rst|md|json)$", re.IGNORECASE)
_SOURCE_KEY = re.compile(rb'"source"\s*:\s*("(?:[^"\\]|\\.)*")')
_LONGEST_PATH = 8192  # bytes kept between chunks: a key and its path cut by a chunk's end
CHUNK = 1 << 20
_NOT_PROJECT_FOLDERS = frozenset({"node_modules", "venv", "env", "site-packages", "results"})
_INIT_FILES = ("__init__.robot", "__init__.resource", "__init__.txt", "__init__.tsv")
MAX_FILES = 2_000  # files read per import at most: a run's own suites and resources


class SuiteFiles:
    """Hands the registry the secret parameters of the keywords a suite could call and the
    values of the secret-named variables its Variables sections set, when the import opens
    the suite (``opened``)."""

    def __init__(self, sink: Any, output_dir: str | None) -> None:
        registry = getattr(sink, "secrets", None)  # the writer's SecretRegistry
        self.register: Callable[..., None] | None = getattr(registry, "secret_parameters", None)
        self.add_secret: Callable[[str], None] = getattr(registry, "add", print)
        self.names_secret: Callable[[str], bool] = getattr(registry, "names_secret", bool)
        self.parameters = SecretParameters(self.names_secret)
        self.scope = ScopeSecrets(self.names_secret, getattr(
            getattr(registry, "redactor", None), "names_secrets", None))
        self.output_dir = Path(output_dir).resolve() if output_dir else None
        self.roots: list[Path] | None = None
        self.read: set[Path] = set()
        self.found: dict[tuple[str, Path], tuple[Path, str | None] | None] = {}

    def opened(self, source: str | None) -> None:
        if not source or self.register is None or len(self.read) >= MAX_FILES:
            return
        _robot_kept_quiet()
        with contextlib.suppress(Exception):  # what cannot be read is skipped: the import goes on
            path = Path(source)
            if path.is_dir():
                path = next((init for name in _INIT_FILES if (init := path / name).is_file()), path)
            if path.is_file():
                sections: list[Any] = []
                for found in self._of_suite_file(path, sections):
                    self.register(*found)
                for value in self.scope.new_in(_variables(sections).store):
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

    def _of_suite_file(self, path: Path, sections: list[Any]) -> Iterator[SecretParameter]:
        """The suite file's keywords' and its imports'; their Variables sections go into
        ``sections``."""
        if not self._first_time(path):
            return
        resource = _keywords_of_suite_file(path)
        sections.append(resource.variables)
        yield from self.parameters.of("", resource)
        yield from self._of_imports(resource, path.parent, sections)

    def _of_imports(self, resource: Any, directory: Path, sections: list[Any]) -> Iterator[SecretParameter]:
        for item in resource.imports:
            found = self._find(item.name, directory)
            if found is None or not self._first_time(found[0]):
                continue
            path, class_name = found
            with contextlib.suppress(Exception):  # one unreadable import: the others still count
                if item.type == "RESOURCE" and path.suffix != ".py":
                    from robot.running.builder.parsers import RobotParser

                    imported = RobotParser().parse_resource_file(path)
                    sections.append(imported.variables)
                    yield from self.parameters.of(imported.name, imported)
                    yield from self._of_imports(imported, path.parent, sections)
                elif item.type == "LIBRARY":  # named as RF names it: its alias, file or module
                    owner = item.alias or (Path(item.name).stem if _A_PATH.search(item.name) else item.name)
                    yield from library_file_parameters(path, owner, self.names_secret, class_name)

    def _find(self, name: str, directory: Path) -> tuple[Path, str | None] | None:
        """Where RF would find an import named ``name`` (no variables but ``${CURDIR}``, which
        the parser resolved), and a class named in it (``Library  mymodule.MyClass``): a path,
        or a module name as a file, beside the importing file, else in the output file's
        folder, its parent, or a folder right under them (what ``--pythonpath`` names, which
        no output file records, is usually one of them)."""
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
        path = path.resolve()
        if path in self.read or len(self.read) >= MAX_FILES:
            return False
        self.read.add(path)
        return True


def _robot_kept_quiet() -> None:
    """RF tells a file's problems (a variable that uses one it cannot resolve, a deprecated
    setting) to its console logger: an import would print them as robot's errors."""
    from robot.output import LOGGER
    from robot.running import EXECUTION_CONTEXTS

    if EXECUTION_CONTEXTS.current is None:  # inside a running robot, its console is its own
        LOGGER.unregister_console_logger()
        LOGGER.disable_message_cache()


def _variables(sections: list[Any]) -> Any:
    """The Variables sections as RF sets them: the suite file's first, then its resource
    files' (a name set earlier wins); a value is resolved when read, so one that uses a
    variable no section sets (``--variable``, a variable file) is left out."""
    from robot.variables import Variables

    variables = Variables()
    for section in sections:
        variables.set_from_variable_section(section)
    variables.resolve_delayed()  # a dictionary is one only once resolved
    return variables


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


def _keywords_of_suite_file(path: Path) -> Any:
    """The suite file's own keywords and imports as RF's parser reads them (a ResourceFile),
    its test sections left out unless a translated header hides them."""
    from robot.running.builder.parsers import RobotParser
    from robot.running.builder.settings import TestDefaults

    parser = RobotParser()
    if path.suffix.lower() in _ROBOT_FILES:
        from robot.api import get_model

        model = get_model(_without_tests(path.read_text(encoding="utf-8-sig")), data_only=True,
                          curdir=str(path.parent))
        return parser.parse_model(model, TestDefaults()).resource
    return parser.parse_suite_file(path, TestDefaults()).resource


def _without_tests(text: str) -> str:
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if _HEADER.match(line):
            skipping = bool(_TEST_HEADER.match(line))
        if not skipping:
            kept.append(line)
    return "".join(kept)


def library_file_parameters(path: Path, library: str, names_secret: Callable[[str], bool],
                            class_name: str | None = None) -> list[SecretParameter]:
    """The keywords of a library written in Python whose parameters are named like secrets,
    read from its source (RF's rules: the class named, else a class named as the module,
    else the module's functions; ``@keyword("Name")`` renames; ``self`` is no argument)."""
    tree = ast.parse(path.read_bytes(), str(path))
    wanted = class_name or (path.parent.name if path.name == "__init__.py" else path.stem)
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == wanted]
    functions = classes[0].body if classes else tree.body
    found: list[SecretParameter] = []
    for function in functions:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name.startswith("_"):
            continue
        parameters = [arg.arg for arg in (*function.args.posonlyargs, *function.args.args)]
        if classes and not _is_static(function):
            parameters = parameters[1:]
        name = _keyword_name(function) or function.name.replace("_", " ")
        found += _secret_positions(library, name, parameters, names_secret)
    return found


def _secret_positions(library: str, name: str, parameters: list[str],
                      names_secret: Callable[[str], bool]) -> list[SecretParameter]:
    if "${" in name:  # embedded arguments: ``@keyword('Log in with password "${pwd}"')``
        from robot.running.arguments.embedded import EmbeddedArguments

        embedded = EmbeddedArguments.from_name(name)
        if embedded is None:
            return []
        positions = tuple(at for at, arg in enumerate(embedded.args) if names_secret(arg))
        return [(library, name, positions, (embedded.name.pattern, embedded.name.flags))] if positions else []
    positions = tuple(at for at, parameter in enumerate(parameters) if names_secret(parameter))
    return [(library, name, positions, None)] if positions else []


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
