"""Recording how the tools are used (read side, response shaping): for every MCP call and
CLI view, the shape of its answer goes to the store's usage record
(``rf_log_listener/usage.py``), which ``rf-log-mcp usage`` reads (``usage_report.py``).

Shapes only: which tool, view and projection, the page a cursor led to, how deep the
selector is (never its name), page size, budget, estimated tokens, truncation flags, masked
count, error code, duration, the run's size, and what the answer was made of (tokens by
node type and message level, folded iterations, failed iterations reached, hits, fields
present). Whether two calls of a session asked about the same target is kept as a digest
salted per session: it matches within the session and names nothing.

Rows wait in memory and are written in batches, off the answer's path: by a thread of the
MCP server (``Flusher``), at the end of a CLI command (``flush``).
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import sqlite3
import time
from collections import namedtuple
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rf_log_listener.digest import digest
from rf_log_listener.usage import CALL_COLUMNS, enabled, insert

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


def _debug(what: str) -> None:
    """A failure of the record itself, with its traceback, for the server's log at DEBUG
    (logging is imported here: a command that records nothing wrong never loads it)."""
    import logging

    logging.getLogger("rf_log_mcp").debug(what, exc_info=True)


# Keywords whose children are attempts: their volume is counted as RETRY.
RETRY_KEYWORDS = frozenset({"wait until keyword succeeds", "repeat keyword"})
TYPE_FIELDS = frozenset({"flavor", "values", "start", "mode", "fill", "condition", "limit",
                         "on_limit", "on_limit_message", "patterns", "pattern_type", "scope",
                         "separator", "value"})
DEFINITION_FIELDS = frozenset({"definition_source", "definition_lineno", "source_name"})
_TEST_PREFIX = re.compile(r"^(.*?-t\d+)")


class Session(namedtuple("Session", "source id salt")):
    """``source``: mcp, cli or api; ``id`` (str); ``salt`` (bytes): never stored nor shown,
    targets match only within the session."""

    __slots__ = ()

    def target(self, *parts: Any) -> str:
        return digest(repr(parts).encode(), key=self.salt).hex()

    def __repr__(self) -> str:
        return f"Session(source={self.source!r}, id={self.id!r})"


def _random_session(source: str) -> Session:
    return Session(source, os.urandom(8).hex(), os.urandom(16))


_DEFAULT = _random_session("api")  # service called from Python (benchmarks, scripts)
_SESSION: contextvars.ContextVar[Session] = contextvars.ContextVar("usage_session", default=_DEFAULT)
_MCP_SESSIONS: dict[str | None, Session] = {}


def cli_session() -> Session:
    """The session of a command line call: ``RF_LOG_MCP_SESSION`` when set, else the shell
    (or agent) that runs the commands, so one agent's commands are one session."""
    key = os.environ.get("RF_LOG_MCP_SESSION") or f"{os.getppid()}:{_start_time(os.getppid())}"
    derived = digest(f"rf-log-mcp usage {key}".encode(), size=24)
    return Session("cli", derived[:8].hex(), derived[8:24])


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def mcp_session(transport_session: str | None) -> Session:
    """The session of an MCP call: the transport's session id where it has one (Streamable
    HTTP), else the server process: a stdio server serves one client. (The 2026-07-28
    protocol makes a connection object per request, so no object of the SDK lasts a session.)"""
    found = _MCP_SESSIONS.get(transport_session)
    if found is None:
        if len(_MCP_SESSIONS) > 10_000:  # a long-lived HTTP server: forget the oldest
            _MCP_SESSIONS.pop(next(iter(_MCP_SESSIONS)))
        found = _MCP_SESSIONS[transport_session] = _random_session("mcp")
    return found


@contextmanager
def in_session(session: Session) -> Iterator[None]:
    token = _SESSION.set(session)
    try:
        yield
    finally:
        _SESSION.reset(token)


def use_session(session: Session) -> None:
    """This process's calls belong to ``session`` from now on (the command line)."""
    _SESSION.set(session)


class Call:
    """What one call learns about itself while it runs (shaping.read_cursor sets the page,
    service._finish hands over the answer as sent)."""

    __slots__ = ("tool", "started", "page", "answer")

    def __init__(self, tool: str, started: float) -> None:
        self.tool, self.started = tool, started
        self.page = 1
        self.answer: dict[str, Any] | None = None


_CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar("usage_call", default=None)


def current() -> Call | None:
    return _CALL.get()


