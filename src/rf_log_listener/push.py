"""Push: copy finished runs from one store into another (store stage), for agents that capture
into a local SQLite file and upload to the team's PostgreSQL store when the network is there.

A run's identity across stores is the digest of its rows (``runs.content_hash``): pushing a
run the target already holds finds it and writes nothing. The copy goes through the one
row writer (``rows.StoreRowSink``: COPY on PostgreSQL, the full-text index on SQLite) into
a run readers do not see (``importing``) and is published in one statement at the end, as an
import is. A push cut off (the connection dropped, the process killed) leaves that hidden run;
pushing again resumes it where its last committed batch ended once its process is gone
(``store.import_dead``), unless an import has reaped it meanwhile, and then starts it over.
Two pushes of one run at once each write a copy; the first to publish wins and the other
removes its own (``StoreRowSink``'s ``once_by``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .errors import INVALID_ARGUMENT, ResultError
from .rows import (
    FINISH_FIELDS,
    MESSAGE_COLUMNS,
    NODE_COLUMNS,
    StoreRowSink,
    index_messages,
    insert_run,
)
from .store import delete_run, import_dead, run_base, this_host

ENV_STEP = "RF_LOG_MCP_PUSH_STEP"  # rows per committed batch (tests make it small)
STEP = 5_000
FINISHED = ("complete", "interrupted", "failed")
# What a run is, besides its rows: the columns copied to the target (run_id, status, the
# writer's pid/host/heartbeat and the target's own bookkeeping are the target's).
RUN_COLUMNS = (
    "origin", "source_path", "source_format", "source_hash", "source_size", "source_mtime_ns",
    "generator", "rf_version", "schema_version", "generated", "rpa", "label", "output_dir",
    "name", "result_status", "start_time", "elapsed", "total", "passed", "failed", "skipped",
    "node_count", "message_count", "error_count", "ci", "run_group", "created_at",
)
# What of the run row is part of its identity: all of it but when it was stored
_IDENTITY_COLUMNS = tuple(c for c in RUN_COLUMNS if c != "created_at")
_ERRORS = "SELECT seq, level, time, html, text FROM errors WHERE run_id = ? ORDER BY seq"
_SECRETS = "SELECT value FROM secrets WHERE run_id = ? ORDER BY value"
_DEFINITIONS = ("SELECT owner, name_key, source, lineno FROM definitions WHERE run_id = ?"
                " ORDER BY owner, name_key")


@dataclass
class Pushed:
    """What pushing one run did: ``pushed``, ``resumed`` (a cut push finished) or ``already``
    (the target held the same rows)."""

    source_run_id: int
    run_id: int
    outcome: str
    nodes: int
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return {"source_run_id": self.source_run_id, "run_id": self.run_id,
                "outcome": self.outcome, "nodes": self.nodes, "messages": self.messages}


def push_run(source: sqlite3.Connection, target: sqlite3.Connection, run_id: int,
             progress: Callable[[int], None] | None = None) -> Pushed:
    """Copy run ``run_id`` of ``source`` into ``target`` (once: by its rows' digest)."""
    row = source.execute(f"SELECT status, {', '.join(RUN_COLUMNS)}, {', '.join(FINISH_FIELDS)}"
                         " FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        raise ResultError(INVALID_ARGUMENT, f"The store has no run {run_id}.",
                          "`rf-log-mcp runs` lists them.")
    if row[0] not in FINISHED:
        raise ResultError(INVALID_ARGUMENT, f"Run {run_id} is {row[0]}: only finished runs are"
                          " pushed.", "Push it once it has ended.")
    run = dict(zip(RUN_COLUMNS, row[1:1 + len(RUN_COLUMNS)], strict=True))
    finish = dict(zip(FINISH_FIELDS, row[1 + len(RUN_COLUMNS):], strict=True))
    counts = finish["node_count"] or 0, finish["message_count"] or 0
    digest = content_hash(source, run_id)
    found = target.execute("SELECT run_id, status, pid, host, heartbeat FROM runs"
                           " WHERE content_hash = ? ORDER BY run_id DESC", (digest,)).fetchall()
    done = next((row[0] for row in found if row[1] in FINISHED), None)
    if done is not None:
        return Pushed(run_id, done, "already", *counts)
    # A cut push's hidden run is taken over once its process is gone; one still being
    # written (the same run pushed twice at once) is left to its writer.
    now = time.time()
    partial = next((found_id for found_id, status, pid, host, heartbeat in found
                    if status == "importing" and import_dead(pid, host, heartbeat, now)), None)
    new_id = partial if partial is not None else _begin(target, run, digest)
    sink = StoreRowSink(target, once_by=("content_hash", digest))
    sink.attach(new_id)
    shift = run_base(new_id) - run_base(run_id)
    _finish_indexing(target, new_id)  # a cut push may have committed rows it did not index
    for table, columns in (("nodes", NODE_COLUMNS), ("messages", MESSAGE_COLUMNS)):
        for batch in _batches(source, target, table, columns, run_id, new_id):
            rows = [(key + shift, *rest) for key, *rest in batch]
            if table == "nodes":
                sink.write(rows, [], [], 0, 0, [])
            else:
                sink.write([], rows, [], rows[0][0], rows[-1][0] + 1, [])
            if progress:
                progress(len(rows))
    errors = [(new_id, *e) for e in source.execute(_ERRORS, (run_id,))]
    target.execute("DELETE FROM errors WHERE run_id = ?", (new_id,))  # a cut push's, if any
    sink.write([], [], errors, 0, 0, [v for (v,) in source.execute(_SECRETS, (run_id,))],
               source.execute(_DEFINITIONS, (run_id,)).fetchall())
    sink.finish_run(finish)
    if sink.published_twin is not None:  # pushed at the same time by another process
        delete_run(target, new_id)
        return Pushed(run_id, sink.published_twin, "already", *counts)
    return Pushed(run_id, new_id, "resumed" if partial is not None else "pushed", *counts)


def _begin(target: sqlite3.Connection, run: dict[str, Any], digest: str) -> int:
    """The target's hidden run that the rows go into."""
    return insert_run(target, {**run, "status": "importing", "content_hash": digest,
                               "pid": os.getpid(), "host": this_host(), "heartbeat": time.time()})


def _batches(source: sqlite3.Connection, target: sqlite3.Connection, table: str,
             columns: tuple[str, ...], run_id: int, new_id: int) -> Iterator[list[tuple[Any, ...]]]:
    """The source run's rows of ``table`` the target does not have yet, in committed-size
    batches (a cut push's rows are all below its highest key: batches commit in key order)."""
    step = int(os.environ.get(ENV_STEP) or STEP)
    have = target.execute(f"SELECT max(key) FROM {table} WHERE key >= ? AND key < ?",
                          (run_base(new_id), run_base(new_id + 1))).fetchone()[0]
    lo = run_base(run_id) + (have - run_base(new_id) + 1 if have is not None else 0)
    select = (f"SELECT {', '.join(columns)} FROM {table} WHERE key >= ? AND key < ?"
              " ORDER BY key LIMIT ?")
    while True:
        rows = source.execute(select, (lo, run_base(run_id + 1), step)).fetchall()
        if not rows:
            return
        yield rows
        lo = rows[-1][0] + 1


def _finish_indexing(target: sqlite3.Connection, run_id: int) -> None:
    upto = target.execute("SELECT fts_upto FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]
    have = target.execute("SELECT max(key) FROM messages WHERE key >= ? AND key < ?",
                          (run_base(run_id), run_base(run_id + 1))).fetchone()[0]
    if have is not None and (upto or 0) <= have:
        index_messages(target, run_id, max(upto or 0, run_base(run_id)), have + 1)


def content_hash(conn: sqlite3.Connection, run_id: int) -> str:
    """The digest of a run's rows, positions relative to the run: the same run in any store
    has the same one."""
    digest = hashlib.sha256()
    base = run_base(run_id)

    def add(rows: Any) -> None:
        for row in rows:
            digest.update(json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode())
            digest.update(b"\n")

    add([conn.execute(f"SELECT {', '.join(_IDENTITY_COLUMNS)} FROM runs WHERE run_id = ?",
                      (run_id,)).fetchone()])
    for table, columns in (("nodes", NODE_COLUMNS), ("messages", MESSAGE_COLUMNS)):
        add(((key - base, *rest) for key, *rest in conn.execute(
            f"SELECT {', '.join(columns)} FROM {table} WHERE key >= ? AND key < ? ORDER BY key",
            (base, run_base(run_id + 1)))))
    add(conn.execute(_ERRORS, (run_id,)))
    add(conn.execute(_SECRETS, (run_id,)))
    return digest.hexdigest()
