"""summary view: run status and totals, one page of failed tests with their messages, run errors,
why tests were skipped."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

from rf_log_listener.errors import INVALID_ARGUMENT, ResultError
from rf_log_listener.store import FAILED_STARTS, RUN_SHIFT, run_base

from ..shaping import Shaper
from ..sources import Locator
from .across import group_start, group_totals, run_signatures, seen_before_many, signature_texts
from .common import (
    NODE_NOT_FOUND,
    mask_runs,
    nodes_by_keys,
    run_errors,
    run_metadata,
    run_row,
)
from .failing import shown_cause

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

ERRORS_SHOWN = 20
GROUPS_SHOWN = 10  # failure signatures shared by several tests, largest group first
GROUP_TESTS_SHOWN = 5
SKIP_REASONS_SHOWN = 10


def summary(conn: sqlite3.Connection, run_id: int, shaper: Shaper,
            position: int | list[int] | None, page_size: int,
            selector: str | None = None) -> tuple[dict[str, Any], Any]:
    """The summary and where to continue the failed-test list (None: no more).

    Failed tests are grouped by failure signature (``rf_log_listener/signatures.py``): the
    first page lists the groups of two or more tests, largest first, and ``failed_tests``
    the tests whose signature no other test shares. ``selector="group:<signature_id>"``
    pages one group's tests instead, ``selector="failed"`` every failed test in run order,
    ``selector="run_group"`` summarizes the pabot execution the run belongs to as one run.

    A running run's summary also gives ``follow_position``: past every failed test and run
    error it shows. Passed back (as a cursor) it answers only what is new since: failed
    tests (tests end in key order, so none is missed) and run errors, with the current
    totals and what runs now."""
    run = run_row(conn, run_id)
    if selector == "run_group":
        return _group_summary(conn, run, shaper, position, page_size)
    base = run_base(run_id)
    follow = isinstance(position, list)
    after_key, errors_after = position if isinstance(position, list) else (position, None)
    start = group_start(conn, run_id, run["run_group"])
    wanted = _wanted_tests(conn, [run_id], selector, follow, start)
    view: dict[str, Any] = {
        "name": run["name"], "status": run["status"], "result_status": run["result_status"],
        "origin": run["origin"], "source_path": run["source_path"], "generator": run["generator"],
        "source_root": Locator(conn, run_id).root_dir,
        "start_time": run["start_time"], "elapsed": run["elapsed"],
        "totals": {k: run[k] for k in ("total", "passed", "failed", "skipped")},
        "error_count": run["error_count"] or 0, **_context(run, start),
    }
    if after_key is None and selector is None:  # the first page only
        if metadata := run_metadata(conn, run_id, shaper):
            view["metadata"] = metadata
        view["errors"], view["error_kinds"] = run_errors(conn, run_id, shaper, ERRORS_SHOWN)
        _add_groups(conn, view, wanted, shaper)
        if run["skipped"]:
            view["skip_reasons"] = _skip_reasons(conn, [run_id], shaper)
    elif follow:
        errors, kinds = run_errors(conn, run_id, shaper, ERRORS_SHOWN, errors_after)
        if errors:
            view["errors"], view["error_kinds"] = errors, kinds
    if run["status"] in ("running", "interrupted"):
        view["unfinished"] = _unfinished(conn, run_id)
    last_shown, more = _failed_page(conn, view, wanted, shaper, after_key, page_size)
    if run["status"] == "running":
        errors_seen = conn.execute("SELECT max(seq) FROM errors WHERE run_id = ?",
                                   (run_id,)).fetchone()[0]
        view["follow_position"] = [base - 1 if last_shown is None else last_shown,
                                   errors_seen or 0]
    if not more:
        return view, None
    return view, [last_shown, errors_after or 0] if follow else last_shown


def _group_summary(conn: sqlite3.Connection, run: dict[str, Any], shaper: Shaper,
                   position: Any, page_size: int) -> tuple[dict[str, Any], Any]:
    """The processes of one pabot execution as one run: totals summed, failed tests of every
    process (each with its run id), failure groups across them. Run errors, what runs now
    and live following: per process (its own summary)."""
    if not run["run_group"]:
        raise ResultError(INVALID_ARGUMENT, f"Run {run['run_id']} is not part of a pabot "
                          "run group.", "Leave the selector out for the run's own summary.")
    members = group_totals(conn, run["run_group"])
    runs = members.pop("run_ids")
    mask_runs(conn, shaper, runs)  # the other processes' failures are shown too
    view: dict[str, Any] = {"name": run["name"], "origin": run["origin"], "runs": runs,
                            **members, **_context(run, runs[0])}
    wanted = _wanted_tests(conn, runs, None, False, runs[0])
    if position is None:
        if metadata := run_metadata(conn, runs[0], shaper):  # pabot gives each process the same
            view["metadata"] = metadata
        _add_groups(conn, view, wanted, shaper)
        if members["totals"]["skipped"]:
            view["skip_reasons"] = _skip_reasons(conn, runs, shaper)
    last_shown, more = _failed_page(conn, view, wanted, shaper, position, page_size)
    return view, last_shown if more else None


def _context(run: dict[str, Any], first_run: int) -> dict[str, Any]:
    """The run's label, CI build and pabot group (``g`` and its first run), when it has them."""
    found: dict[str, Any] = {}
    if run["label"]:
        found["label"] = run["label"]
    if run.get("dry_run"):
        found["dry_run"] = True
    if run.get("copy_of") is not None:
        found["copy_of"] = run["copy_of"]
    if run.get("rpa"):
        found["rpa"] = True
    if run["ci"]:
        found["ci"] = json.loads(run["ci"])
    if run["run_group"]:
        found["run_group"] = f"g{first_run}"
    return found


