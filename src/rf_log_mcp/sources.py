"""Where a run's nodes are written: locations in the suite files, each with its origin (read
side, node shaping; used by ``views.common.node_item``).

Output files give few locations: a suite's ``source`` and a test's line. A step's call site
and a user keyword's definition are found by parsing the suite files again with RF's own
parser (``robot.api``: the model robot ran) while they are on disk and unchanged since the
run, and matching each stored node to the item it came from:

* a suite by its name under its parent (the root by its source), a test by its name in its
  suite, checked against the line the output file gives;
* a step by its place under its parent as RF numbers ids (setup, body items, teardown), with
  its type and, for a keyword, its name checked;
* a step inside a user keyword in that keyword's definition, found by the keyword's owner
  (the resource file's name; none for the suite file's own keywords) and its name among the
  suite file's keywords and resources (imported by a path, as RF resolves it).

Any mismatch stops at that node: no line is better than a wrong one, and nothing is guessed
from a keyword's name alone. A file is unchanged when its fingerprint recorded by the
listener matches, or, for an imported run, when it was last modified before the run started.
"""

from __future__ import annotations

import _thread
import functools
import os
import sqlite3
from collections import OrderedDict, namedtuple
from datetime import datetime
from itertools import islice
from stat import S_ISREG

from rf_log_listener.errors import ResultError
from rf_log_listener.events import INSTALLED, keyword_key
from rf_log_listener.store import run_base

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any

# source_origin values (README "Source locations"): how a node's source and lineno are known.
NODE = "node"  # the input gives them for this node
SUITE = "suite"  # a test's file: its suite's source
SOURCE_FILES = "source_files"  # resolved from the suite files, unchanged since the run
SOURCES_CHANGED = "sources_changed"  # the files changed since the run: not resolved
SOURCES_MISSING = "sources_missing"  # the files are gone: not resolved
UNSUPPORTED = "unsupported"  # the input has no location for it and none can be resolved

_CONTAINERS = frozenset({"FOR", "WHILE", "IF/ELSE ROOT", "TRY/EXCEPT ROOT", "IF", "ELSE IF",
                         "ELSE", "TRY", "EXCEPT", "FINALLY", "GROUP"})
_KEYWORDS = frozenset({"KEYWORD", "SETUP", "TEARDOWN"})
_PARSED: OrderedDict[tuple[Any, ...], Any] = OrderedDict()  # parsed runs, a few, per process
_PARSED_LOCK = _thread.allocate_lock()  # threading's Lock; threading itself is not needed here


# A library keyword's definition, as RF's model gave it to the listener: source (str),
# lineno (int or None).
Defined = namedtuple("Defined", "source lineno")
# Where a node is written (each None when not known); origin: one of the values above.
Location = namedtuple("Location", "source lineno origin definition_source definition_lineno",
                      defaults=(None,) * 5)