def recorded(tool: str) -> Callable[[F], F]:
    """A service operation whose every call is recorded (``usage_calls``)."""
    def decorate(operation: F) -> F:
        # The names of its positional parameters, to name the arguments a call passes by
        # position: what inspect's Signature.bind gives (through the decorators' __wrapped__,
        # as inspect does), without loading inspect into every command.
        inner: Any = operation
        while hasattr(inner, "__wrapped__"):
            inner = inner.__wrapped__
        positional = inner.__code__.co_varnames[:inner.__code__.co_argcount]

        @functools.wraps(operation)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not enabled() or _CALL.get() is not None:  # a call inside a call is part of it
                return operation(*args, **kwargs)
            call = Call(tool, time.perf_counter())
            token = _CALL.set(call)
            try:
                response = operation(*args, **kwargs)
            finally:
                _CALL.reset(token)
            try:
                arguments = dict(zip(positional, args, strict=False)) | kwargs
                _PENDING.append(_row(call, arguments, response))
            except Exception:  # recording never costs an answer
                _debug("usage: not recorded")
            return response
        return run  # type: ignore[return-value]
    return decorate


def _row(call: Call, arguments: dict[str, Any], response: Any) -> tuple[Any, ...]:
    session = _SESSION.get()
    selector = arguments.get("selector")
    if arguments.get("message_id"):
        selector = arguments["message_id"]
    kind, depth = selector_shape(selector)
    run_id = response.run_id
    target = session.target(run_id, target_of(selector), arguments.get("test"),
                            arguments.get("head"), arguments.get("suite"))
    shape = answer_shape(call.answer or {}, arguments)
    return (time.time(), session.id, session.source, call.tool, arguments.get("view"),
            arguments.get("projection") if arguments.get("view") in ("tree", "tree_snapshot") else None,
            call.page, kind, depth, target, arguments.get("page_size") or arguments.get("limit"),
            arguments.get("budget"), response.estimated_tokens, int(response.message_truncated),
            int(response.budget_truncated), int(response.page_truncated), response.masked_values,
            response.error.code if response.error else None,
            round((time.perf_counter() - call.started) * 1000, 3), run_id, _compact_json(shape))


_TEST_OR_FIXTURE = re.compile(r"^(?:ig:)?(.*?-(?:t\d+|k\d+))(?:[-:]|$)")


def target_of(selector: str | None) -> str | None:
    """What a call is about, for "the same target": the test (or suite fixture) a node,
    iteration group or message belongs to, so reading a message a failure path showed cut
    counts as following that answer up."""
    if not selector:
        return None
    found = _TEST_OR_FIXTURE.match(selector)
    return found.group(1) if found else selector


def selector_shape(selector: str | None) -> tuple[str, int | None]:
    """What kind of selector a call used and how deep it points, never its name."""
    if not selector:
        return "none", None
    if selector.startswith("ig:"):
        return "iteration_group", selector.split(":")[1].count("-") + 2
    if selector.startswith("group:"):
        return "failure_group", None
    if selector in ("failed", "run_group"):
        return selector, None
    if selector.startswith("errors-m"):
        return "run_error", None
    if re.search(r"-m\d+$", selector):
        return "message", selector.count("-")
    return "node", selector.count("-") + 1