def _add_groups(conn: sqlite3.Connection, view: dict[str, Any], wanted: _Wanted,
                shaper: Shaper) -> None:
    if wanted.groups:
        view["failure_group_count"] = len(wanted.groups)
        view["failure_groups"] = _failure_groups(conn, wanted, shaper)


def _failed_page(conn: sqlite3.Connection, view: dict[str, Any], wanted: _Wanted,
                 shaper: Shaper, after_key: int | None,
                 page_size: int) -> tuple[int | None, bool]:
    """One page of failed tests into ``view``: the key of the last one (the next page's
    position), and whether more follow."""
    page, more = wanted.page(conn, after_key, page_size)
    grouped = len(wanted.runs) > 1
    seen = wanted.seen(conn, [key for key, *_ in page])
    tests = [{**({"run_id": key >> RUN_SHIFT} if grouped else {}), "node_id": i, "name": n,
              "message": shaper.status(m or "", 500), **seen.get(key, {})}
             for key, i, n, m in page]
    # why a test failed from outside its steps ("No keyword with name 'Open Browser' found."
    # and the library's import error), as its failure path says it, by its first line (an
    # import error's traceback and PYTHONPATH: the run's errors and the path have them)
    rows = nodes_by_keys(conn, [key for key, *_ in page])
    for test, (key, *_) in zip(tests, page, strict=True):
        cause = shown_cause(conn, key >> RUN_SHIFT, rows[key], shaper)
        if cause:
            test["cause"] = {**cause, "message": str(cause["message"]).split("\n", 1)[0]}
    kept = shaper.fit(view, tests, "failed_tests")
    return page[kept - 1][0] if kept else after_key, more or kept < len(page)


