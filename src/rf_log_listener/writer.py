"""The one writer: turns source events into store rows.

Everything structural is computed here, once, for every source: RF's node ids, pre-order
positions and subtree bounds, depth, the owning test, the per-node aggregates, message
numbers, the suite-teardown status rewrite RF's own model applies, the run totals, and
where a keyword a listener ran on a suite's level goes (its setup or teardown, as RF's
reader of output.xml puts it), and a test's or keyword's setup first and teardown last where
a listener ran keywords before or after them (``rotation.py``).
Memory is O(depth of the tree): a node's row is written when it closes, from its frame.
"""

from __future__ import annotations

import json
from typing import Any

from . import events as ev
from .errors import UNSUPPORTED_FORMAT, ResultError
from .events import Node, RunEnd, RunInfo
from .masking import registering_redactor
from .registry import SecretRegistry
from .rotation import Rotation, rotated_message, rotated_node
from .rows import LiveTotals, RowSink
from .schema import indexed_text
from .store import run_base

BATCH_ROWS = 20_000
_STEPS = frozenset({*ev.KEYWORD_TYPES, ev.ITERATION})  # what the secret registry looks at
_ASSIGNMENT_LINE = ("${", "@{", "&{", "Return: ")  # RF's lines of a value assigned
_FIXTURES = frozenset({ev.SETUP, ev.TEARDOWN})
_KEYWORD, _SUITE = ev.KEYWORD, ev.SUITE  # globals: read for every node

# A value JSON has no type for (an object another listener put in a result) is stored as its
# str(), as RF writes it to output.xml, instead of failing the batch it came in.
_json_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=ev.as_text).encode


def _plain(text: str) -> bool:
    """True when ``text`` needs no escaping inside a JSON string."""
    return text.isprintable() and '"' not in text and "\\" not in text


# Library keywords repeat the same short doc on every call: {"doc": "..."} is the most
# common ``fields`` value by far, so its JSON is remembered (bounded).
_DOC_JSON: dict[str, str] = {}


def _json(value: Any) -> str:
    """Compact JSON; lists and dicts of plain strings (most args, assigns, docs) skip the
    generic encoder, which costs several times more per call on this hot path."""
    kind = type(value)
    if kind is list or kind is tuple:
        try:
            flat = "".join(value)
        except TypeError:
            return _json_encode(value)
        if _plain(flat):
            return '["' + '","'.join(value) + '"]'
    elif kind is dict:
        if len(value) == 1 and "doc" in value:
            doc = value["doc"]
            cached = _DOC_JSON.get(doc)
            if cached is None:
                cached = _json_encode(value)
                if len(_DOC_JSON) < 4096:
                    _DOC_JSON[doc] = cached
            return cached
        try:
            flat = "".join(value.values()) + "".join(value)
        except TypeError:
            return _json_encode(value)
        if _plain(flat):
            return "{" + ",".join([f'"{k}":"{v}"' for k, v in value.items()]) + "}"
    return _json_encode(value)


