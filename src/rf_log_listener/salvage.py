"""Salvage: copy the readable rows of live runs out of a damaged store (store stage).

A live run with ``--output NONE`` exists only in the store. When that file is damaged,
``rf-log-mcp doctor --repair`` moves it aside and calls :func:`salvage_live_runs`: every
listener run that has no result file to import again is copied, range by range, into the
new store as an ``interrupted`` run; ranges SQLite cannot read are skipped and counted.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from .rows import MESSAGE_COLUMNS, NODE_COLUMNS, index_messages, insert_run
from .store import mark_not_finished, run_base, transaction

_STEP = 2_000  # keys read per range: a damaged page loses this much at most

# The columns a salvaged run does not take from the damaged store: its new id, its status
# (interrupted), what is rebuilt for it (the full-text index, the history index) and the
# pushed run's digest of its rows, which a salvaged run, with rows lost, no longer has.
_NOT_COPIED = frozenset({"run_id", "status", "fts_upto", "tests_indexed", "content_hash"})


def _run_columns(old: sqlite3.Connection, conn: sqlite3.Connection) -> list[str]:
    """Every other column of ``runs`` both stores have (output_dir, ci, run_group included:
    a hand-kept list had missed the columns added after it)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    return [row[1] for row in old.execute("PRAGMA table_info(runs)")
            if row[1] in have and row[1] not in _NOT_COPIED]


def salvage_live_runs(damaged: str | os.PathLike[str], conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Copy live runs without a result file from ``damaged`` into ``conn``'s store."""
    old = sqlite3.connect(f"{Path(damaged).resolve().as_uri()}?mode=ro", uri=True)
    try:
        candidates = old.execute(
            "SELECT run_id, source_path FROM runs WHERE origin = 'listener'").fetchall()
    except sqlite3.DatabaseError:
        old.close()
        return []
    salvaged = []
    columns = _run_columns(old, conn)
    for run_id, source in candidates:
        if source and Path(source).is_file():
            continue  # imported again from its output file instead
        salvaged.append(_salvage_run(old, conn, run_id, columns))
    old.close()
    return salvaged


def _salvage_run(old: sqlite3.Connection, conn: sqlite3.Connection, run_id: int,
                 columns: list[str]) -> dict[str, Any]:
    row = old.execute(f"SELECT {', '.join(columns)} FROM runs WHERE run_id = ?",
                      (run_id,)).fetchone()
    with transaction(conn, immediate=True):
        new_id = insert_run(conn, {**dict(zip(columns, row, strict=True)), "status": "interrupted"})
    shift = run_base(new_id) - run_base(run_id)
    nodes, lost_nodes = _copy(old, conn, "nodes", NODE_COLUMNS, run_id, shift)
    messages, lost_messages = _copy(old, conn, "messages", MESSAGE_COLUMNS, run_id, shift)
    with transaction(conn, immediate=True):
        mark_not_finished(conn, new_id)
        errors = _readable(old, "SELECT seq, level, time, html, text FROM errors WHERE run_id = ?",
                           run_id)
        conn.executemany("INSERT INTO errors (run_id, seq, level, time, html, text)"
                         " VALUES (?, ?, ?, ?, ?, ?)", [(new_id, *e) for e in errors])
        # the values the run proved secret stay masked in the salvaged run
        secrets = _readable(old, "SELECT value FROM secrets WHERE run_id = ?", run_id)
        conn.executemany("INSERT OR IGNORE INTO secrets (run_id, value) VALUES (?, ?)",
                         [(new_id, value) for (value,) in secrets])
    index_messages(conn, new_id, run_base(new_id), run_base(new_id + 1))
    return {"old_run_id": run_id, "run_id": new_id, "nodes": nodes, "messages": messages,
            "unreadable_ranges": lost_nodes + lost_messages}


def _readable(old: sqlite3.Connection, query: str, run_id: int) -> list[tuple[Any, ...]]:
    """The rows of ``query`` if the damaged store can still give them, else none."""
    try:
        return old.execute(query, (run_id,)).fetchall()
    except sqlite3.DatabaseError:
        return []


def _copy(old: sqlite3.Connection, conn: sqlite3.Connection, table: str,
          columns: tuple[str, ...], run_id: int, shift: int) -> tuple[int, int]:
    """Copy the run's rows of ``table`` range by range; return (rows copied, ranges lost)."""
    select = (f"SELECT {', '.join(columns)} FROM {table} WHERE key >= ? AND key < ?"
              " ORDER BY key")
    insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    try:
        last = old.execute(f"SELECT max(key) FROM {table} WHERE key >= ? AND key < ?",
                           (run_base(run_id), run_base(run_id + 1))).fetchone()[0]
    except sqlite3.DatabaseError:
        last = run_base(run_id) + 10_000_000  # the index is damaged: probe a generous range
    if last is None:
        return 0, 0
    copied = lost = 0
    lo = run_base(run_id)
    while lo <= last:
        try:
            rows = old.execute(select, (lo, lo + _STEP)).fetchall()
        except sqlite3.DatabaseError:
            lost += 1
            rows = []
        if rows:
            with transaction(conn, immediate=True):
                conn.executemany(insert, [(r[0] + shift, *r[1:]) for r in rows])
            copied += len(rows)
        lo += _STEP
    return copied, lost
