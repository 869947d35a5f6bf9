"""output.json (RF 7.2+) -> events, streamed with ijson: memory does not grow with the file.

``json.load`` is not an option twice over: a multi-GB file needs many GB of memory, and
RF's streamed JSON repeats the ``body`` key (``body, teardown, body``) so a dict keeps only
the last list and silently loses data. Here every key is an event, so repeated keys simply
append. Key order is not relied on beyond what every RF writer does (a body item's ``type``
comes before its ``body``). RF numbers a node's setup first and its teardown last, whatever
order the keys come in: rebot writes a test's ``teardown`` before its ``body`` and a
keyword's ``body`` before its ``setup``. Teardowns are held in an :class:`EventBuffer` and
replayed last; a keyword body that a setup follows is held until that setup has been sent.
Which keywords those are is not known when their body starts, so a file not streamed by
robot (which writes in execution order) is scanned for them first (:func:`late_setups`).

The parser is an explicit stack of small contexts, not recursion, so deep nesting cannot
exhaust the Python stack.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import events as ev
from ..errors import INCOMPLETE_RESULT, INVALID_JSON, UNSUPPORTED_FORMAT, ResultError
from ..events import Node, RunEnd, RunInfo
from .event_buffer import EventBuffer
from .suite_files import SuiteFiles

if TYPE_CHECKING:  # a Protocol, for type checkers
    from ..events import EventSink

_BODY_TYPES = frozenset(ev.NODE_TYPES - {ev.SUITE, ev.TEST, ev.SETUP, ev.TEARDOWN})
# Keys copied into Node.fields as they are (only when non-empty).
_FIELD_KEYS = frozenset({
    "doc", "tags", "timeout", "lineno", "source", "metadata", "source_name", "flavor",
    "values", "start", "mode", "fill", "condition", "limit", "on_limit", "on_limit_message",
    "patterns", "pattern_type", "scope", "separator", "template", "error",
})
_BARE_SUITE_KEYS = frozenset({"name", "source", "suites", "tests", "setup", "teardown", "doc"})


class _Skip:
    """Consumes a value nobody needs (statistics per tag/suite); the base of the contexts
    that only pick a few keys of their object."""

    key: Any = None

    def child(self, is_map: bool) -> Any:
        return _SKIP

    def scalar(self, value: Any) -> None:
        pass

    def finish(self) -> None:
        pass


_SKIP = _Skip()


class _Picker(_Skip):
    """A context of the top-level object's parts: ignores what it does not ask for."""

    __slots__ = ("key", "source")

    def __init__(self, source: JsonSource) -> None:
        self.key = None
        self.source = source


class _Value:
    """Builds one small JSON value (args, tags, metadata, assign, ...)."""

    __slots__ = ("key", "container", "deliver")

    def __init__(self, is_map: bool, deliver: Callable[[Any], None]) -> None:
        self.key: Any = None
        self.container: Any = {} if is_map else []
        self.deliver = deliver

    def child(self, is_map: bool) -> _Value:
        return _Value(is_map, self.scalar)

    def scalar(self, value: Any) -> None:
        if isinstance(self.container, dict):
            self.container[self.key] = value
        else:
            self.container.append(value)

    def finish(self) -> None:
        self.deliver(self.container)


class _Items:
    """A ``suites``/``tests``/``body`` list: every map in it is a node or a message.
    ``restore``: the sink to go back to at its end, when its events went to a buffer."""

    __slots__ = ("key", "source", "kind", "restore")

    def __init__(self, source: JsonSource, kind: str, restore: EventSink | None = None) -> None:
        self.key: Any = None
        self.source = source
        self.kind = kind
        self.restore = restore

    def child(self, is_map: bool) -> Any:
        if not is_map:
            raise ResultError(INVALID_JSON, f"A list inside a '{self.kind}' list.")
        return _NodeMap(self.source, self.kind)

    def scalar(self, value: Any) -> None:
        raise ResultError(INVALID_JSON, f"A bare value {value!r} inside a '{self.kind}' list.")

    def finish(self) -> None:
        if self.restore is not None:
            self.source.sink = self.restore


