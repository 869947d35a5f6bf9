"""summary view: run status and totals, one page of failed tests with their messages, run errors."""

from __future__ import annotations

import sqlite3
from typing import Any

from rf_log_listener.store import FAILED_STARTS, run_base

from ..shaping import Shaper
from ..sources import Locator
from .common import node_by_key, run_errors, run_row
from .failing import shown_cause

ERRORS_SHOWN = 20
GROUPS_SHOWN = 5  # failure messages shared by several tests, most common first


def summary(conn: sqlite3.Connection, run_id: int, shaper: Shaper,
            position: int | list[int] | None, page_size: int) -> tuple[dict[str, Any], Any]:
    """The summary and where to continue the failed-test list (None: no more).

    A running run's summary also gives ``follow_position``: past every failed test and run
    error it shows. Passed back (as a cursor) it answers only what is new since: failed
    tests (tests end in key order, so none is missed) and run errors, with the current
    totals and what runs now."""
    run = run_row(conn, run_id)
    base = run_base(run_id)
    follow = isinstance(position, list)
    after_key, errors_after = position if isinstance(position, list) else (position, None)
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
        groups = _failure_groups(conn, run_id, shaper)
        if groups:
            view["failure_groups"] = groups
    elif follow:
        errors, kinds = run_errors(conn, run_id, shaper, ERRORS_SHOWN, errors_after)
        if errors:
            view["errors"], view["error_kinds"] = errors, kinds
    if run["status"] in ("running", "interrupted"):
        view["unfinished"] = _unfinished(conn, run_id)
    page = rows[:page_size]
    tests = [{"node_id": i, "name": n, "message": shaper.text(m or "", 500)} for _, i, n, m in page]
    kept = shaper.fit(view, tests, "failed_tests")
    last_shown = page[kept - 1][0] if kept else after_key
    if run["status"] == "running":
        errors_seen = conn.execute("SELECT max(seq) FROM errors WHERE run_id = ?",
                                   (run_id,)).fetchone()[0]
        view["follow_position"] = [base - 1 if last_shown is None else last_shown,
                                   errors_seen or 0]
    more = kept < len(page) or len(rows) > page_size
    if not more:
        return view, None
    return view, [last_shown, errors_after or 0] if follow else last_shown


def _unfinished(conn: sqlite3.Connection, run_id: int) -> list[dict[str, Any]]:
    """What is running now (a live run) or was running when the run stopped: the open nodes,
    outermost first. They form one chain, so there are as many as the tree is deep."""
    rows = conn.execute(
        "SELECT node_id, type, name FROM nodes WHERE key >= ? AND key < ?"
        " AND status IN ('RUNNING', 'NOT FINISHED') ORDER BY key LIMIT 50",
        (run_base(run_id), run_base(run_id + 1)),
    ).fetchall()
    return [{"node_id": i, "type": t, "name": n or ""} for i, t, n in rows]


def _failure_groups(conn: sqlite3.Connection, run_id: int, shaper: Shaper) -> list[dict[str, Any]]:
    """Failure messages several failed tests share, most common first, each with its first
    test and, when the tests failed for something outside them (a fatal stop, a parent
    suite's setup), that cause and its root message."""
    base = run_base(run_id)
    rows = conn.execute(
        f"SELECT message, count(*), min(key) FROM nodes INDEXED BY nodes_failed"
        f" WHERE key >= ? AND key < ? AND {FAILED_STARTS} AND type = 'TEST'"
        f" GROUP BY message HAVING count(*) > 1 ORDER BY count(*) DESC, min(key) LIMIT ?",
        (base, run_base(run_id + 1), GROUPS_SHOWN)).fetchall()
    groups = []
    for message, count, first in rows:
        first_test = node_by_key(conn, first)
        group = {"message": shaper.text(message or "", 300), "count": count,
                 "first_test_id": first_test.node_id}
        cause = shown_cause(conn, run_id, first_test, shaper)
        if cause:
            group["cause"] = cause
        groups.append(group)
    return groups
