"""The one event vocabulary shared by every source of a run (importers now, the listener later).

A source describes a run by calling an :class:`EventSink`, in execution (pre-)order:

    start_run(RunInfo)
      open_node(Node)             # a suite, test, keyword or control structure starts
        message(level, text, html, time)   # attached to the innermost open node
        open_node(Node) ... close_node(Node)
      close_node(Node)            # the same object, now with status, times and late fields
      run_error(level, text, html, time)
    end_run(RunEnd)

Sources never compute ids, positions or aggregates: the writer does, once, for all of them.
Calls are plain methods, not event objects, because an import emits millions of them.
"""

from __future__ import annotations

import re
from collections import namedtuple

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, Protocol

# Normalized node types: RF 7's own result ``type`` names, so the store reads like RF's model.
SUITE = "SUITE"
TEST = "TEST"
KEYWORD = "KEYWORD"
SETUP = "SETUP"
TEARDOWN = "TEARDOWN"
FOR = "FOR"
ITERATION = "ITERATION"
WHILE = "WHILE"
IF_ROOT = "IF/ELSE ROOT"
IF = "IF"
ELSE_IF = "ELSE IF"
ELSE = "ELSE"
TRY_ROOT = "TRY/EXCEPT ROOT"
TRY = "TRY"
EXCEPT = "EXCEPT"
FINALLY = "FINALLY"
VAR = "VAR"
RETURN = "RETURN"
BREAK = "BREAK"
CONTINUE = "CONTINUE"
ERROR = "ERROR"
GROUP = "GROUP"

NODE_TYPES = frozenset({
    SUITE, TEST, KEYWORD, SETUP, TEARDOWN, FOR, ITERATION, WHILE, IF_ROOT, IF, ELSE_IF, ELSE,
    TRY_ROOT, TRY, EXCEPT, FINALLY, VAR, RETURN, BREAK, CONTINUE, ERROR, GROUP,
})
KEYWORD_TYPES = frozenset({KEYWORD, SETUP, TEARDOWN})
# IF/TRY roots have no RF id; their branches are numbered in the root's parent counter.
ROOT_TYPES = frozenset({IF_ROOT, TRY_ROOT})

# Status of a node whose end never arrived (a cut file imported with allow_incomplete, or a
# live run whose process died), and of a node still running in a live run.
NOT_FINISHED = "NOT FINISHED"
RUNNING = "RUNNING"

# Message severities. Stored per node as ``max_descendant_level`` so projections such as
# "warnings" are a column test. SKIP sits with WARN: a skip reason is worth surfacing, but
# it is not an error.
LEVELS = {"TRACE": 1, "DEBUG": 2, "INFO": 3, "WARN": 4, "SKIP": 4, "ERROR": 5, "FAIL": 6}
LEVEL_NAMES = {1: "TRACE", 2: "DEBUG", 3: "INFO", 4: "WARN", 5: "ERROR", 6: "FAIL"}


# Code installed with pip (site-packages, dist-packages): a library keyword defined there is
# not shown with its file and line (the lines cost tokens and rarely help), so the listener
# does not look them up either.
INSTALLED = re.compile(r"[/\\](site|dist)-packages[/\\]")


def keyword_key(name: str) -> str:
    """A keyword name as RF matches it: case, spaces and underscores do not count."""
    return name.lower().replace(" ", "").replace("_", "")


def suite_status(passed_tests: int, failed_tests: int) -> str:
    """RF's rule for a suite: FAIL if a test failed, else PASS if one passed, else SKIP."""
    if failed_tests:
        return "FAIL"
    return "PASS" if passed_tests else "SKIP"


def as_text(value: Any) -> str:
    """``str(value)``, as RF writes a value (an argument library code passed, a loop's
    value) to its output files. Where ``str()`` fails (an object whose ``__str__`` raises),
    RF's own account of it, ``<Unrepresentable object Broken. Error: ValueError: ...>``, as
    RF logs it: capture does not stop on it (RF's output.xml and output.json writers do)."""
    try:
        return str(value)
    except Exception:
        from robot.utils import safe_str  # robot's process, where such a value comes from

        try:
            return safe_str(value)
        except Exception:
            return f"<Unrepresentable object {type(value).__name__}>"