class _NodeMap:
    """One suite/test/keyword/control/message object.

    ``index``: its number among the file's node objects in document order (what
    :func:`late_setups` counts); ``held_body``: its body, held until its setup is sent;
    ``then``: buffers to replay once this node is closed (a setup's: its parent's body)."""

    __slots__ = ("key", "source", "kind", "data", "node", "teardowns", "saved_sink", "index",
                 "held_body", "then")

    def __init__(self, source: JsonSource, kind: str) -> None:
        self.key: Any = None
        self.source = source
        self.kind = kind  # suite | test | setup | teardown | body
        self.data: dict[str, Any] = {}
        self.node: Node | None = None
        self.teardowns: list[EventBuffer] = []
        self.saved_sink: EventSink | None = None
        self.index = source.node_maps
        source.node_maps += 1
        self.held_body: EventBuffer | None = None
        self.then: EventBuffer | None = None

    def scalar(self, value: Any) -> None:
        self.data[self.key] = value

    def _set(self, value: Any) -> None:
        self.data[self.key] = value

    def child(self, is_map: bool) -> Any:
        key = self.key
        if key in ("body", "suites", "tests") and not is_map:
            self._open()
            source = self.source
            if key == "body" and self.teardowns and self.kind == "suite":
                # keywords a listener ran in end_suite, which robot writes after the suite's
                # teardown: they join it (the writer), after its own steps
                self._send_teardowns()
            if key == "body" and self.index in source.late_setups and self.held_body is None:
                self.held_body = EventBuffer()  # its setup comes after it; RF numbers it first
                restore, source.sink = source.sink, self.held_body
                return _Items(source, "body", restore)
            return _Items(source, "body" if key == "body" else key[:-1])
        if key == "setup" and is_map:
            self._open()
            setup = _NodeMap(self.source, "setup")
            setup.then, self.held_body = self.held_body, None
            return setup
        if key == "teardown" and is_map:
            self._open()
            buffer = EventBuffer()
            self.teardowns.append(buffer)
            teardown = _NodeMap(self.source, "teardown")
            teardown.saved_sink = self.source.sink
            self.source.sink = buffer
            return teardown
        return _Value(is_map, self._set)

    def _open(self) -> None:
        if self.node is not None:
            return
        kind = self.kind
        if kind == "body":
            ntype = self.data.get("type", ev.KEYWORD)
            if ntype not in _BODY_TYPES:
                raise ResultError(INVALID_JSON, f"Unknown body item type {ntype!r}.")
            raw = self.data.get("type", "KEYWORD")
        else:
            ntype = {"suite": ev.SUITE, "test": ev.TEST, "setup": ev.SETUP,
                     "teardown": ev.TEARDOWN}[kind]
            raw = kind
        self.node = Node(ntype, raw)
        self.source.open(self.node)

    def _send_teardowns(self) -> None:
        """The teardowns held back (RF numbers a node's teardown last), now sent."""
        for buffer in self.teardowns:
            buffer.replay(self.source.sink)
        self.teardowns.clear()

    def finish(self) -> None:
        data = self.data
        source = self.source
        if self.node is None and self.kind == "body" and data.get("type") == "MESSAGE":
            source.sink.message(
                data.get("level", "INFO"), data.get("message", ""), bool(data.get("html")),
                data.get("timestamp"),
            )
            return
        self._open()
        node = self.node
        assert node is not None
        if self.teardowns:
            self._send_teardowns()
        if self.held_body is not None:  # no setup came after all
            self.held_body.replay(source.sink)
        _apply(node, data)
        source.sink.close_node(node)
        if self.saved_sink is not None:
            source.sink = self.saved_sink
        if self.then is not None:
            self.then.replay(source.sink)


