"""The store's usage record (store; written by both sides, read only by ``rf-log-mcp usage``):
the shape of every answer (``rf_log_mcp/usage.py`` gathers it) and of every import (here),
so the next release is decided from how the tools are used, not from guesses.

Shapes only: sizes, counts, flags, durations, error codes. Never an argument's text, a
query, a selector's name or anything a run logged. On by default; ``RF_LOG_MCP_USAGE=off``
stops it; records older than ``RF_LOG_MCP_USAGE_DAYS`` (90) days are dropped as new ones
are written, and ``rf-log-mcp prune --usage`` removes them all. Recording never fails the
operation it records: a store that cannot take the row (read-only, busy) just misses it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

    # a run's source_format, source_size, node_count, message_count
    RecoveryFacts = tuple[Any, Any, Any, Any]

ENV_USAGE = "RF_LOG_MCP_USAGE"
ENV_USAGE_DAYS = "RF_LOG_MCP_USAGE_DAYS"
DEFAULT_DAYS = 90.0
MAX_ROWS = 200_000  # per table: a busy CI server's record stays a few tens of MB at most
_OFF = frozenset({"0", "off", "false", "no", "none"})

CALL_COLUMNS = ("at", "session", "source", "tool", "view", "projection", "page", "selector_kind",
                "selector_depth", "target", "page_size", "budget", "tokens", "message_truncated",
                "budget_truncated", "page_truncated", "masked", "error", "duration_ms",
                "run_nodes", "run_messages", "run_bytes", "shape")
IMPORT_COLUMNS = ("at", "origin", "outcome", "format", "input_bytes", "parse_s", "cpu_s",
                  "peak_rss_kb", "store_growth", "nodes", "messages")


def enabled() -> bool:
    return os.environ.get(ENV_USAGE, "on").strip().lower() not in _OFF


def retention_days() -> float:
    try:
        return max(0.0, float(os.environ.get(ENV_USAGE_DAYS, DEFAULT_DAYS)))
    except ValueError:
        return DEFAULT_DAYS


def insert(conn: sqlite3.Connection, table: str, columns: tuple[str, ...],
           rows: Iterable[tuple[Any, ...]]) -> bool:
    """Write ``rows`` and drop what is past the retention, in one short transaction; False
    (and nothing written) when the store cannot take them now."""
    rows = list(rows)
    if not rows or not enabled():
        return False
    marks = ", ".join("?" * len(columns))
    try:
        with conn:
            conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
            conn.execute(f"DELETE FROM {table} WHERE at < ?", (time.time() - retention_days() * 86400,))
            conn.execute(f"DELETE FROM {table} WHERE id <= (SELECT max(id) FROM {table}) - ?",
                         (MAX_ROWS,))
    except sqlite3.Error:
        return False
    return True


def forget(conn: sqlite3.Connection) -> int:
    """Remove the whole usage record (``prune --usage``); how many records were removed."""
    with conn:
        removed = conn.execute("DELETE FROM usage_calls").rowcount
        removed += conn.execute("DELETE FROM usage_imports").rowcount
    return int(removed)


class ImportFacts:
    """What an import cost and how it ended, measured around it (``measured_import``)."""

    __slots__ = ("outcome", "format", "input_bytes", "nodes", "messages")

    def __init__(self) -> None:
        self.outcome = "complete"
        self.format: str | None = None
        self.input_bytes: int | None = None
        self.nodes: int | None = None
        self.messages: int | None = None


def _used_bytes(conn: sqlite3.Connection) -> int:
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    return int((pages - free) * page_size)


def _cpu() -> float:
    own, children = os.times()[:2], os.times()[2:4]
    return sum(own) + sum(children)


def _peak_kb() -> int | None:
    try:
        import resource  # not on Windows
    except ImportError:
        return None
    return max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


@contextmanager
def measured_import(conn: sqlite3.Connection) -> Iterator[ImportFacts]:
    """Record the import run inside the block: its wall and CPU time, peak memory, store
    growth, and how it ended (an error's code, ``cancelled`` for Ctrl-C or a client's
    cancel); the caller fills in the rest of ``ImportFacts`` as it learns it."""
    facts = ImportFacts()
    if not enabled():
        yield facts
        return
    started, cpu = time.perf_counter(), _cpu()
    try:
        before = _used_bytes(conn)
    except sqlite3.Error:
        before = None
    try:
        yield facts
    except BaseException as exc:
        facts.outcome = getattr(exc, "code", None) or (
            "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed")
        raise
    finally:
        try:
            growth = _used_bytes(conn) - before if before is not None else None
        except sqlite3.Error:
            growth = None
        insert(conn, "usage_imports", IMPORT_COLUMNS, [(
            time.time(), "import", facts.outcome, facts.format, facts.input_bytes,
            round(time.perf_counter() - started, 4), round(_cpu() - cpu, 4), _peak_kb(),
            growth, facts.nodes, facts.messages)])


def recovery_facts(conn: sqlite3.Connection, run_ids: list[int]) -> dict[int, RecoveryFacts]:
    """What ``record_recovery`` records of each run: read while its row is there."""
    if not run_ids or not enabled():
        return {}
    marks = ", ".join("?" * len(run_ids))
    try:
        rows = conn.execute(f"SELECT run_id, source_format, source_size, node_count, message_count"
                            f" FROM runs WHERE run_id IN ({marks})", run_ids).fetchall()
    except sqlite3.Error:
        return {}
    return {row[0]: tuple(row[1:]) for row in rows}


def record_recovery(conn: sqlite3.Connection, facts: list[RecoveryFacts], origin: str,
                    outcome: str) -> None:
    """Runs a process left behind when it died, found and dealt with: imports ``reaped``,
    live runs ``marked_interrupted``; what they had read and written so far."""
    now = time.time()
    insert(conn, "usage_imports", IMPORT_COLUMNS, [
        (now, origin, outcome, fmt, size, None, None, None, None, nodes, messages)
        for fmt, size, nodes, messages in facts])
