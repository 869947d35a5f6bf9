"""Commands that take care of the store and what surrounds it: import, doctor, prune,
serve, demo."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rf_log_listener import store_kind
from rf_log_listener.errors import STORE_CORRUPT, ResultError
from rf_log_listener.store import (
    ENV_DB,
    can_write,
    compact,
    forget_unused_names,
    is_corruption,
    mark_dead_live_runs,
    open_store,
    prune_run,
    quick_check,
    release_free_pages,
    set_aside,
    shown,
    store_bytes,
    store_setting,
)

from .. import __version__, render
from ..render_text import Style, counted
from ..service import INVALID_ARGUMENT, failed, finished
from .common import connect, failure_paths, failure_starts, print_json, summary, written_from_here


def cmd_import(args: argparse.Namespace) -> int:
    from rf_log_listener.importers.parallel import ROW_STREAM_GC

    # This process receives the row tuples the parser process builds: the same thresholds
    # there and here (2 % of the import's wall time at 100 MB).
    gc.set_threshold(*ROW_STREAM_GC)

    conn = connect(args, create=True)
    if len(args.paths) == 1:  # its answer, or its error as every command's (main prints it)
        outcome = _import_one(conn, args, args.paths[0])
        if args.json:
            print_json(finished(outcome.to_dict()))
        else:
            print(_imported_line(outcome))
        return 0
    # Several (a shell's glob of CI artifacts, pabot's outputs): each imported in turn, one
    # that fails said and skipped; --json answers a list of each file's answer.
    answers, failed_any = [], False
    for path in args.paths:
        try:
            outcome = _import_one(conn, args, path)
        except ResultError as err:
            failed_any = True
            answers.append({"path": path, **failed("parse_result", err)})
            if not args.json:
                print(f"error [{err.code}]: {path}: {err.message}", file=sys.stderr)
                if err.hint:
                    print(f"hint: {err.hint}", file=sys.stderr)
            continue
        answers.append({"path": path, **finished(outcome.to_dict())})
        if not args.json:
            print(f"{path}: {_imported_line(outcome)}")
    if args.json:
        print_json(answers)
    return 1 if failed_any else 0


def _import_one(conn: sqlite3.Connection, args: argparse.Namespace, path: str) -> Any:
    from rf_log_listener.importers import import_result  # the parsers: only where they run

    progress: Any = _ProgressBar() if sys.stderr.isatty() and not args.json else None
    if getattr(args, "progress_json", False):
        progress = _progress_lines
    try:
        return import_result(conn, path, allow_incomplete=args.allow_incomplete,
                             progress=progress, label=args.label)
    finally:
        if isinstance(progress, _ProgressBar):
            progress.close()


def _imported_line(outcome: Any) -> str:
    again = " (already imported)" if outcome.deduplicated else ""
    return (f"run {outcome.run_id}{again}: {outcome.name} {outcome.result_status} -"
            f" {counted(outcome.total, 'test')}, {outcome.passed} passed, {outcome.failed} failed,"
            f" {outcome.skipped} skipped [{outcome.status}, {outcome.source_format},"
            f" {outcome.seconds:.2f} s]")


_last_line = [0.0]


def _progress_lines(done: int, total: int, nodes: int) -> None:
    """--progress-json (the MCP server's import process): a JSON line on stderr at most every
    0.2 s, read by ``server_state.import_in_child``."""
    now = time.monotonic()
    if now - _last_line[0] >= 0.2 or done >= total:
        _last_line[0] = now
        sys.stderr.write(json.dumps({"progress": [done, total, nodes]}) + "\n")
        sys.stderr.flush()


class _ProgressBar:
    """A one-line progress bar on stderr, shown only for imports that take a moment."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.shown = False
        self.last = 0.0

    def __call__(self, done: int, total: int, nodes: int = 0) -> None:
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


def cmd_doctor(args: argparse.Namespace) -> int:
    """Facts about the installation and the store, then a one-line verdict."""
    path = store_setting(args.db)
    facts: dict[str, Any] = {"store": shown(path), "rf_log_mcp": __version__,
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
        if not store_kind.is_url(path) and not os.path.isfile(path):
            store_problems += _store_to_be(path, chosen=bool(args.db or os.environ.get(ENV_DB)), facts=facts)
        else:
            conn = open_store(path)
            facts["schema_version"] = int(conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
            facts["writable"] = can_write(conn)
            by_status = dict(conn.execute("SELECT status, count(*) FROM runs GROUP BY status"))
            facts["runs"] = {s: n for s, n in by_status.items() if s not in HIDDEN_RUNS}
            hidden = {s: n for s, n in by_status.items() if s in HIDDEN_RUNS}
            if hidden:  # readers do not see these; the next import or prune removes them
                facts["unfinished_imports_and_deletions"] = hidden
            facts["size_mb"] = round(store_bytes(conn) / 1e6, 1)
            integrity = quick_check(conn)
            if integrity is not None:
                facts["integrity"] = integrity
            if integrity not in ("ok", None):
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
    if corrupt and args.repair and not store_kind.is_url(path):
        facts["repair"] = _repair(path)
        facts["runs"] = {"complete": len(facts["repair"]["reimported"]),
                         "interrupted": len(facts["repair"]["salvaged_live_runs"])}
        store_problems = []
    elif corrupt:
        store_problems.append("`rf-log-mcp doctor --repair` starts a new store")
    problems += store_problems
    count = sum(facts.get("runs", {}).values())
    verdict = (f"OK: ready; {count} run{'' if count == 1 else 's'} in {shown(path)}"
               if not problems else "PROBLEM: " + "; ".join(problems))
    facts["verdict"] = verdict
    if args.json:
        print_json(facts)
    else:
        for key, value in facts.items():
            if key != "verdict":
                print(f"{key:<15} {value}")
        print(Style()(verdict, "PASS" if not problems else "FAIL"))
    return 0 if not problems else 1


HIDDEN_RUNS = ("importing", "deleting")  # the complement of store.VISIBLE_RUNS


def _store_to_be(path: str, chosen: bool, facts: dict[str, Any]) -> list[str]:
    """Facts and problems of a store that does not exist yet. A path someone chose that holds
    no store is most likely mistyped; the default one is created by the first import or run,
    if its folder can be made."""
    if chosen:
        facts["runs"] = {}
        return [f"no store at {path} (check --db and ${ENV_DB})"]
    facts["store"] = f"{path} (not created yet: the first import or robot run creates it)"
    facts["runs"] = {}
    parent = Path(path).absolute().parent
    folder = next(p for p in (parent, *parent.parents) if p.exists())
    facts["writable"] = os.access(folder, os.W_OK)
    return [] if facts["writable"] else [f"{folder} is not writable: the store cannot be created"]


def _repair(path: str) -> dict[str, Any]:
    """Set the damaged store aside, start a new one, import again every result file the old
    one names (imports, and outputs written by live runs) that still exists, and salvage the
    readable rows of live runs that have no such file."""
    from rf_log_listener.importers import import_result
    from rf_log_listener.salvage import salvage_live_runs

    moved = set_aside(path)
    conn = open_store(path)
    sources: list[tuple[str, str | None]] = []
    try:
        old = sqlite3.connect(f"{Path(moved).resolve().as_uri()}?mode=ro", uri=True)
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


def cmd_prune(args: argparse.Namespace) -> int:
    if not (args.run or args.keep is not None or args.older_than is not None or args.usage):
        raise ResultError(INVALID_ARGUMENT, "prune needs --run, --keep, --older-than or --usage.",
                          "`rf-log-mcp prune --help` lists them.")
    conn = connect(args)
    forgotten = None
    if args.usage:
        from rf_log_listener.usage import forget

        forgotten = conn.execute("SELECT (SELECT count(*) FROM usage_calls) + "
                                 "(SELECT count(*) FROM usage_imports)").fetchone()[0]
        if not args.dry_run:
            forget(conn)
    mark_dead_live_runs(conn)
    chosen = _runs_to_prune(conn, args.run, args.keep, args.older_than)
    before = store_bytes(conn)
    deleted = [] if args.dry_run else [run for run in chosen if prune_run(conn, run)]
    if deleted:
        forget_unused_names(conn)
    released = 0 if args.dry_run else release_free_pages(conn)
    if args.vacuum and not args.dry_run:
        compact(conn)
    report = {"dry_run": args.dry_run, "chosen": chosen, "deleted": deleted,
              "pages_released": released, "bytes_before": before, "bytes_after": store_bytes(conn)}
    if forgotten is not None:
        report["usage_records"] = forgotten
    if args.json:
        print_json(report)
    else:
        if forgotten is not None:
            print(f"{'would delete' if args.dry_run else 'deleted'} {forgotten} usage records")
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb} {len(chosen if args.dry_run else deleted)} runs: "
              f"{', '.join(map(str, chosen if args.dry_run else deleted)) or '-'}")
        print(f"store {shown(store_setting(args.db))}: {before / 1e6:.1f} MB"
              f" -> {report['bytes_after'] / 1e6:.1f} MB")
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


def _version_of(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def cmd_serve(args: argparse.Namespace) -> int:
    if args.db:  # the server, its import processes and their children open the store it names
        os.environ[ENV_DB] = args.db
    if getattr(args, "http", False):
        from ..http import serve_http

        return serve_http(args.host, args.port, args.token_file)
    from ..server import serve

    return serve()


# The demo's suite ships in the package: a small shop's tests, three of them failing.
DEMO_SUITE = Path(__file__).resolve().parents[1] / "demo" / "shop"


def cmd_push(args: argparse.Namespace) -> int:
    """Copy finished runs into the store --to names; print what each became there."""
    from rf_log_listener.push import FINISHED, push_run

    if not args.runs and not args.all:
        raise ResultError(INVALID_ARGUMENT, "push needs run ids or --all.",
                          "`rf-log-mcp runs` lists the runs.")
    source = connect(args)
    target = open_store(args.to)
    if args.all:
        marks = ", ".join("?" * len(FINISHED))
        args.runs = [r for (r,) in source.execute(
            f"SELECT run_id FROM runs WHERE status IN ({marks}) ORDER BY run_id", FINISHED)]
    pushed = [push_run(source, target, run_id) for run_id in args.runs]
    if args.json:
        print_json({"ok": True, "to": shown(args.to), "runs": [p.to_dict() for p in pushed]})
    else:
        for item in pushed:
            done = {"pushed": "pushed as", "resumed": "pushed (resumed) as",
                    "already": "already there as"}[item.outcome]
            print(f"run {item.source_run_id}: {done} run {item.run_id} in {shown(args.to)}"
                  f" ({item.nodes} nodes, {item.messages} messages)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    suite = Path(args.suite) if args.suite else DEMO_SUITE
    if not suite.exists():
        raise ResultError("FILE_NOT_FOUND", f"No suite at {suite.resolve()}.",
                          "Pass the path of a suite file or folder, or leave it out for the"
                          " demo's own suite.")
    outdir = Path(args.outputdir or tempfile.mkdtemp(prefix="rf-log-mcp-demo-"))
    command = [sys.executable, "-m", "robot", "--outputdir", str(outdir), "--log", "NONE",
               "--report", "NONE", "--console", "dotted", str(suite)]
    print("$ " + " ".join(command[2:] if command[1] == "-m" else command), flush=True)
    subprocess.run(command, check=False, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    from rf_log_listener.importers import import_result

    conn = connect(args, create=True)
    outcome = import_result(conn, outdir / "output.xml", stable_window=0)
    print(f"\nImported run {outcome.run_id} into {shown(store_setting(args.db))}\n")
    render.summary(summary(conn, outcome.run_id), Style())
    print()
    paths = failure_paths(conn, outcome.run_id, None, 5) if outcome.failed else []
    written_from_here(conn, outcome.run_id, paths)
    render.failures(paths, Style(), outcome.run_id)
    render.more_failures(len(paths), failure_starts(conn, outcome.run_id, paths), outcome.run_id,
                         Style())
    return 0
