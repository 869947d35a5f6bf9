"""Commands that read a run: runs, summary, failures, tree, window, search, attachment, watch
(across runs: ``across.py``)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time

from rf_log_listener.errors import INVALID_ARGUMENT, STORE_NOT_FOUND, ResultError
from rf_log_listener.store import run_base

from .. import render, service
from ..limits import MAX_BUDGET
from ..render_text import Style, control, first_lines
from .common import (
    connect,
    failure_paths,
    failure_starts,
    newest_run,
    print_json,
    resolve,
    resolve_unit,
    show,
    summary,
    summary_response,
    written_from_here,
)


def cmd_runs(args: argparse.Namespace) -> int:
    response = service.list_runs(connect(args), args.status, args.limit, label=args.label,
                                 suite=args.suite, branch=args.branch, since=args.since,
                                 until=args.until)
    return show(args, response, render.runs)


def cmd_summary(args: argparse.Namespace) -> int:
    conn = connect(args)
    run_id, group = resolve_unit(conn, args.run)
    if group and args.group:
        raise ResultError(INVALID_ARGUMENT, "--group pages a failure group of one run.",
                          f"Pass one of the pabot group's runs ({', '.join(map(str, group))}).")
    selector = f"group:{args.group}" if args.group else "run_group" if group else None
    return show(args, summary_response(conn, run_id, args.cursor, args.page_size, selector),
                render.summary)


def cmd_failures(args: argparse.Namespace) -> int:
    """Failure paths of a run, or of every process of a pabot group in turn (``--limit`` in
    all; ``--test`` names a test of one run)."""
    if args.test and args.test_id:
        raise ResultError(INVALID_ARGUMENT, "Name the test once: TEST or --test.")
    args.test = args.test or args.test_id
    conn = connect(args)
    run_id, group = resolve_unit(conn, args.run)
    runs = [run_id] if group is None or args.test else group
    found: list[tuple[int, list[dict]]] = []
    left = args.limit
    for rid in runs:
        try:
            paths = failure_paths(conn, rid, args.test, left)
        except ResultError as err:
            if err.code != "NO_FAILURES":
                raise
            paths = []
        found.append((rid, paths))
        left -= len(paths)
        if left <= 0:
            break
    if args.json:
        if group is None or args.test:
            print_json({"run_id": run_id, "failures": found[0][1]})
        else:
            print_json({"run_group": f"g{group[0]}", "runs": group, "failures": [
                {"run_id": rid, **path} for rid, paths in found for path in paths]})
        return 0
    # robot --rpa: "No failed tasks." and "2 failed tasks failed only for it", as RF says
    unit = "task" if conn.execute("SELECT rpa FROM runs WHERE run_id = ?",
                                  (run_id,)).fetchone()[0] else "test"
    if not any(paths for _, paths in found):
        render.failures([], Style(), run_id, unit=unit)  # once for a whole group
        for rid in runs:  # a live run's test may be failing before it ends
            data = summary(conn, rid).summary
            if data is not None and data.unfinished:
                render.failing_test(data.unfinished, rid, Style(), data.status == "running")
    for rid, paths in found:
        if paths:
            written_from_here(conn, rid, paths)
            render.failures(paths, Style(), rid, of_group=group is not None, unit=unit)
    if not args.test:
        shown = sum(len(paths) for _, paths in found)
        total = sum(failure_starts(conn, rid, paths) for rid, paths in found) + sum(
            failure_starts(conn, rid, []) for rid in runs[len(found):])
        render.more_failures(shown, total, args.run, Style())
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    conn = connect(args)
    if args.depth:
        response = service.get_view(conn, "tree_snapshot", run_id=resolve(conn, args.run),
                                    selector=args.selector, projection=args.projection,
                                    page_size=args.page_size, budget=MAX_BUDGET,
                                    max_depth=args.depth)
        return show(args, response, render.tree_snapshot)
    response = service.get_view(conn, "tree", run_id=resolve(conn, args.run),
                                selector=args.selector, projection=args.projection,
                                cursor=args.cursor, page_size=args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.tree)


def cmd_message(args: argparse.Namespace) -> int:
    """One message whole (every part in turn), or one part with --cursor."""
    conn = connect(args)
    run_id, cursor = resolve(conn, args.run), args.cursor
    while True:
        response = service.get_view(conn, "message", run_id=run_id, selector=args.message_id,
                                    cursor=cursor, budget=MAX_BUDGET)
        if args.json or args.cursor or not response.ok:
            return show(args, response, render.message)
        render.message(response, Style(), last=not response.next_cursor)
        cursor = response.next_cursor
        if not cursor:
            return 0


def cmd_window(args: argparse.Namespace) -> int:
    conn = connect(args)
    response = service.get_view(conn, "step_window", run_id=resolve(conn, args.run),
                                selector=args.selector, cursor=args.cursor,
                                page_size=args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.window)


def cmd_search(args: argparse.Namespace) -> int:
    if args.query is None and not (args.level or args.min_level or args.selector) \
            and isinstance(args.run, int):
        # `search 404`: run 404 with nothing to look for is no search; the number is the text
        # (`search 3 --min-level WARN` and `search 3 --selector s1-t1-k2` stay run 3: a
        # node's messages, the command `tree` names for them)
        args.query, args.run = str(args.run), "latest"
    conn = connect(args)
    response = service.search_messages(
        conn, args.query, run_id=resolve(conn, args.run), selector=args.selector,
        scope=args.scope, level=args.level, min_level=args.min_level, cursor=args.cursor,
        page_size=args.page_size, budget=MAX_BUDGET, detail=args.detail, group_by=args.group_by)
    return show(args, response, render.search)


def cmd_attachment(args: argparse.Namespace) -> int:
    conn = connect(args)
    response = service.get_attachment(conn, args.message_id, args.index,
                                      run_id=resolve(conn, args.run), budget=MAX_BUDGET,
                                      as_stored=args.save is not None)
    shown = show(args, response, lambda answer, _style: render.attachment(answer, conn))
    if args.save is not None and response.ok:
        # a terminal cannot show an embedded screenshot: the bytes go to a file to open
        stored = response._image or b""
        try:
            with open(args.save, "wb") as out:
                out.write(stored)
        except OSError as exc:
            raise ResultError(INVALID_ARGUMENT, f"Cannot write {args.save}: {exc.strerror}.") from None
        print(f"saved {len(stored):,} bytes to {args.save}", file=sys.stderr if args.json else sys.stdout)
    return shown


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a live run until it ends: each failed test as it fails (all of them; a test
    that goes on after a failed step, when the step fails), and one status line: rewritten
    in place on a terminal; in a pipe (a CI log) printed when a test starts or ends, else at
    most every STATUS_EVERY_S seconds, at most STATUS_WIDTH wide."""
    conn, run_id = (connect(args), args.run) if isinstance(args.run, int) else _wait_for_live_run(args)
    style = Style()
    live = sys.stdout.isatty()
    seen: set[str] = set()
    failing_seen: set[str] = set()  # tests still running whose steps failed, announced
    page: str | None = None  # cursor of the summary page the newest failures are on
    last_shown: tuple[object, ...] | None = None  # what a status line in a pipe was printed for
    last_printed = 0.0
    while True:
        while True:  # every failure since the last look, however many
            response = summary(conn, run_id, page, selector="failed")
            data = response.summary
            assert data is not None
            new = [test for test in data.failed_tests if test.node_id not in seen]
            if new and live and last_shown is not None:
                control("\r\033[K")
            for test in new:
                seen.add(test.node_id)
                print(f"{style('FAIL', 'FAIL')} {test.node_id} {test.name}: "
                      f"{first_lines(test.message, 1)[0]}")
            if not response.next_cursor:
                break
            page = response.next_cursor
        if data.status != "running":
            if live:
                control("\r\033[K")
            render.summary(summary(conn, run_id), style)
            return 0
        counts = _test_counts(conn, run_id)
        unfinished = data.unfinished or []
        failing = next((n for n in unfinished if n.type == "TEST" and n.failed_descendant_count
                        and n.node_id not in failing_seen), None)
        if failing is not None:  # once: it goes on, and its FAIL line comes when it ends
            failing_seen.add(failing.node_id)
            if live and last_shown is not None:
                control("\r\033[K")
            print(f"{style('FAILING', 'FAIL')} {failing.node_id} {failing.name}: a step failed,"
                  f" the test goes on (rf-log-mcp failures {run_id} {failing.node_id})")
        chain = " > ".join(n.name or n.type for n in unfinished[1:])
        shown = (counts, [n.node_id for n in unfinished if n.type == "TEST"])
        status = first_lines(
            f"run {run_id} {data.status}: {counts.get('PASS', 0)} passed,"
            f" {counts.get('FAIL', 0)} failed, {counts.get('SKIP', 0)} skipped"
            + (f" | {chain}" if chain else ""), 1, STATUS_WIDTH)[0]
        now = time.monotonic()
        if live:
            control("\r\033[K")
            sys.stdout.write(status)
            sys.stdout.flush()
        elif shown != last_shown or now - last_printed >= STATUS_EVERY_S:
            print(status, flush=True)
            last_printed = now
        last_shown = shown
        time.sleep(args.interval)


