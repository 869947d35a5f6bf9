"""search_messages with group_by: the hits of logged messages grouped by the loop iteration
(``iteration``) or the node (``node``) they were logged in, each group with its count, its
hits by level and its first hit, groups in execution order and paged.

It reads candidates, confirms matches on masked text and scopes exactly as the plain search
(``search.py``); a page ends after ``page_size`` groups. An iteration's messages are one
stretch of the run, so its count is whole; a node's own messages may be interleaved with
its children's, so a node whose messages go on past a page's end appears again on the next
page with the rest of its count.
"""

from __future__ import annotations

import sqlite3

from ..shaping import Shaper
from .common import run_row, shown_assign
from .search import _COMPACT, Filter, _Context, _message_hit, _message_match, _span
from .search_candidates import candidates

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, Literal

    from .search import Scope

    GroupBy = Literal["iteration", "node"]

GROUP_SCAN = 20_000  # hits counted into one page at most: reading a page stays bounded
# Hits whose nodes (and ancestors) are read in one query: a group counts many hits of
# different nodes, each needing its node for its owner.
READ_AHEAD = 100


def grouped_search(conn: sqlite3.Connection, run_id: int, flt: Filter, selector: str | None,
                   scope: Scope | None, group_by: GroupBy, shaper: Shaper, after: int | None,
                   page_size: int) -> tuple[dict[str, Any], int | None]:
    run = run_row(conn, run_id)
    span = _span(conn, run_id, selector, scope)
    context = _Context(conn, run_id, shaper)
    groups: list[dict[str, Any]] = []
    starts: list[int] = []  # each group's first message key
    by_owner: dict[int, dict[str, Any]] = {}
    last_key, more, counted = after, False, 0
    rows = context.read_ahead(candidates(conn, run, flt, span, after), READ_AHEAD, lambda row: row[1])
    for key, node_pre, msg_no, level, _time, text, html in rows:
        node = context.node(node_pre)
        match = _message_match(text, html, node, flt, shaper)
        if match[0] is None:
            last_key = key
            continue
        owner = _owner(context, node) if group_by == "iteration" else node
        group = by_owner.get(owner.pre)
        if group is None:
            if len(groups) == page_size:
                more = True
                break
            hit = {**_message_hit(f"{node.node_id}-m{msg_no}", level, text, html, node, match,
                                  flt, shaper, context), **context.of(node)}
            group = by_owner[owner.pre] = _group(owner, context, hit)
            groups.append(group)
            starts.append(key)
        group["count"] += 1
        group["levels"][level] = group["levels"].get(level, 0) + 1
        last_key, counted = key, counted + 1
        if counted >= GROUP_SCAN:
            more = True
            break
    view: dict[str, Any] = {"query": flt.query, "selector": selector, "group_by": group_by,
                            "scope": (scope or "subtree") if selector else None,
                            "levels": sorted(flt.levels) if flt.levels else None, "hits": []}
    kept = shaper.fit(view, groups, "groups")
    if kept < len(groups):
        return view, starts[kept] - 1
    return view, last_key if more else None


def _owner(context: _Context, node: Any) -> Any:
    """The innermost iteration around ``node`` (within its test), else the node itself."""
    current = node
    while current.type not in ("TEST", "SUITE"):
        if current.type == "ITERATION":
            return current
        if current.parent_pre is None:
            break
        current = context.node(current.parent_pre)
    return node


def _group(owner: Any, context: _Context, hit: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = {"node_id": owner.node_id, "type": owner.type, "count": 0,
                             "levels": {}, "first": {k: hit[k] for k in _COMPACT if k in hit}}
    if owner.type == "ITERATION":
        group["values"] = shown_assign(owner, context.shaper)
    elif owner.name:
        group["name"] = context.shaper.text(owner.name, 80)
    return group

