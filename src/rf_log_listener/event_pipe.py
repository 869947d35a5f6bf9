"""Events as flat runs of plain values: the live listener's half of the one writer.

Inside robot the listener hands an :class:`EventBatcher` its events (nodes and messages
through ``extend``, run errors, then flush, end_run), which only collects them.
:func:`apply_batch` replays them into the one :class:`RunWriter`, which computes ids,
positions, aggregates and rows: in a writer process (:class:`EventForwarder` ships batches
over a pipe to ``writer_process.py``), or in robot's own process (:class:`LocalEvents`)
until a writer process takes the run over, or when none can run beside robot.
"""

from __future__ import annotations

import io
import marshal
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .events import SUITE, TEST, Node, RunEnd
from .writer import RunWriter

if TYPE_CHECKING:  # annotations only: the listener in robot loads it when it hands over
    from .row_pipe import FramedPipe

OPEN, CLOSE, MESSAGE, RUN_ERROR, IDENTITY, SECRET, DEFINITION, PARAMETERS = 0, 1, 2, 3, 4, 5, 6, 7
_TEXTS_OWNERS = (SUITE, TEST)  # sent with their texts at OPEN and again at CLOSE


class EventBatcher:
    """Collects a live run's events between flushes, in one flat list.

    Each event is its kind followed by its fields: OPEN type, raw type, name, owner, args,
    assign, fields; CLOSE status, message, start, elapsed, assign, fields; MESSAGE level,
    text, html, time; RUN_ERROR level, text, html, time; IDENTITY name, owner, args, assign
    (the innermost open node's, as they stand at its end, when they changed after its OPEN
    was sent); SECRET value; DEFINITION library, keyword name key, source, lineno;
    PARAMETERS library or resource, keyword name, positions of its secret parameters, and
    for embedded arguments their pattern and flags. Times
    are text, or datetime's 10-byte state (see ``_iso``).

    Flat, because a tuple per event would be a container that lives until the next flush:
    tens of thousands of them per second make Python's garbage collector run more often,
    and its full collections walk robot's whole, growing result model.
    """

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self._events: list[Any] = []
        # Nodes and messages are added through this bound method (result_events.OpenNodes
        # builds them; a CLOSE's assign None keeps what its OPEN gave). The list is
        # therefore never replaced.
        self.extend = self._events.extend

    def run_error(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._events.extend((RUN_ERROR, level, text, html, time))

    def secret(self, value: str) -> None:
        """A value the run knows to be secret (a secret-named variable's, see registry)."""
        self._events.extend((SECRET, value))

    def definition(self, library: str, name_key: str, source: str | None,
                   lineno: int | None) -> None:
        """Where a library keyword is defined (RF's implementation; files do not say)."""
        self._events.extend((DEFINITION, library, name_key, source, lineno))

    def secret_parameters(self, owner: str, name: str, positions: tuple[int, ...],
                          embedded: tuple[str, int] | None) -> None:
        """Where a keyword robot imported takes a secret by position (its parameter's name)."""
        self._events.extend((PARAMETERS, owner, name, positions, embedded))

    def __len__(self) -> int:
        """How many items (not events) wait for the next flush."""
        return len(self._events)

    def _take(self) -> list[Any]:
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
            self.heartbeat()

    def heartbeat(self) -> None:
        """Send what waits (the writer commits it, even an empty batch)."""
        events = self._take()
        try:
            packed = marshal.dumps(("events", events), 4)
        except ValueError:  # a value marshal cannot carry: its str(), as RF's output files have it
            packed = marshal.dumps(("events", _marshallable(events)), 4)
        self.pipe.send_bytes(packed)

    def end_run(self, end: RunEnd) -> None:
        """Send the rest and the end; wait until the writer process has published the run."""
        self.flush()
        self.pipe.send_bytes(marshal.dumps(("end", end.complete, end.generator)))
        self.pipe.recv_bytes()


def _marshallable(value: Any) -> Any:
    """``value`` with every leaf marshal cannot carry replaced by its str()."""
    kind = type(value)
    if kind is list or kind is tuple:
        return kind(_marshallable(v) for v in value)
    if kind is dict:
        return {str(k): _marshallable(v) for k, v in value.items()}
    if value is None or kind in (str, bytes, int, float, bool):
        return value
    return str(value)


class LocalEvents(EventBatcher):
    """Applies batches to a RunWriter in this process (no writer process, or none yet)."""

    def __init__(self, writer: RunWriter, run_id: int) -> None:
        super().__init__(run_id)
        self.writer = writer
        self.stack: list[Node] = []

    def flush(self) -> None:
        apply_batch(self.writer, self.stack, self._take())

    def hand_over(self, pipe: FramedPipe, db: str) -> EventForwarder:
        """Give the run to the writer process at the other end of ``pipe``: the writer's
        whole state (its open nodes, counters, secrets: everything but its store
        connection) goes over as it stands after the last flush, then the events that wait
        (robot holds a busy run's events while that process starts, rather than write
        them itself), and the writer process goes on from there (``writer_process.serve``).
        This object is spent afterwards; if the state cannot be sent, nothing is taken."""
        writer = self.writer
        sink, writer.sink = writer.sink, None  # a connection stays with its process
        state = io.BytesIO()
        try:
            _state_pickler(state).dump((writer, self.stack))
        finally:
            writer.sink = sink
        pipe.send_bytes(marshal.dumps(("resume", db, self.run_id, state.getvalue())))
        forwarder = EventForwarder(pipe, self.run_id)
        forwarder.extend(self._take())
        return forwarder

    heartbeat = flush  # a commit refreshes the heartbeat

    def end_run(self, end: RunEnd) -> None:
        apply_batch(self.writer, self.stack, self._take(), flush=False)
        self.writer.end_run(end)


# What the writer's state may be made of: the writer process imports nothing else to read it
# (a value of a test library's own type would need that library on its path).
_STATE_MODULES = frozenset({"rf_log_listener", "builtins", "re", "datetime", "collections"})


def _state_pickler(file: io.BytesIO) -> Any:
    """A pickler that refuses an object of any other module's type (PicklingError: robot
    keeps writing). pickle is imported here: most runs are never handed over."""
    import pickle

    class StatePickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            module = obj.__module__ if isinstance(obj, type) else type(obj).__module__
            if module.partition(".")[0] not in _STATE_MODULES:
                raise pickle.PicklingError(f"the writer's state holds a {module} object")
            return NotImplemented

    return StatePickler(file, protocol=pickle.HIGHEST_PROTOCOL)


def apply_batch(writer: RunWriter, stack: list[Node], events: list[Any],
                flush: bool = True) -> None:
    """Replay events into the writer, then commit (a live writer includes its open nodes)."""
    at, end = 0, len(events)
    while at < end:
        kind = events[at]
        if kind == MESSAGE:
            writer.message(events[at + 1], events[at + 2], events[at + 3], _iso(events[at + 4]))
            at += 5
        elif kind == OPEN:
            ntype, raw, name, owner, args, assign, fields = events[at + 1:at + 8]
            node = Node(ntype, raw, name, owner, args=args, assign=assign, fields=fields or {})
            stack.append(node)
            writer.open_node(node)
            at += 8
        elif kind == CLOSE:
            node = stack.pop()
            node.status, node.message, start, node.elapsed, assign, fields = events[at + 1:at + 7]
            node.start_time = _iso(start)
            if assign is not None:
                node.assign = assign
            if fields:
                if node.type in _TEXTS_OWNERS:  # texts as they end, in their order at the end,
                    # after what only the start said (lineno, source), as an output file has
                    # them (answers print fields in stored order); None: emptied while it ran
                    kept = {k: v for k, v in node.fields.items() if k not in fields}
                    kept.update((k, v) for k, v in fields.items() if v is not None)
                    node.fields = kept
                else:
                    node.fields.update(fields)
            writer.close_node(node)
            at += 7
        elif kind == RUN_ERROR:
            writer.run_error(*events[at + 1:at + 5])
            at += 5
        elif kind == IDENTITY:
            node = stack[-1]
            node.name, node.owner, node.args, node.assign = events[at + 1:at + 5]
            at += 5
        elif kind == SECRET:
            writer.register_secret(events[at + 1])
            at += 2
        elif kind == DEFINITION:
            writer.register_definition(tuple(events[at + 1:at + 5]))
            at += 5
        elif kind == PARAMETERS:
            writer.secrets.secret_parameters(*events[at + 1:at + 5])
            at += 5
        else:
            raise ValueError(f"unknown event kind {kind!r} at item {at}")
    if flush:
        writer.flush()


def _iso(stamp: bytes | str | None) -> str | None:
    """A time as RF writes it: from datetime's 10-byte state (see the listener), or as is."""
    return datetime(stamp).isoformat() if type(stamp) is bytes else stamp  # type: ignore[call-overload]


def apply_events(pipe: FramedPipe, writer: RunWriter, stack: list[Node] | None = None) -> bool:
    """Replay batches from ``pipe`` into ``writer`` (whose open nodes are ``stack``, when
    it was handed over mid-run) until the run ends (True: robot has its acknowledgement)
    or the pipe closes."""
    stack = [] if stack is None else stack
    while True:
        try:
            message = marshal.loads(pipe.recv_bytes())
        except EOFError:
            return False  # robot is gone: what arrived is committed; readers see it interrupted
        if message[0] == "end":
            _, complete, generator = message
            writer.end_run(RunEnd(complete, generator))
            pipe.send_bytes(marshal.dumps(None))
            return True
        apply_batch(writer, stack, message[1])
