"""Rows -> the store: the only code that writes a run's rows, into SQLite or PostgreSQL.

:class:`~rf_log_listener.writer.RunWriter` computes rows from events and hands them to a
:class:`RowSink`. :class:`StoreRowSink` commits them (new rows by COPY on PostgreSQL),
keeps SQLite's full-text index up to date (on a thread of its own when asked; PostgreSQL's
trigram index keeps itself) and publishes the run at the end. A sink in another
process (see ``importers/parallel.py``) forwards the same calls to one of these.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from . import store_kind
from .copies import mark_copies
from .events import RunInfo, rf_version, suite_status
from .rotation import Rotation, rotate_stored
from .schema import INDEXED_TEXT, register_functions, with_stored_text
from .store import BUSY_TIMEOUT_MS, mark_not_finished, run_base, store_file, this_host, transaction

NODE_COLUMNS = (
    "key", "last", "parent_pre", "seq", "depth", "node_id", "type", "raw_type", "name", "owner",
    "status", "start_time", "elapsed", "message", "owner_test", "child_count",
    "failed_descendant_count", "max_descendant_level", "message_count", "msg_lo", "msg_hi",
    "args", "assign", "fields",
)
MESSAGE_COLUMNS = ("key", "node_pre", "msg_no", "level", "time", "html", "text")
_INSERT_NODE = (f"INSERT INTO nodes ({', '.join(NODE_COLUMNS)})"
                f" VALUES ({','.join('?' * len(NODE_COLUMNS))})")
_INSERT_MESSAGE = (f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)})"
                   f" VALUES ({','.join('?' * len(MESSAGE_COLUMNS))})")
_HEARTBEAT = "UPDATE runs SET heartbeat = ? WHERE run_id = ?"
_INSERT_ERROR = "INSERT INTO errors (run_id, seq, level, time, html, text) VALUES (?,?,?,?,?,?)"
_INSERT_SECRET = "INSERT OR IGNORE INTO secrets (run_id, value) VALUES (?, ?)"
_INSERT_DEFINITION = ("INSERT OR IGNORE INTO definitions (run_id, owner, name_key, source, lineno)"
                      " VALUES (?, ?, ?, ?, ?)")
_INDEX_MESSAGES = (
    f"INSERT INTO messages_fts (rowid, text) SELECT key, {INDEXED_TEXT} FROM messages"
    " WHERE key >= ? AND key < ?"
)
_TWIN_COLUMNS = ("source_hash", "content_hash")  # what StoreRowSink's once_by may name
FINISH_FIELDS = (
    "status", "generator", "rf_version", "name", "result_status", "start_time", "elapsed",
    "total", "passed", "failed", "skipped", "node_count", "message_count", "error_count",
)


LiveTotals = tuple[str, int, int, int]  # root suite name, passed, failed, skipped


class RowSink(Protocol):
    def begin_run(self, info: RunInfo) -> int: ...
    def write(self, nodes: list[tuple[Any, ...]], messages: list[tuple[Any, ...]],
              errors: list[tuple[Any, ...]], msg_lo: int, msg_hi: int,
              secrets: list[str], definitions: list[tuple[Any, ...]] | None = None,
              totals: LiveTotals | None = None) -> None: ...
    def rewrite_suite_tests(self, lo: int, hi: int, teardown_status: str,
                            teardown_message: str) -> tuple[int, dict[str, int]]: ...
    def rotate(self, rotation: Rotation, msg_from: int) -> None: ...
    def finish_run(self, fields: dict[str, Any]) -> None: ...


_Call = TypeVar("_Call", bound=Callable[..., Any])


def _as_stored_text(method: _Call) -> _Call:
    """``method`` through :func:`~rf_log_listener.schema.with_stored_text`: a batch the
    driver refuses for one odd string (its transaction rolled back) is written again with
    its texts as the store holds them, so the run is captured or imported whole."""
    @functools.wraps(method)
    def call(self: StoreRowSink, *args: Any) -> Any:
        return with_stored_text(method, self, *args)
    return call  # type: ignore[return-value]


class StoreRowSink:
    """Writes one run's rows; with ``background_index`` the full-text index is built on a
    thread, overlapping with whatever produces the rows."""

    def __init__(self, conn: sqlite3.Connection, *, background_index: bool = False,
                 replace_nodes: bool = False, once_by: tuple[str, str] | None = None) -> None:
        self.conn = conn
        self.background_index = background_index
        # ("source_hash" or "content_hash", its value): the run is published only if no
        # complete run has that value yet (two imports of one file, two pushes of one run,
        # at once); else it is left unpublished and published_twin says which run was first.
        assert once_by is None or once_by[0] in _TWIN_COLUMNS, once_by
        self.once_by = once_by
        self.published_twin: int | None = None
        self.nodes_written = 0  # for progress reports
        # A live run writes open nodes early and replaces them with their final rows.
        self.replace_nodes = replace_nodes
        self._insert_node = _INSERT_NODE.replace("INSERT", "INSERT OR REPLACE", 1) if replace_nodes \
            else _INSERT_NODE
        self._heartbeat = _HEARTBEAT + (" AND status = 'running'" if replace_nodes else "")
        self.run_id: int | None = None
        self._indexer: _FullTextIndexer | None = None
        # PostgreSQL takes new rows fastest by COPY (a live run's replaced rows are upserts),
        # keeps its trigram index itself, and plans a search of a live run's keys well only
        # once its statistics have seen them: refreshed as the run doubles
        self._postgres = store_kind.is_connection(conn)
        self._messages = 0
        self._refresh_at = 5_000

    def begin_run(self, info: RunInfo) -> int:
        status = "importing" if info.origin == "import" else "running"
        now = time.time()
        row = info.to_dict()
        row.update(status=status, rf_version=rf_version(info.generator), pid=os.getpid(),
                   host=this_host(), heartbeat=now, created_at=now,
                   rpa=None if info.rpa is None else int(info.rpa),
                   dry_run=None if info.dry_run is None else int(info.dry_run))
        with transaction(self.conn):  # one commit, not two: robot waits for it
            self.run_id = run_id = insert_run(self.conn, row)
        db_path = store_file(self.conn)
        # PostgreSQL's trigram index keeps itself up to date: nothing to build beside it.
        if self.background_index and db_path and not self._postgres:
            self._indexer = _FullTextIndexer(db_path, run_id)
        return run_id

    def attach(self, run_id: int) -> None:
        """Write into a run another connection began (the live writer process)."""
        self.run_id = run_id

    @_as_stored_text
    def write(self, nodes: list[tuple[Any, ...]], messages: list[tuple[Any, ...]],
              errors: list[tuple[Any, ...]], msg_lo: int, msg_hi: int,
              secrets: list[str], definitions: list[tuple[Any, ...]] | None = None,
              totals: LiveTotals | None = None) -> None:
        """Commit the rows (and the run's newly found secret values and library keyword
        definitions, and a running run's ``totals`` so far) in one transaction; then index
        the messages."""
        conn = self.conn
        with transaction(conn):
            # The run's row first. A reader that finds a live run's robot gone marks the run
            # interrupted and its open nodes NOT FINISHED (store.mark_dead_live_runs), taking
            # the row first as well: the two commits follow one another (PostgreSQL waits on
            # the row, SQLite on its one writer), and rows committed after the mark are
            # settled in the same commit, so no reader sees them RUNNING.
            running = conn.execute(self._heartbeat, (time.time(), self.run_id)).rowcount \
                if totals is None else self._live_totals(totals)
            if secrets:
                conn.executemany(_INSERT_SECRET, [(self.run_id, value) for value in secrets])
            if definitions:
                conn.executemany(_INSERT_DEFINITION, [(self.run_id, *d) for d in definitions])
            if nodes:
                if self._postgres and not self.replace_nodes:
                    conn.copy_rows("nodes", NODE_COLUMNS, nodes)
                else:
                    conn.executemany(self._insert_node, nodes)
            if messages:
                if self._postgres:
                    conn.copy_rows("messages", MESSAGE_COLUMNS, messages)
                else:
                    conn.executemany(_INSERT_MESSAGE, messages)
            if errors:
                conn.executemany(_INSERT_ERROR, errors)
            if not running:
                mark_not_finished(conn, self.run_id or 0)
        self.nodes_written += len(nodes)
        if self._postgres and self.replace_nodes:
            self._messages += len(messages)
            if self._messages >= self._refresh_at:
                self._refresh_at *= 2
                _refresh_statistics(self.conn)
        if msg_hi > msg_lo:
            if self._indexer is not None:
                self._indexer.add(msg_lo, msg_hi)
            else:
                index_messages(conn, self.run_id or 0, msg_lo, msg_hi)

    @_as_stored_text
    def rewrite_suite_tests(self, lo: int, hi: int, teardown_status: str,
                            teardown_message: str) -> tuple[int, dict[str, int]]:
        """Re-mark tests in keys [lo, hi] as RF's ExecutionResult does after the suite's
        teardown failed or skipped; fix the written suites between them and the suite.

        Returns how many tests newly failed and the tests' status counts afterwards.
        """
        conn = self.conn
        tests = conn.execute(
            "SELECT key, status, message FROM nodes WHERE key BETWEEN ? AND ? AND type = 'TEST'",
            (lo, hi),
        ).fetchall()
        updates = []
        newly_failed: list[int] = []
        counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for key, status, message in tests:
            new_status, new_message = _teardown_rewritten(status, message or "", teardown_status,
                                                          teardown_message)
            if new_status == "FAIL" and status != "FAIL":
                newly_failed.append(key)
            counts[new_status] = counts.get(new_status, 0) + 1
            updates.append((new_status, new_message, key))
        base = (lo >> 32) << 32
        with transaction(conn):
            conn.executemany("UPDATE nodes SET status = ?, message = ? WHERE key = ?", updates)
            suites = conn.execute(
                "SELECT key, last FROM nodes WHERE key BETWEEN ? AND ? AND type = 'SUITE'", (lo, hi),
            ).fetchall()
            for key, last in suites:
                gained = sum(1 for t in newly_failed if key < t <= base + last)
                by_status = dict(conn.execute(
                    "SELECT status, count(*) FROM nodes WHERE key BETWEEN ? AND ?"
                    " AND type = 'TEST' GROUP BY status", (key, base + last),
                ).fetchall())
                status = suite_status(by_status.get("PASS", 0), by_status.get("FAIL", 0))
                conn.execute(
                    "UPDATE nodes SET status = ?,"
                    " failed_descendant_count = failed_descendant_count + ? WHERE key = ?",
                    (status, gained, key),
                )
        return len(newly_failed), counts

    @_as_stored_text
    def rotate(self, rotation: Rotation, msg_from: int) -> None:
        """A test's or keyword's setup put first, or its teardown last, in written rows."""
        with transaction(self.conn, immediate=True):  # it reads, then writes: no deadlock
            rotate_stored(self.conn, run_base(self.run_id or 0), rotation, msg_from,
                          NODE_COLUMNS, self._insert_node)

    def _live_totals(self, totals: LiveTotals) -> int:
        """The heartbeat with a running run's root suite name and the tests ended so far
        (list_runs, summary; the run's end writes the final ones): 1 while it runs."""
        name, passed, failed, skipped = totals
        return int(self.conn.execute(
            "UPDATE runs SET heartbeat = ?, name = ?, total = ?, passed = ?, failed = ?,"
            " skipped = ? WHERE run_id = ? AND status = 'running'",
            (time.time(), name, passed + failed + skipped, passed, failed, skipped,
             self.run_id)).rowcount)

    @_as_stored_text
    def finish_run(self, fields: dict[str, Any]) -> None:
        """Wait for the index, then write the run's tests by name (history.py) and publish
        the run in one transaction: a reader never sees the run complete without its tests'
        index, and the run's end costs one commit."""
        from .history import index_run  # here, not at import: robot's process rarely needs it

        def publish() -> None:
            if self.once_by is not None and fields["status"] == "complete":
                self.published_twin = self._twin()
                if self.published_twin is not None:
                    return
            now = time.time()
            if self.conn.execute("SELECT dry_run FROM runs WHERE run_id = ?",
                                 (self.run_id,)).fetchone()[0] is None:
                self.conn.execute("UPDATE runs SET dry_run = ? WHERE run_id = ?",
                                  (int(ran_dry(self.conn, self.run_id or 0)), self.run_id))
            self.conn.execute(
                "UPDATE runs SET status = ?, generator = coalesce(generator, ?),"
                " rf_version = coalesce(rf_version, ?), name = ?, result_status = ?,"
                " start_time = ?, elapsed = ?, total = ?, passed = ?, failed = ?, skipped = ?,"
                " node_count = ?, message_count = ?, error_count = ?, heartbeat = ?,"
                " finished_at = ? WHERE run_id = ?",
                (*(fields[name] for name in FINISH_FIELDS), now, now, self.run_id),
            )
            mark_copies(self.conn, self.run_id or 0)

        self.sync()
        self.close()
        index_run(self.conn, self.run_id or 0, and_then=publish)
        if self._postgres:
            _refresh_statistics(self.conn)

    def _twin(self) -> int | None:
        """A complete run with the same ``once_by`` value, seen from inside the publishing
        transaction: SQLite runs one writer at a time; on PostgreSQL a lock per value (a
        SHA-256 in hex) orders two publications of the same run."""
        assert self.once_by is not None
        column, value = self.once_by
        if self._postgres:
            self.conn.execute("SELECT pg_advisory_xact_lock(?)", (int(value[:15], 16),))
        # the newest, as store.find_reusable_run answers a later import of the same bytes
        row = self.conn.execute(
            f"SELECT run_id FROM runs WHERE {column} = ? AND status = 'complete' AND run_id <> ?"
            " ORDER BY run_id DESC LIMIT 1", (value, self.run_id)).fetchone()
        return int(row[0]) if row else None

    def sync(self) -> None:
        """Wait until every committed message is in the full-text index."""
        if self._indexer is not None:
            self._indexer.sync()

    def close(self) -> None:
        """Stop the background indexer (if any); ranges still waiting are dropped."""
        if self._indexer is not None:
            self._indexer.close()
            self._indexer = None


RunError = tuple[str, str, bool, "str | None"]  # level, text, html, time


def add_late_errors(conn: Any, run_id: int, errors: list[RunError]) -> None:
    """Run errors robot reports after the run is published (a library listener's ``close``
    failing as the root suite ends, before robot closes its output file): appended to the
    run's errors, numbered on from its last, with the secret values they name, in one
    transaction."""
    from .masking import registering_redactor  # here: an import's row process never needs it
    from .registry import SecretRegistry

    registry = SecretRegistry(registering_redactor())
    for _, text, html, _ in errors:
        registry.message(text, html)

    def write(errors: list[RunError], secrets: list[str]) -> None:
        with transaction(conn):
            (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM errors WHERE run_id = ?",
                                   (run_id,)).fetchone()
            conn.executemany(_INSERT_ERROR, [(run_id, last + number, level, time, int(html), text)
                                             for number, (level, text, html, time)
                                             in enumerate(errors, 1)])
            conn.executemany(_INSERT_SECRET, [(run_id, value) for value in secrets])
            conn.execute("UPDATE runs SET error_count = ? WHERE run_id = ?",
                         (last + len(errors), run_id))

    with_stored_text(write, errors, registry.take())


# Steps with no steps below them: library keywords, and keywords that failed before their
# body ran.
_LEAF_STEPS = "type IN ('KEYWORD', 'SETUP', 'TEARDOWN') AND child_count = 0"


def ran_dry(conn: Any, run_id: int) -> bool:
    """Whether a run read from an output file came from ``robot --dryrun`` (the file does
    not say; the listener asks robot). A dry run checks its keywords without running
    them: RF marks every library keyword NOT RUN, below user keywords, tests and suites that
    passed, and none passes. A run that ran has a library keyword that passed (the first
    of its steps, mostly: found at once), or NOT RUN ones only where something failed or a
    branch was not taken (a RETURN before steps in a run none of whose steps passed would
    read as dry: made up, not met)."""
    lo, hi = run_base(run_id), run_base(run_id + 1)
    # a user keyword passed without child steps when they were flattened (its message or
    # the robot:flatten tag) or removed (its message): in a dry run too
    if conn.execute(f"SELECT 1 FROM nodes WHERE key >= ? AND key < ? AND {_LEAF_STEPS}"
                    " AND status = 'PASS' AND message IS NULL AND (fields IS NULL"
                    " OR fields NOT LIKE '%\"robot:flatten\"%') LIMIT 1", (lo, hi)).fetchone():
        return False
    leaf = " AND ".join(f"c.{term}" for term in _LEAF_STEPS.split(" AND "))
    return conn.execute(
        f"SELECT 1 FROM nodes AS c JOIN nodes AS p ON p.key = ? + c.parent_pre"
        f" WHERE c.key >= ? AND c.key < ? AND {leaf} AND c.status = 'NOT RUN'"
        f" AND p.status = 'PASS' LIMIT 1", (lo, lo, hi)).fetchone() is not None


def _refresh_statistics(conn: Any) -> None:
    from . import postgres  # loaded with the connection it made: nothing to wait for

    postgres.refresh_statistics(conn)


def _teardown_rewritten(status: str, message: str, teardown_status: str,
                        teardown_message: str) -> tuple[str, str]:
    """One test's status and message after its suite's teardown failed or skipped (RF rules)."""
    if teardown_status == "SKIP":
        if message:
            return "SKIP", (
                f"Skipped in parent suite teardown:\n{teardown_message}\n\nEarlier message:\n{message}"
            )
        return "SKIP", f"Skipped in parent suite teardown:\n{teardown_message}"
    prefix = "\n\nAlso parent suite teardown failed:\n" if message else "Parent suite teardown failed:\n"
    return (status if status == "SKIP" else "FAIL"), message + prefix + teardown_message


class _FullTextIndexer:
    """Indexes committed messages on a thread with its own connection.

    The index build is one ``INSERT ... SELECT`` per range: SQLite runs it without the GIL,
    so it overlaps with parsing instead of adding to it. Ranges queue up and are merged.
    """

    def __init__(self, db_path: str, run_id: int) -> None:
        self.conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False,
                                    timeout=BUSY_TIMEOUT_MS / 1000)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        register_functions(self.conn)
        self.run_id = run_id
        import queue  # only an import's indexer needs one; robot's process mostly does not

        self.ranges: queue.Queue[tuple[int, int] | None] = queue.Queue()
        self._empty = queue.Empty
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="rf-log-mcp-fts", daemon=True)
        self.thread.start()

    def add(self, lo: int, hi: int) -> None:
        self.raise_failure()
        self.ranges.put((lo, hi))

    def _run(self) -> None:
        while True:
            item = self.ranges.get()
            done = 1
            try:
                if item is None:
                    return
                lo, hi = item
                while True:  # merge whatever else is already waiting
                    try:
                        nxt = self.ranges.get_nowait()
                    except self._empty:
                        break
                    done += 1
                    if nxt is None:
                        self.ranges.put(None)
                        done -= 1
                        break
                    hi = nxt[1]
                if self.failure is None:
                    index_messages(self.conn, self.run_id, lo, hi)
            except BaseException as exc:  # handed to the producing thread at its next call
                self.failure = exc
            finally:
                for _ in range(done):
                    self.ranges.task_done()

    def raise_failure(self) -> None:
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure

    def sync(self) -> None:
        self.ranges.join()
        self.raise_failure()

    def close(self) -> None:
        self.failure = self.failure or _Closed()
        self.ranges.put(None)
        self.thread.join()
        self.conn.close()


class _Closed(Exception):
    """Marks a closed indexer so ranges still queued are dropped, not indexed."""


def insert_run(conn: sqlite3.Connection, row: dict[str, Any]) -> int:
    """A new run's row (its columns by name), its full-text index starting at its first key;
    the run's id. The one insert of a run: sources, push and salvage alike."""
    run_id = int(with_stored_text(
        conn.execute, f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values())).lastrowid or 0)
    conn.execute("UPDATE runs SET fts_upto = ? WHERE run_id = ?", (run_base(run_id), run_id))
    return run_id


def index_messages(conn: sqlite3.Connection, run_id: int, lo: int, hi: int) -> None:
    """Add messages with keys in [lo, hi) to the full-text index, and record it on the run."""
    with transaction(conn, immediate=True):
        conn.execute(_INDEX_MESSAGES, (lo, hi))
        conn.execute("UPDATE runs SET fts_upto = ? WHERE run_id = ?", (hi, run_id))