class _Frame:
    """An open node: its position, id state and running aggregates.

    Built once per node on the import's hottest path, so suite-only counters are set only
    for suites (only suites read them) and the ``-kN`` counter lives on the frame that owns
    it: an IF/TRY root numbers its branches in its parent's counter (``counter_owner``).
    """

    __slots__ = (
        "node", "pre", "parent_pre", "seq", "depth", "node_id", "id_base", "kcount",
        "counter_owner", "children", "failed", "max_level", "messages", "msg_lo", "owner_test",
        "suites", "tests", "passed_tests", "failed_tests", "skipped_tests", "teardown",
        "opening", "assigned", "roots_at",
    )

    def __init__(self, node: Node, pre: int, parent: _Frame | None, msg_lo: int) -> None:
        self.node = node
        self.pre = pre
        self.msg_lo = msg_lo
        self.children = 0
        self.failed = 0
        self.max_level = 0
        self.messages = 0
        self.kcount = 0
        self.opening: list[str] | None = None  # its first two messages, for the secret registry
        self.assigned: list[str] | None = None  # its later "${x} = value" lines, for the same
        self.counter_owner: _Frame | None = None  # None: this frame numbers its own -kN
        ntype = node.type
        if ntype == ev.SUITE:
            self.suites = 0
            self.tests = 0
            self.passed_tests = 0
            self.failed_tests = 0
            self.skipped_tests = 0
            self.teardown: Node | None = None
        if parent is None:
            self.parent_pre = None
            self.seq = 0
            self.depth = 0
            self.node_id = self.id_base = "s1"
            self.owner_test = None
            return
        self.parent_pre = parent.pre
        self.seq = parent.children
        parent.children += 1
        self.depth = parent.depth + 1
        self.owner_test = pre if ntype == ev.TEST else parent.owner_test
        if ntype == ev.SUITE or ntype == ev.TEST:
            if parent.node.type != ev.SUITE:
                _refuse_outside_a_suite(ntype, parent)
            if ntype == ev.SUITE:
                parent.suites += 1
                self.node_id = f"{parent.node_id}-s{parent.suites}"
            else:
                parent.tests += 1
                self.node_id = f"{parent.node_id}-t{parent.tests}"
        elif ntype in ev.ROOT_TYPES:
            # No RF id: the branches are numbered in the parent's counter, so the root shares
            # it. Synthetic id: parent base + "-r" + the number its first branch will get.
            owner = parent.counter_owner or parent
            number = owner.kcount + 1
            self.node_id = f"{parent.id_base}-r{number}"
            # A root without branches (rebot --removekeywords passed removes them) takes no
            # number: a next root at the same place is <base>-rN.2, .3, ... (set only here,
            # so other frames do not pay for it on the import's hot path).
            last, repeats = getattr(owner, "roots_at", (0, 1))
            if last == number:
                owner.roots_at = (number, repeats + 1)
                self.node_id += f".{repeats + 1}"
            else:
                owner.roots_at = (number, 1)
            self.id_base = parent.id_base
            self.counter_owner = owner
            return
        else:
            owner = parent.counter_owner or parent
            owner.kcount += 1
            self.node_id = f"{parent.id_base}-k{owner.kcount}"
        self.id_base = self.node_id


def _refuse_outside_a_suite(ntype: str, parent: _Frame) -> None:
    """A suite or test only ever is in a suite: RF's own reader refuses such a file too
    ("Incompatible child element"). Robot wrote one with a test inside a keyword after a
    listener's keywords recursed past RF's limit."""
    raise ResultError(
        UNSUPPORTED_FORMAT,
        f"Not a Robot Framework result: it holds a {ntype.lower()} inside a {parent.node.type}"
        f" at depth {parent.depth + 1}, where suites and tests are in suites only.",
        "Robot Framework's own reader refuses this file too; re-run the tests to write it"
        " again (a run captured live is in the store whole).",
    )


