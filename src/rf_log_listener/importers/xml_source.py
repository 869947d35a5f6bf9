"""output.xml (RF 4.0 - 7.x, schema versions 2-5) -> events, streamed with expat.

Modelled on RF's ``robot/result/xmlelementhandlers.py``: one small handler per element,
a table dispatches. Memory is O(depth): elements are never kept, only the open nodes.
RF 7 writes a keyword's args/doc/tags *after* its body, so a node's late fields are
collected on the open :class:`Node` and written when it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO
from xml.parsers import expat

from .. import events as ev
from ..errors import INCOMPLETE_RESULT, INVALID_XML, UNSUPPORTED_FORMAT, ResultError
from ..events import Node, RunEnd, RunInfo
from .suite_files import SuiteFiles

if TYPE_CHECKING:  # a Protocol, for type checkers
    from ..events import EventSink

CHUNK = 1 << 20

_BRANCH_TYPES = {
    "IF": ev.IF, "ELSE IF": ev.ELSE_IF, "ELSE": ev.ELSE,
    "TRY": ev.TRY, "EXCEPT": ev.EXCEPT, "FINALLY": ev.FINALLY,
}
_SIMPLE_NODES = {
    "iter": ev.ITERATION, "if": ev.IF_ROOT, "try": ev.TRY_ROOT, "return": ev.RETURN,
    "break": ev.BREAK, "continue": ev.CONTINUE, "error": ev.ERROR,
}
_DOC_OWNERS = frozenset({ev.SUITE, ev.TEST, ev.KEYWORD, ev.SETUP, ev.TEARDOWN})


class _Cut(Exception):
    """The document ended before its root element closed."""


class XmlSource:
    """Feeds one output.xml to an :class:`EventSink`."""

    def __init__(self, sink: EventSink, run_info: RunInfo) -> None:
        self.sink = sink
        self.run_info = run_info
        self.nodes: list[Node] = []  # open nodes, innermost last
        self.text: list[str] = []
        self.in_errors = False
        self.started = False
        self.legacy_times = False
        self.root_closed = False
        self.suite_files = SuiteFiles(sink, run_info.output_dir)
        self._start: dict[str, Callable[[dict[str, str]], None]] = {
            "robot": self._start_robot, "suite": self._start_suite, "test": self._start_test,
            "kw": self._start_kw, "for": self._start_for, "while": self._start_while,
            "branch": self._start_branch, "group": self._start_group,
            "variable": self._start_variable, "msg": self._start_msg,
            "errors": self._start_errors, "statistics": self._start_statistics,
            "status": self._keep_attrs, "var": self._keep_attrs,
            "timeout": self._keep_attrs, "meta": self._keep_attrs,
        }
        for tag, ntype in _SIMPLE_NODES.items():
            self._start[tag] = self._simple_starter(tag, ntype)
        self._end: dict[str, Callable[[str], None]] = {
            "msg": self._end_msg, "status": self._end_status,
            "arg": self._end_arg, "var": self._end_var, "value": self._end_value,
            "doc": self._end_doc, "tag": self._end_tag, "timeout": self._end_timeout,
            "meta": self._end_meta, "pattern": self._end_pattern,
        }
        self._end_plain: dict[str, Callable[[], None]] = {
            **dict.fromkeys(("suite", "test", "kw", "for", "while", "branch", "group", "variable",
                             *_SIMPLE_NODES), self._end_node),
            "robot": self._end_robot, "errors": self._end_errors,
        }
        self._node_handlers = self._dispatchers(self._start, self._end, self._end_plain)
        # <statistics> is skipped (the writer counts the tests; it has <suite> elements of its
        # own, which are not suites).
        self._stats_handlers = self._dispatchers({}, {}, {"statistics": self._end_statistics})
        self.leaf: dict[str, str] = {}  # attributes of the innermost leaf element (no children)
        self.parser: expat.XMLParserType | None = None

    def _dispatchers(
        self, starts: dict[str, Callable[[dict[str, str]], None]],
        text_ends: dict[str, Callable[[str], None]], plain_ends: dict[str, Callable[[], None]],
    ) -> tuple[Callable[[str, dict[str, str]], None], Callable[[str], None]]:
        """The expat callbacks for one handler table (closures: this is the hottest path)."""
        text = self.text
        clear = text.clear
        join = "".join
        get_start, get_text_end, get_plain_end = starts.get, text_ends.get, plain_ends.get

        def on_start(tag: str, attrs: dict[str, str]) -> None:
            clear()
            handler = get_start(tag)
            if handler is not None:
                handler(attrs)

        def on_end(tag: str) -> None:
            handler = get_text_end(tag)
            if handler is not None:
                handler(join(text))
            else:
                plain = get_plain_end(tag)
                if plain is not None:
                    plain()
            clear()

        return on_start, on_end

    # -- driving expat -------------------------------------------------------------------

    def feed_file(self, fh: BinaryIO, progress: Callable[[int], None] | None = None,
                  allow_incomplete: bool = False) -> bool:
        """Parse the whole stream; returns False if it was cut and imported as a prefix."""
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = CHUNK
        parser.ordered_attributes = False
        parser.StartElementHandler = self._on_first_start
        self.parser = parser
        parser.EndElementHandler = self._node_handlers[1]
        parser.CharacterDataHandler = self.text.append
        parser.StartDoctypeDeclHandler = _refuse_doctype
        parser.EntityDeclHandler = _refuse_entity
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        done = 0
        try:
            while True:
                chunk = fh.read(CHUNK)
                if not chunk:
                    break
                try:
                    parser.Parse(chunk, False)
                except expat.ExpatError as exc:
                    raise ResultError(
                        INVALID_XML, f"Not well-formed XML at line {exc.lineno}, column"
                        f" {exc.offset}: {expat.ErrorString(exc.code)}",
                        "The file is damaged; re-run robot or rebot to produce it again.",
                    ) from exc
                except (ValueError, TypeError, KeyError, IndexError) as exc:
                    # Well-formed, but a value RF never writes (elapsed="x", a missing name).
                    raise ResultError(
                        INVALID_XML, f"Unexpected content at line {parser.CurrentLineNumber},"
                        f" column {parser.CurrentColumnNumber}: {type(exc).__name__}: {exc}",
                        "The file is damaged or was not written by Robot Framework.",
                    ) from exc
                done += len(chunk)
                if progress:
                    progress(done)
            try:
                parser.Parse(b"", True)
            except expat.ExpatError as exc:
                if self.root_closed:
                    raise ResultError(
                        INVALID_XML, f"Content after the </robot> root element: {exc}",
                    ) from exc
                raise _Cut(str(exc)) from exc
        except _Cut as cut:
            if not self.started:
                raise ResultError(
                    INCOMPLETE_RESULT, f"The file ends before any suite started ({cut}).",
                    "The run may still be starting or was killed at once; nothing to import.",
                ) from None
            if not allow_incomplete:
                raise ResultError(
                    INCOMPLETE_RESULT,
                    f"The file is cut: it ends before </robot> ({cut}). The run was"
                    " interrupted or the file is still being written.",
                    "Wait for robot to finish, or import the readable part with"
                    " allow_incomplete (the run is then marked 'interrupted').",
                ) from None
            self.sink.end_run(RunEnd(complete=False))
            return False
        if not self.root_closed:
            raise ResultError(UNSUPPORTED_FORMAT, "No <robot> root element found.")
        return True

    def _on_first_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag != "robot":
            found = {
                "testsuite": "an xUnit/JUnit XML file", "testsuites": "an xUnit/JUnit XML file",
            }.get(tag, f"an XML file whose root element is <{tag}>")
            raise ResultError(
                UNSUPPORTED_FORMAT, f"This is {found}, not a Robot Framework output.xml.",
                "Pass the output.xml (or output.json) that robot or rebot wrote.",
            )
        assert self.parser is not None
        self.parser.StartElementHandler = self._node_handlers[0]
        self._node_handlers[0](tag, attrs)

    def _keep_attrs(self, attrs: dict[str, str]) -> None:
        self.leaf = attrs

    # -- root ------------------------------------------------------------------------------

    def _start_robot(self, attrs: dict[str, str]) -> None:
        generator = attrs.get("generator", "")
        schema = attrs.get("schemaversion")
        if not schema or not schema.isdigit() or int(schema) < 2:
            raise ResultError(
                UNSUPPORTED_FORMAT,
                f"This is an output.xml of {generator or 'an unknown generator'} without a"
                " supported schemaversion (RF 3.x or older); RF 4.0+ files are supported.",
                "Re-run the tests with Robot Framework 4.0 or newer.",
            )
        info = self.run_info
        info.generator = generator
        info.generated = _iso(attrs["generated"]) if "generated" in attrs else None
        info.rpa = attrs.get("rpa") == "true"
        info.schema_version = int(schema)
        self.legacy_times = int(schema) < 5

    def _end_robot(self) -> None:
        self._need_a_suite()
        self.root_closed = True
        self.sink.end_run(RunEnd(complete=True))

    # -- nodes -----------------------------------------------------------------------------

    def _open(self, node: Node) -> None:
        if not self.started:
            if self.run_info.generator is None:
                raise ResultError(UNSUPPORTED_FORMAT, "Robot output must start with <robot>.")
            self.sink.start_run(self.run_info)
            self.started = True
        self.nodes.append(node)
        self.sink.open_node(node)

    def _end_node(self) -> None:
        self.sink.close_node(self.nodes.pop())

    def _start_suite(self, attrs: dict[str, str]) -> None:
        node = Node(ev.SUITE, "suite", attrs.get("name", ""))
        if attrs.get("source"):
            node.fields["source"] = attrs["source"]
        self._open(node)
        self.suite_files.opened(attrs.get("source"))

    def _start_test(self, attrs: dict[str, str]) -> None:
        node = Node(ev.TEST, "test", attrs.get("name", ""))
        line = attrs.get("line")
        if line:
            node.fields["lineno"] = int(line)
        self._open(node)

    def _start_kw(self, attrs: dict[str, str]) -> None:
        kw_type = attrs.get("type")
        if kw_type is None:
            ntype, raw = ev.KEYWORD, "kw"
        elif kw_type in ("SETUP", "TEARDOWN"):
            ntype, raw = kw_type, f"kw {kw_type}"
        elif kw_type.upper() in ("SETUP", "TEARDOWN"):
            ntype, raw = kw_type.upper(), f"kw {kw_type}"
        else:
            raise ResultError(
                UNSUPPORTED_FORMAT, f"<kw type={kw_type!r}> is an RF 3.x construct.",
                "Re-run the tests with Robot Framework 4.0 or newer.",
            )
        node = Node(ntype, raw, attrs.get("name", ""), attrs.get("owner") or attrs.get("library"))
        source_name = attrs.get("source_name") or attrs.get("sourcename")
        if source_name:
            node.fields["source_name"] = source_name
        self._open(node)

    def _start_for(self, attrs: dict[str, str]) -> None:
        node = Node(ev.FOR, "for")
        for key in ("flavor", "start", "mode", "fill"):
            if attrs.get(key):
                node.fields[key] = attrs[key]
        self._open(node)

    def _start_while(self, attrs: dict[str, str]) -> None:
        node = Node(ev.WHILE, "while")
        for key in ("condition", "limit", "on_limit", "on_limit_message"):
            if attrs.get(key):
                node.fields[key] = attrs[key]
        self._open(node)

    def _start_branch(self, attrs: dict[str, str]) -> None:
        raw = attrs.get("type", "")
        ntype = _BRANCH_TYPES.get(raw)
        if ntype is None:
            raise ResultError(INVALID_XML, f"Unknown <branch type={raw!r}>.")
        node = Node(ntype, f"branch {raw}")
        if attrs.get("condition"):
            node.fields["condition"] = attrs["condition"]
        if attrs.get("pattern_type"):
            node.fields["pattern_type"] = attrs["pattern_type"]
        assign = attrs.get("assign") or attrs.get("variable")  # 'variable' before RF 7
        if assign:
            node.assign = assign
        self._open(node)

    def _start_group(self, attrs: dict[str, str]) -> None:
        self._open(Node(ev.GROUP, "group", attrs.get("name", "")))

    def _start_variable(self, attrs: dict[str, str]) -> None:
        node = Node(ev.VAR, "variable", attrs.get("name", ""))
        for key in ("scope", "separator"):
            if attrs.get(key) is not None:
                node.fields[key] = attrs[key]
        self._open(node)

    def _simple_starter(self, tag: str, ntype: str) -> Callable[[dict[str, str]], None]:
        def start(_attrs: dict[str, str]) -> None:
            self._open(Node(ntype, tag))
        return start

    # -- node details ----------------------------------------------------------------------

    def _end_status(self, text: str) -> None:
        if not self.nodes:
            return
        node = self.nodes[-1]
        attrs = self.leaf
        node.status = attrs.get("status", "FAIL")
        if self.legacy_times and "elapsed" not in attrs:
            node.start_time, node.elapsed = _legacy_span(attrs.get("starttime"), attrs.get("endtime"))
        else:
            node.start_time = attrs.get("start")
            elapsed = attrs.get("elapsed")
            node.elapsed = float(elapsed) if elapsed is not None else None
        if text:
            node.message = text

    def _end_arg(self, text: str) -> None:
        node = self.nodes[-1]
        if node.args is None:
            node.args = [text]
        else:
            node.args.append(text)

    def _end_var(self, text: str) -> None:
        node = self.nodes[-1]
        ntype = node.type
        if ntype == ev.ITERATION:
            if node.assign is None:
                node.assign = {}
            node.assign[self.leaf.get("name", "")] = text
        elif ntype == ev.VAR:
            node.fields.setdefault("value", []).append(text)
        elif node.assign is None:
            node.assign = [text]
        else:
            node.assign.append(text)

    def _end_value(self, text: str) -> None:
        self.nodes[-1].fields.setdefault("values", []).append(text)

    def _end_doc(self, text: str) -> None:
        if not self.nodes:
            return
        node = self.nodes[-1]
        if node.type in _DOC_OWNERS:
            if text:
                node.fields["doc"] = text
        else:
            node.message = text  # RF < 7: flatten/remove notes on control structures

    def _end_tag(self, text: str) -> None:
        if self.nodes:
            self.nodes[-1].fields.setdefault("tags", []).append(text)

    def _end_timeout(self, _text: str) -> None:
        value = self.leaf.get("value")
        if value and self.nodes:
            self.nodes[-1].fields["timeout"] = value

    def _end_meta(self, text: str) -> None:
        if self.nodes:
            self.nodes[-1].fields.setdefault("metadata", {})[self.leaf.get("name", "")] = text

    def _end_pattern(self, text: str) -> None:
        self.nodes[-1].fields.setdefault("patterns", []).append(text)

    # -- messages, errors, statistics --------------------------------------------------------

    def _start_msg(self, attrs: dict[str, str]) -> None:
        self.leaf = attrs

    def _end_msg(self, text: str) -> None:
        attrs = self.leaf
        if "time" in attrs:
            stamp: str | None = attrs["time"]
        else:
            stamp = _legacy_iso(attrs.get("timestamp"))
        level = attrs.get("level", "INFO")
        html = attrs.get("html") in ("true", "yes")
        if self.in_errors:
            self.sink.run_error(level, text, html, stamp)
        elif self.nodes:
            self.sink.message(level, text, html, stamp)

    def _start_errors(self, _attrs: dict[str, str]) -> None:
        self._need_a_suite()  # RF writes <errors> after the suite; a run's errors need a run
        self.in_errors = True

    def _need_a_suite(self) -> None:
        if not self.started:
            raise ResultError(UNSUPPORTED_FORMAT,
                              "This output.xml has no <suite>: not an RF output.xml.")

    def _end_errors(self) -> None:
        self.in_errors = False

    def _start_statistics(self, _attrs: dict[str, str]) -> None:
        self._use_handlers(self._stats_handlers)

    def _end_statistics(self) -> None:
        self._use_handlers(self._node_handlers)

    def _use_handlers(self, handlers: tuple[Callable[..., None], Callable[[str], None]]) -> None:
        assert self.parser is not None
        self.parser.StartElementHandler, self.parser.EndElementHandler = handlers


def _refuse_doctype(*_args: object) -> None:
    raise ResultError(
        INVALID_XML, "The file declares a DOCTYPE; Robot Framework outputs never do.",
        "Entity and DTD processing is disabled for safety.",
    )


def _refuse_entity(*_args: object) -> None:
    _refuse_doctype()


def _iso(stamp: str) -> str:
    """RF 7 writes ISO already; RF 4-6 write '20261129 21:17:52.759'."""
    if len(stamp) >= 17 and stamp[8] == " ":
        return _legacy_iso(stamp) or stamp
    return stamp


def _legacy_iso(stamp: str | None) -> str | None:
    if not stamp or stamp == "N/A":
        return None
    frac = stamp[18:] if len(stamp) > 18 else ""
    return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:17]}.{frac.ljust(6, '0')}"


def _legacy_span(start: str | None, end: str | None) -> tuple[str | None, float | None]:
    start_iso, end_iso = _legacy_iso(start), _legacy_iso(end)
    if start_iso is None or end_iso is None:
        return start_iso, None
    from datetime import datetime

    delta = datetime.fromisoformat(end_iso) - datetime.fromisoformat(start_iso)
    return start_iso, round(delta.total_seconds(), 6)
