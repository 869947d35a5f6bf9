"""Live capture: ``robot --listener rf_log_listener[:db=PATH][:label=TEXT][:writer=inline]``.

Listener v3 (RF 7.0+) events become the same :class:`~rf_log_listener.events.Node` events
the importers emit, and the same :class:`RunWriter` writes them, so a live run and the import
of its output.xml give the same rows (the invariant test). Events reach the writer every half
second or ~2,000 events and are committed, open nodes included (as RUNNING), so another
process sees the run as it goes. On RF 7.2+ messages are read from the result bodies RF
fills for its own output (see ``_body_items_reader``), not from ``log_message``.
The listener never breaks the run: any failure of its own becomes one warning on the console
and capture stops; robot goes on.

RF 6.x has no keyword events in Listener v3: there the listener warns once and imports the
output file robot writes at the end (nothing is captured with ``--output NONE``).
"""

from __future__ import annotations

import hashlib
import operator
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import events as ev
from .event_pipe import MESSAGE, OPEN, EventBatcher, EventForwarder, LocalEvents
from .events import RunEnd, RunInfo
from .row_pipe import FramedPipe
from .rows import SqliteRowSink
from .store import open_store
from .writer import RunWriter
from .writer_process import WRITER_WARNED

FLUSH_EVERY_S = 0.5
# ... or sooner, after this many pending items (about 2,000 events): small batches keep the
# writer process busy all along (robot's last wait, at the end, is short) and the pending
# events die young, before Python's garbage collector has to look at them twice.
FLUSH_ITEMS = 12_000
HEARTBEAT_EVERY_S = 5.0

# Attributes copied from RF's result objects into Node.fields at the end of each item.
_FIELDS: dict[str, tuple[str, ...]] = {
    ev.KEYWORD: ("source_name", "doc", "tags", "timeout"),
    ev.FOR: ("flavor", "values", "start", "mode", "fill"),
    ev.WHILE: ("condition", "limit", "on_limit", "on_limit_message"),
    ev.IF: ("condition",), ev.ELSE_IF: ("condition",),
    ev.EXCEPT: ("patterns", "pattern_type"),
    ev.VAR: ("scope", "separator"),
    ev.RETURN: ("values",), ev.ERROR: ("values",),
}
_FIELDS[ev.SETUP] = _FIELDS[ev.TEARDOWN] = _FIELDS[ev.KEYWORD]
_SUITE, _KEYWORD, _KEYWORD_TYPES = ev.SUITE, ev.KEYWORD, ev.KEYWORD_TYPES  # hot-path globals


def _alarm_maskers() -> tuple[Callable[[], bool], Callable[[], None]]:
    """RF 7.3+ raises test timeouts from SIGALRM, even inside listener code; a half-done
    update of the listener's state would corrupt the capture. While a listener method runs
    the signal waits (microseconds), then fires in robot's own code as it should.

    RF installs its SIGALRM handler only while a timeout is armed, so the two mask syscalls
    are made only then; the C-level calls are used directly, the ``signal`` module's wrappers
    cost several times more, on every event."""
    try:
        import _signal as raw
    except ImportError:  # pragma: no cover - CPython always has it
        raw = signal  # type: ignore[assignment]
    if not (hasattr(raw, "pthread_sigmask") and hasattr(raw, "SIGALRM")):
        return (lambda: False), (lambda: None)
    alarm_signal = raw.SIGALRM
    alarm = [alarm_signal]
    mask, getsignal, default = raw.pthread_sigmask, raw.getsignal, raw.SIG_DFL
    block, unblock = raw.SIG_BLOCK, raw.SIG_UNBLOCK

    def hold_if_armed() -> bool:
        if getsignal(alarm_signal) == default:
            return False  # no timeout armed: nothing can interrupt us
        mask(block, alarm)
        return True

    return hold_if_armed, (lambda: mask(unblock, alarm))


_hold_alarm, _release_alarm = _alarm_maskers()


def _guarded(method: Callable[..., None]) -> Callable[..., None]:
    """Run a listener method under the lock, with SIGALRM held, never raising into robot.

    This runs for every event robot sends (hundreds of thousands in a big run), so it is
    written for speed: a fixed signature (every method takes one or two arguments; ``*args``
    costs more than the rest of the guard), the lock without ``with``."""

    def wrapper(self: rf_log_listener, first: Any, second: Any = None) -> None:
        if self._disabled:
            return
        held = _hold_alarm()
        lock = self._lock
        lock.acquire()
        try:
            method(self, first, second)
        except Exception as exc:  # never fail a test because of the capture
            self._disable(f"{type(exc).__name__}: {exc}")
        finally:
            lock.release()
            if held:
                _release_alarm()
            self._events += 1

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


