"""failure_path view: from a failed test down its most telling failing branch to the
messages; what made it fail from outside (views.failing); repeated recursion levels folded;
within the budget, the deepest step always kept."""

from __future__ import annotations

import sqlite3

from rf_log_listener.events import LEVELS
from rf_log_listener.store import FAILED_STARTS, run_base

from ..shaping import Shaper, estimate_tokens
from .argument_sources import argument_sources
from .common import (
    NodeContext,
    NodeRow,
    node_by_id,
    node_by_key,
    node_item,
    own_messages,
    run_row,
    shown_args,
    shown_assign,
    shown_attachments,
    shown_message,
)
from .failing import (
    Level,
    failing_branch,
    handled_before,
    last_failure_inside,
    shown_cause,
    tests_failed_for_others,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

_ATTACHMENTS = 10  # HTML messages a failure path lists the attachments of
_FOLD_CYCLES = 3  # a cycle of calls repeated this often (recursion) is folded, first and last kept
_CYCLE_LENGTHS = (1, 2, 3)  # A > A > A ..., A > B > A > B ..., A > B > C > A ...


def failed_starts(conn: sqlite3.Connection, run_id: int) -> list[tuple[int, str]]:
    """Keys and types of failed tests, and of failed suite setups/teardowns (no test owns
    those), in run order."""
    return conn.execute(
        f"SELECT key, type FROM nodes INDEXED BY nodes_failed WHERE key >= ? AND key < ?"
        f" AND {FAILED_STARTS} ORDER BY key", (run_base(run_id), run_base(run_id + 1)),
    ).fetchall()


def failure_path(conn: sqlite3.Connection, run_id: int, selector: str | None, shaper: Shaper,
                 position: int | list[int] | None) -> tuple[dict[str, Any] | None, Any]:
    """The path of the selected node's test (or the next failed start) and the position to
    continue from: the rest of this path when the budget cut it, else the next start."""
    run_row(conn, run_id)
    found = failed_starts(conn, run_id)
    for_others = tests_failed_for_others(conn, run_id, found)
    passed_over = {key for keys in for_others.values() for key in keys}
    starts = [key for key, _ in found if key not in passed_over]
    resume = 0
    if isinstance(position, list):  # [start key, first step not shown yet]
        node, resume = node_by_key(conn, position[0]), position[1]
        following = [k for k in starts if k > node.key]
    elif selector:
        node = node_by_id(conn, run_id, selector)
        if node.type != "TEST" and node.owner_test is not None:
            node = node_by_key(conn, run_base(run_id) + node.owner_test)
        following = [k for k in starts if k > node.key]
    else:
        pending = [k for k in starts if position is None or k > position]
        if not pending:
            return None, None
        node = node_by_key(conn, pending[0])
        following = pending[1:]
    ids = NodeContext(conn, run_id)
    levels = failing_branch(conn, run_id, node)
    tests = sum(1 for _, kind in found if kind == "TEST")
    view: dict[str, Any] = {"start_id": node.node_id, "failed_tests_total": tests,
                            "failed_suite_fixtures_total": len(found) - tests}
    if passed_over:
        view["tests_failed_for_others_total"] = len(passed_over)
    if node.key in for_others:
        view["tests_failed_for_it"] = len(for_others[node.key])
    if not resume:
        cause = shown_cause(conn, run_id, node, shaper)
        if cause:
            view["cause"] = cause
    entries = _entries([level.node for level in levels])
    make = _ItemMaker(conn, run_id, levels, shaper, ids, recursive=any(entry[2] for entry in entries))
    shown = _fit_keeping_last(shaper, view, entries[resume:], make)
    if resume + shown < len(entries):
        return view, [node.key, resume + shown]
    return view, (following[0] - 1 if following and not selector else None)


# An entry of the path: (first level, level after it, cycle length); cycle 0 is one step,
# else repeated cycles of calls folded into one REPEATED_CALLS item.
Entry = tuple[int, int, int]


def _entries(nodes: list[NodeRow]) -> list[Entry]:
    """The path's items as entries, in order: a step per level, folds where a cycle of
    calls repeats. Only the entries the budget takes are made into items (_ItemMaker)."""
    folds = _folds(nodes)
    entries: list[Entry] = []
    number = 0
    while number < len(nodes):
        end, cycle = folds.get(number, (number + 1, 0))
        entries.append((number, end, cycle))
        number = end
    return entries


class _ItemMaker:
    """Makes a path entry into the item answers show: a step (the node, its messages and
    attachments, the failures beside the branch) or a fold."""

    def __init__(self, conn: sqlite3.Connection, run_id: int, levels: list[Level],
                 shaper: Shaper, ids: NodeContext, recursive: bool) -> None:
        self.conn, self.run_id, self.levels, self.shaper, self.ids = conn, run_id, levels, shaper, ids
        self.nodes = nodes = [level.node for level in levels]
        self.attachments = _attachments(conn, run_id, nodes, shaper, ids)
        self.recursive = recursive  # the path folds a recursion (an entry with a cycle)
        # A parent's status message repeating its failing child's is said once, by the child.
        self.repeated = {number for number in range(len(nodes) - 1)
                         if nodes[number].message and nodes[number].message == nodes[number + 1].message}

    def __call__(self, entry: Entry) -> dict[str, Any]:
        number, end, cycle = entry
        if cycle:
            return _fold_item(self.nodes, number, end, cycle)
        step = _step(self.conn, self.run_id, self.ids.seen(self.nodes[number]), self.shaper,
                     self.ids, self.attachments.get(number), number in self.repeated,
                     deepest=number == len(self.nodes) - 1)
        # not below a folded recursion: the sources are its previous level's calls, whose ids
        # are as long as the path is deep, and the recursion is what failed
        if number == len(self.nodes) - 1 and number and not self.recursive:
            self._add_sources(step)
        following = self.levels[number + 1] if number + 1 < len(self.levels) else None
        if following is not None and following.others:
            step["other_failures"] = [_other(n, self.shaper) for n in following.others]
            step["other_failures_total"] = following.others_total
        if following is not None:
            handled, total = handled_before(self.conn, self.run_id, self.nodes[number],
                                            following.node)
            if handled:
                step["handled_failures"] = [_handled(self.conn, self.run_id, wrapper, self.shaper)
                                            for wrapper in handled]
                step["handled_failures_total"] = total
        return step


    def _add_sources(self, step: dict[str, Any]) -> None:
        """The deepest step's ``arguments_from``, the nearest first, while the step takes at
        most half the budget (the rest is the path's above it): the ones left out are the
        budget's (``budget_truncated``; a larger budget shows them)."""
        room = self.shaper.budget // 2 - estimate_tokens(step)
        kept = []
        for node, info in argument_sources(self.conn, self.run_id, self.nodes):
            source = _source(node, info, self.shaper, self.ids)
            room -= estimate_tokens(source) + 1
            if room < 0:
                self.shaper.budget_truncated = True
                break
            kept.append(source)
        if kept:
            step["arguments_from"] = kept


def _folds(nodes: list[NodeRow]) -> dict[int, tuple[int, int]]:
    """Where a cycle of calls repeats (recursion): {first folded level: (level after the
    fold, cycle length)}. The first and the last cycle stay shown, the ones between fold."""
    signature = [(n.type, n.name, n.owner) for n in nodes]
    folds: dict[int, tuple[int, int]] = {}
    start = 1  # the test (or suite fixture) itself never folds
    while start < len(nodes):
        for cycle in _CYCLE_LENGTHS:
            pattern = signature[start:start + cycle]
            if len(pattern) < cycle or not any(s[0] == "KEYWORD" and s[1] for s in pattern):
                continue
            repeats = 1
            while signature[start + repeats * cycle:start + (repeats + 1) * cycle] == pattern:
                repeats += 1
            if repeats >= _FOLD_CYCLES:
                folds[start + cycle] = (start + (repeats - 1) * cycle, cycle)
                start += repeats * cycle
                break
        else:
            start += 1
    return folds


def _fold_item(nodes: list[NodeRow], first: int, end: int, cycle: int) -> dict[str, Any]:
    return {"kind": "REPEATED_CALLS", "names": [n.name for n in nodes[first:first + cycle]],
            "count": end - first, "cycles": (end - first) // cycle,
            "first_node_id": nodes[first].node_id, "last_node_id": nodes[end - 1].node_id}


def _handled(conn: sqlite3.Connection, run_id: int, wrapper: NodeRow,
             shaper: Shaper) -> dict[str, Any]:
    """A step that passed with a failure handled inside it, with that failure's deepest step
    and message."""
    item = _other(wrapper, shaper)
    if wrapper.type == "KEYWORD" and wrapper.assign:  # `${ok} =`: what the failing step checks
        item["assign"] = shown_assign(wrapper, shaper)
    failure = last_failure_inside(conn, run_id, wrapper)
    if failure is not None:
        deepest = failing_branch(conn, run_id, failure)[-1].node
        item["failing_step_id"] = deepest.node_id
        item["message"] = shaper.status(deepest.message or failure.message or "", 300)
    return item


SOURCE_ARGS = 6  # arguments of a step a failing one's variable came from


def _source(node: NodeRow, info: list[tuple[int, int, str, str, int]], shaper: Shaper,
            ids: NodeContext) -> dict[str, Any]:
    """A step that assigned a variable the failing step uses, and what it (or a step inside
    it) logged last."""
    item: dict[str, Any] = {"node_id": node.node_id, "type": node.type, "name": node.name or ""}
    if node.assign:  # a VAR's variable is its name
        item["assign"] = shown_assign(node, shaper)
    if node.args:
        args = shown_args(node, shaper, 100)
        item["args"] = args[:SOURCE_ARGS]
        if len(args) > SOURCE_ARGS:  # Create Dictionary of 60 pairs: its `&{d} = {...}` line says them
            item["args_total"] = len(args)
    if info:
        item["messages"] = [shown_message(f"{ids(pre)}-m{number}", level, text, html, node, shaper,
                                          ids, limit=INFO_CHARS)
                            for pre, number, level, text, html in info]
    return item


def _other(node: NodeRow, shaper: Shaper) -> dict[str, Any]:
    """A failing child the path does not follow, named with what tells it apart."""
    item: dict[str, Any] = {"node_id": node.node_id, "type": node.type, "name": node.name or ""}
    if node.type == "ITERATION" and node.assign:
        item["assign"] = shown_assign(node, shaper)
    elif node.args:
        item["args"] = shown_args(node, shaper, 100)
    if node.message:
        item["message"] = shaper.status(node.message, 300)
    return item


def _fit_keeping_last(shaper: Shaper, view: dict[str, Any], entries: list[Entry],
                      make: _ItemMaker) -> int:
    """Fit the items of ``entries`` under ``view["path"]``, made as the budget takes them;
    the last one (the deepest failing step, where the failure is said) always stays, the
    budget taking steps from above it. Returns how many entries are shown from the start
    (all of them, or those before the first one left out)."""
    if not entries:
        view["path"] = []
        return 0
    last = make(entries[-1])
    reserve = estimate_tokens(last) + 1
    shaper.budget -= reserve
    try:
        kept = shaper.fit(view, (make(entry) for entry in entries[:-1]), "path")
    finally:
        shaper.budget += reserve
    view["path"].append(last)
    return len(entries) if kept == len(entries) - 1 else kept


def _step(conn: sqlite3.Connection, run_id: int, node: NodeRow, shaper: Shaper,
          ids: NodeContext, attachments: list[dict[str, Any]] | None,
          repeated: bool, deepest: bool = False) -> dict[str, Any]:
    """A step of the path: the node, its WARN-and-worse messages and a library's traceback
    (the deepest step: also what it logged just before failing), its attachments; its status
    message unless the next step or its own messages say the same."""
    own = own_messages(conn, run_id, node)
    logged = [message for message in own
              if LEVELS.get(message[1], 3) >= LEVELS["WARN"] or _is_traceback(message)]
    if deepest:
        logged = _with_info_before_failure(own, logged, node)
    messages = [shown_message(i, lv, t, html, node, shaper, ids,
                              limit=INFO_CHARS if lv == "INFO" else 1200)
                for i, lv, t, html in logged]
    # the next step, or the failing message it logged, says its status message already
    said = repeated or node.message in {text for _, _, text, _ in logged}
    step = node_item(node, shaper, ids, message_limit=None if said else 1200)
    if messages:
        step["messages"] = messages
    if attachments:
        step["attachments"] = attachments
    return step


# What the failing library keyword logged just before it failed: a request and its response
# (RequestsLibrary's "GET Response : ... status=404 ... body=..."), the element it clicked,
# the command it ran: what log.html shows above the FAIL line when the keyword is opened,
# often the evidence its failure message leaves out. The last few, each shortened as a
# window step's text is (the budget may give them back whole).
INFO_SHOWN = 3
INFO_CHARS = 300
_ARGUMENT_TYPES = "Argument types are:\n"


def _with_info_before_failure(own: list[tuple[str, str, str, int]],
                              logged: list[tuple[str, str, str, int]],
                              node: NodeRow) -> list[tuple[str, str, str, int]]:
    """``logged`` with the deepest step's last INFO messages before its first failure (not
    HTML ones: their attachments are listed), in log order."""
    end = next((n for n, message in enumerate(own) if message[1] == "FAIL"), len(own))
    # BuiltIn's comparisons log "Argument types are: <class 'int'> <class 'str'>" whenever
    # the types differ ('200' and 200: an HTTP status in every API test, which `... As
    # Integers` converts away); where the types are what differs, its failure says so
    # ("700 (integer) != 700 (string)"): no evidence
    builtin = node.owner == "BuiltIn"
    info = [message for message in own[:end] if message[1] == "INFO" and not message[3]
            and not (builtin and message[2].startswith(_ARGUMENT_TYPES))]
    if not info:
        return logged
    chosen = {message[0] for message in [*logged, *info[-INFO_SHOWN:]]}
    return [message for message in own if message[0] in chosen]


# RF logs the traceback of an exception a keyword raised, at DEBUG, on that keyword (seen
# with robot --loglevel DEBUG or TRACE): where in a library's code the failure came from,
# what log.html shows under the failing keyword. RF leaves its own frames out: BuiltIn's
# failures have none left ("  None"), and say nothing the failure message does not.
TRACEBACK = "Traceback (most recent call last):"


def _is_traceback(message: tuple[str, str, str, int]) -> bool:
    return message[1] == "DEBUG" and message[2].startswith(TRACEBACK) \
        and '\n  File "' in message[2]


def _attachments(conn: sqlite3.Connection, run_id: int, nodes: list[NodeRow], shaper: Shaper,
                 ids: NodeContext) -> dict[int, list[dict[str, Any]]]:
    """The attachments of the HTML messages (any level) logged in the failing test, by step:
    the step that logged them, the last step for those below it (the screenshot a library
    takes when a keyword fails), the test for the others (taken beside the failing branch)."""
    by_step: dict[int, list[dict[str, Any]]] = {}
    on_path = {node.pre: number for number, node in enumerate(nodes)}
    last = nodes[-1]
    base = run_base(run_id)
    for pre, number, text in conn.execute(
            "SELECT node_pre, msg_no, text FROM messages INDEXED BY messages_html"
            " WHERE key >= ? AND key < ? AND html = 1 ORDER BY key LIMIT ?",
            (base + nodes[0].msg_lo, base + nodes[0].msg_hi, _ATTACHMENTS)).fetchall():
        from ..attachments import parse as parse_html  # only for a test that logged HTML

        step = on_path.get(pre, len(nodes) - 1 if last.pre <= pre <= last.last else 0)
        shown = shown_attachments(f"{ids(pre)}-m{number}", parse_html(text)[1], shaper, ids)
        by_step.setdefault(step, []).extend(shown or [])
    return by_step
