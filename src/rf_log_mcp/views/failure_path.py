"""failure_path view: from a failed test down its most severe failing branch to the messages."""

from __future__ import annotations

import sqlite3
from typing import Any

from rf_log_listener.events import LEVELS
from rf_log_listener.store import run_base

from .common import NodeRow, children, node_by_id, own_messages, run_row


def failed_test_ids(conn: sqlite3.Connection, run_id: int) -> list[str]:
    rows = conn.execute(
        "SELECT node_id FROM nodes WHERE key >= ? AND key < ? AND type = 'TEST'"
        " AND status = 'FAIL' ORDER BY key", (run_base(run_id), run_base(run_id + 1)),
    ).fetchall()
    return [r[0] for r in rows]


def failure_path(conn: sqlite3.Connection, run_id: int, test_id: str) -> dict[str, Any]:
    run_row(conn, run_id)
    node = node_by_id(conn, run_id, test_id)
    steps = [_step(conn, run_id, node)]
    while True:
        failing = [c for c in children(conn, run_id, node) if c.status == "FAIL"]
        if not failing:
            break
        # Most severe first; among equals the smaller subtree (the shorter branch), then order.
        node = min(failing, key=lambda c: (-c.max_descendant_level, c.last - c.pre, c.pre))
        steps.append(_step(conn, run_id, node))
    return {"run_id": run_id, "test_id": test_id, "path": steps}


def _step(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> dict[str, Any]:
    messages = own_messages(conn, run_id, node, min_level=LEVELS["WARN"])
    return {
        "id": node.node_id, "type": node.type, "name": node.name, "status": node.status,
        "message": node.message or "",
        "messages": [{"id": i, "level": lv, "text": t} for i, lv, t in messages],
    }
