"""Commands across runs: diff (compare_runs), history (test_history), flaky (flaky_tests)."""

from __future__ import annotations

import argparse

from .. import render, service
from ..limits import MAX_BUDGET
from .common import connect, show


def cmd_diff(args: argparse.Namespace) -> int:
    base, head = (args.runs[0], args.runs[1]) if len(args.runs) == 2 else (None, args.runs[0])
    response = service.compare_runs(connect(args), head, base, args.change, args.cursor,
                                    args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.compare)


def cmd_history(args: argparse.Namespace) -> int:
    response = service.test_history(connect(args), args.test, limit=args.limit,
                                    cursor=args.cursor, budget=MAX_BUDGET)
    return show(args, response, render.history)


def cmd_flaky(args: argparse.Namespace) -> int:
    response = service.flaky_tests(connect(args), args.suite, args.window, args.cursor,
                                   args.page_size, budget=MAX_BUDGET)
    return show(args, response, render.flaky)