def rf_version(generator: str | None) -> str | None:
    """'Robot 7.5 (Python 3.11.7 on linux)' -> '7.5'."""
    if not generator:
        return None
    parts = generator.split()
    return parts[1] if len(parts) > 1 else None


class _Record:
    """What a dataclass would give a class of ``__slots__`` fields: a repr, equality by
    fields, no hash (mutable). Without generating code at import: see Node and RunInfo."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]


class Node(_Record):
    """One suite/test/keyword/control item as a source knows it.

    ``open_node`` gets it with what is known at the start (type, name, ...); the source keeps
    filling it and hands the same object to ``close_node``. ``fields`` holds only non-empty
    type-specific values (doc, tags, timeout, lineno, source, metadata, flavor, values,
    condition, patterns, scope, ...).

    Written out rather than a dataclass: it is built millions of times by an import, and a
    dataclass costs every robot process that loads the listener its generation at import.
    """

    __slots__ = ("type", "raw_type", "name", "owner", "status", "start_time", "elapsed",
                 "message", "args", "assign", "fields")

    def __init__(self, type: str, raw_type: str = "", name: str = "", owner: str | None = None,
                 status: str = NOT_FINISHED, start_time: str | None = None,
                 elapsed: float | None = None, message: str = "", args: list[str] | None = None,
                 assign: Any = None, fields: dict[str, Any] | None = None) -> None:
        self.type = type
        self.raw_type = raw_type
        self.name = name
        self.owner = owner
        self.status = status
        self.start_time = start_time
        self.elapsed = elapsed
        self.message = message
        self.args = args
        self.assign = assign  # list[str] for keywords/FOR, dict for ITERATION, str for EXCEPT
        self.fields = {} if fields is None else fields


class RunInfo(_Record):
    """What a source knows about a run when it starts; fields not given are None. (A plain
    class: the read side imports this module, and a reading command does not load
    dataclasses and inspect; issue #19.)"""

    origin: str  # "import" or "listener"
    source_path: str | None
    source_format: str | None  # "xml" or "json"
    source_hash: str | None
    source_size: int | None
    source_mtime_ns: int | None
    generator: str | None
    generated: str | None
    rpa: bool | None
    dry_run: bool | None  # robot --dryrun; None: the source does not say (output files)
    schema_version: int | None
    label: str | None
    output_dir: str | None  # where robot writes outputs (screenshots are relative to it)
    ci: str | None  # JSON: what the CI system says of the build (run_context.py)
    run_group: str | None  # the runs of one pabot execution share it
    __slots__ = tuple(__annotations__)

    def __init__(self, origin: str, **fields: Any) -> None:
        unknown = fields.keys() - set(self.__slots__)
        if unknown:
            raise TypeError(f"RunInfo has no field {', '.join(sorted(unknown))}")
        for name in self.__slots__:
            setattr(self, name, fields.get(name))
        self.origin = origin

    def to_dict(self) -> dict[str, Any]:
        """Its fields by name: what goes over a pipe to a writer process (``RunInfo(**d)``)."""
        return {name: getattr(self, name) for name in self.__slots__}


class RunEnd(namedtuple("RunEnd", "complete generator", defaults=(None,))):
    """What a source knows when a run ends: ``complete`` (bool) is False for a cut/killed
    run; ``generator`` (str or None) when a source learns it only after the suite (JSON key
    order). Totals are not among it: the writer counts the tests it stored, as RF's own
    model does (a file's ``<statistics>`` can disagree with its tests: a listener changing a
    test's status in end_suite changes the statistics, not the test written before)."""

    __slots__ = ()


if TYPE_CHECKING:  # what a source calls; for type checkers (a Protocol needs typing)
    class EventSink(Protocol):
        def start_run(self, info: RunInfo) -> int: ...
        def open_node(self, node: Node) -> None: ...
        def close_node(self, node: Node) -> None: ...
        def message(self, level: str, text: str, html: bool, time: str | None) -> None: ...
        def run_error(self, level: str, text: str, html: bool, time: str | None) -> None: ...
        def end_run(self, end: RunEnd) -> None: ...