class _Wanted:
    """Which failed tests ``failed_tests`` lists, and the failure groups, of one run or of
    a pabot group's runs. Tests are named by their node key (run id and position)."""

    def __init__(self, runs: list[int], signatures: dict[int, int],
                 groups: list[tuple[int, int]], only: int | None, follow: bool,
                 texts: dict[int, str], before: int) -> None:
        self.runs = runs
        self.before = before  # earlier runs are before this one: the pabot execution's first
        self.signatures = signatures  # failed test's key -> signature id
        self.groups = groups  # (signature id, tests), largest first
        self.only = only  # a group's tests only (selector group:<id>)
        self.follow = follow  # every failed test (a follow cursor, or selector "failed")
        self.texts = texts  # signature texts not in the store yet (a running run's)
        self.grouped = {sig for sig, _ in groups}

    def listed(self, key: int) -> bool:
        if self.follow:
            return True
        sig = self.signatures.get(key)
        return sig == self.only if self.only is not None else sig not in self.grouped

    def page(self, conn: sqlite3.Connection, after_key: int | None,
             page_size: int) -> tuple[list[tuple[Any, ...]], bool]:
        """Up to ``page_size`` listed failed tests after ``after_key``; whether more follow."""
        page = []
        for run_id in self.runs:
            base = run_base(run_id)
            rows = conn.execute(
                f"SELECT key, node_id, name, message FROM nodes INDEXED BY nodes_failed"
                f" WHERE key > ? AND key < ? AND {FAILED_STARTS} AND type = 'TEST' ORDER BY key",
                (max(after_key if after_key is not None else 0, base - 1), run_base(run_id + 1)))
            for row in rows:
                if self.listed(row[0]):
                    if len(page) == page_size:
                        return page, True
                    page.append(row)
        return page, False

    def seen(self, conn: sqlite3.Connection, keys: list[int]) -> dict[int, dict[str, Any]]:
        """The listed tests' signatures seen in earlier runs (those that were), by test key."""
        if self.follow:
            return {}
        sigs = {key: sig for key in keys if (sig := self.signatures.get(key)) is not None}
        earlier = seen_before_many(conn, sigs.values(), self.before)
        return {key: {"signature_seen": earlier[sig]} for key, sig in sigs.items()
                if earlier[sig]["earlier_runs"]}


def _wanted_tests(conn: sqlite3.Connection, runs: list[int], selector: str | None,
                  follow: bool, before: int) -> _Wanted:
    only = None
    if selector == "failed" or follow:  # every failed test, in run order
        return _Wanted(runs, {}, [], None, True, {}, before)
    if selector is not None:
        kind, _, number = selector.partition(":")
        if kind != "group" or not number.lstrip("-").isdigit():
            raise ResultError(INVALID_ARGUMENT, f"The summary's selector is group:<id>, failed"
                              f" or run_group, not {selector!r}.", "group:<id>: a failure "
                              "group's tests_selector; failed: every failed test in run order; "
                              "run_group: the pabot execution as one run.")
        only = int(number)
    signatures: dict[int, int] = {}
    texts: dict[int, str] = {}
    for run_id in runs:
        by_pre, unstored = run_signatures(conn, run_id)
        signatures.update((run_base(run_id) + pre, sig) for pre, sig in by_pre.items())
        texts.update(unstored)
    sizes = Counter(signatures.values())
    first: dict[int, int] = {}
    for key, sig in sorted(signatures.items()):
        first.setdefault(sig, key)
    groups = sorted(((sig, n) for sig, n in sizes.items() if n > 1),
                    key=lambda item: (-item[1], first[item[0]]))
    if only is not None and only not in sizes:
        raise ResultError(NODE_NOT_FOUND, f"Run {runs[0]} has no failure group {only}.",
                          "Take tests_selector from this run's failure_groups.")
    return _Wanted(runs, signatures, groups, only, False, texts, before)