class Locator:
    """Locations of one run's nodes, for one answer (rows and parsed items cached)."""

    def __init__(self, conn: sqlite3.Connection, run_id: int) -> None:
        self.conn, self.run_id, self.base = conn, run_id, run_base(run_id)
        self.rows: dict[int, Any] = {}  # pre -> the stored node (views.common.NodeRow)
        self._children: list[str] | None = None  # the root's child suites' files, when read
        root = self._row(0)
        self.root_source = _field(root, "source") if root else None
        self.root_dir = _root_dir(self.root_source, self._child_sources)
        self.items: dict[int, Any] = {}  # pre -> the running model item it came from, or None
        self.states: dict[str, str | None] = {}  # file -> None (unchanged) or why not
        self._parsed: Any = False  # the running model of the run's suites (None: unparsable)

    @functools.cached_property
    def started(self) -> float | None:
        """When the run started (read when a suite file's state is first checked)."""
        start = self.conn.execute("SELECT start_time FROM runs WHERE run_id = ?",
                                  (self.run_id,)).fetchone()
        return _timestamp(start[0] if start else None)

    # -- what answers show ---------------------------------------------------------------

    def shown(self, path: str | None) -> str | None:
        """``path`` relative to the run's root folder when below it (tokens), else as is."""
        if not path or self.root_dir is None:
            return path
        try:
            relative = os.path.relpath(path, self.root_dir)
        except ValueError:  # another drive
            return path
        return path if relative.startswith("..") else relative

    def locate(self, node: Any) -> Location:
        """The location of ``node`` (a views.common.NodeRow): its file and line, with origin."""
        fields = node.field_values
        if node.type == "SUITE":
            source = fields.get("source")
            return Location(self.shown(source), None, NODE if source else UNSUPPORTED)
        if node.type == "TEST":
            suite = self._row(node.parent_pre) if node.parent_pre is not None else None
            source = _field(suite, "source") if suite else None
            return Location(self.shown(source), fields.get("lineno"),
                            SUITE if source else UNSUPPORTED)
        if node.type == "ITERATION":
            return Location()  # its loop has the location
        item = self._item(node)
        written = self._written(item, node) if not isinstance(item, str) else None
        location = Location(self.shown(written), item.lineno, SOURCE_FILES) if written else \
            Location(origin=item if isinstance(item, str) else UNSUPPORTED)
        if node.type in _KEYWORDS:
            definition = self._definition(node)
            if definition is not None and not isinstance(definition, str):
                return Location(location.source, location.lineno, location.origin,
                                self.shown(str(definition.source)), definition.lineno)
        return location

    def _written(self, item: Any, node: Any) -> str | None:
        """The file ``item`` is written in. RF gives an item its parent's source, so a
        directory suite's setup says the directory (it is in its __init__ file), and a test
        setup that a Test Setup setting gives says the test's file (the setting is in the
        Settings of that file or of an __init__ file above it): find the line that says it."""
        if not item.source or not item.lineno:
            return None
        source = _path(item.source)
        if source.is_dir():
            source = _init_file(source) or source
        if node.type not in ("SETUP", "TEARDOWN") or self._row(node.parent_pre).type != "TEST":
            return str(source) if source.is_file() else None
        own = f"[{node.type.lower()}]"
        if own in _line(source, item.lineno).lower():
            return str(source)
        setting = (f"test {node.type.lower()}", f"task {node.type.lower()}")
        folder = source.parent
        candidates = [source]
        while True:
            init = _init_file(folder)
            if init is not None:
                candidates.append(init)
            if self.root_dir is None or str(folder) == self.root_dir or folder == folder.parent:
                break
            folder = folder.parent
        return next((str(c) for c in candidates
                     if _line(c, item.lineno).lower().startswith(setting)), None)

    # -- matching stored nodes to RF's running model ------------------------------------

    def _item(self, node: Any) -> Any:
        """The running model item ``node`` came from, or a str saying why there is none."""
        if node.pre in self.items:
            return self.items[node.pre]
        parent = self._row(node.parent_pre)
        if parent is None:
            found: Any = UNSUPPORTED
        elif parent.type == "SUITE":
            found = self._in_suite(parent, node)
        else:
            container = self._container(parent)
            found = container if isinstance(container, str) else _child(container, node, parent, self)
        self.items[node.pre] = found
        return found

    def _container(self, parent: Any) -> Any:
        """What the children of ``parent`` are items of: its running test, its loop (for an
        iteration's), its control structure, its user keyword's definition; or why none."""
        if parent.type == "TEST":
            return self._test(parent)
        if parent.type == "ITERATION":
            return self._item(self._row(parent.parent_pre))
        if parent.type in _CONTAINERS:
            return self._item(parent)
        if parent.type in _KEYWORDS:
            definition = self._definition(parent)
            return UNSUPPORTED if isinstance(definition, Defined) else definition  # a library's
        return UNSUPPORTED

    def _in_suite(self, suite_row: Any, node: Any) -> Any:
        """A suite's setup or teardown."""
        suite = self._suite(suite_row)
        if isinstance(suite, str):
            return suite
        item = suite.setup if node.type == "SETUP" else suite.teardown if node.type == "TEARDOWN" else None
        return item if item and _same(item, node) else SOURCES_CHANGED

    def _suite(self, row: Any) -> Any:
        if row.pre in self.items:
            return self.items[row.pre]
        source = _field(row, "source")
        if row.parent_pre is None:
            model = self._model()
            found = model if model is not None else SOURCES_MISSING if not self._exists() else SOURCES_CHANGED
        else:
            parent = self._suite(self._row(row.parent_pre))
            found = parent if isinstance(parent, str) else next(
                (s for s in parent.suites if s.name == row.name), SOURCES_CHANGED)
        if not isinstance(found, str) and source:
            found = self._fresh(source, row) or found
        self.items[row.pre] = found
        return found

    def _test(self, row: Any) -> Any:
        if row.pre in self.items:
            return self.items[row.pre]
        suite = self._suite(self._row(row.parent_pre))
        found: Any = suite
        if not isinstance(suite, str):
            line = row.field_values.get("lineno")
            found = next((t for t in suite.tests if t.name == row.name
                          and (line is None or t.lineno == line)), SOURCES_CHANGED)
        self.items[row.pre] = found
        return found

    def _definition(self, node: Any) -> Any:
        """The user keyword ``node`` ran (RF's UserKeyword), or why it cannot be found."""
        key = -node.pre - 1  # definitions share the cache, at negative keys
        if key in self.items:
            return self.items[key]
        found: Any = UNSUPPORTED
        suite_file = self._suite_file(node)
        if isinstance(suite_file, str):
            found = suite_file
        elif suite_file is not None:
            wanted = keyword_key(node.field_values.get("source_name") or node.name or "")
            resources = [suite_file.resource] if not node.owner else [
                r for r in _resources(suite_file.resource) if _path(r.source).stem == node.owner]
            for resource in resources:
                match = next((k for k in resource.keywords if keyword_key(k.name) == wanted), None)
                if match is not None:
                    found = self._fresh(str(match.source), None) or match
                    break
        if isinstance(found, str) and node.owner:
            found = self._library_keyword(node) or found
        self.items[key] = found
        return found

    def _library_keyword(self, node: Any) -> Defined | None:
        """Where a library keyword is defined, as a live run recorded it (RF's library
        model); installed libraries (site-packages) are left out of answers: their lines
        cost tokens and rarely help."""
        names = {keyword_key(node.field_values.get("source_name") or ""), keyword_key(node.name or "")}
        try:
            row = self.conn.execute(
                f"SELECT source, lineno FROM definitions WHERE run_id = ? AND owner = ? AND"
                f" name_key IN ({','.join('?' * len(names))}) LIMIT 1",
                (self.run_id, node.owner, *names)).fetchone()
        except sqlite3.OperationalError:  # a read-only store of an older schema
            return None
        if row is None or not row[0] or INSTALLED.search(row[0]) or self._fresh(row[0], None):
            return None  # not recorded, installed, or changed since the run
        return Defined(row[0], row[1])

    def _suite_file(self, node: Any) -> Any:
        """The running suite (a file) whose test or fixture ``node`` runs in."""
        if node.owner_test is not None:  # in a test: its suite, in two seeks at any depth
            test = self._row(node.owner_test)
            row = self._row(test.parent_pre) if test is not None else None
        else:  # a suite setup/teardown step: up to its suite
            row = node
            while row is not None and row.type != "SUITE":
                row = self._row(row.parent_pre) if row.parent_pre is not None else None
        if row is None:
            return None
        suite = self._suite(row)
        return suite  # a directory's: RF's builder put its __init__ file's keywords there

    # -- files, fingerprints, parsing ------------------------------------------------------

    def _model(self) -> Any:
        if self._parsed is False:
            # a folder's files are read by their suffixes; files given are read whatever theirs
            extensions = self._suite_extensions() if any(map(os.path.isdir, self._paths())) else ()
            self._parsed = _parse(self.root_source, self._child_sources(), self.started,
                                  extensions) if self._exists() else None
        return self._parsed

    def _suite_extensions(self) -> tuple[str, ...]:
        """The suffixes of the run's suite files RF's builder leaves out of a folder unless
        told (``robot --extension txt`` ran a legacy project's ``.txt`` suites): read from
        the stored suites, the first 1000 down from the root (primary-key seeks: a suite's
        children hop from one to the next, a file suite's first test ends its walk)."""
        found: set[str] = set()
        pending, hops = [0], 0
        while pending and hops < _CHILDREN_READ:
            row = self._row(pending.pop())
            for child in islice(self._children_of(row), _CHILDREN_READ - hops):
                hops += 1
                if child.type == "TEST":
                    break
                source = _field(child, "source") if child.type == "SUITE" else None
                if source:
                    pending.append(child.pre)
                    suffix = os.path.splitext(source)[1].lower()
                    if len(suffix) > 1 and suffix not in _DEFAULT_EXTENSIONS:
                        found.add(suffix)
        return tuple(sorted(found))

    def _paths(self) -> list[str]:
        """What robot was given: the root suite's file or folder, else (a run of several
        paths) its child suites'."""
        return [self.root_source] if self.root_source else self._child_sources()

    def _exists(self) -> bool:
        sources = self._paths()
        return bool(sources) and all(os.path.exists(s) for s in sources)

    def _fresh(self, path: str, suite_row: Any) -> str | None:
        """None when ``path`` is as it was when the run ran; else SOURCES_CHANGED/MISSING."""
        if path not in self.states:
            self.states[path] = file_state(path, suite_row, lambda: self.started)
        return self.states[path]

    def _row(self, pre: int | None) -> Any:
        from .views.common import node_by_key

        if pre is None:
            return None
        if pre not in self.rows:
            try:
                self.rows[pre] = node_by_key(self.conn, self.base + pre)
            except ResultError:  # a node that is not there has no location
                self.rows[pre] = None
        return self.rows[pre]

    def _child_sources(self) -> list[str]:
        """The files of the root suite's child suites (a run of several paths has no root
        file), read once: the root's first 1000 children."""
        if self._children is None:
            self._children = [source for child in islice(self._children_of(self._row(0)), _CHILDREN_READ)
                              if (source := _field(child, "source") if child.type == "SUITE" else None)]
        return self._children

    def _children_of(self, row: Any) -> Iterator[Any]:
        """``row``'s children in order (none for no row), found by hopping from one to the
        next (a child at pre + 1, its next sibling at its last + 1: primary-key seeks, as
        views.common's first_child/Siblings do)."""
        pre = row.pre + 1 if row is not None else 0
        while row is not None and pre <= row.last:
            child = self._row(pre)
            if child is None:
                return
            yield child
            pre = child.last + 1