def answer_shape(answer: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """What an answer was made of: tokens by node type / message level, nodes, folds, failed
    iterations, fields present, and for searches the hits and how spread they are."""
    from .shaping import estimate_tokens  # (shaping reads the page from here)

    shape: dict[str, Any] = {"volume": {}, "nodes": 0}
    _walk(answer, shape, estimate_tokens)
    payload = answer.get("tree") or answer.get("step_window") or answer.get("failure_path") \
        or answer.get("summary") or answer.get("tree_snapshot") or answer.get("message") or answer
    for key in ("children", "steps", "path", "hits", "groups", "failed_tests", "changes",
                "runs", "tests", "nodes"):
        if isinstance(payload.get(key), list):
            shape["items"] = len(payload[key])
            break
    node = payload.get("node") if isinstance(payload, dict) else None
    if isinstance(node, dict) and node.get("type") in ("FOR", "WHILE"):
        shape["loop"] = True
    if arguments.get("selector", "") and str(arguments.get("selector")).startswith("ig:"):
        shape["loop"] = True
    if "hits" in answer or "groups" in answer:
        hits = answer.get("hits") or [g.get("first", {}) for g in answer.get("groups") or []]
        shape["hits"] = len(hits) if "hits" in answer else sum(
            g.get("count", 0) for g in answer.get("groups") or [])
        shape["scoped"] = bool(arguments.get("selector"))
        shape["hit_tests"] = len({m.group(1) for h in hits
                                  if (m := _TEST_PREFIX.match(str(h.get("id", ""))))})
        shape["text_query"] = bool(arguments.get("query"))
        if arguments.get("group_by"):
            shape["group_by"] = arguments["group_by"]
    return {key: value for key, value in shape.items() if key in _ALWAYS or value not in (0, {}, None)}


_ALWAYS = frozenset({"hits", "scoped", "hit_tests", "text_query"})


def _walk(value: Any, shape: dict[str, Any], tokens: Callable[[Any], int]) -> None:
    if isinstance(value, list):
        for item in value:
            _walk(item, shape, tokens)
        return
    if not isinstance(value, dict):
        return
    kind = _kind(value)
    if kind is None:
        for key, item in value.items():
            if key != "error":
                _walk(item, shape, tokens)
        return
    nested = {key: value[key] for key in ("messages", "attachments", "first", "last")
              if isinstance(value.get(key), (list, dict))}
    own = {key: item for key, item in value.items() if key not in nested}
    volume = shape["volume"]
    volume[kind] = volume.get(kind, 0) + tokens(own)
    if "node_id" in value and "type" in value:
        shape["nodes"] += 1
        _count(shape, "type_fields", bool(TYPE_FIELDS & value.keys()))
        _count(shape, "definitions", bool(DEFINITION_FIELDS & value.keys()))
        _count(shape, "call_sites", "lineno" in value)
        _count(shape, "failed_iterations", value["type"] == "ITERATION" and value.get("status") == "FAIL")
    if value.get("kind") == "ITERATION_GROUP":
        _count(shape, "folded_groups", True)
        _count(shape, "folded_iterations", True, value.get("count", 0))
    if value.get("count") and "level" in value:  # repeated messages folded into one hit
        _count(shape, "repeats_folded", True, value["count"] - 1)
    if isinstance(value.get("attachments"), list):
        _count(shape, "attachments", True, len(value["attachments"]))
    for item in nested.values():
        _walk(item, shape, tokens)


def _count(shape: dict[str, Any], key: str, yes: bool, by: int = 1) -> None:
    if yes:
        shape[key] = shape.get(key, 0) + by


def _kind(value: dict[str, Any]) -> str | None:
    """The volume class of an answer's item: a node by its type (retry keywords as RETRY),
    a message or hit by its level, a folded item by its kind; None for containers."""
    if "node_id" in value and "type" in value and "status" in value:
        if value["type"] == "KEYWORD" and str(value.get("name", "")).lower() in RETRY_KEYWORDS:
            return "RETRY"
        return str(value["type"])
    if value.get("kind") in ("ITERATION_GROUP", "REPEATED_CALLS", "RUN_ERRORS"):
        return str(value["kind"])
    if "level" in value and "text" in value:
        return f"message {value['level']}"
    return None


def _compact_json(data: Any) -> str:
    import json

    return json.dumps(data, separators=(",", ":"), sort_keys=True)


# -- writing ---------------------------------------------------------------------------------

_PENDING: list[tuple[Any, ...]] = []  # list.append/pop are atomic: no lock on the answer's path


def flush(conn: sqlite3.Connection) -> int:
    """Write the calls recorded so far; how many were written (0 when the store cannot take
    them now: they are dropped, never retried into a second answer's time)."""
    rows = []
    while _PENDING:
        rows.append(_PENDING.pop(0))
    return len(rows) if insert(conn, "usage_calls", CALL_COLUMNS, _with_sizes(conn, rows)) else 0


def _with_sizes(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The calls' rows with the size of the run each read (nodes, messages, bytes), read
    here, once per run, rather than on each answer's path (a round trip to a database
    server per call). A live run's size is then the one of a moment later."""
    run_ids = sorted({row[-2] for row in rows if row[-2] is not None})
    sizes: dict[int, tuple[Any, ...]] = {}
    if run_ids:
        try:
            sizes = {rid: size for rid, *size in conn.execute(
                "SELECT run_id, node_count, message_count, source_size FROM runs WHERE run_id"
                f" IN ({','.join('?' * len(run_ids))})", run_ids)}
        except sqlite3.Error:
            _debug("usage: run sizes not read")
    return [(*row[:-2], *sizes.get(row[-2], (None, None, None)), row[-1]) for row in rows]


class Flusher:
    """The MCP server's writer of the usage record: every ``every`` seconds, through its own
    connection (a read-only server records nothing). A thread of the server's; a command
    line call writes its record at its end and never loads ``threading`` for it."""

    def __init__(self, open_connection: Callable[[], sqlite3.Connection], every: float = 2.0) -> None:
        import threading

        self._open, self._every = open_connection, every
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._write, name="rf-log-mcp usage", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _write(self) -> None:
        conn = None
        try:
            conn = self._open()
            conn.execute("PRAGMA busy_timeout = 2000")
            while not self._halt.wait(self._every):
                flush(conn)
            flush(conn)
        except Exception:
            _debug("usage: the record cannot be written")
        finally:
            if conn is not None:
                conn.close()

    def stop(self) -> None:
        self._halt.set()
        self._thread.join(timeout=5)