def _iso(stamp: Any) -> str | None:
    if stamp is None:
        return None
    return stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp)


class rf_log_listener:
    """Robot Framework listener that writes the run into the rf-log-mcp store while it runs."""

    ROBOT_LISTENER_API_VERSION = 3
    # Called after every other listener (RF 7.1+), at starts and at ends: what they log or
    # change in their end_* methods goes into the output file, so it is there when this one
    # reads the result.
    ROBOT_LISTENER_PRIORITY = -1_000_000

    def __init__(self, *options: str) -> None:
        settings = dict(option.split("=", 1) for option in options if "=" in option)
        unknown = [option for option in options if "=" not in option]
        self.db: str | None = settings.get("db")
        self.label: str | None = settings.get("label")
        # writer=inline keeps the writer in robot's process (no child process at all).
        self.inline = settings.get("writer", "process") == "inline"
        self._lock = threading.Lock()
        self._disabled = False
        self._events_out: EventBatcher | None = None
        self._extend: Callable[[tuple[Any, ...]], None] = list().extend  # _events_out's, once set
        self._sink: SqliteRowSink | None = None  # only when rows are written in-process
        self._conn: sqlite3.Connection | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: FramedPipe | None = None
        self._types: list[str] = []  # types of the open nodes, innermost last
        # The open nodes' bodies (RF 7.2+ keeps each logged message there; see _pull_messages)
        # and how many of each body's items were looked at already.
        self._bodies: list[list[Any]] = []
        self._seen: list[int] = []
        self._last_flush = time.monotonic()
        self._events = 0  # the ticker compares it between ticks to see whether robot is quiet
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._ended = False
        self._early_errors: list[tuple[str, str, bool, str | None]] = []  # before the run starts
        self._rf6 = _rf_version() < (7, 0)
        self._items_of = _body_items_reader()
        if self._items_of is not _no_items:
            # RF will not call log_message at all: in a TRACE run that is most of the events.
            self.log_message = None  # type: ignore[assignment]
        if unknown:
            _warn(f"ignoring unknown listener options {unknown}; use db=PATH, label=TEXT,"
                  " writer=inline")
        if self._rf6:
            _warn("RF 6.x gives listeners no keyword events: this run is imported from its output"
                  " file when robot has written it (nothing is captured with --output NONE).")

    # -- run and suites ----------------------------------------------------------------------

    @_guarded
    def start_suite(self, data: Any, result: Any) -> None:
        if self._rf6:
            return
        first = self._events_out is None
        if first:
            self._start_run(result)
        self._open(result, ev.SUITE, "suite", result.name,
                   {"source": str(data.source)} if data.source else None, ())
        if first:  # readers see the run's root suite at once, not at the first periodic flush
            self._flush()

    def _start_run(self, result: Any) -> None:
        from robot.version import get_full_version

        # fails here, at once, if the store is unusable; a damaged one is set aside
        self._conn = conn = open_store(self.db, on_corrupt=lambda moved: _warn(
            f"the store was damaged and was moved to {moved}; this run goes to a new store"))
        local = SqliteRowSink(conn, replace_nodes=True)
        info = RunInfo(origin="listener", generator=get_full_version("Robot"),
                       rpa=bool(getattr(result, "rpa", False)), label=self.label)
        run_id = local.begin_run(info)
        forwarder = None if self.inline else self._writer_process(conn, run_id, info.generator or "")
        if forwarder is not None:
            self._events_out = forwarder
        else:
            self._sink = local
            writer = RunWriter(local, live=True, batch_rows=10_000)
            writer.attach_run(run_id, info.generator)
            self._events_out = LocalEvents(writer, run_id)
        self._extend = self._events_out.extend
        for error in self._early_errors:  # e.g. the root suite's failed library imports
            self._events_out.run_error(*error)
        self._early_errors.clear()
        self._ticker = threading.Thread(target=self._tick, name="rf-log-mcp-flush", daemon=True)
        self._ticker.start()

    @_guarded
    def end_suite(self, data: Any, result: Any) -> None:
        if self._rf6 or self._events_out is None:
            return
        fields = {}
        if result.doc:
            fields["doc"] = result.doc
        if result.metadata:
            fields["metadata"] = dict(result.metadata)
        self._close(result, None, fields)
        if not self._types:
            stats = result.statistics
            self._events_out.end_run(RunEnd(complete=True, passed=stats.passed, failed=stats.failed,
                                            skipped=stats.skipped,
                                            total=stats.passed + stats.failed + stats.skipped))
            self._ended = True

    # -- tests -----------------------------------------------------------------------------

    @_guarded
    def start_test(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        self._open(result, ev.TEST, "test", result.name,
                   {"lineno": data.lineno} if data.lineno else None, self._items_of(result))

    @_guarded
    def end_test(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        self._close(result, None, _doc_tags_timeout(result))

    # -- keywords and control structures ------------------------------------------------------

    # Keyword starts and messages are most of the events: they extend EventBatcher's flat
    # list straight away (OPEN/MESSAGE, layouts as in its methods). Times travel as
    # datetime's own 10-byte state (``__reduce__``, 6x cheaper than isoformat in robot);
    # the writer side turns them into text.

    @_guarded
    def start_keyword(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        ntype = result.type
        if ntype not in _KEYWORD_TYPES:
            ntype = _KEYWORD
        args, assign = result.args, result.assign
        self._enter(result, ntype, self._items_of(result))
        self._extend((OPEN, ntype, "keyword", result.name or "", result.owner or None,
                      tuple(args) if args else None, tuple(assign) if assign else None, None))

    @_guarded
    def end_keyword(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        fields = _doc_tags_timeout(result)
        if result.source_name:
            fields["source_name"] = result.source_name
        self._close(result, None, fields)

    @_guarded
    def start_body_item(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        ntype = result.type
        # Only GROUP and VAR have a name (elsewhere RF 7 deprecates the attribute).
        name = result.name if ntype in (ev.GROUP, ev.VAR) else ""
        self._open(result, ntype, ntype, name or "", None, self._items_of(result))

    @_guarded
    def end_body_item(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        ntype = self._types[-1]
        assign: Any = None
        fields: dict[str, Any] = {}
        if ntype == ev.FOR:
            assign = list(result.assign) or None
        elif ntype == ev.EXCEPT:
            assign = result.assign or None
        elif ntype == ev.ITERATION and self._types[-2] == ev.FOR:  # WHILE ones have none
            assign = dict(result.assign) or None
        elif ntype == ev.VAR and result.value:
            fields["value"] = list(result.value)
        for key in _FIELDS.get(ntype, ()):
            value = getattr(result, key, None)
            if value:  # None, "", empty tuples: nothing to keep
                fields[key] = [str(v) for v in value] if key in ("values", "patterns") else (
                    value if isinstance(value, int) else str(value))
        self._close(result, assign, fields)

    # -- messages ----------------------------------------------------------------------------

    @_guarded
    def log_message(self, message: Any, _: None = None) -> None:
        """RF 7.0/7.1 only (see _body_items_reader)."""
        # Messages logged while no keyword or test is open never reach the output file.
        types = self._types
        if not types or types[-1] == _SUITE or self._events_out is None:
            return
        stamp = message.timestamp
        self._extend((MESSAGE, message.level, message.message, message.html,
                      stamp.__reduce__()[1][0] if stamp is not None else None))
        if not self._events & 31:
            self._maybe_flush()

    @_guarded
    def message(self, message: Any, _: None = None) -> None:
        if message.level not in ("WARN", "ERROR"):
            return
        error = (message.level, message.message, bool(message.html), _iso(message.timestamp))
        if self._events_out is None:
            self._early_errors.append(error)
        else:
            self._events_out.run_error(*error)

    # -- files and the end ---------------------------------------------------------------------

    @_guarded
    def output_file(self, path: Any, _: None = None) -> None:
        """Robot wrote the output file: record its path and hash, so importing it later finds
        this run (on RF 6, import it now)."""
        source = Path(str(path))
        if not source.is_file():
            return
        if self._rf6:
            from .importers import import_result

            import_result(open_store(self.db), source, stable_window=0, label=self.label)
            return
        if self._conn is None or self._events_out is None or self._events_out.run_id is None:
            return
        digest = hashlib.sha256()
        with source.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        stat = source.stat()
        self._conn.execute(
            "UPDATE runs SET source_path = ?, source_format = ?, source_hash = ?, source_size = ?,"
            " source_mtime_ns = ? WHERE run_id = ?",
            (str(source.resolve()), "json" if source.suffix.lower() == ".json" else "xml",
             digest.hexdigest(), stat.st_size, stat.st_mtime_ns, self._events_out.run_id),
        )

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(5)
        with self._lock:
            if self._events_out is not None and not self._ended and not self._disabled:
                try:  # robot stopped before the root suite ended
                    self._events_out.end_run(RunEnd(complete=False))
                except Exception as exc:
                    _warn(f"could not close the run: {exc}")
            if self._sink is not None:
                self._sink.close()
            if self._conn is not None:
                # Before the pipe: while the writer process still has the store open, the
                # checkpoint SQLite makes when its last connection closes (tens of ms) is left
                # to that process instead of robot.
                self._conn.close()
            if self._pipe is not None:
                self._pipe.close()  # the writer process commits what it has and ends
            if self._process is not None and not self._ended:
                # The run did not end: let the writer commit what it has before robot exits.
                # After a normal end it has committed and acknowledged already; robot does not
                # wait for it to tear down its interpreter.
                try:
                    self._process.wait(30)
                except subprocess.TimeoutExpired:
                    self._process.kill()

    # -- helpers ---------------------------------------------------------------------------------

    # Looking at the clock on every event costs more than it buys: every 32nd event checks.

    def _open(self, result: Any, ntype: str, raw: str, name: str, fields: dict[str, Any] | None,
              body: Any) -> None:
        """Open a suite, test or control structure (keywords open in start_keyword)."""
        assert self._events_out is not None
        self._enter(result, ntype, body)
        self._events_out.open(ntype, raw, name, None, None, None, fields)
        if not self._events & 31:
            self._maybe_flush()

    def _close(self, result: Any, assign: Any, fields: dict[str, Any]) -> None:
        assert self._events_out is not None
        self._leave()
        start, elapsed = result.start_time, result.elapsed_time
        self._events_out.close(result.status, result.message or "",
                               start.__reduce__()[1][0] if start is not None else None,
                               elapsed.total_seconds() if elapsed is not None else None,
                               assign, fields or None)
        if not self._events & 31:
            self._maybe_flush()

    def _enter(self, child: Any, ntype: str, body: Any) -> None:
        """A node opens: first its parent's messages logged so far. RF has appended the
        child to the parent's body already (not setups and teardowns): when it is the one
        new item, there is nothing to look at."""
        if self._bodies:
            items = self._bodies[-1]
            new = len(items) - self._seen[-1]
            if new == 1 and items[-1] is child:
                self._seen[-1] += 1
            elif new > 0:
                self._pull_messages()
        self._types.append(ntype)
        self._bodies.append(body)
        self._seen.append(0)

    def _leave(self) -> None:
        """The innermost node ends: its last messages first."""
        if len(self._bodies[-1]) > self._seen[-1]:
            self._pull_messages()
        self._types.pop()
        self._bodies.pop()
        self._seen.pop()

    def _pull_messages(self) -> None:
        """Send the innermost open node's messages logged since the last look: called before
        a child opens, before the node closes, and by the ticker while robot is quiet, so
        they keep their place among the children, as in the output file."""
        items, seen = self._bodies[-1], self._seen[-1]
        self._seen[-1] = end = len(items)
        extend, fields = self._extend, _message_fields
        for item in items[seen:end]:
            if isinstance(item, _Message):
                try:
                    level, text, html, stamp = fields(item)
                except AttributeError:  # not made by RF's logger: no internals to read
                    level, text, html, stamp = item.level, item.message, item.html, item.timestamp
                if type(text) is not str:  # a delayed message: reading it makes RF resolve it
                    text = item.message
                extend((MESSAGE, level, text, html,
                        stamp.__reduce__()[1][0] if stamp is not None else None))

    def _maybe_flush(self) -> None:
        assert self._events_out is not None
        if len(self._events_out) >= FLUSH_ITEMS or time.monotonic() - self._last_flush >= FLUSH_EVERY_S:
            self._flush()

    def _writer_process(self, conn: sqlite3.Connection, run_id: int, generator: str) -> EventForwarder | None:
        """Start the process that turns this run's events into rows and commits them, so
        robot waits for neither; None (all is done in-process) if it cannot start."""
        db_path = conn.execute("PRAGMA database_list").fetchone()[2]
        package_root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "rf_log_listener.writer_process", db_path, str(run_id),
                 generator],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=1 << 16,
            )
        except OSError as exc:
            _warn(f"writing in-process (no writer process: {exc})")
            return None
        assert self._process.stdin is not None and self._process.stdout is not None
        self._pipe = FramedPipe(self._process.stdout, self._process.stdin)
        return EventForwarder(self._pipe, run_id)

    def _flush(self) -> None:
        assert self._events_out is not None
        self._events_out.flush()
        self._last_flush = time.monotonic()

    def _tick(self) -> None:
        """Flush what waits while robot is busy elsewhere (a long keyword, a sleep) and keep
        the heartbeat fresh, so readers can tell a live run from a dead one."""
        last_beat = time.monotonic()
        seen = -1
        while not self._stop.wait(FLUSH_EVERY_S):
            events, seen = seen, self._events
            quiet = events == seen  # no listener call since the previous tick
            if not self._lock.acquire(blocking=False):
                continue  # robot is in a listener method; it flushes itself when due
            try:
                if self._disabled or self._events_out is None or self._ended:
                    continue
                now = time.monotonic()
                # Only while robot is quiet (a long keyword, a sleep): when it is busy its own
                # events flush, and a flush from here would contend with it for the GIL.
                if quiet and self._bodies and len(self._bodies[-1]) > self._seen[-1]:
                    self._pull_messages()  # a long keyword's messages, while it runs
                if quiet and len(self._events_out):
                    self._flush()
                    last_beat = now
                elif now - last_beat >= HEARTBEAT_EVERY_S:
                    self._events_out.heartbeat()
                    last_beat = now
            except Exception as exc:
                self._disable(f"{type(exc).__name__}: {exc}")
            finally:
                self._lock.release()

    def _disable(self, reason: str) -> None:
        if self._disabled:
            return
        self._disabled = True
        if self._process is not None and "Broken pipe" in reason:
            try:  # the writer process ended: it says why itself when it can
                if self._process.wait(2) == WRITER_WARNED:
                    return
            except subprocess.TimeoutExpired:
                pass
        _warn(f"capture stopped, the run goes on: {reason}")


def _doc_tags_timeout(result: Any) -> dict[str, Any]:
    """The non-empty doc, tags and timeout of a test or keyword result."""
    fields: dict[str, Any] = {}
    if result.doc:
        fields["doc"] = result.doc
    if result.tags:
        fields["tags"] = list(result.tags)
    if result.timeout:
        fields["timeout"] = str(result.timeout)
    return fields


def _no_items(result: Any) -> tuple[()]:
    return ()


def _body_items_reader() -> Callable[[Any], Any]:
    """How the listener reads messages: from result bodies, or through ``log_message``.

    RF 7.2+ appends every message it writes to the output to its parent's result body, right
    after the listeners' log_message, and empties a test's bodies only after end_test.
    Reading them there, at the next start or end, replaces tens of thousands of listener
    calls in a TRACE run, and captures exactly what the output gets. The body's own list is
    read directly (an ItemList's ``len`` and indexing are Python calls); on RF 7.0/7.1,
    which keep no messages there, or if that list is not where this code expects it,
    messages come through log_message as before."""
    global _Message, _message_fields
    if _rf_version() < (7, 2):
        return _no_items
    from robot.result import Keyword, Message

    if not isinstance(getattr(Keyword().body, "_items", None), list):
        return _no_items
    _Message = Message
    # RF's logger makes messages whose text and time are Python properties; one C-level
    # getter reads what they hold (the hottest line of a TRACE run's capture).
    stamp = getattr(getattr(Message, "timestamp", None), "attr_name", "timestamp")
    _message_fields = operator.attrgetter("level", "_message", "html", stamp)
    return _body_items


def _body_items(result: Any) -> Any:
    # Every result type with a body has this list on RF 7.2-7.5 (tested); should one not,
    # its node is still captured, with no messages of its own, instead of stopping capture.
    items = getattr(getattr(result, "body", None), "_items", ())
    return items if type(items) is list else ()


_Message: Any = None  # robot.result.Message, once RF is known to keep messages in bodies
_message_fields: Callable[[Any], tuple[Any, ...]] = operator.attrgetter("level", "message", "html",
                                                                        "timestamp")


def _rf_version() -> tuple[int, int]:
    """RF's major and minor version; (7, 0) when it cannot be told (RF 7.0's behaviour)."""
    try:
        from robot.version import VERSION
    except ImportError:
        return 7, 0
    release = re.match(r"(\d+)\.(\d+)", VERSION)
    return (int(release[1]), int(release[2])) if release else (7, 0)


def _warn(text: str) -> None:
    sys.__stderr__.write(f"[ WARN ] rf_log_listener: {text}\n")
    sys.__stderr__.flush()
