"""tree view: the direct children of a node under a projection, paged, with long runs of
clean PASS iterations folded into ITERATION_GROUP items.

Projections use the aggregates stored for every node (computed on the full tree while the
run was written), never a pre-filtered tree: ``failures`` keeps a child that failed or has a
failed descendant, ``warnings`` also one whose subtree logged WARN or worse.
"""

from __future__ import annotations

import sqlite3

from rf_log_listener.errors import ResultError
from rf_log_listener.events import LEVELS
from rf_log_listener.store import run_base

from ..shaping import Shaper
from .common import (
    NODE_NOT_FOUND,
    NodeContext,
    NodeRow,
    Siblings,
    child_before,
    first_child,
    next_notable_child,
    node_by_id,
    node_by_key,
    node_item,
    own_messages,
    run_errors,
    run_row,
    shown_assign,
    shown_message,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, Literal

    Projection = Literal["all", "failures", "warnings"]

FOLD_AT = 25  # consecutive clean PASS iterations folded into one ITERATION_GROUP
_WARN = LEVELS["WARN"]


def _kept(node: NodeRow, projection: Projection) -> bool:
    if projection == "all":
        return True
    failing = node.status == "FAIL" or node.failed_descendant_count > 0
    if projection == "failures":
        return failing
    return failing or node.max_descendant_level >= _WARN


# What a projection keeps, as SQL over the notable-nodes index (``all`` keeps everything).
_WANTED = {"failures": "status = 'FAIL' OR failed_descendant_count > 0",
           "warnings": "status = 'FAIL' OR failed_descendant_count > 0 OR max_descendant_level >= 4"}
_LOOPS = ("FOR", "WHILE")


def _clean_iteration(node: NodeRow) -> bool:
    return (node.type == "ITERATION" and node.status == "PASS"
            and node.failed_descendant_count == 0 and node.max_descendant_level < _WARN)


def tree(conn: sqlite3.Connection, run_id: int, selector: str | None, projection: Projection,
         shaper: Shaper, after_key: int | None, page_size: int) -> tuple[dict[str, Any], int | None]:
    """One page of the children of ``selector`` (the run root when None), at O(page) cost
    whatever the number of children: the next child is a primary-key seek, and a run of
    clean iterations, or passing children a projection leaves out, is skipped with one seek
    of the notable-nodes index (common.next_notable_child)."""
    run = run_row(conn, run_id)
    if selector is None:
        return _run_root(conn, run_id, run, shaper), None
    base = run_base(run_id)
    if selector.startswith("ig:"):
        parent, first, last = group_span(conn, run_id, selector)
        fold, end_key = False, last.key
    else:
        parent = node_by_id(conn, run_id, selector)
        first = first_child(conn, parent)
        fold, end_key = parent.type in _LOOPS, base + parent.last
    node = first
    siblings = Siblings(conn, run_id, end_key)
    if after_key is not None:
        node = siblings.after(node_by_key(conn, after_key))
    also = _WANTED.get(projection)
    ids = NodeContext(conn, run_id)
    ids.seen(parent)
    items: list[tuple[int, dict[str, Any]]] = []  # (key to continue after, item)
    while node is not None and len(items) <= page_size:
        if also is not None and not _kept(node, projection):
            node = next_notable_child(conn, run_id, parent, node.pre, also)
            if node is not None and node.key > end_key:
                node = None
            continue
        if fold and _clean_iteration(node):
            boundary = next_notable_child(conn, run_id, parent, node.pre + 1)
            count = (boundary.seq if boundary else parent.child_count) - node.seq
            if count >= FOLD_AT:
                last_member = child_before(conn, run_id, parent,
                                           boundary.key if boundary else end_key + 1)
                items.append((last_member.key, _group_item(parent, node, last_member, count, shaper)))
                node = boundary
                continue
        items.append((node.key, node_item(node, shaper, ids)))
        node = siblings.after(node)
    more = len(items) > page_size
    page = items[:page_size]
    view: dict[str, Any] = {"node": _expanded(conn, run_id, parent, shaper, ids)}
    kept = shaper.fit(view, [item for _, item in page], "children")
    if kept < len(page) or more:
        return view, page[kept - 1][0]
    return view, None


def _run_root(conn: sqlite3.Connection, run_id: int, run: dict[str, Any], shaper: Shaper) -> dict[str, Any]:
    root = node_by_key(conn, run_base(run_id))
    items = [node_item(root, shaper, NodeContext(conn, run_id))]
    errors, distinct = run_errors(conn, run_id, shaper, 10)
    if errors:
        items.append({"kind": "RUN_ERRORS", "count": run["error_count"], "distinct": distinct,
                      "messages": errors})
    view: dict[str, Any] = {"node": {"kind": "RUN", "run_id": run_id, "status": run["status"],
                                     "name": run["name"]}}
    shaper.fit(view, items, "children")
    return view


def _group_item(parent: NodeRow, first: NodeRow, last: NodeRow, count: int,
                shaper: Shaper) -> dict[str, Any]:
    group_id = f"ig:{parent.node_id}:{first.seq + 1}-{last.seq + 1}"
    return {
        "kind": "ITERATION_GROUP", "group_id": group_id, "status": "PASS", "count": count,
        "first_node_id": first.node_id, "last_node_id": last.node_id,
        "first_assign": shown_assign(first, shaper), "last_assign": shown_assign(last, shaper),
        "expand_selector": group_id,
    }


def group_span(conn: sqlite3.Connection, run_id: int, selector: str) -> tuple[NodeRow, NodeRow, NodeRow]:
    """The loop and the first and last iterations of an ``ig:<loop id>:<first>-<last>``
    group, where first and last count the loop's iterations from 1 (iteration N is
    ``<loop id>-kN``, RF's own id)."""
    try:
        _, parent_id, span = selector.split(":")
        first_no, last_no = (int(x) for x in span.split("-"))
    except ValueError:
        raise ResultError(NODE_NOT_FOUND, f"{selector!r} is not a group id.",
                          "Use expand_selector of an ITERATION_GROUP as it was returned.") from None
    parent = node_by_id(conn, run_id, parent_id)
    try:
        if not 1 <= first_no <= last_no:
            raise ResultError(NODE_NOT_FOUND, "empty")
        first = node_by_id(conn, run_id, f"{parent_id}-k{first_no}")
        last = node_by_id(conn, run_id, f"{parent_id}-k{last_no}")
    except ResultError:
        first = last = None
    if first is None or last is None or parent.type not in _LOOPS or (
            first.parent_pre, last.parent_pre) != (parent.pre, parent.pre):
        raise ResultError(NODE_NOT_FOUND, f"Run {run_id} has no iterations in {selector!r}.",
                          "Use expand_selector of an ITERATION_GROUP as it was returned.")
    return parent, first, last


def _expanded(conn: sqlite3.Connection, run_id: int, node: NodeRow, shaper: Shaper,
              ids: NodeContext) -> dict[str, Any]:
    item = node_item(node, shaper, ids)
    if node.message_count:
        item["messages"] = _message_summary(conn, run_id, node, shaper, ids)
    return item


def _message_summary(conn: sqlite3.Connection, run_id: int, node: NodeRow, shaper: Shaper,
                     ids: NodeContext) -> dict[str, Any]:
    """The node's own messages: counts by level, and the WARN-or-worse and HTML ones
    (shortened; HTML ones as their attachments). Full TRACE/DEBUG/INFO text is never sent
    here; search for it."""
    by_level: dict[str, int] = {}
    important = []
    for message_id, level, text, html in own_messages(conn, run_id, node):
        by_level[level] = by_level.get(level, 0) + 1
        if (html or LEVELS.get(level, 3) >= _WARN) and len(important) < 10:
            important.append(shown_message(message_id, level, text, html, node, shaper, ids, 600))
    return {"by_level": by_level, "important": important or None}
