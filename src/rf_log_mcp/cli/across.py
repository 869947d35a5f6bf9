"""Commands across runs: diff (compare_runs), history (test_history), flaky (flaky_tests)."""

from __future__ import annotations

import argparse
import sqlite3

from rf_log_listener.errors import INVALID_ARGUMENT, ResultError

from .. import render_across, service
from ..limits import MAX_BUDGET
from .common import connect, resolve_unit, show


def cmd_diff(args: argparse.Namespace) -> int:
    if len(args.runs) > 2:
        raise ResultError(INVALID_ARGUMENT, f"diff compares two runs, not {len(args.runs)}.",
                          "Pass [BASE] HEAD: run ids or pabot groups (g17), or latest.")
    conn = connect(args)
    refs = [_unit(conn, ref) for ref in args.runs] or [_unit(conn, None)]
    base, head = (refs[0], refs[1]) if len(refs) == 2 else (None, refs[0])
    response = service.compare_runs(conn, head, base, args.change, args.cursor,
                                    args.page_size, budget=MAX_BUDGET)
    return show(args, response, render_across.compare)


def _unit(conn: sqlite3.Connection, ref: str | None) -> str:
    """A run or pabot group as compare_runs takes it; ``latest`` (or nothing): the newest, a
    pabot execution as a whole."""
    if ref is not None and ref.lower() not in ("latest", "last"):
        return ref
    run_id, group = resolve_unit(conn, None)
    return f"g{group[0]}" if group else str(run_id)


def cmd_history(args: argparse.Namespace) -> int:
    response = service.test_history(connect(args), args.test, limit=args.limit,
                                    cursor=args.cursor, budget=MAX_BUDGET)
    return show(args, response, render_across.history)


def cmd_flaky(args: argparse.Namespace) -> int:
    response = service.flaky_tests(connect(args), args.suite, args.window, args.cursor,
                                   args.page_size, budget=MAX_BUDGET)
    return show(args, response, render_across.flaky)
