"""Runs that copy other runs of the store: ``rebot`` outputs whose every test ran in runs
robot wrote into it (``rebot --merge`` of a run and its ``--rerunfailed`` re-run captured
live, pabot's combined output.xml beside its processes' runs, a run's output re-written).

Counted across runs, such a copy would count its tests twice: a test that failed and then
passed in its re-run would read as FAIL, PASS, PASS. A copy keeps its own summary and
views; answers across runs (``rf_log_mcp/views/across.py``) leave it out. Decided when a run
is published (``rows.StoreRowSink.finish_run``, in the publishing transaction), from the
tests' index (``history.py``): a test's twin is a test with the same full name, start time
and status in a finished run robot wrote (not rebot, not itself a copy). Whichever comes
last is decided then: a rebot output published after its runs is marked at once; one
published before them, when the run that gives its last test a twin is published; a copy
whose runs leave the store (``store.prune_run``, ``store.delete_run``) is decided again.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

_KEY = "{0}.run_id * 4294967296 + {0}.pre"  # a test's node: run_base(run_id) + pre
_REBOT = "coalesce(generator, '') LIKE 'Rebot %'"
_FINISHED_UNMARKED = "status IN ('complete', 'interrupted') AND copy_of IS NULL"
# A test's twins are looked for in the runs robot wrote that started within this many days
# before the first test of the rebot output.
_RUN_DAYS = 7

_TESTS = (f"SELECT t.name_id, t.status, n.start_time FROM run_tests t JOIN nodes n"
          f" ON n.key = {_KEY.format('t')} WHERE t.run_id = ?")
# Whether a test of the first run has a twin in the second (primary key seeks only).
_ANY_TWIN = (
    f"SELECT 1 FROM run_tests t JOIN nodes n ON n.key = {_KEY.format('t')}"
    " JOIN run_tests c ON c.run_id = ? AND c.name_id = t.name_id AND c.status = t.status"
    f" JOIN nodes cn ON cn.key = {_KEY.format('c')} AND cn.start_time = n.start_time"
    " WHERE t.run_id = ? LIMIT 1")


def mark_copies(conn: sqlite3.Connection, run_id: int) -> None:
    """Mark the run a copy when it is one; a run robot wrote, the rebot outputs it completes
    (those of its suite not marked yet in which one of its tests has a twin)."""
    row = conn.execute(f"SELECT {_REBOT}, name FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        return
    rebot, name = row
    if rebot:
        _mark_if_copy(conn, run_id)
        return
    for (rebot_run,) in conn.execute(f"SELECT run_id FROM runs WHERE name = ? AND {_REBOT} AND"
                                     f" {_FINISHED_UNMARKED} AND run_id <> ?", (name, run_id)).fetchall():
        if conn.execute(_ANY_TWIN, (rebot_run, run_id)).fetchone() is not None:
            _mark_if_copy(conn, rebot_run)


def release_copies(conn: sqlite3.Connection, run_id: int) -> None:
    """The run leaves the store (deleted, pruned): the copies that may hold its tests (those
    whose first run is not after it) are decided again, so a copy of pruned runs comes back
    into the answers across runs instead of leaving its tests out of them."""
    for (copy,) in conn.execute("SELECT run_id FROM runs WHERE copy_of <= ?", (run_id,)).fetchall():
        conn.execute("UPDATE runs SET copy_of = NULL WHERE run_id = ?", (copy,))
        _mark_if_copy(conn, copy)


def _mark_if_copy(conn: sqlite3.Connection, run_id: int) -> None:
    """Mark ``run_id`` (a rebot output) a copy of the earliest of the runs robot wrote that
    hold a twin of each of its tests, when there are such runs."""
    tests = conn.execute(_TESTS, (run_id,)).fetchall()
    starts = [start for _, _, start in tests]
    if not tests or None in starts:
        return
    try:
        since = (datetime.fromisoformat(min(starts)) - timedelta(days=_RUN_DAYS)).isoformat()
    except ValueError:  # a time this store does not write: no run robot wrote has it
        return
    # runs of the same root suite (rebot keeps its name: --merge the first output's, pabot
    # the suite's), started before the last test
    runs = [r for (r,) in conn.execute(
        f"SELECT run_id FROM runs WHERE name = (SELECT name FROM runs WHERE run_id = ?)"
        f" AND run_id <> ? AND {_FINISHED_UNMARKED} AND NOT {_REBOT} AND start_time >= ?"
        " AND start_time <= ? ORDER BY run_id", (run_id, run_id, since, max(starts)))]
    missing = {(name_id, status, start) for name_id, status, start in tests}
    first = None
    for other in runs:
        found = missing.intersection(conn.execute(_TESTS, (other,)).fetchall())
        if found:
            missing -= found
            if first is None:
                first = other
            if not missing:
                conn.execute("UPDATE runs SET copy_of = ? WHERE run_id = ?", (first, run_id))
                return
