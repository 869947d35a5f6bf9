"""What the views across runs share: runs and pabot groups as one unit, each run's tests by
full name (``rf_log_listener/history.py``), which earlier run to compare with, and how often a
failure signature was seen before.

A *unit* is what is compared and listed as one run: a run, or the processes of one pabot
execution (``run_group``), referred to as ``g<first run id>``.
"""

from __future__ import annotations

import json
import sqlite3
from collections import namedtuple
from collections.abc import Iterable

from rf_log_listener.errors import INVALID_ARGUMENT, ResultError
from rf_log_listener.history import failed_test_signatures, index_run, name_id, test_rows
from rf_log_listener.signatures import RULES
from rf_log_listener.store import VISIBLE_RUNS, is_read_only, mark_dead_live_runs, run_base

from .common import RUN_NOT_FOUND, names_test, robot_normalized

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

TEST_NOT_FOUND = "TEST_NOT_FOUND"
FINISHED = ("complete", "interrupted")
FINISHED_RUNS = "status IN ('complete', 'interrupted')"  # FINISHED, in SQL
# robot --dryrun checks keywords without running them: its tests' statuses are no outcomes;
# a rebot output of runs of the store (rebot --merge of a run and its re-run, pabot's combined
# output: rf_log_listener/copies.py) repeats theirs. Both are left out of every answer across
# runs (their own summaries show them).
COUNTED = "coalesce(dry_run, 0) = 0 AND copy_of IS NULL"
UNCOUNTED_IDS = "SELECT run_id FROM runs WHERE dry_run = 1 OR copy_of IS NOT NULL"

_RUN_COLUMNS = "run_id, status, name, label, start_time, ci, run_group, tests_indexed"


class Unit(namedtuple("Unit", "ref run_ids name status label start_time ci")):
    """A run, or a pabot group of runs, as one: ``ref`` "17" or "g17", ``run_ids`` (a tuple),
    ``name``, ``status``, ``label``, ``start_time`` (str or None), ``ci`` (dict of str)."""

    __slots__ = ()

    @property
    def first(self) -> int:
        return self.run_ids[0]

    def described(self) -> dict[str, Any]:
        """The unit as answers name it."""
        return {"run": self.ref, "run_ids": list(self.run_ids), "name": self.name,
                "status": self.status, "label": self.label, "start_time": self.start_time,
                **{key: self.ci[key] for key in ("branch", "commit", "build") if key in self.ci}}


# A test's outcome in a run: run_id, pre (int), status (str), elapsed (float or None),
# signature_id (int or None); longname and signature (str or None) are read from the nodes
# for a running run, whose tests are not in test_names and signatures yet.
Outcome = namedtuple("Outcome", "run_id pre status elapsed signature_id longname signature",
                     defaults=(None, None))


def combined_status(statuses: Iterable[str]) -> str:
    """A pabot group's status from its runs': running while one runs, else interrupted or
    failed when one is, else complete."""
    found = set(statuses)
    return next((s for s in ("running", "interrupted", "failed") if s in found), "complete")


# What a group's runs add up to (list_runs' item, the group summary).
_MEMBER_COLUMNS = ("run_id, status, result_status, total, passed, failed, skipped, start_time,"
                   " error_count")


def group_totals(conn: sqlite3.Connection, run_group: str) -> dict[str, Any]:
    """The runs of a pabot group as one: their ids, combined status and root status (FAIL
    if one failed), first start time, summed test counts and run errors."""
    rows = conn.execute(f"SELECT {_MEMBER_COLUMNS} FROM runs WHERE run_group = ? AND"
                        f" {VISIBLE_RUNS} ORDER BY run_id", (run_group,)).fetchall()
    results = {row[2] for row in rows}
    return {"run_ids": [row[0] for row in rows],
            "status": combined_status(row[1] for row in rows),
            "result_status": next((r for r in ("FAIL", "PASS", "SKIP") if r in results), None),
            "start_time": min((row[7] for row in rows if row[7]), default=None),
            "totals": {key: sum(row[i] or 0 for row in rows)
                       for i, key in enumerate(("total", "passed", "failed", "skipped"), start=3)},
            "error_count": sum(row[8] or 0 for row in rows)}


def _unit_of(rows: list[tuple[Any, ...]], grouped: bool) -> Unit:
    status = combined_status(row[1] for row in rows)
    first = rows[0]
    return Unit(ref=f"g{first[0]}" if grouped else str(first[0]),
                run_ids=tuple(row[0] for row in rows), name=first[2], status=status,
                label=first[3], start_time=min((r[4] for r in rows if r[4]), default=None),
                ci=json.loads(first[5]) if first[5] else {})


