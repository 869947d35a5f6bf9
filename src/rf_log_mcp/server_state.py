"""What the requests of one MCP server share (read side, MCP): the store, read through one
connection per worker thread (SQLite in WAL mode: readers never wait for a writer), and the
imports running now, with their progress for the calls that started or joined them."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context

from rf_log_listener.errors import ImportCancelled, ResultError
from rf_log_listener.store import ENV_DB, open_store, store_file

from . import service
from .answer import Answer
from .paths import PathPolicy
from .subscriptions import RunWatcher

log = logging.getLogger("rf_log_mcp")


@dataclass
class AppState:
    """What every request of one server shares. Each worker thread reads through its own
    connection (SQLite in WAL mode: readers never wait for a writer), and each import
    writes through its own, so no request waits for another's."""

    conn: sqlite3.Connection | None  # None: the store cannot be opened at all (store_error says why)
    policy: PathPolicy  # the files tools may read (paths.py)
    store_error: ResultError | None = None
    readonly: bool = False
    imports: dict[str, ImportJob] = field(default_factory=dict)  # running, by file
    watcher: RunWatcher | None = None  # live runs pushed to subscribers (subscriptions.py)
    imports_lock: threading.Lock = field(default_factory=threading.Lock)
    _local: threading.local = field(default_factory=threading.local)
    _opened: list[sqlite3.Connection] = field(default_factory=list)

    @functools.cached_property
    def db_path(self) -> str | None:
        """The store's file, asked once (lifespan): the first connection is then never
        used from two threads at once."""
        if self.conn is None:
            return None
        return store_file(self.conn)

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the store, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = open_store(self.db_path, readonly=self.readonly)
            with self.imports_lock:
                self._opened.append(conn)
        return conn  # type: ignore[no-any-return]

    def import_file(self, path: str, allow_incomplete: bool, job: ImportJob) -> Answer:
        """parse_result's work: a file the policy allows, imported in this thread when it is
        small, else in a process of its own (CHILD_MIN_BYTES)."""
        conn = self.connection()
        try:
            self.policy.check(conn, path)
            size = Path(path).expanduser().stat().st_size
        except ResultError as err:
            return service.failed("parse_result", err)
        except (OSError, ValueError):
            size = 0  # the import says what is wrong with it
        if size < CHILD_MIN_BYTES or self.db_path is None:
            return service.parse_result(conn, path, allow_incomplete, None, job.report)
        return service.imported(conn, import_in_child(self.db_path, path, allow_incomplete, job))

    def close(self) -> None:
        for conn in [*self._opened, self.conn]:
            if conn is not None:
                conn.close()


@dataclass
class ImportJob:
    """One running import: how far it is (for progress notifications, its own and those of
    calls that joined it), whether it was cancelled, and when it ends."""

    done: int = 0
    total: int = 0
    nodes: int = 0
    cancelled: bool = False
    finished: threading.Event = field(default_factory=threading.Event)
    child: subprocess.Popen[bytes] | None = None  # the import's process, when it has one

    def report(self, done: int, total: int, nodes: int) -> None:
        """importers.Progress: called from the importing thread."""
        if self.cancelled:
            raise ImportCancelled("the file")
        self.done, self.total, self.nodes = done, total, nodes

    def cancel(self) -> None:
        """Stop the import: an import process is interrupted now (it removes what it wrote,
        as after Ctrl-C); one in a thread stops at its next progress report."""
        self.cancelled = True
        if self.child is not None and self.child.poll() is None:
            _interrupt(self.child)

    def message(self) -> str:
        if not self.total:
            return "checking the file"
        return f"{self.done / 1e6:,.0f} of {self.total / 1e6:,.0f} MB read, {self.nodes:,} nodes"


PROGRESS_EVERY_S = 0.5  # hosts cancel a call after ~60 s without progress
# Files this big are imported by a process of its own (`rf-log-mcp import --json`): the
# import's Python work then shares no interpreter lock with the server's answers.
CHILD_MIN_BYTES = 16 * 1024 * 1024


def import_in_child(db_path: str, path: str, allow_incomplete: bool,
                    job: ImportJob) -> dict[str, Any]:
    """``rf-log-mcp import --json --progress-json PATH`` on the server's store: its progress
    lines (stderr) feed ``job``, its answer (stdout) is the response; cancelled, it is
    interrupted and removes what it wrote."""
    command = [sys.executable, "-m", "rf_log_mcp", "import", "--json", "--progress-json", path]
    if allow_incomplete:
        command.append("--allow-incomplete")
    job.child = child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, ENV_DB: db_path}, **_NEW_GROUP)
    assert child.stdout is not None and child.stderr is not None
    try:
        for line in child.stderr:
            try:
                done, total, nodes = json.loads(line)["progress"]
            except (ValueError, KeyError, TypeError):
                log.warning("import: %s", line.decode(errors="replace").rstrip())
                continue
            job.report(done, total, nodes)
        answer = child.stdout.read()
    except ImportCancelled as err:
        _interrupt(child)
        child.wait()
        return service.failed("parse_result", err)
    finally:
        child.wait()
    try:
        parsed = json.loads(answer)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool):
        return parsed
    return service.failed("parse_result", ResultError(
        service.INTERNAL_ERROR, f"The import process ended with code {child.returncode} "
        "and no answer.", "The server's log (stderr) has what it said."))


# Windows has no SIGINT for a child: a new process group receives CTRL_BREAK, which ends it
# at once; what it wrote is then a stale import that the next import reaps
# (store.reap_stale_runs), never a run readers take for complete.
_NEW_GROUP: dict[str, Any] = (
    {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP} if os.name == "nt" else {})


def _interrupt(child: subprocess.Popen[bytes]) -> None:
    """Ctrl-C for the import process: it removes the rows it wrote, then exits."""
    with contextlib.suppress(OSError):
        child.send_signal(signal.CTRL_BREAK_EVENT if os.name == "nt" else signal.SIGINT)  # type: ignore[attr-defined]


def import_key(path: str) -> str:
    """The file an import reads, as imports of it are matched."""
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError, ValueError):
        return path


async def with_progress(ctx: Context, job: ImportJob,
                         work: Callable[[], Answer]) -> Answer:
    """Run ``work`` (an import) in a worker thread, reporting ``job``'s progress every
    PROGRESS_EVERY_S. When the client cancels the call, the import is told (its next
    progress report raises ImportCancelled, and the importer removes what it wrote) and
    the call ends at once."""
    outcome: list[Answer] = []

    async def run() -> None:
        try:
            outcome.append(await anyio.to_thread.run_sync(work, abandon_on_cancel=True))
        except anyio.get_cancelled_exc_class():
            job.cancel()
            raise

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await progress_until(ctx, job, lambda: bool(outcome))
        group.cancel_scope.cancel()
    return outcome[0]


async def progress_until(ctx: Context, job: ImportJob, finished: Callable[[], bool]) -> None:
    """Send ``job``'s progress every PROGRESS_EVERY_S until ``finished()`` (a no-op for a
    client that gave no progress token)."""
    while not finished():
        await ctx.report_progress(job.done, job.total or None, job.message())
        with anyio.move_on_after(PROGRESS_EVERY_S):
            while not finished():
                await anyio.sleep(0.02)
