"""summary view: run status and totals, failed tests with their messages, run errors."""

from __future__ import annotations

import sqlite3
from typing import Any

from rf_log_listener.store import run_base

from .common import run_row


def summary(conn: sqlite3.Connection, run_id: int, limit: int = 50) -> dict[str, Any]:
    run = run_row(conn, run_id)
    base = run_base(run_id)
    failed = conn.execute(
        "SELECT node_id, name, message FROM nodes WHERE key >= ? AND key < ?"
        " AND type = 'TEST' AND status = 'FAIL' ORDER BY key LIMIT ?",
        (base, run_base(run_id + 1), limit),
    ).fetchall()
    errors = conn.execute(
        "SELECT seq, level, text FROM errors WHERE run_id = ? ORDER BY seq LIMIT ?", (run_id, limit)
    ).fetchall()
    return {
        "run_id": run_id,
        "name": run["name"],
        "status": run["status"],
        "result_status": run["result_status"],
        "origin": run["origin"],
        "source_path": run["source_path"],
        "generator": run["generator"],
        "start_time": run["start_time"],
        "elapsed": run["elapsed"],
        "totals": {k: run[k] for k in ("total", "passed", "failed", "skipped")},
        "failed_tests": [{"id": i, "name": n, "message": m or ""} for i, n, m in failed],
        "errors": [{"id": f"errors-m{s}", "level": lv, "text": t} for s, lv, t in errors],
    }
