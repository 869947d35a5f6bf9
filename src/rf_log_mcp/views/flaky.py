"""flaky_tests view: a suite's tests ranked by flip rate (test_history.FLIP_RATE) over its
newest finished runs (a pabot group counts as one run); tests that never flipped are left out."""

from __future__ import annotations

import sqlite3

from rf_log_listener.errors import ResultError
from rf_log_listener.store import VISIBLE_RUNS

from ..shaping import Shaper
from .across import COUNTED, FINISHED_RUNS, index_all, longnames, suite_units
from .common import RUN_NOT_FOUND, mask_runs
from .history import FLIP_RATE, flips

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any


def flaky_tests(conn: sqlite3.Connection, suite: str | None, window: int, shaper: Shaper,
                position: int | None, page_size: int) -> tuple[dict[str, Any], int | None]:
    index_all(conn)
    if suite is None:
        row = conn.execute(f"SELECT name FROM runs WHERE {VISIBLE_RUNS} AND {FINISHED_RUNS}"
                           f" AND {COUNTED}"
                           " ORDER BY run_id DESC LIMIT 1").fetchone()
        if row is None:
            raise ResultError(RUN_NOT_FOUND, "The store has no finished run.",
                              "Import result files or run robot with the listener first.")
        suite = row[0]
    units = suite_units(conn, suite, window)[::-1]  # oldest first
    place = {rid: number for number, u in enumerate(units) for rid in u.run_ids}
    mask_runs(conn, shaper, list(place))
    statuses: dict[int, list[tuple[int, str, int]]] = {}
    if place:
        for nid, rid, status in conn.execute(
                f"SELECT name_id, run_id, status FROM run_tests WHERE run_id IN"
                f" ({','.join('?' * len(place))})", list(place)):
            statuses.setdefault(nid, []).append((place[rid], status, rid))
    ranked = []
    for nid, seen in statuses.items():
        seen.sort()
        flipped, runs = flips([status for _, status, _ in seen])
        if flipped:
            ranked.append((-flipped / (runs - 1), -flipped, nid, runs, seen))
    ranked.sort()
    start = position or 0
    page = ranked[start:start + page_size]
    names = longnames(conn, (item[2] for item in page))
    view: dict[str, Any] = {"suite": suite, "window": window, "runs_in_window": len(units),
                            "tests_seen": len(statuses), "flaky_count": len(ranked),
                            "definition": FLIP_RATE}
    if units:
        view["oldest_run"], view["newest_run"] = units[0].ref, units[-1].ref
    kept = shaper.fit(view, ({
        "test": shaper.text(names.get(nid, ""), 300), "flip_rate": round(-rate, 3),
        "flips": -flipped, "runs": runs,
        "passed": sum(s == "PASS" for _, s, _ in seen), "failed": sum(s == "FAIL" for _, s, _ in seen),
        "last_status": seen[-1][1], "last_run_id": seen[-1][2],
    } for rate, flipped, nid, runs, seen in page), "tests")
    after = start + kept
    return view, after if after < len(ranked) else None