def _apply(node: Node, data: dict[str, Any]) -> None:
    node.name = data.get("name") or ""
    node.owner = data.get("owner") or None
    node.status = data.get("status", "FAIL")
    node.start_time = data.get("start_time")
    elapsed = data.get("elapsed_time")
    node.elapsed = float(elapsed) if elapsed is not None else None
    node.message = data.get("message") or ""
    if data.get("args"):
        node.args = [str(a) for a in data["args"]]
    if data.get("assign"):
        node.assign = data["assign"]
    if node.type == ev.VAR and data.get("value") is not None:
        value = data["value"]
        node.fields["value"] = value if isinstance(value, list) else [value]
    fields = node.fields
    for key in _FIELD_KEYS.intersection(data):
        value = data[key]
        if value or (value == 0 and key == "lineno"):
            fields[key] = value


class _Errors(_Picker):
    """The run-level ``errors`` list."""

    __slots__ = ()

    def child(self, is_map: bool) -> _Value:
        return _Value(is_map, self._deliver)

    def _deliver(self, item: Any) -> None:
        if isinstance(item, dict):
            self.source.sink.run_error(
                item.get("level", "INFO"), item.get("message", ""), bool(item.get("html")),
                item.get("timestamp"),
            )


class _Top:
    """The top-level object: generator, generated, rpa, suite, statistics, errors."""

    __slots__ = ("key", "source")

    def __init__(self, source: JsonSource) -> None:
        self.key: Any = None
        self.source = source

    def _check_key(self) -> None:
        if self.key in _BARE_SUITE_KEYS:
            raise ResultError(
                UNSUPPORTED_FORMAT,
                "This JSON is a bare suite (as RF 7.0/7.1 rebot wrote it): it has no ids,"
                " statistics or errors. Only RF 7.2+ output.json is supported.",
                "Import the output.xml of that run, or re-run with RF 7.2 or newer.",
            )

    def scalar(self, value: Any) -> None:
        self._check_key()
        info = self.source.run_info
        if self.key == "generator":
            info.generator = value
        elif self.key == "generated":
            info.generated = value
        elif self.key == "rpa":
            info.rpa = bool(value)

    def child(self, is_map: bool) -> Any:
        self._check_key()
        if self.key == "suite" and is_map:
            if self.source.root_seen:
                raise ResultError(INVALID_JSON, "More than one 'suite' at the top level.")
            self.source.root_seen = True
            return _NodeMap(self.source, "suite")
        if self.key == "errors" and not is_map:
            return _Errors(self.source)
        return _SKIP

    def finish(self) -> None:
        self.source.top_closed = True


