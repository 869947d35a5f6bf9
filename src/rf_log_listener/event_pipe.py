"""Events over a pipe: the live listener's half of the one writer.

Inside robot, :class:`EventForwarder` stands where a :class:`RunWriter` would: it takes the
same calls (open_node, close_node, message, run_error, flush, end_run) and only packs them
into small tuples, shipped in batches. The writer process (``writer_process.py``) replays
them into a real :class:`RunWriter` with :func:`apply_events`. So ids, positions, aggregates
and rows are computed by the one writer, on another core, and robot pays for little more
than building the tuples.
"""

from __future__ import annotations

import marshal
from typing import Any

from .events import Node, RunEnd
from .row_pipe import FramedPipe
from .writer import RunWriter

OPEN, CLOSE, MESSAGE, RUN_ERROR = 0, 1, 2, 3


class EventForwarder:
    """Robot-side stand-in for a RunWriter: batches events for the writer process."""

    def __init__(self, pipe: FramedPipe, run_id: int) -> None:
        self.pipe = pipe
        self.run_id = run_id
        self._events: list[tuple[Any, ...]] = []

    def open_node(self, node: Node) -> None:
        self._events.append((OPEN, node.type, node.raw_type, node.name, node.owner, node.args,
                             node.assign, node.fields or None))

    def close_node(self, node: Node) -> None:
        self._events.append((CLOSE, node.status, node.message, node.start_time, node.elapsed,
                             node.args, node.assign, node.fields or None))

    def message(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._events.append((MESSAGE, level, text, html, time))

    def run_error(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._events.append((RUN_ERROR, level, text, html, time))

    @property
    def pending(self) -> bool:
        return bool(self._events)

    def flush(self) -> None:
        """Send what is batched; the writer process commits it (open nodes included)."""
        if self._events:
            events, self._events = self._events, []
            self.pipe.send_bytes(marshal.dumps(("events", events), 2))

    def end_run(self, end: RunEnd) -> None:
        """Send the rest and the end; wait until the writer process has published the run."""
        self.flush()
        self.pipe.send_bytes(marshal.dumps(("end", end.complete, end.generator, end.total,
                                            end.passed, end.failed, end.skipped)))
        self.pipe.recv_bytes()


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
        for event in message[1]:
            kind = event[0]
            if kind == MESSAGE:
                writer.message(*event[1:])
            elif kind == OPEN:
                _, ntype, raw, name, owner, args, assign, fields = event
                node = Node(ntype, raw, name, owner, args=args, assign=assign, fields=fields or {})
                stack.append(node)
                writer.open_node(node)
            elif kind == CLOSE:
                node = stack.pop()
                (_, node.status, node.message, node.start_time, node.elapsed, node.args,
                 node.assign, fields) = event
                node.fields = fields or {}
                writer.close_node(node)
            else:
                writer.run_error(*event[1:])
        writer.flush()