def _skip_reasons(conn: sqlite3.Connection, runs: list[int],
                  shaper: Shaper) -> list[dict[str, Any]]:
    """Skipped tests grouped by their message, most tests first: why tests did not run, or
    failed in a way the run skips (a ``robot:skip-on-failure`` tag: its message holds the
    original failure), which the totals alone do not say. RF gives every skip a message, so
    the index of nodes with one finds them without reading the run's other nodes. Of a
    pabot group (several ``runs``), each test with its run, as failure groups have it."""
    tests: dict[str, list[tuple[int, str]]] = {}
    for run_id in runs:
        rows = conn.execute(
            "SELECT node_id, message FROM nodes INDEXED BY nodes_with_message"
            " WHERE key >= ? AND key < ? AND message IS NOT NULL AND type = 'TEST'"
            " AND status = 'SKIP' ORDER BY key", (run_base(run_id), run_base(run_id + 1)))
        for node_id, message in rows:
            tests.setdefault(message, []).append((run_id, node_id))
    largest = sorted(tests.items(), key=lambda item: -len(item[1]))[:SKIP_REASONS_SHOWN]
    reasons = []
    for message, skipped in largest:
        reason = {"message": shaper.status(message, 300), "count": len(skipped),
                  "test_ids": [node_id for _, node_id in skipped[:GROUP_TESTS_SHOWN]]}
        if len(runs) > 1:
            reason["test_runs"] = [run_id for run_id, _ in skipped[:GROUP_TESTS_SHOWN]]
        reasons.append(reason)
    return reasons


def _unfinished(conn: sqlite3.Connection, run_id: int) -> list[dict[str, Any]]:
    """What is running now (a live run) or was running when the run stopped: the open nodes,
    outermost first, each with the nodes below it that failed so far (a test that will fail
    shows so before it ends: continued failures, a retry's attempts). They form one chain,
    so there are as many as the tree is deep."""
    rows = conn.execute(
        "SELECT node_id, type, name, failed_descendant_count FROM nodes WHERE key >= ?"
        " AND key < ? AND status IN ('RUNNING', 'NOT FINISHED') ORDER BY key LIMIT 50",
        (run_base(run_id), run_base(run_id + 1)),
    ).fetchall()
    return [{"node_id": i, "type": t, "name": n or "", **({"failed_descendant_count": f} if f else {})}
            for i, t, n, f in rows]


def _failure_groups(conn: sqlite3.Connection, wanted: _Wanted,
                    shaper: Shaper) -> list[dict[str, Any]]:
    """The first groups: signature, size, an example message, the first tests, when the
    signature was seen before, and a cause outside the tests (a fatal stop, a parent suite's
    setup) with its root message."""
    texts = {**wanted.texts, **signature_texts(conn, (sig for sig, _ in wanted.groups[:GROUPS_SHOWN]))}
    members: dict[int, list[int]] = {}
    for key, sig in sorted(wanted.signatures.items()):
        members.setdefault(sig, []).append(key)
    grouped = len(wanted.runs) > 1
    groups = []
    earlier = seen_before_many(conn, [sig for sig, _ in wanted.groups[:GROUPS_SHOWN]], wanted.before)
    shown = nodes_by_keys(conn, [key for sig, _ in wanted.groups[:GROUPS_SHOWN]
                                 for key in members[sig][:GROUP_TESTS_SHOWN]])
    for sig, count in wanted.groups[:GROUPS_SHOWN]:
        tests = [shown[key] for key in members[sig][:GROUP_TESTS_SHOWN]]
        first_test = tests[0]
        group = {"signature": shaper.text(texts.get(sig, ""), 300), "count": count,
                 "message": shaper.status(first_test.message or "", 300),
                 "test_ids": [test.node_id for test in tests],
                 "tests_selector": f"group:{sig}",
                 "seen_before": earlier[sig]}
        run_of = [key >> RUN_SHIFT for key in members[sig][:GROUP_TESTS_SHOWN]]
        if grouped:
            group["test_runs"] = run_of
        cause = shown_cause(conn, run_of[0], first_test, shaper)
        if cause and cause["reason"] == "import_failed" and any(  # one signature, two imports
                shown_cause(conn, run, test, shaper) != cause
                for run, test in zip(run_of[1:], tests[1:], strict=True)):
            cause = None
        if cause:
            group["cause"] = cause
        groups.append(group)
    return groups