_CHILDREN_READ = 1000
# What RF's builder reads of a folder by default (TestSuiteBuilder's included_extensions).
_DEFAULT_EXTENSIONS = (".robot", ".rbt", ".robot.rst", ".robot.md")


def _sha256(path: str) -> str:
    """As the listener's fingerprint of a suite file has it (listener._suite_fields)."""
    import hashlib  # here: OpenSSL's start is for the commands that locate sources

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _child(container: Any, node: Any, parent: Any, locator: Locator) -> Any:
    """The item of ``container`` (running test, keyword, loop, branch) that ``node`` is,
    by its place under ``parent`` as RF numbers ids: setup, body items, teardown."""
    if node.type == "SETUP":
        item = getattr(container, "setup", None)
    elif node.type == "TEARDOWN":
        item = getattr(container, "teardown", None)
    else:
        first = locator._row(parent.pre + 1)
        index = node.seq - (1 if first is not None and first.type == "SETUP"
                            and first.parent_pre == parent.pre else 0)
        body = list(container.body)
        item = body[index] if 0 <= index < len(body) else None
    return item if item is not None and _same(item, node) else SOURCES_CHANGED


def _path(path: Any) -> Path:
    """pathlib's path: used where RF's parser ran first (and loaded pathlib); the common
    answers (a suite's, a test's location) take os.path, as a reading command loads no
    pathlib (issue #19)."""
    from pathlib import Path

    return Path(path)