def unit(conn: sqlite3.Connection, ref: str | int) -> Unit:
    """``17``: run 17 alone; ``g17``: the pabot group run 17 belongs to (run 17 alone when it
    belongs to none)."""
    text = str(ref).strip().lower()
    grouped = text.startswith("g")
    digits = text[1:] if grouped else text
    if not digits.isdigit():
        raise ResultError(INVALID_ARGUMENT, f"{ref!r} is not a run: pass a run id (17) or a run "
                          "group (g17).", "Run ids and groups come from list_runs.")
    mark_dead_live_runs(conn)
    row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ? AND {VISIBLE_RUNS}",
                       (int(digits),)).fetchone()
    if row is None:
        raise ResultError(RUN_NOT_FOUND, f"No run {digits} in the store.",
                          "Call list_runs for the runs in the store.")
    if not grouped or row[6] is None:
        return _unit_of([row], False)
    members = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_group = ? AND"
                           f" {VISIBLE_RUNS} ORDER BY run_id", (row[6],)).fetchall()
    return _unit_of(members, True)


def refuse_dry_run(conn: sqlite3.Connection, unit_: Unit) -> None:
    """INVALID_ARGUMENT when a run of ``unit_`` is a dry run: nothing in it ran to compare."""
    dry = conn.execute(f"SELECT min(run_id) FROM runs WHERE run_id IN"
                       f" ({','.join('?' * len(unit_.run_ids))}) AND dry_run = 1",
                       unit_.run_ids).fetchone()[0]
    if dry is not None:
        raise ResultError(INVALID_ARGUMENT, f"Run {dry} is a dry run (robot --dryrun): its "
                          "keywords were checked, not run, so its tests have no outcomes to "
                          "compare.", "Compare runs that ran (list_runs marks dry runs); the "
                          "dry run's summary lists what failed its checks.")


_ROWS_PER_UNIT = 16  # runs read per unit wanted: a pabot group is several runs


def suite_units(conn: sqlite3.Connection, suite: str | None, limit: int,
                before_run: int | None = None, where: str = "",
                params: Iterable[Any] = ()) -> list[Unit]:
    """Up to ``limit`` finished units of a suite (before run ``before_run``), newest first."""
    rows = conn.execute(
        f"SELECT {_RUN_COLUMNS} FROM runs WHERE name IS ? AND run_id < ? AND {VISIBLE_RUNS}"
        f" AND {FINISHED_RUNS} AND {COUNTED} {where} ORDER BY run_id DESC LIMIT ?",
        (suite, before_run if before_run is not None else 1 << 62, *params,
         limit * _ROWS_PER_UNIT)).fetchall()
    return group_rows(rows)[:limit]


def group_rows(rows: list[tuple[Any, ...]]) -> list[Unit]:
    """Run rows (newest first) as units: a group's runs become one, at its newest run's place."""
    units: list[Unit] = []
    seen: dict[str, list[tuple[Any, ...]]] = {}
    order: list[Any] = []
    for row in rows:
        group = row[6]
        if group is None:
            order.append(row)
        elif group not in seen:
            seen[group] = [row]
            order.append(group)
        else:
            seen[group].append(row)
    for item in order:
        if isinstance(item, str):
            units.append(_unit_of(sorted(seen[item]), True))
        else:
            units.append(_unit_of([item], False))
    return units


def previous_unit(conn: sqlite3.Connection, head: Unit) -> tuple[Unit | None, str]:
    """The unit compare_runs compares ``head`` with when no base is given, and why that one:
    the newest complete unit of the same suite before it, with the same label and branch when
    ``head`` has them, else with fewer of those."""
    branch = head.ci.get("branch")
    tries: list[tuple[str, str, list[Any]]] = []
    if head.label is not None and branch:
        tries.append(("same suite, label and branch", "AND label = ? AND json_extract(ci, "
                      "'$.branch') = ?", [head.label, branch]))
    if branch:
        tries.append(("same suite and branch", "AND json_extract(ci, '$.branch') = ?", [branch]))
    if head.label is not None:
        tries.append(("same suite and label", "AND label = ?", [head.label]))
    tries.append(("same suite", "", []))
    before = head.first
    copied = conn.execute("SELECT copy_of FROM runs WHERE run_id = ?", (before,)).fetchone()
    if copied is not None and copied[0] is not None:  # a rebot output: before the runs it copies
        before = copied[0]
    for reason, where, params in tries:
        found = [u for u in suite_units(conn, head.name, 20, before, where, params)
                 if u.status == "complete"]
        if found:
            return found[0], f"the newest complete run before it with the {reason}"
    return None, "no complete run of the same suite before it"


