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

from rf_log_listener.errors import STORE_CORRUPT, ResultError
from rf_log_listener.importers import import_result
from rf_log_listener.salvage import salvage_live_runs
from rf_log_listener.store import (
    ENV_DB,
    VISIBLE_RUNS,
    default_store_path,
    is_corruption,
    mark_dead_live_runs,
    open_store,
    prune_run,
    release_free_pages,
    run_base,
    set_aside,
)

from . import __version__, render, service
from .models import Envelope, ErrorInfo, GetViewResponse, ParseResultResponse
from .redaction import redactor
from .render import Style
from .shaping import MAX_BUDGET
from .views.common import RUN_NOT_FOUND


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
        return _print_error(args, err)
    except sqlite3.DatabaseError as exc:  # pages damaged after the store opened
        return _print_error(args, service.store_error(exc))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rf-log-mcp summary 1 | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _print_error(args: argparse.Namespace, err: ResultError) -> int:
    """A failed command: its error as JSON with --json, else as text on stderr; exit 1."""
    if getattr(args, "json", False):
        _print_json(ParseResultResponse(ok=False, error=ErrorInfo(**err.to_dict())).model_dump(
            mode="json", exclude_none=True))
    else:
        print(f"error [{err.code}]: {err.message}", file=sys.stderr)
        if err.hint:
            print(f"hint: {err.hint}", file=sys.stderr)
    return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rf-log-mcp",
        description="Robot Framework results in a SQLite store, for LLM agents and humans. "
                    "With no command and stdin not a terminal, serves MCP over stdio.",
        epilog=f"Store: --db, else ${ENV_DB}, else {default_store_path()}. Exit codes: 0 ok;"
               " 1 the command failed (the error and a hint are printed); 2 usage; 130 Ctrl-C.",
    )
    parser.add_argument("--version", action="version", version=f"rf-log-mcp {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace], int], help_text: str,
                json_flag: bool = True) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.add_argument("--db", help=f"store file (default: ${ENV_DB} or {default_store_path()})")
        if json_flag:
            cmd.add_argument("--json", action="store_true", help="print the response as JSON")
        cmd.set_defaults(handler=handler)
        return cmd

    def run_argument(cmd: argparse.ArgumentParser, optional: bool = False) -> None:
        cmd.add_argument("run", type=_run_id, nargs="?" if optional else None,
                         help="run id (from `runs`), or `latest`")

    def paging(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("--cursor", help="next_cursor (or prev_cursor) printed by the previous page")
        cmd.add_argument("--page-size", type=int, help="items per page (default 25, at most 200)")

    cmd = command("import", _cmd_import, "Import an output.xml (RF 4.0+) or output.json (RF 7.2+).")
    cmd.add_argument("path", help="result file")
    cmd.add_argument("--allow-incomplete", action="store_true",
                     help="import the readable part of a cut file as an 'interrupted' run")
    cmd.add_argument("--label", help="a label to find the run by later")

    cmd = command("runs", _cmd_runs, "List the runs in the store, newest first.")
    cmd.add_argument("--status", choices=("complete", "running", "interrupted"))
    cmd.add_argument("--limit", type=int, default=20)

    cmd = command("summary", _cmd_summary, "Status, totals, failed tests and run errors of a run.")
    run_argument(cmd)

    cmd = command("failures", _cmd_failures, "The failure path of each failed test (or one).")
    run_argument(cmd)
    cmd.add_argument("--test", help="a test id such as s1-s2-t3 (default: every failed test)")
    cmd.add_argument("--limit", type=int, default=10, help="at most this many tests")

    cmd = command("tree", _cmd_tree, "The children of a node (default: the run), by projection; "
                  "long runs of passing iterations come folded.")
    run_argument(cmd)
    cmd.add_argument("selector", nargs="?", help="node id (s1-s2-t3-k1) or an expand selector")
    cmd.add_argument("--projection", choices=("all", "failures", "warnings"), default="all")
    paging(cmd)

    cmd = command("window", _cmd_window, "The steps around a node, in execution order, "
                  "within its test (or suite setup/teardown).")
    run_argument(cmd)
    cmd.add_argument("selector", help="node id: a test or any step inside one")
    paging(cmd)

    cmd = command("search", _cmd_search, "Messages by text and/or level, run-wide or scoped; "
                  "secrets come back masked.")
    run_argument(cmd)
    cmd.add_argument("query", nargs="?", help="plain text, case-insensitive (%% _ \\ literal)")
    cmd.add_argument("--selector", help="only this node's messages (see --scope)")
    cmd.add_argument("--scope", choices=("node", "subtree", "test"),
                     help="with --selector: its own messages, its subtree (default), its test")
    levels = cmd.add_mutually_exclusive_group()
    level_names = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL", "SKIP")
    levels.add_argument("--level", choices=level_names, type=str.upper, help="exactly this level")
    levels.add_argument("--min-level", choices=level_names, type=str.upper,
                        help="this level or worse (TRACE < DEBUG < INFO < WARN = SKIP < ERROR < FAIL)")
    paging(cmd)

    cmd = command("watch", _cmd_watch, "Follow a live run: what runs now, pass/fail counts, "
                  "failures as they happen; ends with the run.", json_flag=False)
    run_argument(cmd, optional=True)
    cmd.add_argument("--interval", type=float, default=1.0, help="seconds between looks (1)")

    cmd = command("doctor", _cmd_doctor, "Check the installation and the store; one-line verdict.")
    cmd.add_argument("--repair", action="store_true",
                     help="if the store is damaged: move it aside (*.corrupt-<time>), start a new "
                          "one and import again the result files the old one came from")

    cmd = command("prune", _cmd_prune, "Delete finished runs to free space (never running ones); "
                  "live writers wait a moment at most.")
    cmd.add_argument("--run", type=int, action="append", default=[], metavar="RUN_ID",
                     help="delete this run (repeatable)")
    cmd.add_argument("--keep", type=int, metavar="N", help="keep the newest N runs")
    cmd.add_argument("--older-than", type=float, metavar="DAYS",
                     help="delete runs stored more than DAYS days ago (with --keep: only those "
                          "not among the newest N)")
    cmd.add_argument("--dry-run", action="store_true", help="list what would be deleted")
    cmd.add_argument("--vacuum", action="store_true",
                     help="then compact the whole file (VACUUM: blocks writers while it runs; "
                          "needed once for stores made before incremental space release)")

    cmd = sub.add_parser("serve", help="Serve MCP over stdio (the default when stdin is not a TTY).",
                         description="Serve MCP over stdio; the store is $RF_LOG_MCP_DB or the default.")
    cmd.set_defaults(handler=_cmd_serve)

    cmd = command("demo", _cmd_demo,
                  "Run robot on a suite, import its output, print the summary and failure paths.",
                  json_flag=False)
    cmd.add_argument("suite", nargs="?", default="examples",
                     help="suite file or folder (default: ./examples)")
    cmd.add_argument("--outputdir", help="where robot writes output.xml (default: a new temp dir)")
    return parser


def _run_id(text: str) -> int | str:
    if text.lower() in ("latest", "last"):
        return "latest"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a run id (a number, or latest)") from None


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


def _resolve(conn: sqlite3.Connection, run: int | str | None) -> int:
    """A run id; ``latest`` (or nothing) is the newest run in the store."""
    if isinstance(run, int):
        return run
    row = conn.execute(f"SELECT max(run_id) FROM runs WHERE {VISIBLE_RUNS}").fetchone()
    if row[0] is None:
        raise ResultError(RUN_NOT_FOUND, "The store has no runs yet.",
                          "Import an output.xml with `rf-log-mcp import PATH`, or run robot with "
                          "--listener rf_log_listener.")
    return int(row[0])


def _show(args: argparse.Namespace, response: Envelope, printer: Callable[..., None]) -> int:
    """Print a response as JSON or as text; a failed one raises (printed by main, exit 1)."""
    if args.json:
        _print_json(response.model_dump(mode="json", exclude_none=True))
        return 0 if response.ok else 1
    printer(_checked(response), Style())
    return 0


def _cmd_runs(args: argparse.Namespace) -> int:
    response = service.list_runs(_connect(args), args.status, args.limit)
    return _show(args, response, render.runs)


def _checked(response: Envelope) -> Envelope:
    if not response.ok and response.error is not None:
        raise ResultError(response.error.code, response.error.message, response.error.hint)
    return response


def _summary_response(conn: sqlite3.Connection, run_id: int) -> GetViewResponse:
    """The summary as the command line shows it: up to 200 failed tests, the largest budget."""
    return service.get_view(conn, "summary", run_id=run_id, page_size=200, budget=MAX_BUDGET)


def _summary(conn: sqlite3.Connection, run_id: int) -> GetViewResponse:
    return _checked(_summary_response(conn, run_id))  # type: ignore[return-value]


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
    conn = _connect(args)
    return _show(args, _summary_response(conn, _resolve(conn, args.run)), render.summary)


def _cmd_failures(args: argparse.Namespace) -> int:
    conn = _connect(args)
    run_id = _resolve(conn, args.run)
    try:
        paths = _failure_paths(conn, run_id, args.test, args.limit)
    except ResultError as err:
        if err.code != "NO_FAILURES":
            raise
        paths = []
    if args.json:
        _print_json({"run_id": run_id, "failures": paths})
    else:
        render.failures(paths, Style())
    return 0


def _cmd_tree(args: argparse.Namespace) -> int:
    conn = _connect(args)
    response = service.get_view(conn, "tree", run_id=_resolve(conn, args.run),
                                selector=args.selector, projection=args.projection,
                                cursor=args.cursor, page_size=args.page_size, budget=MAX_BUDGET)
    return _show(args, response, render.tree)


def _cmd_window(args: argparse.Namespace) -> int:
    conn = _connect(args)
    response = service.get_view(conn, "step_window", run_id=_resolve(conn, args.run),
                                selector=args.selector, cursor=args.cursor,
                                page_size=args.page_size, budget=MAX_BUDGET)
    return _show(args, response, render.window)


def _cmd_search(args: argparse.Namespace) -> int:
    conn = _connect(args)
    response = service.search_messages(
        conn, args.query, run_id=_resolve(conn, args.run), selector=args.selector,
        scope=args.scope, level=args.level, min_level=args.min_level, cursor=args.cursor,
        page_size=args.page_size, budget=MAX_BUDGET)
    return _show(args, response, render.search)


def _cmd_watch(args: argparse.Namespace) -> int:
    """Follow a live run until it ends: one status line (rewritten in place on a terminal) and
    each failed test as it fails."""
    conn = _connect(args)
    style = Style()
    live = sys.stdout.isatty()
    run_id = args.run if isinstance(args.run, int) else _wait_for_live_run(conn, args.interval)
    seen: set[str] = set()
    last_status = ""
    while True:
        response = _summary(conn, run_id)
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


def _cmd_doctor(args: argparse.Namespace) -> int:
    """Facts about the installation and the store, then a one-line verdict."""
    path = Path(args.db).expanduser() if args.db else default_store_path()
    facts: dict[str, Any] = {"store": str(path), "rf_log_mcp": __version__,
                             "python": sys.version.split()[0]}
    problems: list[str] = []
    corrupt = False
    facts["robotframework"] = _version_of("robotframework")
    facts["mcp"] = _version_of("mcp")
    if facts["robotframework"] is None:
        problems.append("robotframework is not installed")
    try:
        from rf_log_listener.listener import rf_log_listener

        facts["listener"] = f"importable (listener API {rf_log_listener.ROBOT_LISTENER_API_VERSION})"
    except Exception as exc:  # any failure here is the finding
        facts["listener"] = f"not importable: {exc}"
        problems.append("the listener cannot be imported")
    store_problems: list[str] = []
    conn: sqlite3.Connection | None = None
    try:
        conn = open_store(path)
        facts["schema_version"] = int(conn.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        facts["writable"] = True
        facts["runs"] = dict(conn.execute(
            "SELECT status, count(*) FROM runs GROUP BY status").fetchall())
        facts["size_mb"] = round(_store_bytes(path) / 1e6, 1)
        facts["integrity"] = conn.execute("PRAGMA quick_check").fetchone()[0]
        if facts["integrity"] != "ok":
            corrupt = True
            store_problems.append(f"the store is damaged: {facts['integrity']}")
    except (ResultError, sqlite3.Error) as exc:
        corrupt = (exc.code == STORE_CORRUPT if isinstance(exc, ResultError)
                   else is_corruption(exc))
        if corrupt:
            facts["integrity"] = "damaged"
        else:
            facts["writable"] = False
        store_problems.append(str(exc.message if isinstance(exc, ResultError) else exc))
    finally:
        if conn is not None:
            conn.close()
    if corrupt and args.repair:
        facts["repair"] = _repair(path)
        facts["runs"] = {"complete": len(facts["repair"]["reimported"]),
                         "interrupted": len(facts["repair"]["salvaged_live_runs"])}
        store_problems = []
    elif corrupt:
        store_problems.append("`rf-log-mcp doctor --repair` starts a new store")
    problems += store_problems
    verdict = ("OK: ready; " + f"{sum(facts.get('runs', {}).values())} runs in {path}"
               if not problems else "PROBLEM: " + "; ".join(problems))
    facts["verdict"] = verdict
    if args.json:
        _print_json(facts)
    else:
        for key, value in facts.items():
            if key != "verdict":
                print(f"{key:<15} {value}")
        print(Style()(verdict, "PASS" if not problems else "FAIL"))
    return 0 if not problems else 1


def _repair(path: Path) -> dict[str, Any]:
    """Set the damaged store aside, start a new one, import again every result file the old
    one names (imports, and outputs written by live runs) that still exists, and salvage the
    readable rows of live runs that have no such file."""
    moved = set_aside(path)
    conn = open_store(path)
    sources: list[tuple[str, str | None]] = []
    try:
        old = sqlite3.connect(f"{moved.resolve().as_uri()}?mode=ro", uri=True)
        sources = old.execute("SELECT DISTINCT source_path, label FROM runs"
                              " WHERE source_path IS NOT NULL").fetchall()
        old.close()
    except sqlite3.Error as exc:
        print(f"the old store's list of runs cannot be read either ({exc})", file=sys.stderr)
    reimported, missing = [], []
    for source, label in sources:
        try:
            import_result(conn, source, stable_window=0, label=label)
            reimported.append(source)
        except ResultError as err:
            missing.append(f"{source}: {err.code}")
    salvaged = salvage_live_runs(moved, conn)
    return {"moved_to": str(moved), "reimported": reimported, "not_reimported": missing,
            "salvaged_live_runs": salvaged}


def _cmd_prune(args: argparse.Namespace) -> int:
    if not (args.run or args.keep is not None or args.older_than is not None):
        print("prune needs --run, --keep or --older-than", file=sys.stderr)
        return 2
    conn = _connect(args)
    mark_dead_live_runs(conn)
    chosen = _runs_to_prune(conn, args.run, args.keep, args.older_than)
    path = Path(conn.execute("PRAGMA database_list").fetchone()[2])
    before = _store_bytes(path)
    deleted = [] if args.dry_run else [run for run in chosen if prune_run(conn, run)]
    released = 0 if args.dry_run else release_free_pages(conn)
    if args.vacuum and not args.dry_run:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    report = {"dry_run": args.dry_run, "chosen": chosen, "deleted": deleted,
              "pages_released": released, "bytes_before": before, "bytes_after": _store_bytes(path)}
    if args.json:
        _print_json(report)
    else:
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb} {len(chosen if args.dry_run else deleted)} runs: "
              f"{', '.join(map(str, chosen if args.dry_run else deleted)) or '-'}")
        print(f"store {path}: {before / 1e6:.1f} MB -> {report['bytes_after'] / 1e6:.1f} MB")
    return 0