class RunWriter:
    """An :class:`~rf_log_listener.events.EventSink` that writes one run into the store."""

    def __init__(self, sink: RowSink, *, batch_rows: int = BATCH_ROWS, live: bool = False) -> None:
        self.sink = sink
        self.batch_rows = batch_rows
        self.live = live
        self.run_id: int | None = None
        self.base = 0
        self.generated_by_robot = True
        self._stack: list[_Frame] = []
        self._next_pre = 0
        self._next_msg = 0
        self._errors = 0
        self._node_rows: list[tuple[Any, ...]] = []
        self._message_rows: list[tuple[Any, ...]] = []
        self._error_rows: list[tuple[Any, ...]] = []
        self._written_msg = 0  # messages below this seq were handed to the sink
        self._root: tuple[Node, _Frame] | None = None
        # A suite's setup or teardown that suite-level keywords may still join (see
        # _suite_level_keyword): innermost on the stack, ended or not, until the next item
        # at the suite's level (or the suite's end) says whether one comes.
        self._held: _Frame | None = None
        self._finishing: _Frame | None = None  # the held one, closing for good
        # A test's or keyword's ended teardown, with the position the next node opens at and
        # its -kN number: a keyword opened after it goes before it (see rotation.py).
        self._teardowns: list[tuple[_Frame, _Frame, int, int]] = []
        self._flushed_pre = 0  # nodes opened before this may have rows in the store
        self.secrets = SecretRegistry(registering_redactor())
        self._definitions: list[tuple[Any, ...]] = []

    # -- run lifecycle -------------------------------------------------------------------

    def start_run(self, info: RunInfo) -> int:
        self.run_id = self.sink.begin_run(info)
        self.base = run_base(self.run_id)
        self._set_generator(info.generator)
        return self.run_id

    def attach_run(self, run_id: int, generator: str | None) -> None:
        """Continue a run whose row was inserted elsewhere (the live listener begins the run
        itself and lets a writer process commit the rows)."""
        self.run_id = run_id
        self.base = run_base(run_id)
        self._set_generator(generator)

    def _set_generator(self, generator: str | None) -> None:
        # RF rewrites test statuses after a suite-teardown failure only for robot's own files.
        if generator:
            self.generated_by_robot = generator.lower().startswith("robot")

    def end_run(self, end: RunEnd) -> None:
        """Close what is still open (a cut run), write the rest and publish the run."""
        if end.generator:
            self._set_generator(end.generator)
        while self._stack:
            if self._stack[-1] is self._held:
                self._finish_held()
                continue
            node = self._stack[-1].node
            node.status = ev.NOT_FINISHED
            node.elapsed = None
            self.close_node(node)
        self._flush()
        rnode, frame = self._root if self._root is not None else (None, None)
        # The tests as stored, counted as RF's own model counts them (see RunEnd).
        tests = {"passed": frame.passed_tests, "failed": frame.failed_tests,
                 "skipped": frame.skipped_tests} if frame is not None else {}
        self.sink.finish_run({
            "status": "complete" if end.complete else "interrupted",
            "generator": end.generator, "rf_version": ev.rf_version(end.generator),
            "name": rnode.name if rnode else None,
            "result_status": rnode.status if rnode else None,
            "start_time": rnode.start_time if rnode else None,
            "elapsed": rnode.elapsed if rnode else None,
            "total": sum(tests.values()) if tests else None, **tests,
            "node_count": self._next_pre, "message_count": self._next_msg,
            "error_count": self._errors,
        })

    # -- events --------------------------------------------------------------------------

    def open_node(self, node: Node) -> None:
        held = self._held
        if held is not None and self._stack[-1] is held and self._taken_over(node):
            return
        stack = self._stack
        parent = stack[-1] if stack else None
        if parent is None:
            if node.type != ev.SUITE or self._root is not None:
                found = "a second root suite" if node.type == ev.SUITE else f"a {node.type}"
                raise ResultError(UNSUPPORTED_FORMAT,
                                  f"Not a Robot Framework result: it holds {found} at the top,"
                                  " where a result has exactly one suite.",
                                  "Pass an output.xml or output.json written by robot or rebot.")
        elif node.type == _KEYWORD and parent.node.type == _SUITE:
            parent = self._suite_level_keyword(parent)
        frame = _Frame(node, self._next_pre, parent, self._next_msg)
        self._next_pre += 1
        stack.append(frame)
        if "metadata" in node.fields:  # live: known at the start (an import knows it at the end)
            self.secrets.metadata(node.fields["metadata"])

    def close_node(self, node: Node) -> None:
        stack = self._stack
        frame = stack.pop()
        if frame.node is not node:
            if frame is not self._held:
                raise ValueError(f"close_node({node.type} {node.name!r}) does not match the"
                                 " open node")
            stack.append(frame)  # the suite ends: its setup or teardown held open ends first
            self._finish_held()
            frame = stack.pop()
        ntype = node.type
        parent = stack[-1] if stack else None
        fixture = ntype in _FIXTURES and parent is not None
        if fixture and parent.node.type == _SUITE:  # type: ignore[union-attr]
            if frame is not self._finishing:
                stack.append(frame)
                self._held = frame  # a keyword robot writes after it in the suite joins it
                return
            fixture = False
        if self._teardowns and self._teardowns[-1][0] is frame:
            self._teardown_last(frame)
        if self._held is not None and parent is self._held and parent.node.raw_type in _MADE_HERE:
            _widen(parent.node, node)
        if ntype == ev.SUITE:
            if frame.teardown is not None and self.generated_by_robot:
                self._suite_teardown_rewrite(frame)
            node.status = _suite_status(frame)
        status = node.status
        if parent is not None:
            parent.failed += frame.failed + (status == "FAIL")
            if frame.max_level > parent.max_level:
                parent.max_level = frame.max_level
            if ntype == ev.TEST:
                if status == "PASS":
                    parent.passed_tests += 1
                elif status == "FAIL":
                    parent.failed_tests += 1
                elif status == "SKIP":
                    parent.skipped_tests += 1
            elif ntype == ev.SUITE:
                parent.passed_tests += frame.passed_tests
                parent.failed_tests += frame.failed_tests
                parent.skipped_tests += frame.skipped_tests
            elif ntype == ev.TEARDOWN and parent.node.type == ev.SUITE and status in ("FAIL", "SKIP"):
                parent.teardown = node
        else:
            self._root = (node, frame)
        if ntype in _STEPS:
            self.secrets.step(node, frame.opening, frame.assigned)
        elif "metadata" in node.fields:  # an output file writes it after the suite's tests
            self.secrets.metadata(node.fields["metadata"])
        self._node_rows.append(self._row(frame, status))
        if fixture:
            self._fixture_closed(parent, frame)  # type: ignore[arg-type]
        if len(self._node_rows) + len(self._message_rows) >= self.batch_rows:
            self._flush_with_open()

    # -- keywords on a suite's level ----------------------------------------------------

    def _suite_level_keyword(self, suite: _Frame) -> _Frame:
        """The frame a keyword opened directly in a suite goes into, as RF's own reader of
        output.xml puts it (``xmlelementhandlers._get_body_for_suite_level_keyword``): the
        suite's setup before its first test or child suite, its teardown after; an
        "Implicit setup" or "Implicit teardown" (PASS) made for it where there is none.

        Such keywords are a listener's (``BuiltIn().run_keyword`` in ``start_suite`` or
        ``end_suite``). RF's model of the running suite has them in the same place (the
        setup's body, a setup without a name where there is none), robot writes them as
        keywords of the suite, before the setup and after the teardown: every source gives
        them as keywords of the suite, and this makes them what RF's model of the run says."""
        kind = ev.TEARDOWN if suite.suites or suite.tests else ev.SETUP
        self.open_node(Node(kind, _IMPLICIT[kind], f"Implicit {kind.lower()}", status="PASS"))
        self._held = frame = self._stack[-1]
        return frame

    def _taken_over(self, node: Node) -> bool:
        """Whether ``node``, opened while a suite's fixture is held, is taken in by it: a
        keyword opens in it (False, as its child); a real setup or teardown after an implicit
        one of its kind takes the implicit one over, keeping the keywords in it (True: RF's
        reader configures the implicit one as the real one). Anything else ends the held one."""
        held = self._held
        assert held is not None
        if node.type == ev.KEYWORD:
            return False
        if node.type == held.node.type and held.node.raw_type in _MADE_HERE:
            held.node = node
            self._held = None
            return True
        self._finish_held()
        return False

    def _finish_held(self) -> None:
        """Close the held fixture, innermost on the stack, as its source closed it."""
        frame = self._held
        assert frame is not None and frame is self._stack[-1]
        self._held, self._finishing = None, frame
        try:
            self.close_node(frame.node)
        finally:
            self._finishing = None

    # -- a test's or keyword's setup first, its teardown last -----------------------------

    def _fixture_closed(self, parent: _Frame, fixture: _Frame) -> None:
        """A setup that ran after keywords (a listener's, run in ``start_test`` or
        ``start_keyword``) goes before them; a teardown is remembered in case keywords
        follow it (a listener's, in ``end_test`` or ``end_keyword``)."""
        if fixture.node.type == ev.TEARDOWN:
            teardowns = self._teardowns
            if teardowns and teardowns[-1][0] is parent:
                teardowns.pop()
            teardowns.append((parent, fixture, self._next_pre, parent.kcount))
        elif fixture.seq:
            self._rotate(parent, parent.pre + 1, fixture.pre, fixture.seq, 1,
                         parent.kcount - 1, 1, parent.msg_lo)

    def _teardown_last(self, parent: _Frame) -> None:
        """``parent`` ends: what it ran after its teardown goes before the teardown."""
        _, teardown, after, number = self._teardowns.pop()
        later = parent.children - teardown.seq - 1
        if later:
            self._rotate(parent, teardown.pre, after, 1, later, 1, parent.kcount - number,
                         teardown.msg_lo)

    def _rotate(self, parent: _Frame, a_pre: int, b_pre: int, a_children: int,
                b_children: int, a_numbers: int, b_numbers: int, msg_from: int) -> None:
        """Swap two runs of ``parent``'s children, all ended (see rotation.py): the rows
        still pending here, and those a batch already wrote in the store."""
        rotation: Rotation = (parent.pre, parent.id_base + "-", a_pre, b_pre,
                              self._next_pre - 1, a_children, b_children, a_numbers, b_numbers)
        base = self.base
        if self._flushed_pre > a_pre:
            self.sink.rotate(rotation, base + msg_from)
        rows, first = self._node_rows, base + a_pre
        at = len(rows)  # rows are pending in the order their nodes ended: the range is last
        while at and rows[at - 1][0] >= first:
            at -= 1
        rows[at:] = [rotated_node(row, base, rotation) for row in rows[at:]]
        messages, first = self._message_rows, base + msg_from
        at = len(messages)
        while at and messages[at - 1][0] >= first:
            at -= 1
        messages[at:] = [rotated_message(row, rotation) for row in messages[at:]]

    def _row(self, frame: _Frame, status: str) -> tuple[Any, ...]:
        """The node's row as it stands: final at close, provisional while it is open."""
        node = frame.node
        fields = node.fields
        return (
            self.base + frame.pre, self._next_pre - 1, frame.parent_pre,
            frame.seq, frame.depth, frame.node_id, node.type, node.raw_type, node.name, node.owner,
            status, node.start_time, node.elapsed, node.message or None, frame.owner_test,
            frame.children, frame.failed, frame.max_level, frame.messages, frame.msg_lo,
            self._next_msg, _json(node.args) if node.args else None,
            _json(node.assign) if node.assign else None, _json(fields) if fields else None,
        )

    def message(self, level: str, text: str, html: bool, time: str | None) -> None:
        frame = self._stack[-1]
        frame.messages += 1
        if frame.messages <= 2:  # a step's TRACE "Arguments:" line and what it logged
            if frame.opening is None:
                frame.opening = [text]
            else:
                frame.opening.append(text)
        elif text.startswith(_ASSIGNMENT_LINE):
            # RF logs what a keyword returned last, after its own messages and its body's (an
            # import knows the keyword's variables only at its end: not asked here)
            if frame.assigned is None:
                frame.assigned = [text]
            else:
                frame.assigned.append(text)
                if len(frame.assigned) > 16:  # a keyword logging many such lines: the last
                    del frame.assigned[0]
        # an embedded screenshot's payload names no secret (and random base64 spells "pwd"
        # by chance about once in 260,000 characters): the registry reads the text around it
        self.secrets.message(indexed_text(text) if html and "base64," in text else text, html)
        lvl = ev.LEVELS.get(level, 3)
        if lvl > frame.max_level:
            frame.max_level = lvl
        self._message_rows.append((
            self.base + self._next_msg, frame.pre, frame.messages, level, time,
            1 if html else 0, text,
        ))
        self._next_msg += 1

    def register_definition(self, definition: tuple[Any, ...]) -> None:
        """(library, keyword name key, source, lineno): written with the next rows."""
        self._definitions.append(definition)

    def register_secret(self, value: str) -> None:
        """A value the source knows to be secret (the listener: a secret-named variable)."""
        self.secrets.add(value)

    def run_error(self, level: str, text: str, html: bool, time: str | None) -> None:
        self.secrets.message(text)
        self._errors += 1
        self._error_rows.append((self.run_id, self._errors, level, time, 1 if html else 0, text))

    # -- writing -------------------------------------------------------------------------

    def flush(self) -> None:
        """Write what is pending now. A live run also writes its open nodes, as RUNNING rows
        that their final rows replace, so readers see what is running."""
        totals = None
        if self.live and self._stack:
            totals = (self._stack[0].node.name, *self._tests_so_far())
        self._flush_with_open(totals=totals)

    def _flush_with_open(self, closing: _Frame | None = None,
                         totals: LiveTotals | None = None) -> None:
        """Write what is pending, and in a live run the open nodes with it (and ``closing``,
        a suite taken off the stack and not yet written): every flush, not only the clock's,
        so no row a reader sees lacks its parent (a batch written mid-suite, or a suite's
        teardown rewrite, left a suite opened since the last clock's flush unwritten: the
        summary's walk up from a test to its suites' fixtures found no suite there)."""
        if self.live:
            frames = self._stack if closing is None else [*self._stack, closing]
            # a suite's fixture held open with nothing open in it has ended: as it ended
            held = self._held if self._stack and self._stack[-1] is self._held else None
            self._node_rows.extend(self._row(frame, frame.node.status if frame is held
                                             else ev.RUNNING) for frame in frames)
        self._flush(totals)

    def _tests_so_far(self) -> tuple[int, int, int]:
        """Passed, failed and skipped tests that have ended (open suites hold their counts
        until they end themselves)."""
        suites = [frame for frame in self._stack if frame.node.type == ev.SUITE]
        return (sum(f.passed_tests for f in suites), sum(f.failed_tests for f in suites),
                sum(f.skipped_tests for f in suites))

    def _flush(self, totals: LiveTotals | None = None) -> None:
        """Hand the collected rows to the sink: one transaction, messages then indexed."""
        self.sink.write(self._node_rows, self._message_rows, self._error_rows,
                        self.base + self._written_msg, self.base + self._next_msg,
                        self.secrets.take(), self._definitions, totals)
        self._definitions = []
        self._flushed_pre = self._next_pre
        self._written_msg = self._next_msg
        self._node_rows, self._message_rows, self._error_rows = [], [], []

    def _suite_teardown_rewrite(self, frame: _Frame) -> None:
        """Re-mark the suite's tests as RF's ExecutionResult does after a teardown failure.

        The tests are already written; the suites between them and this one too. This is
        rare and bounded by the suite, so it is done in SQL on the written rows.
        """
        teardown = frame.teardown
        assert teardown is not None
        self._flush_with_open(closing=frame)
        newly_failed, counts = self.sink.rewrite_suite_tests(
            self.base + frame.pre, self.base + self._next_pre - 1, teardown.status,
            teardown.message,
        )
        frame.failed += newly_failed
        frame.passed_tests = counts["PASS"]
        frame.failed_tests = counts["FAIL"]
        frame.skipped_tests = counts["SKIP"]




_IMPLICIT = {ev.SETUP: "implicit setup", ev.TEARDOWN: "implicit teardown"}  # their raw_type
_MADE_HERE = frozenset(_IMPLICIT.values())


def _widen(fixture: Node, step: Node) -> None:
    """An implicit setup or teardown spans its keywords (RF's reader gives it no times)."""
    if step.start_time is None:
        return
    from datetime import datetime

    start = datetime.fromisoformat(step.start_time)
    end = start.timestamp() + (step.elapsed or 0.0)
    if fixture.start_time is None:
        fixture.start_time = step.start_time
    first = datetime.fromisoformat(fixture.start_time).timestamp()
    fixture.elapsed = round(max(end - first, fixture.elapsed or 0.0), 6)


def _suite_status(frame: _Frame) -> str:
    """RF computes a suite's status from its tests, so the store does too."""
    if frame.node.status == ev.NOT_FINISHED:
        return ev.NOT_FINISHED
    return ev.suite_status(frame.passed_tests, frame.failed_tests)