def _init_file(folder: Path) -> Path | None:
    """A directory suite's init file (its settings, setup, teardown and keywords)."""
    found = sorted(folder.glob("__init__.*"))
    return next((f for f in found if f.suffix == ".robot"), found[0] if found else None)


def _line(path: Path, lineno: int) -> str:
    try:
        lines = _lines(str(path), path.stat().st_mtime_ns)
    except OSError:
        return ""
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


@functools.lru_cache(maxsize=64)
def _lines(path: str, _mtime_ns: int) -> list[str]:
    return _path(path).read_text(encoding="utf-8", errors="replace").splitlines()


def _same(item: Any, node: Any) -> bool:
    if item.type != node.type:
        return False
    if node.type not in _KEYWORDS:
        return True
    written, ran = keyword_key(item.name or ""), keyword_key(node.name or "")
    return written == ran or written.endswith("." + ran)


def _resources(resource: Any, seen: set[str] | None = None) -> list[Any]:
    """The resource files ``resource`` imports, and theirs, parsed with RF's parser."""
    seen = seen if seen is not None else set()
    found = []
    for imported in resource.imports:
        if imported.type != "RESOURCE" or "${" in imported.name or imported.directory is None:
            continue
        path = _path(imported.directory) / imported.name
        if str(path) in seen or not path.is_file():
            continue
        seen.add(str(path))
        parsed = _resource_file(str(path), _mtime(str(path)))
        if parsed is not None:
            found += [parsed, *_resources(parsed, seen)]
    return found


