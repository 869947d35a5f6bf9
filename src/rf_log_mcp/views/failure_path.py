"""failure_path view: from a failed test down its most severe failing branch to the messages."""

from __future__ import annotations

import sqlite3
from typing import Any

from rf_log_listener.events import LEVELS
from rf_log_listener.store import FAILED_STARTS, run_base

from ..attachments import parse as parse_html
from ..shaping import Shaper
from .common import (
    NodeContext,
    NodeRow,
    node_by_id,
    node_by_key,
    node_item,
    notable_children,
    own_messages,
    run_row,
    shown_attachments,
    shown_message,
)

_ATTACHMENTS = 10  # HTML messages a failure path lists the attachments of


def failed_starts(conn: sqlite3.Connection, run_id: int) -> list[tuple[int, str]]:
    """Keys and types of failed tests, and of failed suite setups/teardowns (no test owns
    those), in run order."""
    return conn.execute(
        f"SELECT key, type FROM nodes INDEXED BY nodes_failed WHERE key >= ? AND key < ?"
        f" AND {FAILED_STARTS} ORDER BY key", (run_base(run_id), run_base(run_id + 1)),
    ).fetchall()


def failure_path(conn: sqlite3.Connection, run_id: int, selector: str | None, shaper: Shaper,
                 after_key: int | None) -> tuple[dict[str, Any] | None, int | None]:
    """The path of the selected node's test (or the next failed start) and the next start."""
    run_row(conn, run_id)
    found = failed_starts(conn, run_id)
    starts = [key for key, _ in found]
    if selector:
        node = node_by_id(conn, run_id, selector)
        if node.type != "TEST" and node.owner_test is not None:
            node = node_by_key(conn, run_base(run_id) + node.owner_test)
        following = [k for k in starts if k > node.key]
    else:
        pending = [k for k in starts if after_key is None or k > after_key]
        if not pending:
            return None, None
        node = node_by_key(conn, pending[0])
        following = pending[1:]
    ids = NodeContext(conn, run_id)
    nodes = [node]
    while True:
        failing = list(notable_children(conn, run_id, node, "status = 'FAIL'"))
        if not failing:
            break
        if len(failing) > 1 and failing[0].name and len({(c.name, c.args) for c in failing}) == 1:
            node = failing[-1]  # attempts of one call (a retry): the last one decided
        elif len(failing) > 1:
            # The shortest failing branch first; between equally short ones the one whose
            # messages are more severe; then execution order.
            node = min(failing, key=lambda c: (_failing_depth(conn, run_id, c),
                                               -c.max_descendant_level, c.pre))
        else:
            node = failing[0]
        nodes.append(node)
    attachments = _attachments(conn, run_id, nodes, shaper, ids)
    # Steps are shaped as the budget takes them: a path thousands of levels deep (recursion)
    # costs the steps shown, not the path.
    # A parent's status message repeating its failing child's is said once, by the child.
    repeated = {number for number in range(len(nodes) - 1)
                if nodes[number].message and nodes[number].message == nodes[number + 1].message}
    steps = (_step(conn, run_id, ids.seen(n), shaper, ids, attachments.get(number),
                   number in repeated) for number, n in enumerate(nodes))
    tests = sum(1 for _, kind in found if kind == "TEST")
    view: dict[str, Any] = {"start_id": nodes[0].node_id, "failed_tests_total": tests,
                            "failed_suite_fixtures_total": len(found) - tests}
    shaper.fit(view, steps, "path")
    return view, (following[0] - 1 if following and not selector else None)


def _failing_depth(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> int:
    """How many levels below ``node`` its deepest failed descendant is."""
    base = run_base(run_id)
    deepest = conn.execute(
        "SELECT max(depth) FROM nodes WHERE key > ? AND key <= ? AND status = 'FAIL'",
        (node.key, base + node.last),
    ).fetchone()[0]
    return (deepest - node.depth) if deepest is not None else 0


def _step(conn: sqlite3.Connection, run_id: int, node: NodeRow, shaper: Shaper,
          ids: NodeContext, attachments: list[dict[str, Any]] | None,
          repeated: bool) -> dict[str, Any]:
    """A step of the path: the node, its WARN-and-worse messages, its attachments; its status
    message unless the next step or its own messages say the same."""
    messages = [shown_message(i, lv, t, html, node, shaper, ids)
                for i, lv, t, html in own_messages(conn, run_id, node, LEVELS["WARN"])]
    step = node_item(node, shaper, ids, message_limit=1200)
    if repeated:
        step.pop("message", None)
    if messages:
        step["messages"] = messages
        if step.get("message") in {m["text"] for m in messages}:
            del step["message"]  # the failing message says it already
    if attachments:
        step["attachments"] = attachments
    return step


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
        step = on_path.get(pre, len(nodes) - 1 if last.pre <= pre <= last.last else 0)
        shown = shown_attachments(f"{ids(pre)}-m{number}", parse_html(text)[1], shaper, ids)
        by_step.setdefault(step, []).extend(shown or [])
    return by_step
