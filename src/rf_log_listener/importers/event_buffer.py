"""Holds events to replay later, spilling to a temporary file past a bound.

JSON written by rebot puts a node's ``teardown`` *before* its ``body``; RF numbers the
teardown last, so the teardown's events wait here until the body has been streamed.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from ..events import Node

if TYPE_CHECKING:  # a Protocol, for type checkers
    from ..events import EventSink

SPILL_AFTER = 20_000


class EventBuffer:
    """An event sink that records; :meth:`replay` sends everything on, in order."""

    def __init__(self, spill_after: int = SPILL_AFTER) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.spill_after = spill_after
        self.spill: IO[bytes] | None = None
        self._opened: list[Node] = []

    def _record(self, event: tuple[Any, ...]) -> None:
        self.events.append(event)
        if len(self.events) >= self.spill_after:
            if self.spill is None:
                self.spill = tempfile.TemporaryFile()  # noqa: SIM115 - closed in replay()
            pickle.dump(self.events, self.spill, protocol=pickle.HIGHEST_PROTOCOL)
            self.events = []

    def open_node(self, node: Node) -> None:
        self._record(("open", node))

    def close_node(self, node: Node) -> None:
        self._record(("close", node))

    def message(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._record(("message", level, text, html, time))

    def run_error(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._record(("run_error", level, text, html, time))

    def replay(self, sink: EventSink) -> None:
        for chunk in self._chunks():
            # Pickling copies nodes: within one chunk open/close share an object, across
            # chunks they do not, so a close is matched to the node the sink saw opened.
            for event in chunk:
                kind = event[0]
                if kind == "open":
                    self._opened.append(event[1])
                    sink.open_node(event[1])
                elif kind == "close":
                    opened = self._opened.pop()
                    if opened is not event[1]:
                        _copy_node(event[1], opened)
                    sink.close_node(opened)
                elif kind == "message":
                    sink.message(*event[1:])
                else:
                    sink.run_error(*event[1:])
        self.events = []
        if self.spill is not None:
            self.spill.close()
            self.spill = None

    def _chunks(self) -> Iterator[list[tuple[Any, ...]]]:
        if self.spill is not None:
            self.spill.seek(0)
            while True:
                try:
                    yield pickle.load(self.spill)
                except EOFError:
                    break
        yield self.events


def _copy_node(source: Node, target: Node) -> None:
    for name in Node.__slots__:  # type: ignore[attr-defined]
        setattr(target, name, getattr(source, name))