def ensure_indexed(conn: sqlite3.Connection, run_ids: Iterable[int]) -> set[int]:
    """Index the finished runs whose tests are not indexed yet with these rules (stores made
    before history existed, rules changed); the runs whose ``run_tests`` now hold their tests
    (the others: running, or a read-only store that could not index them, are read from
    their nodes as they stand)."""
    ids = list(run_ids)
    finished = {rid: indexed for rid, status, indexed in conn.execute(
        f"SELECT run_id, status, tests_indexed FROM runs WHERE run_id IN"
        f" ({','.join('?' * len(ids))})", ids) if status in FINISHED}
    done = {rid for rid, indexed in finished.items() if indexed == RULES}
    for rid in finished.keys() - done:
        try:
            index_run(conn, rid)
        except sqlite3.OperationalError as exc:
            if not is_read_only(exc):
                raise
            break
        done.add(rid)
    return done


def index_all(conn: sqlite3.Connection) -> None:
    """Index every finished run not indexed with these rules (once, after an upgrade)."""
    ensure_indexed(conn, [rid for (rid,) in conn.execute(
        f"SELECT run_id FROM runs WHERE {VISIBLE_RUNS} AND {FINISHED_RUNS}"
        " AND tests_indexed IS NOT ?", (RULES,))])


def tests_of(conn: sqlite3.Connection, unit_: Unit) -> dict[int, Outcome]:
    """The unit's tests by name id (``history.name_id`` of the full name). A running run's
    (or a run a read-only store could not index) are read from its nodes as they stand."""
    indexed = ensure_indexed(conn, unit_.run_ids)
    found: dict[int, Outcome] = {}
    for rid in unit_.run_ids:
        if rid in indexed:
            for nid, pre, st, elapsed, sig in conn.execute(
                    "SELECT name_id, pre, status, elapsed, signature_id FROM run_tests"
                    " WHERE run_id = ?", (rid,)):
                found.setdefault(nid, Outcome(rid, pre, st, elapsed, sig))
            continue
        for row in test_rows(conn, rid):
            sig = name_id(row.signature) if row.signature else None
            found.setdefault(name_id(row.longname), Outcome(
                rid, row.pre, row.status, row.elapsed, sig, row.longname, row.signature))
    return found