def file_state(path: str, suite_row: Any, started: Callable[[], float | None]) -> str | None:
    """None when ``path`` is as it was when the run ran (the fingerprint the listener
    recorded on ``suite_row``, else modified before the run ``started``); else why not."""
    try:
        stat = os.stat(path)
    except OSError:
        return SOURCES_MISSING
    if not S_ISREG(stat.st_mode):
        return None
    recorded = _field(suite_row, "_fingerprint") if suite_row is not None else None
    if recorded:
        size, mtime_ns, digest = recorded
        if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns) and _sha256(path) != digest:
            return SOURCES_CHANGED
        return None
    start = started()
    return SOURCES_CHANGED if start is None or stat.st_mtime > start else None


def imported_files(conn: sqlite3.Connection, run_id: int,
                   suite_row: Any) -> tuple[set[str], dict[str, str]] | None:
    """What the tests of ``suite_row`` (a suite file's stored node) import: that file and
    the resource files it imports, and theirs, as RF resolves them, and the libraries
    imported under another name (``AS``): {alias, lower case: the library's name as
    imported}. Of a directory (its setup's, its teardown's): it and its init file. None
    when the file is gone or not as it was at the run."""
    source = _field(suite_row, "source")

    def started() -> float | None:
        row = conn.execute("SELECT start_time FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return _timestamp(row[0] if row else None)

    if source and os.path.isdir(source):  # a directory's setup or teardown: RF names the
        init = _init_file(_path(source))   # directory for its init file's imports
        return {os.path.normpath(source), *([os.path.normpath(str(init))] if init else [])}, {}
    if not source or not os.path.isfile(source) or file_state(source, suite_row, started):
        return None
    suite = _suite_resource(source, _mtime(source))
    if suite is None:
        return None
    resources = _resources(suite)
    aliases = {item.alias.lower(): item.name
               for resource in (suite, *resources) for item in resource.imports
               if item.type == "LIBRARY" and item.alias}
    return {os.path.normpath(path) for path in (source, *(str(r.source) for r in resources))}, aliases


@functools.lru_cache(maxsize=64)
def _suite_resource(path: str, _mtime_ns: int) -> Any:
    """One suite file's own settings and keywords (RF's builder, that file alone)."""
    from robot.api import TestSuite

    _quiet_robot()
    try:
        return TestSuite.from_file_system(path).resource
    except Exception:  # a file RF cannot parse resolves nothing
        return None


def _quiet_robot() -> None:
    """RF's parser tells a suite's problems (a deprecated ``[Return]``, a setting it does not
    know) to robot's console logger, which RF registers on first use: a reader parsing the
    suite again printed robot's warnings on the terminal of ``rf-log-mcp failures`` (and
    kept each in RF's message cache for a console to come). Not inside a running robot: its
    console is its own."""
    from robot.output import LOGGER
    from robot.running import EXECUTION_CONTEXTS

    if EXECUTION_CONTEXTS.current is None:
        LOGGER.unregister_console_logger()
        LOGGER.disable_message_cache()


@functools.cache
def _languages() -> tuple[str, ...]:
    """Every language RF translates its syntax to: ``robot --language fi`` ran suites whose
    headers and settings are Finnish without a ``Language:`` line in them, and the store
    does not know the option (an output file does not say it). RF reads several languages
    at once; none of their headers and settings collide."""
    from robot.conf.languages import Language

    return tuple(language.code for language in Language.__subclasses__() if language.code != "en")


@functools.lru_cache(maxsize=256)
def _resource_file(path: str, _mtime_ns: int) -> Any:
    from robot.running import ResourceFile

    _quiet_robot()
    try:
        return ResourceFile.from_file_system(path, lang=_languages())
    except Exception:  # a file RF cannot parse resolves nothing
        return None


def _parse(root: str | None, children: list[str], started: float | None,
           extensions: tuple[str, ...] = ()) -> Any:
    """The running model of the run's suites (RF's builder; ``extensions``: the suite files'
    beyond its defaults), cached per process and run: it is parsed after the run started, so
    a file not modified since then is as robot read it."""
    from robot.api import TestSuite

    paths = [root] if root else children
    key = (tuple(paths), started, extensions)
    with _PARSED_LOCK:
        if key in _PARSED:
            _PARSED.move_to_end(key)
            return _PARSED[key]
    _quiet_robot()
    try:
        model: Any = TestSuite.from_file_system(*paths, lang=_languages(), included_extensions=(
            *_DEFAULT_EXTENSIONS, *extensions))
    except Exception:  # sources RF cannot parse any more resolve nothing
        model = None
    with _PARSED_LOCK:
        _PARSED[key] = model
        while len(_PARSED) > 4:
            _PARSED.popitem(last=False)
    return model


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _field(row: Any, key: str) -> Any:
    return row.field_values.get(key) if row is not None else None


def _root_dir(root_source: str | None, child_sources: Any) -> str | None:
    """The folder of the run's root suite (a run of several paths: their common folder)."""
    if root_source:  # a folder (or a file without a suffix) itself, else the file's folder
        root = os.path.normpath(root_source)
        has_suffix = len(os.path.splitext(root)[1]) > 1  # pathlib's rule: "name." has none
        return root if os.path.isdir(root) or not has_suffix else os.path.dirname(root)
    children = child_sources()
    if not children:
        return None
    try:
        return os.path.commonpath([os.path.dirname(os.path.normpath(c)) for c in children])
    except ValueError:
        return None


def _timestamp(text: str | None) -> float | None:
    """A run's local start time as seconds since the epoch (file mtimes are compared)."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        try:
            return datetime.strptime(text, "%Y%m%d %H:%M:%S.%f").timestamp()
        except ValueError:
            return None
