"""A live run's writer, in a process of its own: ``python -m rf_log_listener.writer_process``,
or forked from robot.

By default robot writes a run itself first and starts this process (a fresh interpreter,
``--ready``: it says when it has imported what it needs) only once writing has cost robot
the listener's HAND_OVER_AFTER_S; the run then arrives as a "resume" frame with the
writer's whole state (``event_pipe.LocalEvents.hand_over``), and this process goes on from
there. A short run is never handed over: for a one-test suite any second process costs
robot more than the writing. With the listener's ``writer=process`` it is started when
robot loads the listener, on Linux while robot has no other thread as a fork of robot's
process (:func:`fork_writer`: ready in a few milliseconds, these modules already loaded),
else (``writer=spawn``, other systems) as a fresh interpreter; the run (store, id,
generator) arrives as a "run" frame.

The listener packs robot's events and sends them here (``event_pipe.py``); this process
runs the one :class:`RunWriter` and does the SQLite work (rows, full-text index, commits) on
another core, so robot waits for neither. It ends when the run ends or the pipe closes;
if robot died, what arrived is committed and readers see the run as interrupted (robot's
pid is gone).
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

from .event_pipe import apply_events
from .row_pipe import FramedPipe
from .rows import StoreRowSink
from .store import open_store, settle_late_rows, shown
from .writer import RunWriter

WRITER_WARNED = 3  # exit code: the writer printed why it stopped; the listener adds nothing


READY = "--ready"  # argument: say so (one frame) once imported, before the run is sent


def main() -> int:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # the real stdout carries frames
    pipe = FramedPipe(sys.stdin.buffer, out)
    if READY in sys.argv[1:]:
        try:
            pipe.send_bytes(marshal.dumps("ready"))
        except BrokenPipeError:
            return 0  # robot wrote the run itself and is gone
    return serve(pipe)


def serve(pipe: FramedPipe) -> int:
    """Write the run robot sends over ``pipe``; the exit code. The first frame says which
    run: one to write from its start ("run": the store, the run id, the generator), or one
    robot began writing itself and hands over ("resume": the store, the run id, the
    writer's state, see ``event_pipe.LocalEvents.hand_over``)."""
    try:  # started while robot parses the suite (or runs it): the run comes as the first frame
        kind, db, run_id, detail = marshal.loads(pipe.recv_bytes())
    except EOFError:
        return 0  # robot ended before a run began (a parse error, --help), or wrote it itself
    try:
        conn = open_store(db)
        try:
            sink = StoreRowSink(conn, replace_nodes=True)
            sink.attach(run_id)
            stack = None
            if kind == "resume":
                import pickle  # here: most runs are never handed over

                writer, stack = pickle.loads(detail)
                writer.sink = sink
            else:
                writer = RunWriter(sink, live=True, batch_rows=10_000)
                writer.attach_run(run_id, detail)
            if apply_events(pipe, writer, stack):
                _outlive_robot(pipe)
            else:  # robot is gone; a reader may have marked the run before the last commit
                settle_late_rows(conn, run_id)
        finally:
            conn.close()
    except Exception as exc:  # a full disk, a store gone read-only: one clear line on robot's console
        sys.stderr.write(f"[ WARN ] rf_log_listener: capture stopped, the run goes on: {why(exc, db)}."
                         " What was committed before is kept.\n")
        sys.stderr.flush()
        return WRITER_WARNED
    return 0


def why(exc: Exception, db: str) -> str:
    """What stopped the writer, blaming the disk only when SQLite says it is the disk."""
    reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    if isinstance(exc, sqlite3.OperationalError) and any(
            word in str(exc).lower() for word in ("full", "readonly", "read-only", "disk i/o")):
        return f"cannot write the store {shown(db)}: {reason} (is the disk full or read-only?)"
    if isinstance(exc, sqlite3.Error):
        return f"cannot write the store {shown(db)}: {reason}"
    return f"the writer process failed on this run's events: {reason}"


def _outlive_robot(pipe: FramedPipe) -> None:
    """The run is published. Let go of robot's stderr, which this process inherited: CI
    runners that capture robot's output wait until every holder has closed it. Then keep the
    store open until robot has closed its connection and the pipe, so that this process,
    not robot, is the last one out and makes SQLite's closing checkpoint."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    pipe.inp.read()


class ForkedWriter:
    """The forked writer, waited for like a ``subprocess.Popen``."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere
                self.returncode = 0
                return 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"writer process {self.pid}", timeout)
            time.sleep(0.005)
        return code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def reap_later(self) -> None:
        """Collect its exit status whenever it ends (a long-lived process that runs robot
        more than once keeps no zombie), however long its last checkpoint takes."""
        threading.Thread(target=self._reap, name="rf-log-mcp-reaper", daemon=True).start()

    def _reap(self) -> None:
        with contextlib.suppress(ChildProcessError):  # reaped elsewhere
            os.waitpid(self.pid, 0)


def fork_writer() -> tuple[ForkedWriter, FramedPipe] | None:
    """Fork robot's process into the writer; None where that is not safe (not Linux, or
    another thread could hold a lock the child would inherit held), so a fresh interpreter
    is started instead."""
    if sys.platform != "linux" or not _single_threaded():
        return None
    to_writer, to_robot = os.pipe(), os.pipe()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):  # buffered text is written once, by robot
            stream.flush()  # type: ignore[union-attr]
    # Robot's objects go to the permanent generation before the fork: the child's collector
    # never walks (and so never copies, nor finalizes) them; robot gets them back at once.
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        gc.unfreeze()
        for fd in (*to_writer, *to_robot):
            os.close(fd)
        return None
    if pid == 0:
        code = 1
        try:
            code = _forked(to_writer[0], to_robot[1])
        finally:
            os._exit(code)  # never robot's exit handlers, buffers or finalizers
    gc.unfreeze()
    os.close(to_writer[0])
    os.close(to_robot[1])
    return ForkedWriter(pid), FramedPipe(os.fdopen(to_robot[0], "rb"),
                                         os.fdopen(to_writer[1], "wb", buffering=1 << 16))


def _single_threaded() -> bool:
    """No thread but this one, native threads (a library's, a JVM's) included."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _forked(inp: int, out: int) -> int:
    """The forked child: none of robot's files but its stderr (robot's output pipe is not
    held open by this process, nor robot's output.xml), Ctrl-C left to robot (which closes
    the run), then the writer."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    keep = sorted({inp, out})
    os.closerange(3, keep[0])
    os.closerange(keep[0] + 1, keep[1])
    os.closerange(keep[1] + 1, os.sysconf("SC_OPEN_MAX"))
    sys.stdout = sys.stderr = open(2, "w", buffering=1, closefd=False,  # noqa: SIM115
                                   encoding="utf-8", errors="replace")
    return serve(FramedPipe(os.fdopen(inp, "rb"), os.fdopen(out, "wb")))


if __name__ == "__main__":
    sys.exit(main())
