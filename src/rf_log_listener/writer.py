"""The one writer: turns source events into store rows.

Everything structural is computed here, once, for every source: RF's node ids, pre-order
positions and subtree bounds, depth, the owning test, the per-node aggregates, message
numbers, the suite-teardown status rewrite RF's own model applies, and the run totals.
Memory is O(depth of the tree): a node's row is written when it closes, from its frame.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import sqlite3
import threading
import time
from typing import Any

from . import events as ev
from .events import Node, RunEnd, RunInfo
from .store import BUSY_TIMEOUT_MS, run_base

BATCH_ROWS = 20_000

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

_INSERT_NODE = (
    "INSERT INTO nodes (key, last, parent_pre, seq, depth, node_id, type, raw_type,"
    " name, owner, status, start_time, elapsed, message, owner_test, child_count,"
    " failed_descendant_count, max_descendant_level, message_count, msg_lo, msg_hi, args,"
    " assign, fields) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (key, node_pre, msg_no, level, time, html, text) VALUES (?,?,?,?,?,?,?)"
)
_INDEX_MESSAGES = (
    "INSERT INTO messages_fts (rowid, text) SELECT key, text FROM messages"
    " WHERE key >= ? AND key < ?"
)


class _Frame:
    """An open node: its position, id state and running aggregates."""

    __slots__ = (
        "node", "pre", "parent_pre", "seq", "depth", "node_id", "id_base", "kcounter",
        "suites", "tests", "children", "failed", "max_level", "messages", "msg_lo",
        "owner_test", "passed_tests", "failed_tests", "skipped_tests", "teardown",
    )

    def __init__(self, node: Node, pre: int, parent: _Frame | None, msg_lo: int) -> None:
        self.node = node
        self.pre = pre
        self.msg_lo = msg_lo
        self.children = 0
        self.failed = 0
        self.max_level = 0
        self.messages = 0
        self.suites = 0
        self.tests = 0
        self.passed_tests = 0
        self.failed_tests = 0
        self.skipped_tests = 0
        self.teardown: Node | None = None
        ntype = node.type
        if parent is None:
            self.parent_pre = None
            self.seq = 0
            self.depth = 0
            self.node_id = "s1"
            self.id_base = "s1"
            self.kcounter = [0]
            self.owner_test = None
            return
        self.parent_pre = parent.pre
        self.seq = parent.children
        parent.children += 1
        self.depth = parent.depth + 1
        self.owner_test = pre if ntype == ev.TEST else parent.owner_test
        if ntype == ev.SUITE:
            parent.suites += 1
            self.node_id = f"{parent.node_id}-s{parent.suites}"
        elif ntype == ev.TEST:
            parent.tests += 1
            self.node_id = f"{parent.node_id}-t{parent.tests}"
        elif ntype in ev.ROOT_TYPES:
            # No RF id: the branches are numbered in the parent's counter, so the root shares
            # it. Synthetic id: parent base + "-r" + the number its first branch will get.
            self.node_id = f"{parent.id_base}-r{parent.kcounter[0] + 1}"
            self.id_base = parent.id_base
            self.kcounter = parent.kcounter
            return
        else:
            parent.kcounter[0] += 1
            self.node_id = f"{parent.id_base}-k{parent.kcounter[0]}"
        self.id_base = self.node_id
        self.kcounter = [0]


class RunWriter:
    """An :class:`~rf_log_listener.events.EventSink` that writes one run into the store."""

    def __init__(self, conn: sqlite3.Connection, *, batch_rows: int = BATCH_ROWS,
                 background_index: bool = False) -> None:
        self.conn = conn
        self.batch_rows = batch_rows
        self.background_index = background_index
        self._indexer: _FullTextIndexer | None = None
        self.run_id: int | None = None
        self.base = 0
        self.generated_by_robot = True
        self._stack: list[_Frame] = []
        self._next_pre = 0
        self._next_msg = 0
        self._errors = 0
        self._node_rows: list[tuple[Any, ...]] = []
        self._message_rows: list[tuple[Any, ...]] = []
        self._error_rows: list[tuple[Any, ...]] = []
        self._indexed_msg = 0  # messages below this seq are in the full-text index
        self._root: tuple[Node, _Frame] | None = None

    # -- run lifecycle -------------------------------------------------------------------

    def start_run(self, info: RunInfo) -> int:
        status = "importing" if info.origin == "import" else "running"
        now = time.time()
        cur = self.conn.execute(
            "INSERT INTO runs (origin, status, source_path, source_format, source_hash,"
            " source_size, source_mtime_ns, generator, rf_version, schema_version, generated,"
            " rpa, label, pid, host, heartbeat, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                info.origin, status, info.source_path, info.source_format, info.source_hash,
                info.source_size, info.source_mtime_ns, info.generator,
                rf_version(info.generator), info.schema_version, info.generated,
                None if info.rpa is None else int(info.rpa), info.label, os.getpid(),
                socket.gethostname(), now, now,
            ),
        )
        self.run_id = int(cur.lastrowid or 0)
        self.base = run_base(self.run_id)
        self.conn.execute("UPDATE runs SET fts_upto = ? WHERE run_id = ?", (self.base, self.run_id))
        db_path = self.conn.execute("PRAGMA database_list").fetchone()[2]
        if self.background_index and db_path:
            self._indexer = _FullTextIndexer(db_path, self.run_id)
        self._set_generator(info.generator)
        return self.run_id

    def _set_generator(self, generator: str | None) -> None:
        # RF rewrites test statuses after a suite-teardown failure only for robot's own files.
        if generator:
            self.generated_by_robot = generator.lower().startswith("robot")

    def end_run(self, end: RunEnd) -> None:
        """Close what is still open (a cut run), write the rest and publish the run."""
        if end.generator:
            self._set_generator(end.generator)
        while self._stack:
            node = self._stack[-1].node
            node.status = ev.NOT_FINISHED
            node.elapsed = None
            self.close_node(node)
        self._flush()
        self.sync()
        self.close()
        root = self._root
        totals = (end.total, end.passed, end.failed, end.skipped)
        if root is not None and (not end.complete or end.total is None):
            frame = root[1]
            passed, failed, skipped = frame.passed_tests, frame.failed_tests, frame.skipped_tests
            totals = (passed + failed + skipped, passed, failed, skipped)
        rnode = root[0] if root else None
        self.conn.execute(
            "UPDATE runs SET status = ?, generator = coalesce(generator, ?),"
            " rf_version = coalesce(rf_version, ?), name = ?, result_status = ?,"
            " start_time = ?, elapsed = ?, total = ?, passed = ?, failed = ?, skipped = ?,"
            " node_count = ?, message_count = ?, error_count = ?, heartbeat = ?,"
            " finished_at = ? WHERE run_id = ?",
            (
                "complete" if end.complete else "interrupted", end.generator,
                rf_version(end.generator), rnode.name if rnode else None,
                rnode.status if rnode else None, rnode.start_time if rnode else None,
                rnode.elapsed if rnode else None, *totals, self._next_pre, self._next_msg,
                self._errors, time.time(), time.time(), self.run_id,
            ),
        )

    # -- events --------------------------------------------------------------------------

    def open_node(self, node: Node) -> None:
        stack = self._stack
        parent = stack[-1] if stack else None
        if parent is None and (node.type != ev.SUITE or self._root is not None):
            raise ValueError(f"a run has exactly one root suite, got {node.type}")
        frame = _Frame(node, self._next_pre, parent, self._next_msg)
        self._next_pre += 1
        stack.append(frame)

    def close_node(self, node: Node) -> None:
        frame = self._stack.pop()
        if frame.node is not node:
            raise ValueError(f"close_node({node.type} {node.name!r}) does not match the open node")
        ntype = node.type
        parent = self._stack[-1] if self._stack else None
        if ntype == ev.SUITE:
            if frame.teardown is not None and self.generated_by_robot:
                self._suite_teardown_rewrite(frame)
            node.status = _suite_status(frame)
        status = node.status
        if parent is not None:
            parent.failed += frame.failed + (status == "FAIL")
            if frame.max_level > parent.max_level:
                parent.max_level = frame.max_level
            if ntype == ev.TEST:
                if status == "PASS":
                    parent.passed_tests += 1
                elif status == "FAIL":
                    parent.failed_tests += 1
                elif status == "SKIP":
                    parent.skipped_tests += 1
            elif ntype == ev.SUITE:
                parent.passed_tests += frame.passed_tests
                parent.failed_tests += frame.failed_tests
                parent.skipped_tests += frame.skipped_tests
            elif ntype == ev.TEARDOWN and parent.node.type == ev.SUITE and status in ("FAIL", "SKIP"):
                parent.teardown = node
        else:
            self._root = (node, frame)
        fields = node.fields
        self._node_rows.append((
            self.base + frame.pre, self._next_pre - 1, frame.parent_pre,
            frame.seq, frame.depth, frame.node_id, ntype, node.raw_type, node.name, node.owner,
            status, node.start_time, node.elapsed, node.message or None, frame.owner_test,
            frame.children, frame.failed, frame.max_level, frame.messages, frame.msg_lo,
            self._next_msg, _json(node.args) if node.args else None,
            _json(node.assign) if node.assign else None, _json(fields) if fields else None,
        ))
        if len(self._node_rows) + len(self._message_rows) >= self.batch_rows:
            self._flush()

    def message(self, level: str, text: str, html: bool, time: str | None) -> None:
        frame = self._stack[-1]
        frame.messages += 1
        lvl = ev.LEVELS.get(level, 3)
        if lvl > frame.max_level:
            frame.max_level = lvl
        self._message_rows.append((
            self.base + self._next_msg, frame.pre, frame.messages, level, time,
            1 if html else 0, text,
        ))
        self._next_msg += 1

    def run_error(self, level: str, text: str, html: bool, time: str | None) -> None:
        self._errors += 1
        self._error_rows.append((self.run_id, self._errors, level, time, 1 if html else 0, text))

    # -- writing -------------------------------------------------------------------------

    def _flush(self) -> None:
        """Commit the collected rows in one transaction; index their messages."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            if self._node_rows:
                conn.executemany(_INSERT_NODE, self._node_rows)
            if self._message_rows:
                conn.executemany(_INSERT_MESSAGE, self._message_rows)
            if self._error_rows:
                conn.executemany(
                    "INSERT INTO errors (run_id, seq, level, time, html, text) VALUES (?,?,?,?,?,?)",
                    self._error_rows,
                )
            conn.execute("UPDATE runs SET heartbeat = ? WHERE run_id = ?", (time.time(), self.run_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._node_rows.clear()
        self._message_rows.clear()
        self._error_rows.clear()
        lo, hi = self.base + self._indexed_msg, self.base + self._next_msg
        if hi > lo:
            self._indexed_msg = self._next_msg
            if self._indexer is not None:
                self._indexer.add(lo, hi)
            else:
                index_messages(conn, self.run_id or 0, lo, hi)

    def sync(self) -> None:
        """Wait until every committed message is in the full-text index."""
        if self._indexer is not None:
            self._indexer.sync()

    def close(self) -> None:
        """Stop the background indexer (if any); ranges still waiting are dropped."""
        if self._indexer is not None:
            self._indexer.close()
            self._indexer = None

    def _suite_teardown_rewrite(self, frame: _Frame) -> None:
        """Re-mark the suite's tests as RF's ExecutionResult does after a teardown failure.

        The tests are already written; the suites between them and this one too. This is
        rare and bounded by the suite, so it is done in SQL on the written rows.
        """
        teardown = frame.teardown
        assert teardown is not None
        self._flush()
        lo, hi = self.base + frame.pre, self.base + self._next_pre - 1
        tests = self.conn.execute(
            "SELECT key, status, message FROM nodes WHERE key BETWEEN ? AND ? AND type = 'TEST'",
            (lo, hi),
        ).fetchall()
        updates = []
        newly_failed: list[int] = []
        for key, status, message in tests:
            new_status, new_message = _teardown_rewritten(status, message or "", teardown)
            if new_status == "FAIL" and status != "FAIL":
                newly_failed.append(key)
            updates.append((new_status, new_message, key))
        conn = self.conn
        conn.execute("BEGIN")
        try:
            conn.executemany("UPDATE nodes SET status = ?, message = ? WHERE key = ?", updates)
            suites = conn.execute(
                "SELECT key, last FROM nodes WHERE key BETWEEN ? AND ? AND type = 'SUITE'",
                (lo, hi),
            ).fetchall()
            for key, last in suites:
                gained = sum(1 for t in newly_failed if key < t <= self.base + last)
                counts = dict(conn.execute(
                    "SELECT status, count(*) FROM nodes WHERE key BETWEEN ? AND ?"
                    " AND type = 'TEST' GROUP BY status", (key, self.base + last),
                ).fetchall())
                conn.execute(
                    "UPDATE nodes SET status = ?,"
                    " failed_descendant_count = failed_descendant_count + ? WHERE key = ?",
                    (_status_from_counts(counts.get("PASS", 0), counts.get("FAIL", 0)), gained, key),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        frame.failed += len(newly_failed)
        counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for new_status, _, _ in updates:
            counts[new_status] = counts.get(new_status, 0) + 1
        frame.passed_tests = counts["PASS"]
        frame.failed_tests = counts["FAIL"]
        frame.skipped_tests = counts["SKIP"]


class _FullTextIndexer:
    """Indexes committed messages on a thread with its own connection.

    The index build is one ``INSERT ... SELECT`` per range: SQLite runs it without the GIL,
    so it overlaps with parsing instead of adding to it. Ranges queue up and are merged.
    """

    def __init__(self, db_path: str, run_id: int) -> None:
        self.conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False,
                                    timeout=BUSY_TIMEOUT_MS / 1000)
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.run_id = run_id
        self.ranges: queue.Queue[tuple[int, int] | None] = queue.Queue()
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
                    except queue.Empty:
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


def index_messages(conn: sqlite3.Connection, run_id: int, lo: int, hi: int) -> None:
    """Add messages with keys in [lo, hi) to the full-text index, and record it on the run."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_INDEX_MESSAGES, (lo, hi))
        conn.execute("UPDATE runs SET fts_upto = ? WHERE run_id = ?", (hi, run_id))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _teardown_rewritten(status: str, message: str, teardown: Node) -> tuple[str, str]:
    """One test's status and message after its suite's teardown failed or skipped (RF rules)."""
    if teardown.status == "SKIP":
        if message:
            return "SKIP", (
                f"Skipped in parent suite teardown:\n{teardown.message}\n\nEarlier message:\n{message}"
            )
        return "SKIP", f"Skipped in parent suite teardown:\n{teardown.message}"
    prefix = "\n\nAlso parent suite teardown failed:\n" if message else "Parent suite teardown failed:\n"
    return (status if status == "SKIP" else "FAIL"), message + prefix + teardown.message


def _status_from_counts(passed: int, failed: int) -> str:
    if failed:
        return "FAIL"
    return "PASS" if passed else "SKIP"


def _suite_status(frame: _Frame) -> str:
    """RF computes a suite's status from its tests, so the store does too."""
    if frame.node.status == ev.NOT_FINISHED:
        return ev.NOT_FINISHED
    return _status_from_counts(frame.passed_tests, frame.failed_tests)


def rf_version(generator: str | None) -> str | None:
    """'Robot 7.5 (Python 3.11.7 on linux)' -> '7.5'."""
    if not generator:
        return None
    parts = generator.split()
    return parts[1] if len(parts) > 1 else None
