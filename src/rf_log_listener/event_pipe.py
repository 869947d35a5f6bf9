"""Events as small tuples: the live listener's half of the one writer.

Inside robot the listener calls an :class:`EventBatcher` (open, close, message, run_error,
flush, end_run) that only packs tuples. :func:`apply_batch` replays them into the one
:class:`RunWriter`, which computes ids, positions, aggregates and rows: in a writer process
(:class:`EventForwarder` ships batches over a pipe to ``writer_process.py``), or in robot's
own process when that process cannot start (:class:`LocalEvents`). Either way robot pays for
little more than building the tuples.
"""

from __future__ import annotations

import marshal
from datetime import datetime
from typing import Any

from .events import Node, RunEnd
from .row_pipe import FramedPipe
from .writer import RunWriter

OPEN, CLOSE, MESSAGE, RUN_ERROR = 0, 1, 2, 3


class EventBatcher:
    """Collects a live run's events between flushes.

    Tuples: (OPEN, type, raw type, name, owner, args, assign, fields), (CLOSE, status,
    message, start, elapsed, assign, fields), (MESSAGE, level, text, html, time), (RUN_ERROR,
    level, text, html, time). Times are text, or datetime's 10-byte state (see ``_iso``).
    """

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self._events: list[tuple[Any, ...]] = []
        # The listener's hottest paths (keywords, messages) add their tuples through this
        # bound method: one call less per event. The list is therefore never replaced.
        self.append = self._events.append

    def open(self, ntype: str, raw_type: str, name: str, owner: str | None, args: Any,
             assign: Any, fields: dict[str, Any] | None) -> None:
        self._events.append((OPEN, ntype, raw_type, name, owner, args, assign, fields))

    def close(self, status: str, message: str, start: bytes | str | None, elapsed: float | None,
              assign: Any, fields: dict[str, Any] | None) -> None:
        """Close the innermost open node; ``assign`` None keeps what open gave."""
        self._events.append((CLOSE, status, message, start, elapsed, assign, fields))

    def run_error(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._events.append((RUN_ERROR, level, text, html, time))

    @property
    def pending(self) -> bool:
        return bool(self._events)

    def _take(self) -> list[tuple[Any, ...]]:
        events = self._events.copy()
        self._events.clear()
        return events

    def flush(self) -> None:
        raise NotImplementedError

    def heartbeat(self) -> None:
        """Show readers the run is alive while robot is quiet (a long sleep)."""
        raise NotImplementedError

    def end_run(self, end: RunEnd) -> None:
        raise NotImplementedError


class EventForwarder(EventBatcher):
    """Ships batches to the writer process."""

    def __init__(self, pipe: FramedPipe, run_id: int) -> None:
        super().__init__(run_id)
        self.pipe = pipe

    # marshal 4 shares repeated objects (level names, keyword names, statuses): half the bytes
    # and half the time of version 2 for a batch of events.
    def flush(self) -> None:
        if self._events:
            self.pipe.send_bytes(marshal.dumps(("events", self._take()), 4))

    def heartbeat(self) -> None:
        self.pipe.send_bytes(marshal.dumps(("events", self._take()), 4))  # commits, even if empty

    def end_run(self, end: RunEnd) -> None:
        """Send the rest and the end; wait until the writer process has published the run."""
        self.flush()
        self.pipe.send_bytes(marshal.dumps(("end", end.complete, end.generator, end.total,
                                            end.passed, end.failed, end.skipped)))
        self.pipe.recv_bytes()


class LocalEvents(EventBatcher):
    """Applies batches to a RunWriter in this process (no writer process)."""

    def __init__(self, writer: RunWriter, run_id: int) -> None:
        super().__init__(run_id)
        self.writer = writer
        self.stack: list[Node] = []

    def flush(self) -> None:
        apply_batch(self.writer, self.stack, self._take())

    heartbeat = flush  # a commit refreshes the heartbeat

    def end_run(self, end: RunEnd) -> None:
        apply_batch(self.writer, self.stack, self._take(), flush=False)
        self.writer.end_run(end)


def apply_batch(writer: RunWriter, stack: list[Node], events: list[tuple[Any, ...]],
                flush: bool = True) -> None:
    """Replay events into the writer, then commit (a live writer includes its open nodes)."""
    for event in events:
        kind = event[0]
        if kind == MESSAGE:
            writer.message(event[1], event[2], event[3], _iso(event[4]))
        elif kind == OPEN:
            _, ntype, raw, name, owner, args, assign, fields = event
            node = Node(ntype, raw, name, owner, args=args, assign=assign, fields=fields or {})
            stack.append(node)
            writer.open_node(node)
        elif kind == CLOSE:
            node = stack.pop()
            _, node.status, node.message, start, node.elapsed, assign, fields = event
            node.start_time = _iso(start)
            if assign is not None:
                node.assign = assign
            if fields:
                node.fields.update(fields)
            writer.close_node(node)
        else:
            writer.run_error(event[1], event[2], event[3], event[4])
    if flush:
        writer.flush()


def _iso(stamp: bytes | str | None) -> str | None:
    """A time as RF writes it: from datetime's 10-byte state (see the listener), or as is."""
    return datetime(stamp).isoformat() if type(stamp) is bytes else stamp  # type: ignore[call-overload]


def apply_events(pipe: FramedPipe, writer: RunWriter) -> None:
    """Replay batches from ``pipe`` into ``writer`` until the run ends or the pipe closes."""
    stack: list[Node] = []
    while True:
        try:
            message = marshal.loads(pipe.recv_bytes())
        except EOFError:
            return  # robot is gone: what arrived is committed; readers see it interrupted
        if message[0] == "end":
            _, complete, generator, total, passed, failed, skipped = message
            writer.end_run(RunEnd(complete, generator, total, passed, failed, skipped))
            pipe.send_bytes(marshal.dumps(None))
            return
        apply_batch(writer, stack, message[1])
