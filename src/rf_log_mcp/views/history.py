"""test_history view (the tool of that name): one test across the finished runs that ran it,
newest first, with its current streak, where that streak began, its last pass, and its flip
rate.

Flip rate (the flakiness measure of this view and of flaky_tests): over the newest runs of
the window in which the test passed or failed (skips and other statuses left out), the
number of times its status differs from the run before, divided by the number of such
consecutive pairs; 0 is stable, 1 flips every run. A number, never a verdict on why.
"""

from __future__ import annotations

import itertools
import json
import sqlite3

from rf_log_listener.store import VISIBLE_RUNS

from ..shaping import Shaper
from .across import (
    FINISHED,
    UNCOUNTED_IDS,
    Outcome,
    index_all,
    node_ids,
    resolve_test,
    signature_texts,
)
from .common import mask_runs

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

FLIP_RATE = ("flips / (runs - 1) over the newest runs in the window where the test passed or "
             "failed; a flip is a status different from the run before (0: stable, 1: every run)")


def flips(statuses: list[str]) -> tuple[int, int]:
    """(flips, runs counted): PASS/FAIL only, in run order."""
    counted = [s for s in statuses if s in ("PASS", "FAIL")]
    return sum(a != b for a, b in itertools.pairwise(counted)), len(counted)


def flakiness(statuses: list[str], window: int) -> dict[str, Any]:
    flipped, runs = flips(statuses)
    return {"window": window, "runs": runs, "flips": flipped,
            "flip_rate": round(flipped / (runs - 1), 3) if runs > 1 else None,
            "definition": FLIP_RATE}


def history_of(conn: sqlite3.Connection, test: str, shaper: Shaper, position: int | None,
                 limit: int) -> tuple[dict[str, Any], int | None]:
    index_all(conn)
    nid, longname = resolve_test(conn, test)
    rows = conn.execute(
        f"SELECT t.run_id, t.pre, t.status, t.elapsed, t.signature_id, r.start_time, r.label,"
        f" r.ci, (SELECT min(g.run_id) FROM runs g WHERE g.run_group = r.run_group), r.status"
        f" FROM run_tests t JOIN runs r USING (run_id)"
        f" WHERE t.name_id = ? AND r.{VISIBLE_RUNS} AND t.run_id NOT IN ({UNCOUNTED_IDS})"
        f" ORDER BY t.run_id DESC", (nid,)).fetchall()
    rows = [row for row in rows if row[9] in FINISHED]
    mask_runs(conn, shaper, [row[0] for row in rows])
    statuses = [row[2] for row in rows]
    view: dict[str, Any] = {"test": shaper.text(longname, 300), "runs_total": len(rows),
                            "flakiness": flakiness(statuses[:limit][::-1], limit)}
    if rows:
        streak = next((i for i, s in enumerate(statuses) if s != statuses[0]), len(statuses))
        view["streak"] = {"status": statuses[0], "runs": streak,
                          "since": _brief(rows[streak - 1])}
        last_pass = next((row for row in rows if row[2] == "PASS"), None)
        if last_pass is not None:
            view["last_pass"] = _brief(last_pass)
    start = 0
    if position is not None:
        start = next((i for i, row in enumerate(rows) if row[0] < position), len(rows))
    page = rows[start:start + limit]
    ids = node_ids(conn, [Outcome(row[0], row[1], row[2], row[3], row[4]) for row in page])
    texts = signature_texts(conn, (row[4] for row in page))
    kept = shaper.fit(view, (_entry(row, ids, texts, shaper) for row in page), "runs")
    more = start + kept < len(rows)
    return view, page[kept - 1][0] if more and kept else None


def _brief(row: tuple[Any, ...]) -> dict[str, Any]:
    return {"run_id": row[0], "start_time": row[5]}


def _entry(row: tuple[Any, ...], ids: dict[tuple[int, int], str], texts: dict[int, str],
           shaper: Shaper) -> dict[str, Any]:
    run_id, pre, status, elapsed, sig, start_time, label, ci, group_first = row[:9]
    entry: dict[str, Any] = {"run": f"g{group_first}" if group_first else str(run_id), "run_id": run_id,
                             "node_id": ids[(run_id, pre)], "status": status,
                             "elapsed": elapsed, "start_time": start_time, "label": label}
    context = json.loads(ci) if ci else {}
    entry.update({key: context[key] for key in ("branch", "commit", "build") if key in context})
    if sig is not None:
        entry["signature"] = shaper.text(texts.get(sig, ""), 300)
    return entry