def run_signatures(conn: sqlite3.Connection, run_id: int) -> tuple[dict[int, int], dict[int, str]]:
    """The signature id of each failed test of the run, by the test's pre; and the texts of
    those not in the store yet (a running run's, computed from its nodes)."""
    stored: dict[int, int] = {}
    if run_id in ensure_indexed(conn, [run_id]):
        stored = dict(conn.execute("SELECT pre, signature_id FROM run_tests WHERE run_id = ?"
                                   " AND signature_id IS NOT NULL", (run_id,)).fetchall())
        (failed,) = conn.execute("SELECT failed FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if len(stored) >= (failed or 0):
            return stored, {}
        # run_tests keeps the first of two tests with one full name (RF warns of them): the
        # others' signatures are read from their nodes, as a running run's are
    pairs = [(pre, name_id(text), text) for pre, text in failed_test_signatures(conn, run_id)
             if pre not in stored]
    return {**stored, **{pre: sig for pre, sig, _ in pairs}}, {sig: text for _, sig, text in pairs}


def signature_texts(conn: sqlite3.Connection, ids: Iterable[int | None]) -> dict[int, str]:
    """Signature texts by id, from the store."""
    return _by_id(conn, "signatures", "signature_id", "text", ids)


def group_start(conn: sqlite3.Connection, run_id: int, run_group: str | None) -> int:
    """The first run of the pabot execution ``run_id`` belongs to (``run_group``; the run
    itself when none): the group's ``g<id>``, and what came before the run as a unit, so
    its other processes are not earlier runs."""
    if run_group is None:
        return run_id
    first = conn.execute(f"SELECT min(run_id) FROM runs WHERE run_group = ? AND {VISIBLE_RUNS}",
                         (run_group,)).fetchone()[0]
    return min(first or run_id, run_id)


def seen_before(conn: sqlite3.Connection, signature_id: int, before_run: int) -> dict[str, Any]:
    """In how many earlier runs a signature appeared (any test), and the first of them."""
    return seen_before_many(conn, [signature_id], before_run)[signature_id]


def seen_before_many(conn: sqlite3.Connection, signature_ids: Iterable[int],
                     before_run: int) -> dict[int, dict[str, Any]]:
    """``seen_before`` of several signatures in two queries (a page's, a summary's groups):
    on a database server every query is a round trip."""
    ids = sorted(set(signature_ids))
    seen: dict[int, dict[str, Any]] = {sig: {"earlier_runs": 0} for sig in ids}
    if not ids:
        return seen
    rows = conn.execute(
        "SELECT signature_id, count(DISTINCT run_id), min(run_id) FROM run_tests"
        f" WHERE signature_id IN ({', '.join('?' * len(ids))}) AND run_id < ?"
        f" AND run_id NOT IN ({UNCOUNTED_IDS}) GROUP BY signature_id", (*ids, before_run)).fetchall()
    starts = _by_id(conn, "runs", "run_id", "start_time", (first for _, _, first in rows))
    for sig, count, first in rows:
        seen[sig] = {"earlier_runs": count, "first_run_id": first, "first_seen": starts.get(first)}
    return seen


def longnames(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """Full names by name id."""
    return _by_id(conn, "test_names", "name_id", "longname", ids)


def _by_id(conn: sqlite3.Connection, table: str, key: str, column: str,
           ids: Iterable[int | None]) -> dict[int, str]:
    """``column`` of ``table`` by ``key``, for the given ids (500 a query)."""
    wanted = sorted({i for i in ids if i is not None})
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        found.update(conn.execute(f"SELECT {key}, {column} FROM {table} WHERE {key}"
                                  f" IN ({','.join('?' * len(chunk))})", chunk).fetchall())
    return found


def node_ids(conn: sqlite3.Connection, results: Iterable[Outcome]) -> dict[tuple[int, int], str]:
    """RF's node ids (s1-s2-t3) of tests, by (run id, pre)."""
    return {(r.run_id, r.pre): conn.execute(
        "SELECT node_id FROM nodes WHERE key = ?", (run_base(r.run_id) + r.pre,)).fetchone()[0]
        for r in results}


def longname_of(conn: sqlite3.Connection, run_id: int, pre: int) -> str | None:
    row = conn.execute("SELECT longname FROM run_tests JOIN test_names USING (name_id)"
                       " WHERE run_id = ? AND pre = ?", (run_id, pre)).fetchone()
    if row:
        return str(row[0])
    return next((r.longname for r in test_rows(conn, run_id) if r.pre == pre), None)


def _matching_as_robot_does(conn: sqlite3.Connection, test: str) -> list[str]:
    """The full names ``test`` names as robot's --test would (``suite.checkout.pays by card``,
    ``PaysByCard``): the whole name or its end after a dot, at most six. Read only when the
    exact ways found nothing: one pass over the store's test names."""
    wanted = robot_normalized(test)
    found: list[str] = []
    for (longname,) in conn.execute("SELECT longname FROM test_names"):
        if names_test(wanted, longname):
            found.append(longname)
            if len(found) == 6:
                break
    return found


def resolve_test(conn: sqlite3.Connection, test: str) -> tuple[int, str]:
    """A test's name id and full name, from its full name, or its own name when only one
    test in the store has it; either as robot's --test takes it when not exactly."""
    nid = name_id(test)
    row = conn.execute("SELECT longname FROM test_names WHERE name_id = ?", (nid,)).fetchone()
    if row:
        return nid, str(row[0])
    pattern = test.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    matches = [r[0] for r in conn.execute(
        "SELECT longname FROM test_names WHERE longname LIKE ? ESCAPE '\\' LIMIT 6",
        (f"%{pattern}",)).fetchall() if r[0] == test or r[0].endswith("." + test)]
    if not matches:
        matches = _matching_as_robot_does(conn, test)
    if len(matches) == 1:
        return name_id(matches[0]), matches[0]
    hint = ("Several tests have that name: " + "; ".join(matches[:5]) + ". Pass the full name."
            if matches else "Pass the test's full name (Suite.Sub Suite.Test), as compare_runs "
            "and flaky_tests give it, or run_id with node_id.")
    raise ResultError(TEST_NOT_FOUND, f"No test named {test!r} in the store's history.", hint)
