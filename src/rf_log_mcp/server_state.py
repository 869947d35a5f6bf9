"""What the requests of one MCP server share (read side, MCP): the store, read through one
connection per worker thread (SQLite in WAL mode: readers never wait for a writer), and the
imports running now, with their progress for the calls that started or joined them."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context

from rf_log_listener.errors import ResultError
from rf_log_listener.importers import ImportCancelled
from rf_log_listener.store import open_store

from .models import ParseResultResponse
from .paths import PathPolicy
from .subscriptions import RunWatcher


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

    @property
    def db_path(self) -> str | None:
        if self.conn is None:
            return None
        return str(self.conn.execute("PRAGMA database_list").fetchone()[2])

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the store, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = open_store(self.db_path, readonly=self.readonly)
            with self.imports_lock:
                self._opened.append(conn)
        return conn  # type: ignore[no-any-return]

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

    def report(self, done: int, total: int, nodes: int) -> None:
        """importers.Progress: called from the importing thread."""
        if self.cancelled:
            raise ImportCancelled("the file")
        self.done, self.total, self.nodes = done, total, nodes

    def message(self) -> str:
        if not self.total:
            return "checking the file"
        return f"{self.done / 1e6:,.0f} of {self.total / 1e6:,.0f} MB read, {self.nodes:,} nodes"


PROGRESS_EVERY_S = 0.5  # hosts cancel a call after ~60 s without progress


def import_key(path: str) -> str:
    """The file an import reads, as imports of it are matched."""
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError, ValueError):
        return path


async def with_progress(ctx: Context, job: ImportJob,
                         work: Callable[[], ParseResultResponse]) -> ParseResultResponse:
    """Run ``work`` (an import) in a worker thread, reporting ``job``'s progress every
    PROGRESS_EVERY_S. When the client cancels the call, the import is told (its next
    progress report raises ImportCancelled, and the importer removes what it wrote) and
    the call ends at once."""
    outcome: list[ParseResultResponse] = []

    async def run() -> None:
        try:
            outcome.append(await anyio.to_thread.run_sync(work, abandon_on_cancel=True))
        except anyio.get_cancelled_exc_class():
            job.cancelled = True
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
