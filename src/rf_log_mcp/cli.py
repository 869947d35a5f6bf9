"""The ``rf-log-mcp`` command line: the same answers as the MCP tools, for humans and scripts.

Exit codes: 0 ok; 1 the command ran but failed (structured error, printed); 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from rf_log_listener.errors import ResultError
from rf_log_listener.importers import import_result
from rf_log_listener.store import ENV_DB, default_store_path, open_store

from . import __version__, service
from .models import Envelope, ErrorInfo, GetViewResponse, ParseResultResponse
from .redaction import redactor
from .shaping import MAX_BUDGET


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    arguments = sys.argv[1:] if argv is None else argv
    if not arguments and not sys.stdin.isatty():
        arguments = ["serve"]  # an MCP host starts `rf-log-mcp` with stdin as the protocol pipe
    args = parser.parse_args(arguments)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        redactor()  # an operator's masking setting that cannot be used stops here, loudly
        return int(args.handler(args))
    except ResultError as err:
        if getattr(args, "json", False):
            _print_json(ParseResultResponse(ok=False, error=ErrorInfo(**err.to_dict())).model_dump(
                mode="json", exclude_none=True))
        else:
            print(f"error [{err.code}]: {err.message}", file=sys.stderr)
            if err.hint:
                print(f"hint: {err.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rf-log-mcp",
        description="Robot Framework results in a SQLite store, for LLM agents and humans.",
        epilog=f"Store: {ENV_DB} or --db; default {default_store_path()}. "
               "Exit codes: 0 ok, 1 failed (error printed), 2 usage.",
    )
    parser.add_argument("--version", action="version", version=f"rf-log-mcp {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace], int], help_text: str
                ) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.add_argument("--db", help=f"store file (default: ${ENV_DB} or {default_store_path()})")
        cmd.set_defaults(handler=handler)
        return cmd

    cmd = command("import", _cmd_import, "Import an output.xml (RF 4.0+) or output.json (RF 7.2+).")
    cmd.add_argument("path", help="result file")
    cmd.add_argument("--json", action="store_true", help="print one JSON object (parse_result payload)")
    cmd.add_argument("--allow-incomplete", action="store_true",
                     help="import the readable part of a cut file as an 'interrupted' run")
    cmd.add_argument("--label", help="a label to find the run by later")

    cmd = command("runs", _cmd_runs, "List the runs in the store, newest first.")
    cmd.add_argument("--limit", type=int, default=20)
    cmd.add_argument("--json", action="store_true")

    cmd = command("summary", _cmd_summary, "Status, totals, failed tests and run errors of a run.")
    cmd.add_argument("run_id", type=int)
    cmd.add_argument("--json", action="store_true")

    cmd = command("failures", _cmd_failures, "The failure path of each failed test (or one).")
    cmd.add_argument("run_id", type=int)
    cmd.add_argument("--test", help="a test id such as s1-s2-t3 (default: every failed test)")
    cmd.add_argument("--limit", type=int, default=10, help="at most this many tests")
    cmd.add_argument("--json", action="store_true")

    cmd = sub.add_parser("serve", help="Serve MCP over stdio (the default when stdin is not a TTY).",
                         description="Serve MCP over stdio; the store is $RF_LOG_MCP_DB or the default.")
    cmd.set_defaults(handler=_cmd_serve)

    cmd = command("demo", _cmd_demo,
                  "Run robot on a suite, import its output, print the summary and failure paths.")
    cmd.add_argument("suite", nargs="?", default="examples",
                     help="suite file or folder (default: ./examples)")
    cmd.add_argument("--outputdir", help="where robot writes output.xml (default: a new temp dir)")
    return parser


def _connect(args: argparse.Namespace) -> sqlite3.Connection:
    return open_store(args.db) if args.db else open_store()


def _print_json(data: Any, out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


# -- import ------------------------------------------------------------------------------


def _cmd_import(args: argparse.Namespace) -> int:
    conn = _connect(args)
    progress = _ProgressBar() if sys.stderr.isatty() and not args.json else None
    try:
        outcome = import_result(conn, args.path, allow_incomplete=args.allow_incomplete,
                                progress=progress, label=args.label)
    finally:
        if progress:
            progress.close()
    payload = ParseResultResponse(**outcome.to_dict())
    if args.json:
        _print_json(payload.model_dump(mode="json", exclude_none=True))
    else:
        again = " (already imported)" if outcome.deduplicated else ""
        print(f"run {outcome.run_id}{again}: {outcome.name} {outcome.result_status} -"
              f" {outcome.total} tests, {outcome.passed} passed, {outcome.failed} failed,"
              f" {outcome.skipped} skipped [{outcome.status}, {outcome.source_format},"
              f" {outcome.seconds:.2f} s]")
    return 0


class _ProgressBar:
    """A one-line progress bar on stderr, shown only for imports that take a moment."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.shown = False
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.started < 0.5 or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        share = done / total if total else 1.0
        bar = "#" * int(share * 30)
        rate = done / (now - self.started) / 1e6
        sys.stderr.write(f"\rimporting [{bar:<30}] {share:6.1%} {done / 1e6:,.0f} MB {rate:,.1f} MB/s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


# -- runs, summary, failures -------------------------------------------------------------


def _cmd_runs(args: argparse.Namespace) -> int:
    conn = _connect(args)
    rows = conn.execute(
        "SELECT run_id, status, origin, name, result_status, total, passed, failed, skipped,"
        " source_path FROM runs WHERE status != 'importing' ORDER BY run_id DESC LIMIT ?",
        (args.limit,),
    ).fetchall()
    keys = ("run_id", "status", "origin", "name", "result_status", "total", "passed", "failed",
            "skipped", "source_path")
    runs = [dict(zip(keys, row, strict=True)) for row in rows]
    if args.json:
        _print_json({"runs": runs})
        return 0
    for run in runs:
        print(f"{run['run_id']:>5}  {run['status']:<11} {run['result_status'] or '-':<5}"
              f" {run['passed'] or 0:>5} passed {run['failed'] or 0:>5} failed  {run['name']}"
              f"  ({run['source_path'] or run['origin']})")
    if not runs:
        print("no runs yet: import an output.xml with `rf-log-mcp import PATH`")
    return 0


def _checked(response: Envelope) -> Envelope:
    if not response.ok and response.error is not None:
        raise ResultError(response.error.code, response.error.message, response.error.hint)
    return response


def _summary(conn: sqlite3.Connection, run_id: int, limit: int = 200) -> GetViewResponse:
    response = service.get_view(conn, "summary", run_id=run_id, page_size=limit, budget=MAX_BUDGET)
    return _checked(response)  # type: ignore[return-value]


def _failure_paths(conn: sqlite3.Connection, run_id: int, test: str | None, limit: int) -> list[dict]:
    paths, cursor = [], None
    while len(paths) < limit:
        response = _checked(service.get_view(conn, "failure_path", run_id=run_id, selector=test,
                                             cursor=cursor, budget=MAX_BUDGET))
        assert isinstance(response, GetViewResponse) and response.failure_path is not None
        paths.append(response.failure_path.model_dump(mode="json", exclude_none=True))
        cursor = response.next_cursor
        if test or not cursor:
            break
    return paths


def _cmd_summary(args: argparse.Namespace) -> int:
    response = _summary(_connect(args), args.run_id)
    if args.json:
        _print_json(response.model_dump(mode="json", exclude_none=True))
    else:
        _print_summary(response)
    return 0


def _print_summary(response: GetViewResponse) -> None:
    data = response.summary
    assert data is not None
    totals = data.totals
    print(f"Run {response.run_id}: {data.name}  {data.result_status}  ({data.status})")
    print(f"  {totals.total} tests: {totals.passed} passed, {totals.failed} failed,"
          f" {totals.skipped} skipped")
    if data.elapsed is not None:
        print(f"  started {data.start_time}, took {data.elapsed:.2f} s")
    if data.failed_tests:
        print("Failed tests:")
        for test in data.failed_tests:
            print(f"  {test.id:<14} {test.name}")
            for line in _first_lines(test.message):
                print(f"  {'':<14}   {line}")
        if response.page_truncated:
            print("  … more failed tests: use --json and the next_cursor, or `rf-log-mcp failures`")
    if data.errors:
        print("Run errors:")
        for error in data.errors:
            print(f"  {error.level:<5} {_first_lines(error.text, 1)[0]}")


def _first_lines(text: str, count: int = 3, width: int = 160) -> list[str]:
    lines = (text or "").splitlines() or [""]
    shown = [line if len(line) <= width else line[: width - 1] + "…" for line in lines[:count]]
    if len(lines) > count:
        shown.append(f"… ({len(lines) - count} more lines)")
    return shown


def _cmd_failures(args: argparse.Namespace) -> int:
    paths = _failure_paths(_connect(args), args.run_id, args.test, args.limit)
    if args.json:
        _print_json({"run_id": args.run_id, "failures": paths})
    else:
        _print_failures(paths)
    return 0


def _print_failures(paths: list[dict[str, Any]]) -> None:
    if not paths:
        print("No failed tests.")
    for path in paths:
        print(f"Failure path of {path['start_id']}:")
        for depth, step in enumerate(path["path"]):
            indent = "  " * (depth + 1)
            print(f"{indent}{step['type']} {step['id']}  {step['name']}  [{step['status']}]")
            for message in step["messages"]:
                print(f"{indent}  {message['level']}: {_first_lines(message['text'], 1)[0]}")
        last = path["path"][-1]
        if last.get("message") and not last["messages"]:
            print(f"  {'  ' * len(path['path'])}→ {_first_lines(last['message'], 1)[0]}")


def _cmd_serve(_args: argparse.Namespace) -> int:
    from .server import serve

    return serve()


# -- demo --------------------------------------------------------------------------------


def _cmd_demo(args: argparse.Namespace) -> int:
    suite = Path(args.suite)
    if not suite.exists():
        raise ResultError("FILE_NOT_FOUND", f"No suite at {suite.resolve()}.",
                          "Run the demo from the project folder, or pass a suite path.")
    outdir = Path(args.outputdir or tempfile.mkdtemp(prefix="rf-log-mcp-demo-"))
    command = [sys.executable, "-m", "robot", "--outputdir", str(outdir), "--log", "NONE",
               "--report", "NONE", "--console", "dotted", str(suite)]
    print("$ " + " ".join(command[2:] if command[1] == "-m" else command), flush=True)
    subprocess.run(command, check=False, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    conn = _connect(args)
    outcome = import_result(conn, outdir / "output.xml", stable_window=0)
    print(f"\nImported run {outcome.run_id} into {args.db or default_store_path()}\n")
    _print_summary(_summary(conn, outcome.run_id))
    print()
    _print_failures(_failure_paths(conn, outcome.run_id, None, 5))
    return 0
