"""summary view: run status and totals, one page of failed tests with their messages, run errors."""

from __future__ import annotations

import sqlite3
from typing import Any

from rf_log_listener.store import FAILED_STARTS, run_base

from ..shaping import Shaper
from ..sources import Locator
from .common import run_errors, run_row

ERRORS_SHOWN = 20


def summary(conn: sqlite3.Connection, run_id: int, shaper: Shaper, after_key: int | None,
            page_size: int) -> tuple[dict[str, Any], int | None]:
    """The summary and the key to continue the failed-test list from (None: no more)."""
    run = run_row(conn, run_id)
    base = run_base(run_id)
    rows = conn.execute(
        f"SELECT key, node_id, name, message FROM nodes INDEXED BY nodes_failed"
        f" WHERE key > ? AND key < ? AND {FAILED_STARTS} AND type = 'TEST' ORDER BY key LIMIT ?",
        (after_key if after_key is not None else base - 1, run_base(run_id + 1), page_size + 1),
    ).fetchall()
    view: dict[str, Any] = {
        "name": run["name"], "status": run["status"], "result_status": run["result_status"],
        "origin": run["origin"], "source_path": run["source_path"], "generator": run["generator"],
        "source_root": Locator(conn, run_id).root_dir,
        "start_time": run["start_time"], "elapsed": run["elapsed"],
        "totals": {k: run[k] for k in ("total", "passed", "failed", "skipped")},
        "error_count": run["error_count"] or 0,
    }
    if after_key is None:  # the first page only: later pages continue the failed tests
        view["errors"], view["error_kinds"] = run_errors(conn, run_id, shaper, ERRORS_SHOWN)
    if run["status"] in ("running", "interrupted"):
        view["unfinished"] = _unfinished(conn, run_id)
    page = rows[:page_size]
    tests = [{"node_id": i, "name": n, "message": shaper.text(m or "", 500)} for _, i, n, m in page]
    kept = shaper.fit(view, tests, "failed_tests")
    if kept < len(page):
        return view, page[kept - 1][0]
    return view, page[-1][0] if len(rows) > page_size else None


def _unfinished(conn: sqlite3.Connection, run_id: int) -> list[dict[str, Any]]:
    """What is running now (a live run) or was running when the run stopped: the open nodes,
    outermost first. They form one chain, so there are as many as the tree is deep."""
    rows = conn.execute(
        "SELECT node_id, type, name FROM nodes WHERE key >= ? AND key < ?"
        " AND status IN ('RUNNING', 'NOT FINISHED') ORDER BY key LIMIT 50",
        (run_base(run_id), run_base(run_id + 1)),
    ).fetchall()
    return [{"node_id": i, "type": t, "name": n or ""} for i, t, n in rows]
