"""Row access shared by the views: runs and nodes by id, children, the visible-run rule."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from rf_log_listener.errors import ResultError
from rf_log_listener.store import mark_dead_live_runs, run_base

RUN_NOT_FOUND = "RUN_NOT_FOUND"
NODE_NOT_FOUND = "NODE_NOT_FOUND"

# An import still in progress (or one that died) is never shown.
VISIBLE = "status != 'importing'"

NODE_COLUMNS = (
    "key, pre, last, parent_pre, node_id, type, name, owner, status, message, elapsed,"
    " failed_descendant_count, max_descendant_level, msg_lo, msg_hi, args, owner_test, assign,"
    " fields, child_count, message_count, depth"
)


@dataclass(frozen=True)
class NodeRow:
    key: int
    pre: int
    last: int
    parent_pre: int | None
    node_id: str
    type: str
    name: str
    owner: str | None
    status: str
    message: str | None
    elapsed: float | None
    failed_descendant_count: int
    max_descendant_level: int
    msg_lo: int
    msg_hi: int
    args: str | None
    owner_test: int | None
    assign: str | None
    fields: str | None
    child_count: int
    message_count: int
    depth: int


def run_row(conn: sqlite3.Connection, run_id: int) -> dict[str, Any]:
    if conn.execute("SELECT 1 FROM runs WHERE run_id = ? AND status = 'running'", (run_id,)).fetchone():
        mark_dead_live_runs(conn)
    cur = conn.execute(f"SELECT * FROM runs WHERE run_id = ? AND {VISIBLE}", (run_id,))
    row = cur.fetchone()
    if row is None:
        raise ResultError(RUN_NOT_FOUND, f"No run {run_id} in the store.",
                          "List runs with `rf-log-mcp runs`, or import the result file first.")
    return dict(zip([d[0] for d in cur.description], row, strict=True))


def node_by_id(conn: sqlite3.Connection, run_id: int, node_id: str) -> NodeRow:
    row = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE run_id = ? AND node_id = ?", (run_id, node_id)
    ).fetchone()
    if row is None:
        raise ResultError(NODE_NOT_FOUND, f"Run {run_id} has no node {node_id!r}.",
                          "Node ids look like s1-s2-t3-k4; take them from summary or tree.")
    return NodeRow(*row)


# Children are found by hopping: the first child is at pre + 1, the next sibling of a node
# at its last + 1. Primary-key seeks only, so no index on parent is maintained on import.
_CHILDREN = f"""
WITH RECURSIVE kids(key, last) AS (
    SELECT key, last FROM nodes WHERE key = :first AND :first <= :end
    UNION ALL
    SELECT n.key, n.last FROM kids JOIN nodes AS n ON n.key = :base + kids.last + 1
    WHERE :base + kids.last + 1 <= :end
)
SELECT {NODE_COLUMNS} FROM nodes WHERE key IN (SELECT key FROM kids) ORDER BY key
"""


def node_by_key(conn: sqlite3.Connection, key: int) -> NodeRow:
    row = conn.execute(f"SELECT {NODE_COLUMNS} FROM nodes WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise ResultError(NODE_NOT_FOUND, f"No node at key {key}.")
    return NodeRow(*row)


def children(conn: sqlite3.Connection, run_id: int, parent: NodeRow) -> list[NodeRow]:
    base = run_base(run_id)
    rows = conn.execute(
        _CHILDREN, {"first": parent.key + 1, "end": base + parent.last, "base": base},
    ).fetchall()
    return [NodeRow(*row) for row in rows]


def own_messages(conn: sqlite3.Connection, run_id: int, node: NodeRow,
                 min_level: int = 0) -> list[tuple[str, str, str]]:
    """(message id, level, text) of the node's own messages, in order."""
    from rf_log_listener.events import LEVELS

    base = run_base(run_id)
    rows = conn.execute(
        "SELECT msg_no, level, text FROM messages WHERE key >= ? AND key < ? AND node_pre = ?"
        " ORDER BY key", (base + node.msg_lo, base + node.msg_hi, node.pre),
    ).fetchall()
    return [(f"{node.node_id}-m{n}", level, text) for n, level, text in rows
            if LEVELS.get(level, 3) >= min_level]
