"""What the command line's commands share: the store, run ids, printing responses."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable

from rf_log_listener.errors import INVALID_ARGUMENT, STORE_UNAVAILABLE, ResultError
from rf_log_listener.store import VISIBLE_RUNS, open_store

from .. import service, usage
from ..answer import Answer
from ..limits import MAX_BUDGET, MAX_PAGE
from ..render_text import Style
from ..views.common import RUN_NOT_FOUND

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, TextIO

OPENED: list[sqlite3.Connection] = []  # where the usage record of this command goes


def connect(args: argparse.Namespace, create: bool = False) -> sqlite3.Connection:
    """The store of ``--db`` (else the default). Commands that only read do not create it: a
    mistyped path is STORE_NOT_FOUND, not a new empty store and its folders; and read a store
    they cannot write (a CI artifact on a read-only mount, another user's) as it stands, as
    the server does. The calls made through it are recorded as the calling shell's session
    (usage.py; not in a store read-only)."""
    try:
        conn = open_store(args.db or None, create=create)
    except ResultError as err:
        if create or err.code != STORE_UNAVAILABLE:
            raise
        try:
            conn = open_store(args.db or None, readonly=True)
        except ResultError:
            raise err from None
    usage.use_session(usage.cli_session())
    OPENED.append(conn)
    return conn


def print_json(data: Any, out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def resolve(conn: sqlite3.Connection, run: int | str | None) -> int:
    """A run id; ``latest`` (or nothing) is the newest run in the store. A command that reads
    one run refuses a pabot group (``g17``), naming its runs."""
    if isinstance(run, str) and run.startswith("g"):
        members = _group_of(conn, int(run[1:]))
        raise ResultError(INVALID_ARGUMENT, f"This command reads one run, not the pabot group {run}.",
                          f"Pass one of its runs ({', '.join(map(str, members)) or run[1:]}); "
                          "summary and failures take the group.")
    if isinstance(run, int):
        return run
    newest = newest_run(conn)
    if newest is None:
        raise ResultError(RUN_NOT_FOUND, "The store has no runs yet.",
                          "Import an output.xml with `rf-log-mcp import PATH`, or run robot with "
                          "--listener rf_log_listener.")
    return newest


def newest_run(conn: sqlite3.Connection) -> int | None:
    """The newest run's id (of a pabot group, its newest process), None in an empty store."""
    row = conn.execute(f"SELECT max(run_id) FROM runs WHERE {VISIBLE_RUNS}").fetchone()
    return None if row[0] is None else int(row[0])


def resolve_unit(conn: sqlite3.Connection, run: int | str | None) -> tuple[int, list[int] | None]:
    """A run, or a pabot execution as ``runs`` lists it: its run id and, for a group (``g17``;
    ``latest`` or nothing when the newest run is one of a group's processes), the group's runs."""
    if isinstance(run, int):
        return run, None
    run_id = int(run[1:]) if isinstance(run, str) and run.startswith("g") else resolve(conn, None)
    return run_id, _group_of(conn, run_id) or None


def _group_of(conn: sqlite3.Connection, run_id: int) -> list[int]:
    """The runs of the pabot execution ``run_id`` belongs to, in order (none: not one)."""
    return [rid for (rid,) in conn.execute(
        f"SELECT run_id FROM runs WHERE run_group = (SELECT run_group FROM runs WHERE"
        f" run_id = ? AND {VISIBLE_RUNS}) AND {VISIBLE_RUNS} ORDER BY run_id", (run_id,))]


def show(args: argparse.Namespace, response: Answer, printer: Callable[..., None]) -> int:
    """Print an answer as JSON or as text; a failed one raises (printed by main, exit 1)."""
    if args.json:
        print_json(response)
        return 0 if response.ok else 1
    printer(checked(response), Style())
    return 0


def checked(response: Answer) -> Answer:
    if not response.ok and response.error is not None:
        raise ResultError(response.error.code, response.error.message, response.error.hint)
    return response


def summary_response(conn: sqlite3.Connection, run_id: int, cursor: str | None = None,
                     page_size: int | None = None, selector: str | None = None) -> Answer:
    """The summary as the command line shows it: 200 failed tests a page, the largest budget."""
    return service.get_view(conn, "summary", run_id=run_id, cursor=cursor, selector=selector,
                            page_size=page_size or MAX_PAGE, budget=MAX_BUDGET)


def summary(conn: sqlite3.Connection, run_id: int, cursor: str | None = None,
            selector: str | None = None) -> Answer:
    return checked(summary_response(conn, run_id, cursor, selector=selector))


def failure_paths(conn: sqlite3.Connection, run_id: int, test: str | None, limit: int) -> list[dict]:
    paths, cursor = [], None
    while len(paths) < limit:
        response = checked(service.get_view(conn, "failure_path", run_id=run_id, selector=test,
                                             cursor=cursor, budget=MAX_BUDGET))
        assert response.failure_path is not None
        paths.append(response.failure_path)
        cursor = response.next_cursor
        if test or not cursor:
            break
    return paths


def written_from_here(conn: sqlite3.Connection, run_id: int, paths: list[dict]) -> None:
    """The failure paths' step locations as this shell opens them: answers give them relative
    to the run's root folder (``__init__.robot:2`` of ``robot tests/``), so from the folder
    robot ran in (or any other) they named no file. Relative to the working folder when
    below it, else absolute."""
    from ..sources import Locator

    root = Locator(conn, run_id).root_dir
    here = os.getcwd()
    for path in paths:
        for step in path["path"]:
            if step.get("source") and root is not None:
                whole = os.path.join(root, step["source"])
                relative = os.path.relpath(whole, here) if os.path.splitdrive(whole)[0] == \
                    os.path.splitdrive(here)[0] else ".."
                step["source"] = whole if relative.startswith("..") else relative


def failure_starts(conn: sqlite3.Connection, run_id: int, paths: list[dict]) -> int:
    """How many failure paths a run has (failed tests and suite fixtures, not the tests that
    failed only for another of them: its path is theirs), from a path of it read already or
    from its first."""
    if not paths:
        try:
            paths = failure_paths(conn, run_id, None, 1)
        except ResultError as err:
            if err.code != "NO_FAILURES":
                raise
            return 0
    first = paths[0]
    return (first["failed_tests_total"] + first["failed_suite_fixtures_total"]
            - (first.get("tests_failed_for_others_total") or 0))


