"""Live capture: ``robot --listener rf_log_listener[:db=PATH][:label=TEXT][:writer=inline|process|spawn]``.

Robot's run becomes the same :class:`~rf_log_listener.events.Node` events the importers emit,
and the same :class:`RunWriter` writes them, so a live run and the import of its output.xml
give the same rows (the invariant test). How RF's result objects become events, and why on
RF 7.2+ the steps are read from RF's result model rather than taken from per-step listener
calls, is in ``result_events``. Events reach the writer every half second or ~2,000 events
and are committed, open nodes included (as RUNNING), so another process sees the run as it
goes. The listener never breaks the run: any failure of its own becomes one warning on the
console and capture stops; robot goes on.

RF 6.x has no keyword events in Listener v3: there the listener warns once and imports the
output file robot writes at the end (nothing is captured with ``--output NONE``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import events as ev
from . import robot_scope, store_kind
from .cpus import one_cpu
from .event_pipe import OPEN, EventBatcher, LocalEvents
from .events import RunEnd, RunInfo
from .flushing import Flushing, hand_over_after, warn
from .masking import registering_redactor
from .registry import SecretRegistry
from .result_events import (
    KEYWORDS_RUN,
    OpenNodes,
    follows_the_model,
    message_event,
    open_event,
    rf_version,
    suite_texts,
    test_texts,
)
from .rows import RunError, StoreRowSink, add_late_errors
from .run_context import ci_context, pabot_group
from .store import open_store, shown, store_file, store_setting, stored_text, wal_frames
from .writer import RunWriter

if TYPE_CHECKING:  # loaded when a run uses a writer process
    from .writer_link import WriterLink

# At robot's end the store is checkpointed while robot writes output.xml only when the run
# left this much in the WAL: copying less is mostly a checkpoint's two fsyncs, which the one
# after the output file's record (or close()'s) makes anyway: a short run makes one, not two
# (robot's close waits for them when robot writes no log and report).
EARLY_CHECKPOINT_BYTES = 4 << 20


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
_this_thread = threading.get_ident


def _guarded(method: Callable[..., None]) -> Callable[..., None]:
    """Run a listener method under the lock, with SIGALRM held, never raising into robot.

    Robot may call the listener back from inside one of its methods: a library the
    listener reads (a dynamic library's ``get_keyword_source``) logs a warning, and RF
    calls ``message``. That call waits for nothing (the lock is this thread's: robot would
    hang for good) and runs once the method it came from is done, under the same hold.

    On RF 7.0/7.1 this runs for every step and message (hundreds of thousands in a big
    run), so it is written for speed: a fixed signature (every method takes one or two
    arguments; ``*args`` costs more than the rest of the guard), the lock without ``with``."""

    def wrapper(self: rf_log_listener, first: Any, second: Any = None) -> None:
        if self._disabled:
            return
        me = _this_thread()
        if self._holder == me:
            self._callbacks.append((method, first, second))
            return
        held = _hold_alarm()
        lock = self._lock
        lock.acquire()
        self._holder = me
        try:
            method(self, first, second)
            while self._callbacks:
                callback, *arguments = self._callbacks.pop(0)
                callback(self, *arguments)
        except Exception as exc:  # never fail a test because of the capture
            self._callbacks.clear()  # those still waiting (the loop above empties it)
            self._disable_for(exc)
        finally:
            self._holder = None
            lock.release()
            if held:
                _release_alarm()
            self._events += 1

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


_OPTIONS = ("db", "label", "writer")
_WRITERS = ("auto", "inline", "process", "spawn")
_ANOTHER_OPTION = re.compile(rf"[;:,]({'|'.join(_OPTIONS)})=")
# The listener capturing this robot's run into each store (a file's real path, a URL): one
# run per store even when the listener is named twice; a later robot.run() in the same
# process takes over once the run before it ended.
_CAPTURING: dict[str, rf_log_listener] = {}


def _default_writer() -> str:
    """In-process, handed over to a writer process when the run proves big, where a second
    process can run beside robot and its readiness can be polled (a pipe ``select`` can
    wait on); a process from the start elsewhere."""
    if one_cpu():
        return "inline"
    return "auto" if os.name == "posix" else "process"


def _iso(stamp: Any) -> str | None:
    if stamp is None:
        return None
    return stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp)


class rf_log_listener(Flushing):
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
        # By default the run is written in robot's process until writing has cost robot
        # HAND_OVER_AFTER_S; then a writer process (a fresh interpreter) takes it over and
        # robot only packs events. writer=inline never hands over (nor does a robot that may
        # use one CPU only: a second process there only takes turns with robot);
        # writer=process starts the writer process at once (a fork of robot's process where
        # that is safe), writer=spawn starts it at once as a fresh interpreter.
        writer = settings.get("writer")
        misnamed = [name for name in settings if name not in _OPTIONS]  # label is the user's
        if writer not in (None, "", *_WRITERS):
            misnamed.append(f"writer={shown(writer)}")
            writer = None
        if writer in (None, "", "auto"):
            writer = _default_writer()
        self.inline, self.spawn = writer in ("inline", "auto"), writer == "spawn"
        self._hand_over = writer == "auto"
        self._inline_seconds = 0.0  # how long writing in robot's process has taken so far
        self._hand_over_after = hand_over_after()
        self._lock = threading.Lock()
        self._holder: int | None = None  # the thread in a guarded method (see _guarded)
        self._callbacks: list[tuple[Callable[..., None], Any, Any]] = []
        self._disabled = False
        self._events_out: EventBatcher | None = None
        self._nodes = OpenNodes(list().extend)  # _events_out's extend, once the run starts
        self._sink: StoreRowSink | None = None  # only when rows are written in-process
        self._conn: sqlite3.Connection | None = None
        self._db_path = self.db or ""  # the store's file, once it is open
        self._link: WriterLink | None = None  # robot's end of a writer process, once started
        self._last_flush = self._last_beat = time.monotonic()
        self._events = 0  # the ticker compares it between ticks to see whether robot is quiet
        self._ticker: threading.Thread | None = None
        self._finisher: threading.Thread | None = None  # robot's end, done while robot writes files
        self._stop = threading.Event()
        self._ended = False
        self._early_errors: list[RunError] = []  # before the run starts
        # after the run is published and before robot has written its output file (a library
        # listener's close failing): its output file has them, so the store adds them
        self._late_errors: list[RunError] = []
        self._output_written = False
        # the registry's name rule, cached per name
        registry = SecretRegistry(registering_redactor())
        self._scope = robot_scope.ScopeSecrets(registry.names_secret, registry.redactor.names_secrets)
        self._definitions = robot_scope.Definitions()
        self._parameters = robot_scope.SecretParameters(registry.names_secret)
        self._rf6 = rf_version() < (7, 0)
        # RF 7.2+: steps and messages are read from RF's result model (see result_events);
        # RF does not call the step and message methods at all.
        self._follows = not self._rf6 and follows_the_model()
        if self._follows:
            self.start_keyword = self.end_keyword = None  # type: ignore[assignment]
            self.start_body_item = self.end_body_item = None  # type: ignore[assignment]
            self.log_message = None  # type: ignore[assignment]
        elif not self._rf6 and rf_version() < (7, 1):  # RF 7.0 calls no library_import
            self.end_keyword = self._end_keyword_reading_imports  # type: ignore[method-assign]
        if unknown and store_kind.is_url(f"{self.db}:{unknown[0]}"):
            # robot split a PostgreSQL URL at its ':'s; its pieces (one holds the password)
            # are never echoed, and nothing is written to a file named "postgresql"
            self._disabled = True
            warn("capture is off for this run: robot split the store's URL (db=postgresql://...)"
                  " at ':'; name the listener with ';': rf_log_listener;db=postgresql://...")
            return
        if not self._rf6 and not self.inline:
            from .writer_link import start

            self._link = start(self.spawn, warn)  # it starts while robot parses the suite
        if unknown or misnamed:  # a name only: a value may hold a password (a URL's)
            warn(f"ignoring unknown listener options {unknown + misnamed}; use db=PATH,"
                  f" label=TEXT, writer={'|'.join(_WRITERS)}")
        for name, value in settings.items():
            if _ANOTHER_OPTION.search(value):
                warn(f"the value of option {name}, {shown(value)!r}, looks like it holds another option:"
                      " robot splits listener options at ':' (or at ';' when the listener is"
                      " named with ';': rf_log_listener;db=PATH;label=TEXT)")
        if self._rf6:
            warn("RF 6.x gives listeners no keyword events: this run is imported from its output"
                  " file when robot has written it (nothing is captured with --output NONE).")

    # -- run and suites ----------------------------------------------------------------------

    @_guarded
    def start_suite(self, data: Any, result: Any) -> None:
        if self._rf6:
            return
        first = self._events_out is None
        if first and not self._start_run(result):
            return
        if not first and self._follows:
            self._nodes.follow(ended=True)  # the parent suite's setup, done
        fields = robot_scope.suite_fields(data)
        if result.doc or result.metadata:
            fields = {**(fields or {}), **suite_texts(result)}
        self._nodes.open_root(result, ev.SUITE, (
            OPEN, ev.SUITE, "suite", result.name, None, None, None, fields))
        self._scope_secrets()
        self._secret_parameters(self._parameters.in_namespace(data.resource))
        if first:  # readers see the run's root suite at once, not at the first periodic flush
            self._flush()

    def _start_run(self, result: Any) -> bool:
        """Begin the run in the store; False when another of these listeners in this robot
        captures the run into the same store already (the listener named twice: in a
        configuration and on the command line), which leaves this one idle."""
        from robot.version import get_full_version

        store = store_setting(self.db)
        store = store if store_kind.is_url(store) else os.path.realpath(store)
        other = _CAPTURING.get(store)
        if other is not None and other._events_out is not None and not other._ended \
                and not other._disabled:
            self._disabled = True
            warn(f"this run is captured into {shown(store)} by the listener named before;"
                  " this one (named twice) stays idle")
            return False
        _CAPTURING[store] = self
        # fails here, at once, if the store is unusable; a damaged one is set aside
        self._conn = conn = open_store(self.db, on_corrupt=lambda moved: warn(
            f"the store was damaged and was moved to {moved}; this run goes to a new store"))
        self._db_path = store_file(conn)
        local = StoreRowSink(conn, replace_nodes=True)
        output_dir = robot_scope.output_dir()
        info = RunInfo(origin="listener", generator=get_full_version("Robot"),
                       rpa=bool(getattr(result, "rpa", False)), dry_run=robot_scope.dry_run(),
                       label=self.label,
                       output_dir=output_dir, ci=ci_context(),
                       run_group=pabot_group(robot_scope.variable, output_dir))
        run_id = local.begin_run(info)
        forwarder = None if self._link is None else self._link.begin(
            self._db_path, run_id, info.generator or "", warn)
        if forwarder is not None:
            self._events_out = forwarder
        else:
            self._sink = local
            writer = RunWriter(local, live=True, batch_rows=10_000)
            writer.attach_run(run_id, info.generator)
            self._events_out = LocalEvents(writer, run_id)
        self._nodes.extend = self._events_out.extend
        for error in self._early_errors:  # e.g. the root suite's failed library imports
            self._events_out.run_error(*error)
        self._early_errors.clear()
        self._ticker = threading.Thread(target=self._tick, name="rf-log-mcp-flush", daemon=True)
        self._ticker.start()
        return True

    @_guarded
    def end_suite(self, data: Any, result: Any) -> None:
        if self._rf6 or self._events_out is None:
            return
        self._send_definitions()
        if self._follows:
            self._nodes.follow(ended=True)  # the suite's teardown
        self._nodes.close_root()
        if not self._nodes.frames:
            self._events_out.end_run(RunEnd(complete=True))
            self._ended = True
            if self._checkpoints() and self._wal_bytes() >= EARLY_CHECKPOINT_BYTES:
                self._while_robot_writes(self._checkpoint)
        else:
            self._maybe_flush()

    @_guarded
    def library_import(self, library: Any, importer: Any) -> None:
        """RF 7.1+: a library imported while the run goes on (``Import Library``): its
        keywords' secret parameters before its first call (a suite's imports come before
        its start_suite: read there)."""
        if self._events_out is not None:
            self._secret_parameters(self._parameters.of(library.name, library))

    resource_import = library_import

    # -- tests -----------------------------------------------------------------------------

    @_guarded
    def start_test(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        if self._follows:
            self._nodes.follow(ended=True)  # the suite's setup, done
        fields = test_texts(result)
        if data.lineno:
            fields["lineno"] = data.lineno
        self._nodes.open_root(result, ev.TEST, (
            OPEN, ev.TEST, "test", result.name, None, None, None, fields or None))
        self._scope_secrets()
        self._maybe_flush()

    @_guarded
    def end_test(self, data: Any, result: Any) -> None:
        if self._events_out is None:
            return
        if self._follows:
            self._nodes.follow(ended=True)  # the rest of the test; RF empties it after this
        self._scope_secrets(typed=True)  # what the test set (Set Test/Suite/Global Variable, VAR)
        self._nodes.close_root()
        self._maybe_flush()

    # -- keywords, control structures and messages: RF 7.0/7.1 only ---------------------------

    @_guarded
    def start_keyword(self, data: Any, result: Any) -> None:
        if self._events_out is not None:
            self._nodes.open(result, *open_event(result))

    @_guarded
    def end_keyword(self, data: Any, result: Any) -> None:
        if self._events_out is not None:
            self._nodes.close()
            if not self._events & 31:  # the clock, every 32nd event: it costs more than it buys
                self._maybe_flush()

    start_body_item, end_body_item = start_keyword, end_keyword

    def _end_keyword_reading_imports(self, data: Any, result: Any) -> None:
        """RF 7.0's end_keyword: that RF calls no ``library_import``, so what an ``Import
        Library`` or ``Import Resource`` step brought in is read when the step ends, before
        the next step's call (an import of the run's file reads those files too)."""
        rf_log_listener.end_keyword(self, data, result)
        if result.name in ("Import Library", "Import Resource") and getattr(result, "owner", "") == "BuiltIn":
            self._read_namespace(data, result)

    @_guarded
    def _read_namespace(self, data: Any, result: Any) -> None:
        if self._events_out is not None:
            self._secret_parameters(self._parameters.in_namespace())

    @_guarded
    def log_message(self, message: Any, _: None = None) -> None:
        # Messages logged while no keyword or test is open never reach the output file.
        innermost = self._nodes.innermost_type()
        if innermost is None or innermost == ev.SUITE or self._events_out is None:
            return
        self._nodes.extend(message_event(message))
        if not self._events & 31:  # a keyword logging thousands of messages before it ends
            self._maybe_flush()

    # -- run errors, files and the end ---------------------------------------------------------

    @_guarded
    def message(self, message: Any, _: None = None) -> None:
        if message.level not in ("WARN", "ERROR"):
            return
        error = (message.level, message.message, bool(message.html), _iso(message.timestamp))
        if self._events_out is None:
            self._early_errors.append(error)
        elif not self._ended:
            self._events_out.run_error(*error)
        elif not self._output_written:  # not in the output file once robot has written it
            self._late_errors.append(error)

    @_guarded
    def output_file(self, path: Any, _: None = None) -> None:
        """Robot wrote the output file: its path and hash are recorded, so importing it later
        finds this run (on RF 6 it is imported now), while robot writes log and report."""
        source = Path(str(path))
        if not source.is_file():
            return
        self._output_written = True
        if self._rf6:
            from .importers import import_result

            import_result(open_store(self.db), source, stable_window=0, label=self.label)
            return
        if self._conn is None or self._events_out is None or self._events_out.run_id is None:
            return
        run_id = self._events_out.run_id
        self._while_robot_writes(lambda: self._record_output(source, run_id))

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(5)
        if self._finisher is not None:
            self._finisher.join()
        with self._lock:
            self._holder = _this_thread()  # what robot reports from now on waits for nothing
            if self._events_out is not None and not self._ended and not self._disabled:
                try:  # robot stopped before the root suite ended
                    self._events_out.end_run(RunEnd(complete=False))
                except Exception as exc:
                    warn(f"could not close the run: {exc}")
            if self._late_errors:  # no output file to tell which ones it has: all of them
                self._add_late_errors(len(self._late_errors))
            if self._sink is not None:
                self._sink.close()
            if self._conn is not None:
                # Before the pipe: while the writer process still has the store open, the
                # checkpoint SQLite makes when its last connection closes (tens of ms) is left
                # to that process instead of robot.
                self._conn.close()
            if self._link is not None:
                self._link.finish(self._ended)  # the writer process commits what it has and ends

    # -- helpers ---------------------------------------------------------------------------------

    def _scope_secrets(self, typed: bool = False) -> None:
        """Register the values of secret-named variables in RF's scopes (``typed``: and of RF
        7.4+ ``Secret`` objects): what only a live run can see (``robot_scope.ScopeSecrets``)."""
        assert self._events_out is not None
        for value in self._scope.new_values(typed):
            self._events_out.secret(value)

    def _secret_parameters(self, found: list[robot_scope.SecretParameter]) -> None:
        assert self._events_out is not None
        for owner, name, positions, embedded in found:
            self._events_out.secret_parameters(owner, name, positions, embedded)

    def _send_definitions(self) -> None:
        assert self._events_out is not None
        for definition in self._definitions.new(KEYWORDS_RUN):
            self._events_out.definition(*definition)

    def _while_robot_writes(self, work: Callable[[], None]) -> None:
        """The run is committed and robot goes on to write its output files: what is left of
        robot's end is done on a thread (one after another; close() waits for the last), so
        robot does not wait for it: SQLite's checkpoint (the run's pages copied from the WAL
        into the store, two fsyncs, else made by close() at robot's very end), the output
        file's hash (a 100 MB file is a few hundred ms). SQLite and hashlib run without the GIL.
        Without the listener's lock: robot's thread no longer uses the connection (what
        robot still reports, run errors, is only buffered) until close()."""
        before = self._finisher

        def after_the_work_before() -> None:
            if before is not None:
                before.join()
            work()

        self._finisher = threading.Thread(target=after_the_work_before, name="rf-log-mcp-finish",
                                          daemon=True)
        self._finisher.start()

    def _add_late_errors(self, how_many: int) -> None:
        """Store the first ``how_many`` errors robot reported after the run was published;
        the rest are dropped (robot reported them after writing its output file)."""
        late, self._late_errors = self._late_errors[:max(how_many, 0)], []
        if late and self._conn is not None and not self._disabled and self._events_out is not None:
            try:
                add_late_errors(self._conn, self._events_out.run_id, late)
            except Exception as exc:  # a store that cannot be written: one warning
                self._disable_for(exc)

    def _checkpoints(self) -> bool:
        """Whether robot's connection checkpoints the store: SQLite, the run written in robot's
        process (a writer process that has the run closes the store last)."""
        return self._sink is not None and isinstance(self._conn, sqlite3.Connection)

    def _wal_bytes(self) -> int:
        assert self._conn is not None
        return wal_frames(self._db_path) * self._conn.execute("PRAGMA page_size").fetchone()[0]

    def _checkpoint(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):  # the store is written; close() checkpoints
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _record_output(self, source: Path, run_id: int) -> None:
        """The output file's identity, so importing it later finds this run: unless the file
        holds other tests than the run (another listener rewrote it after robot wrote it,
        as RetryFailed keeps a retried test's last attempt only), then it is a run of its own."""
        # loaded on the thread, while robot writes the log
        from .file_identity import error_count, file_digest

        try:
            file_format = "json" if source.suffix.lower() == ".json" else "xml"
            (digest, tests), stat = file_digest(source, file_format), source.stat()
            if self._conn is None or self._disabled:
                return
            ran = self._conn.execute("SELECT total FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if ran and ran[0] is not None and ran[0] != tests:
                warn(f"{source} holds {tests} tests, the run {ran[0]}: another listener rewrote it "
                     f"after robot wrote it (RetryFailed keeps a retried test's last attempt only). "
                     f"The store keeps what ran; `rf-log-mcp import {source}` reads the file as a "
                     f"run of its own.")
                return
            self._conn.execute(
                "UPDATE runs SET source_path = ?, source_format = ?, source_hash = ?,"
                " source_size = ?, source_mtime_ns = ? WHERE run_id = ?",
                (stored_text(str(source.resolve())), file_format, digest, stat.st_size,
                 stat.st_mtime_ns, run_id))
            if self._late_errors:  # the ones robot wrote before it closed the file
                (stored,) = self._conn.execute("SELECT error_count FROM runs WHERE run_id = ?",
                                               (run_id,)).fetchone()
                self._add_late_errors((error_count(source, file_format) or 0) - (stored or 0))
        except Exception as exc:  # a file gone, a store that cannot be written: one warning
            self._disable_for(exc)
            return
        if self._checkpoints():
            self._checkpoint()