STATUS_WIDTH = 200
STATUS_EVERY_S = 30.0


def _wait_for_live_run(args: argparse.Namespace) -> tuple[sqlite3.Connection, int]:
    """The store and its newest running run, waiting for the store to be created and a run to
    start if there is none yet (watch is often started before robot). A run stored after
    watch started is followed whatever its status: a short suite may start and end between
    two looks (before, watch then waited for another run, forever)."""
    told = False
    conn = None
    newest_before: int | None = None  # the newest run when watch started (0: none, no store)
    while True:
        try:
            conn = conn or connect(args)
        except ResultError as err:
            if err.code != STORE_NOT_FOUND:
                raise
        newest = 0
        if conn is not None:
            running = service.list_runs(conn, "running", 1)
            if running.runs:
                return conn, running.runs[0].run_id
            newest = newest_run(conn) or 0
            if newest_before is not None and newest > newest_before:
                return conn, newest
        if newest_before is None:
            newest_before = newest
        if not told:
            print("waiting for a robot run with --listener rf_log_listener (Ctrl-C to stop) ...",
                  flush=True)
            told = True
        time.sleep(args.interval)


def _test_counts(conn: sqlite3.Connection, run_id: int) -> dict[str, int]:
    """Finished tests by status so far (counts only, so no text to mask)."""
    return dict(conn.execute(
        "SELECT status, count(*) FROM nodes WHERE key >= ? AND key < ? AND type = 'TEST'"
        " GROUP BY status", (run_base(run_id), run_base(run_id + 1))).fetchall())