def _runs_to_prune(conn: sqlite3.Connection, explicit: list[int], keep: int | None,
                   older_than: float | None) -> list[int]:
    """Finished runs chosen by id, or by age and/or count (both: old AND beyond the newest
    N); runs a killed prune left half-deleted are always finished. Running runs never."""
    finished = [r for (r,) in conn.execute(
        "SELECT run_id FROM runs WHERE status IN ('complete', 'interrupted', 'failed')"
        " ORDER BY run_id DESC")]
    chosen = {r for r in explicit if r in finished}
    if keep is not None or older_than is not None:
        by_age = set(finished)
        if older_than is not None:
            cutoff = time.time() - older_than * 86400
            by_age = {r for (r,) in conn.execute(
                "SELECT run_id FROM runs WHERE created_at < ?", (cutoff,))} & set(finished)
        beyond = set(finished[keep:]) if keep is not None else set(finished)
        chosen |= by_age & beyond
    chosen |= {r for (r,) in conn.execute("SELECT run_id FROM runs WHERE status = 'deleting'")}
    return sorted(chosen)


def _store_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")
               if p.is_file() and ".corrupt-" not in p.name)


def _version_of(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


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
    render.summary(_summary(conn, outcome.run_id), Style())
    print()
    render.failures(_failure_paths(conn, outcome.run_id, None, 5), Style())
    return 0
