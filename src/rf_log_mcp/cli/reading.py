"""Commands that read a run: runs, summary, failures, tree, window, search, watch."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time

from rf_log_listener.errors import ResultError
from rf_log_listener.store import run_base

from .. import render, service
from ..render import Style
from ..shaping import MAX_BUDGET
from .common import connect, failure_paths, print_json, resolve, show, summary, summary_response


def cmd_runs(args: argparse.Namespace) -> int:
    response = service.list_runs(connect(args), args.status, args.limit)
    return show(args, response, render.runs)


def cmd_summary(args: argparse.Namespace) -> int:
    conn = connect(args)
    return show(args, summary_response(conn, resolve(conn, args.run)), render.summary)


def cmd_failures(args: argparse.Namespace) -> int:
    conn = connect(args)
    run_id = resolve(conn, args.run)
    try:
        paths = failure_paths(conn, run_id, args.test, args.limit)
    except ResultError as err:
        if err.code != "NO_FAILURES":
            raise
        paths = []
    if args.json:
        print_json({"run_id": run_id, "failures": paths})
    else:
        render.failures(paths, Style())
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    conn = connect(args)
    response = service.get_view(conn, "tree", run_id=resolve(conn, args.run),
                                selector=args.selector, projection=args.projection,
                                cursor=args.cursor, page_size=args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.tree)


def cmd_window(args: argparse.Namespace) -> int:
    conn = connect(args)
    response = service.get_view(conn, "step_window", run_id=resolve(conn, args.run),
                                selector=args.selector, cursor=args.cursor,
                                page_size=args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.window)


def cmd_search(args: argparse.Namespace) -> int:
    conn = connect(args)
    response = service.search_messages(
        conn, args.query, run_id=resolve(conn, args.run), selector=args.selector,
        scope=args.scope, level=args.level, min_level=args.min_level, cursor=args.cursor,
        page_size=args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.search)


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a live run until it ends: one status line (rewritten in place on a terminal) and
    each failed test as it fails."""
    conn = connect(args)
    style = Style()
    live = sys.stdout.isatty()
    run_id = args.run if isinstance(args.run, int) else _wait_for_live_run(conn, args.interval)
    seen: set[str] = set()
    last_status = ""
    while True:
        response = summary(conn, run_id)
        data = response.summary
        assert data is not None
        new = [test for test in data.failed_tests if test.id not in seen]
        if new and live and last_status:
            sys.stdout.write("\r\033[K")
        for test in new:
            seen.add(test.id)
            print(f"{style('FAIL', 'FAIL')} {test.id} {test.name}: "
                  f"{render.first_lines(test.message, 1)[0]}")
        counts = _test_counts(conn, run_id)
        chain = " > ".join(n["name"] or n["type"] for n in (data.unfinished or [])[1:])
        status = (f"run {run_id} {data.status}: {counts.get('PASS', 0)} passed,"
                  f" {counts.get('FAIL', 0)} failed, {counts.get('SKIP', 0)} skipped"
                  + (f" | {chain}" if chain else ""))
        if data.status != "running":
            if live:
                sys.stdout.write("\r\033[K")
            render.summary(response, style)
            return 0
        if live:
            sys.stdout.write("\r\033[K" + render.first_lines(status, 1, 200)[0])
            sys.stdout.flush()
        elif status != last_status:
            print(status, flush=True)
        last_status = status
        time.sleep(args.interval)


def _wait_for_live_run(conn: sqlite3.Connection, interval: float) -> int:
    """The newest running run, waiting for one to start if there is none."""
    told = False
    while True:
        running = service.list_runs(conn, "running", 1)
        if running.runs:
            return running.runs[0].run_id
        if not told:
            print("waiting for a robot run with --listener rf_log_listener (Ctrl-C to stop) ...",
                  flush=True)
            told = True
        time.sleep(interval)


def _test_counts(conn: sqlite3.Connection, run_id: int) -> dict[str, int]:
    """Finished tests by status so far (counts only, so no text to mask)."""
    return dict(conn.execute(
        "SELECT status, count(*) FROM nodes WHERE key >= ? AND key < ? AND type = 'TEST'"
        " GROUP BY status", (run_base(run_id), run_base(run_id + 1))).fetchall())


