"""Robot's end of a live run's writer process (capture side, inside robot): starting it (a
fork of robot where that is safe, else a fresh interpreter), telling it the run, seeing when
it is ready, handing it a run robot began writing itself, and letting it finish. The
process's own side is ``writer_process``; when a run goes to one is the listener's choice.

Loaded only when a run uses a writer process: a short run, written in robot's process,
never imports this, ``writer_process`` or ``row_pipe``.
"""

from __future__ import annotations

import marshal
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .event_pipe import EventForwarder, LocalEvents
from .row_pipe import FramedPipe
from .writer_process import READY, WRITER_WARNED, ForkedWriter, fork_writer


class WriterLink:
    """A writer process and the pipe to it (None once dropped: the process ends when it
    reads the pipe's end)."""

    def __init__(self, process: subprocess.Popen[bytes] | ForkedWriter, pipe: FramedPipe) -> None:
        self.process = process
        self.pipe: FramedPipe | None = pipe

    def ready(self) -> bool:
        """The process started for a hand-over has said it is ready (or died)."""
        return self.pipe is not None and bool(select.select([self.pipe.inp], [], [], 0)[0])

    def begin(self, db_path: str, run_id: int, generator: str,
              warn: Callable[[str], None]) -> EventForwarder | None:
        """Tell the process (started when robot loaded the listener) which run to write from
        its start; None when it died before (robot writes the run itself)."""
        if self.pipe is None:
            return None
        try:
            self.pipe.send_bytes(marshal.dumps(("run", db_path, run_id, generator)))
        except OSError as exc:
            warn(f"writing in-process (the writer process ended: {exc})")
            self.drop()
            return None
        return EventForwarder(self.pipe, run_id)

    def take_over(self, local: LocalEvents, db_path: str) -> EventForwarder:
        """Hand the process (it is ready) the run robot has written so far; raises when it
        died or the writer's state cannot go over, and then nothing was handed over."""
        assert self.pipe is not None
        if marshal.loads(self.pipe.recv_bytes()) != "ready":
            raise EOFError
        return local.hand_over(self.pipe, db_path)

    def drop(self) -> None:
        """Close the pipe: the process commits what it has and ends."""
        if self.pipe is not None:
            self.pipe.close()
            self.pipe = None

    def finish(self, run_ended: bool) -> None:
        """At robot's end, after robot's own store connection is closed (SQLite's closing
        checkpoint is then this process's, not robot's)."""
        self.drop()
        if run_ended:
            # It has committed and acknowledged already; robot does not wait for it to tear
            # down its interpreter. A fork is reaped whenever it ends.
            if isinstance(self.process, ForkedWriter):
                self.process.reap_later()
            return
        # The run did not end: let the writer commit what it has before robot exits.
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def warned(self) -> bool:
        """The process ended having said why itself (on robot's console)."""
        try:
            return self.process.wait(2) == WRITER_WARNED
        except subprocess.TimeoutExpired:
            return False


def start(spawn: bool, warn: Callable[[str], None]) -> WriterLink | None:
    """A writer process started when robot loads the listener, to be told the run when it
    begins: a fork of this process where that is safe (``writer_process.fork_writer``), else
    (always with ``spawn``) a fresh interpreter. None: none started (robot writes the run)."""
    if not spawn and (forked := fork_writer()) is not None:
        return WriterLink(*forked)
    return spawn_writer(False, warn)


def spawn_writer(ready: bool, warn: Callable[[str], None]) -> WriterLink | None:
    """Start ``python -m rf_log_listener.writer_process`` (``ready``: it says when it has
    imported what it needs); None when it cannot start (robot writes in-process)."""
    package_root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "rf_log_listener.writer_process", *([READY] if ready else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=1 << 16,
        )
    except OSError as exc:
        warn(f"writing in-process (no writer process: {exc})")
        return None
    assert process.stdin is not None and process.stdout is not None
    return WriterLink(process, FramedPipe(process.stdout, process.stdin))
