"""step_window view: the steps around a node in execution order, centred on it, paged both ways.

The window runs over the node's test, or, for nodes outside tests (suite setup/teardown),
over the suite-level keyword that contains it. Steps are nodes in pre-order, so paging is a
key range: O(page), whatever the size of the run.
"""

from __future__ import annotations

import sqlite3

from rf_log_listener.errors import ResultError
from rf_log_listener.store import run_base

from ..shaping import Shaper
from .common import (
    NODE_COLUMNS,
    SELECTOR_REQUIRED,
    NodeContext,
    NodeRow,
    enclosing_scope,
    node_by_id,
    node_item,
    run_row,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any


def step_window(conn: sqlite3.Connection, run_id: int, selector: str | None, shaper: Shaper,
                position: list[Any] | None, page_size: int) -> tuple[dict[str, Any], Any]:
    """A page of steps and the cursor position of the next page (None at the end)."""
    run_row(conn, run_id)
    if not selector:
        raise ResultError(SELECTOR_REQUIRED, "step_window needs a selector.",
                          "Pass a test id (s1-s2-t3) or any node id, e.g. from failure_path.")
    node = node_by_id(conn, run_id, selector)
    scope = enclosing_scope(conn, run_id, node)
    base = run_base(run_id)
    if position is None:
        start = max(scope.pre, node.pre - page_size // 2)
    else:
        start = max(scope.pre, int(position[0]))
    rows = [NodeRow(*r) for r in conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE key BETWEEN ? AND ? ORDER BY key LIMIT ?",
        (base + start, base + scope.last, page_size + 1),
    )]
    page = rows[:page_size]
    ids = NodeContext(conn, run_id)
    steps = [_step(ids.seen(r), scope, node, shaper, ids) for r in page]
    view: dict[str, Any] = {
        "scope_id": scope.node_id, "scope_type": scope.type, "center_id": node.node_id,
        "first_pre": scope.pre, "steps_total": scope.last - scope.pre + 1,
        "position": start - scope.pre,
    }
    if start > scope.pre:
        view["prev_position"] = max(scope.pre, start - page_size) - scope.pre
    kept = shaper.fit(view, steps, "steps")
    if kept < len(page):
        return view, [page[kept].pre]
    return view, [rows[page_size].pre] if len(rows) > page_size else None


def _step(row: NodeRow, scope: NodeRow, center: NodeRow, shaper: Shaper,
          ids: NodeContext) -> dict[str, Any]:
    step = node_item(row, shaper, ids, arg_limit=120, message_limit=300)
    step["depth"] = row.depth - scope.depth
    if row.key == center.key:
        step["center"] = True
    return step