class JsonSource:
    """Feeds one output.json to an :class:`EventSink`."""

    def __init__(self, sink: EventSink, run_info: RunInfo) -> None:
        self.sink: EventSink = sink
        self.writer = sink
        self.run_info = run_info
        self.started = False
        self.root_seen = False
        self.top_closed = False
        self.node_maps = 0  # node objects met so far (see _NodeMap.index)
        self.late_setups: frozenset[int] = frozenset()
        self.suite_files = SuiteFiles(sink, run_info.output_dir)

    def open(self, node: Node) -> None:
        if not self.started:
            if not self.run_info.generator:
                raise ResultError(
                    UNSUPPORTED_FORMAT,
                    "This JSON has no 'generator' before its suite; it is not an RF 7.2+"
                    " output.json.",
                )
            self.writer.start_run(self.run_info)
            self.started = True
        self.sink.open_node(node)

    def feed_file(self, fh: BinaryIO, progress: Callable[[int], None] | None = None,
                  allow_incomplete: bool = False) -> bool:
        import ijson  # here, not at the top: a listener inside robot never needs it

        if not _streamed_by_robot(fh):
            with contextlib.suppress(ijson.JSONError):  # the main pass says what is wrong, where
                self.late_setups = late_setups(_CountingReader(fh, None))
            fh.seek(0)
        # robot writes a suite's source after its tests: the files are read before the run's steps
        self.suite_files.read_all(fh)
        reader = _CountingReader(fh, progress)
        try:
            self._run(ijson.basic_parse(reader, use_float=True))
        except ijson.IncompleteJSONError as exc:
            # The parser reports an error in the data as it reads it; only an error found when
            # the data has run out (an unfinished value, string, escape or UTF-8 character)
            # means the file was cut.
            if not reader.at_eof or self.top_closed:
                raise ResultError(INVALID_JSON, f"Invalid JSON: {_first_line(exc)}") from exc
            return self._cut(_first_line(exc), allow_incomplete)
        except ijson.JSONError as exc:
            raise ResultError(INVALID_JSON, f"Invalid JSON: {_first_line(exc)}") from exc
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            # Valid JSON, but a value RF never writes ("elapsed_time": "x", a list for a name).
            raise ResultError(
                INVALID_JSON, f"Unexpected content within the first {reader.done} bytes:"
                f" {type(exc).__name__}: {exc}",
                "The file is damaged or was not written by Robot Framework.") from exc
        if not self.top_closed:
            return self._cut("no top-level object", allow_incomplete)
        if not self.root_seen:
            raise ResultError(UNSUPPORTED_FORMAT, "This JSON has no 'suite': not an RF output.json.")
        self.writer.end_run(RunEnd(complete=True, generator=self.run_info.generator))
        return True

    def _cut(self, reason: str, allow_incomplete: bool) -> bool:
        if not self.started:
            raise ResultError(
                INCOMPLETE_RESULT, f"The file ends before any suite started ({reason}).",
                "The run may still be starting or was killed at once; nothing to import.",
            )
        if not allow_incomplete:
            raise ResultError(
                INCOMPLETE_RESULT,
                f"The JSON is cut ({reason}): the run was interrupted or the file is still"
                " being written.",
                "Wait for robot to finish, or import the readable part with allow_incomplete"
                " (the run is then marked 'interrupted').",
            )
        self.sink = self.writer  # a teardown being buffered when the file ended is lost
        self.writer.end_run(RunEnd(complete=False, generator=self.run_info.generator))
        return False

    def _run(self, events: Iterable[tuple[str, Any]]) -> None:
        stack: list[Any] = []
        for event, value in events:
            if event == "map_key":
                stack[-1].key = value
            elif event == "start_map" or event == "start_array":
                is_map = event == "start_map"
                if stack:
                    stack.append(stack[-1].child(is_map))
                elif is_map:
                    stack.append(_Top(self))
                else:
                    raise ResultError(UNSUPPORTED_FORMAT, "The JSON is a list, not an RF output.json.")
            elif event == "end_map" or event == "end_array":
                stack.pop().finish()
            elif stack:
                stack[-1].scalar(value)
            else:
                raise ResultError(UNSUPPORTED_FORMAT, "The JSON is a bare value, not an RF output.json.")


def _streamed_by_robot(fh: BinaryIO) -> bool:
    """Whether robot wrote the file as it ran (its keys in execution order): the generator,
    which every RF writer puts first."""
    head = fh.read(4096)
    fh.seek(0)
    return re.search(rb'^\s*\{\s*"generator"\s*:\s*"Robot ', head) is not None


def late_setups(fh: BinaryIO | _CountingReader) -> frozenset[int]:
    """The :attr:`_NodeMap.index` of every node object whose ``setup`` comes after its
    ``body`` (rebot's keywords), from one pass of the C parser that builds nothing else."""
    import ijson

    late: set[int] = set()
    count = 0
    # per open container: [kind, key, node index, body seen]; kinds: top, node, items, other
    stack: list[list[Any]] = []
    for event, value in ijson.basic_parse(fh, use_float=True):
        if event == "map_key":
            stack[-1][1] = value
        elif event == "start_map":
            parent = stack[-1] if stack else None
            kind = "top" if parent is None else "other"
            if parent is not None and (
                    parent[0] == "items"
                    or (parent[0] == "top" and parent[1] == "suite")
                    or (parent[0] == "node" and parent[1] in ("setup", "teardown"))):
                kind = "node"
                if parent[0] == "node" and parent[1] == "setup" and parent[3]:
                    late.add(parent[2])
            stack.append([kind, None, count, False])
            count += kind == "node"
        elif event == "start_array":
            if not stack:
                break  # not an RF output.json; the main pass says so
            parent = stack[-1]
            listed = parent[0] == "node" and parent[1] in ("body", "suites", "tests")
            if listed and parent[1] == "body":
                parent[3] = True
            stack.append(["items" if listed else "other", None, 0, False])
        elif event in ("end_map", "end_array"):
            stack.pop()
    return frozenset(late)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# A JSON escape of a UTF-16 surrogate (one after an odd run of backslashes: ``\\udc00`` is
