"""``python -m rf_log_listener.writer_process``: a live run's writer.

It is started early, when robot loads the listener, so that its own start
(an interpreter and these imports, about 40 ms) overlaps robot parsing the suite instead of
making robot wait for it at the end of a short run; the run (store, id, generator) then
arrives as the first frame.

The listener packs robot's events and sends them here (``event_pipe.py``); this process
runs the one :class:`RunWriter` and does the SQLite work (rows, full-text index, commits) on
another core, so robot waits for neither. It ends when the run ends or the pipe closes;
if robot died, what arrived is committed and readers see the run as interrupted (robot's
pid is gone).
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import sys

from .event_pipe import apply_events
from .row_pipe import FramedPipe
from .rows import SqliteRowSink
from .store import open_store
from .writer import RunWriter

WRITER_WARNED = 3  # exit code: the writer printed why it stopped; the listener adds nothing


def main() -> int:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # the real stdout carries frames
    pipe = FramedPipe(sys.stdin.buffer, out)
    try:  # started while robot parses the suite: the run comes as the first frame
        _, db, run_id, generator = marshal.loads(pipe.recv_bytes())
    except EOFError:
        return 0  # robot ended before a run began (a parse error, --help)
    try:
        conn = open_store(db)
        try:
            sink = SqliteRowSink(conn, replace_nodes=True)
            sink.attach(run_id)
            writer = RunWriter(sink, live=True, batch_rows=10_000)
            writer.attach_run(run_id, generator)
            if apply_events(pipe, writer):
                _outlive_robot()
        finally:
            conn.close()
    except Exception as exc:  # a full disk, a store gone read-only: one clear line on robot's console
        sys.stderr.write(f"[ WARN ] rf_log_listener: capture stopped, the run goes on: {_why(exc, db)}."
                         " What was committed before is kept.\n")
        sys.stderr.flush()
        return WRITER_WARNED
    return 0


def _why(exc: Exception, db: str) -> str:
    """What stopped the writer, blaming the disk only when SQLite says it is the disk."""
    reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    if isinstance(exc, sqlite3.OperationalError) and any(
            word in str(exc).lower() for word in ("full", "readonly", "read-only", "disk i/o")):
        return f"cannot write the store {db}: {reason} (is the disk full or read-only?)"
    if isinstance(exc, sqlite3.Error):
        return f"cannot write the store {db}: {reason}"
    return f"the writer process failed on this run's events: {reason}"


def _outlive_robot() -> None:
    """The run is published. Let go of robot's stderr, which this process inherited: CI
    runners that capture robot's output wait until every holder has closed it. Then keep the
    store open until robot has closed its connection and the pipe, so that this process,
    not robot, is the last one out and makes SQLite's closing checkpoint."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.stdin.buffer.read()


if __name__ == "__main__":
    sys.exit(main())