# text). A high one and the low one after it spell a character; a lone one (RF writes a
# Python string's lone surrogates so: a byte that was not UTF-8, kept by ``surrogateescape``)
# stops ijson's C parser with a UnicodeDecodeError, so it is read as U+FFFD, as the store
# keeps a lone surrogate (schema.stored_text).
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_BACKSLASH = 0x5C
_ESCAPE_SPAN = 12  # a pair's two escapes


def _run_start(data: bytes, at: int) -> int:
    """Where the run of backslashes that holds ``data[at]`` begins."""
    while at > 0 and data[at - 1] == _BACKSLASH:
        at -= 1
    return at


def _escape_at(data: bytes, at: int) -> bool:
    """Whether the backslash at ``at`` begins an escape (``data`` begins where a run of
    backslashes begins, or with none)."""
    return (at - _run_start(data, at)) % 2 == 0


def _is_high(escape: bytes) -> bool:
    return escape[3] in b"89abAB"


def _lone_surrogates_replaced(data: bytes) -> bytes:
    """``data`` with each lone surrogate's escape as U+FFFD's (itself when it has none)."""
    out: list[bytes] = []
    done = pos = 0
    # re finds the backslashes with memchr: 0.6 ms a MB of RF's JSON (its escaped newlines
    # and quotes), where ``b"\\ud" in data`` takes twice as long
    while (found := _SURROGATE.search(data, pos)) is not None:
        at, pos = found.start(), found.end()
        if not _escape_at(data, at):
            continue
        if _is_high(found.group()):
            low = _SURROGATE.match(data, pos)
            if low is not None and not _is_high(low.group()):
                pos = low.end()
                continue
        out += (data[done:at], b"\\ufffd")
        done = pos
    return b"".join(out) + data[done:] if out else data


def _complete_part(data: bytes) -> int:
    """How much of ``data`` (which begins where a run of backslashes begins, or with none)
    reads the same whatever follows it: up to the last bytes' first run of backslashes (an
    escape the next read may finish), and not after a high surrogate's escape whose low one
    may follow."""
    at = data.find(b"\\", max(0, len(data) - _ESCAPE_SPAN))
    end = len(data) if at < 0 else _run_start(data, at)
    high = _SURROGATE.match(data, end - 6, end) if end >= 6 else None
    if high is not None and _is_high(high.group()) and _escape_at(data, end - 6):
        end = _run_start(data, end - 6)
    return end


class _CountingReader:
    """Reports progress and tells whether a parse error happened at the end of the data;
    hands the parser lone surrogates' escapes as U+FFFD's (:data:`_SURROGATE`): the
    bytes where an escape may be cut between two reads wait for the next one.

    A read without a surrogate's escape costs one search of its bytes."""

    def __init__(self, fh: BinaryIO, progress: Callable[[int], None] | None) -> None:
        self.fh = fh
        self.progress = progress
        self.done = 0
        self.at_eof = False
        self.held = b""

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson's first call: which type the file reads (not its end)
            return b""
        data = self.held
        while True:
            chunk = self._read(size)
            data += chunk
            end = _complete_part(data) if chunk else len(data)
            if end or not chunk:
                break
        self.held = data[end:]
        data = data[:end]
        return _lone_surrogates_replaced(data)

    def _read(self, size: int) -> bytes:
        chunk = self.fh.read(size)
        if not chunk:
            self.at_eof = True
        self.done += len(chunk)
        if self.progress:
            self.progress(self.done)
        return chunk
