"""search_messages: plain-text search over a run's messages and run errors, in execution order.

Matching is a case-insensitive literal substring: ``%``, ``_`` and ``\\`` mean themselves.
The trigram index answers ``LIKE '%…%'`` for any piece of 3+ characters without wildcards,
so the longest such piece of the query preselects candidates and Python confirms the whole
query; a query with no such piece (``OK``, ``登录``) scans the run's messages instead.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from rf_log_listener.errors import ResultError
from rf_log_listener.store import run_base

from ..shaping import Shaper
from .common import run_row

INVALID_QUERY = "INVALID_QUERY"
_FETCH = 500  # candidates read per round while a page fills up
_HIT_CHARS = 400


def _longest_literal_piece(query: str) -> str:
    pieces = re.split(r"[%_\\]", query)
    return max(pieces, key=len) if pieces else ""


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search(conn: sqlite3.Connection, run_id: int, query: str | None, shaper: Shaper,
           position: list[Any] | None, page_size: int) -> tuple[dict[str, Any], list[Any] | None]:
    """One page of hits; the position is [phase, last key] (phase 0: messages, 1: run errors)."""
    run_row(conn, run_id)
    if not query or not query.strip():
        raise ResultError(INVALID_QUERY, "The query is empty.",
                          "Pass the text to look for (plain text, case-insensitive).")
    needle = query.casefold()
    phase, after = position if position else (0, None)
    hits: list[dict[str, Any]] = []
    positions: list[list[Any]] = []  # where to continue after each hit
    last_key = after
    more = False
    if phase == 0:
        for key, row in _message_candidates(conn, run_id, query, after):
            if needle not in row[4].casefold():
                last_key = key
                continue
            if len(hits) == page_size:
                more = True
                break
            hits.append(_message_hit(row, query, shaper))
            positions.append([0, key])
            last_key = key
        if not more:
            phase, last_key = 1, None
    if phase == 1 and not more:
        for seq, level, time, text in conn.execute(
            "SELECT seq, level, time, text FROM errors WHERE run_id = ? AND seq > ? ORDER BY seq",
            (run_id, last_key or 0),
        ):
            if needle not in text.casefold():
                continue
            if len(hits) == page_size:
                more = True
                break
            hits.append({"id": f"errors-m{seq}", "level": level, "time": time,
                         "text": _excerpt(text, query, shaper), "node_id": None})
            positions.append([1, seq])
            last_key = seq
    _attach_nodes(conn, run_id, hits)
    view: dict[str, Any] = {"query": query}
    kept = shaper.fit(view, hits, "hits")
    if kept < len(hits):
        return view, positions[kept - 1]
    return view, [phase, last_key] if more else None


def _message_candidates(conn: sqlite3.Connection, run_id: int, query: str, after: int | None):  # type: ignore[no-untyped-def]
    lo = after + 1 if after is not None else run_base(run_id)
    hi = run_base(run_id + 1)
    piece = _longest_literal_piece(query)
    while True:
        if len(piece) >= 3:
            rows = conn.execute(
                "SELECT m.key, m.node_pre, m.msg_no, m.text, m.level, m.time FROM messages_fts AS f"
                " JOIN messages AS m ON m.key = f.rowid WHERE f.text LIKE ? AND f.rowid >= ?"
                " AND f.rowid < ? ORDER BY f.rowid LIMIT ?",
                (f"%{piece}%", lo, hi, _FETCH),
            ).fetchall()
        else:
            rows = conn.execute(
                "SELECT key, node_pre, msg_no, text, level, time FROM messages"
                " WHERE key >= ? AND key < ? AND text LIKE ? ESCAPE '\\' ORDER BY key LIMIT ?",
                (lo, hi, f"%{_like_escaped(query)}%", _FETCH),
            ).fetchall()
        for row in rows:
            yield row[0], (run_id, *row)
        if len(rows) < _FETCH:
            return
        lo = rows[-1][0] + 1


def _message_hit(row: tuple[Any, ...], query: str, shaper: Shaper) -> dict[str, Any]:
    _run_id, _key, node_pre, msg_no, text, level, time = row
    return {"_node_pre": node_pre, "_msg_no": msg_no, "level": level, "time": time,
            "text": _excerpt(text, query, shaper)}


def _excerpt(text: str, query: str, shaper: Shaper) -> str:
    """The text, or, when long, a window that keeps the first match visible."""
    if len(text) <= _HIT_CHARS:
        return text
    at = text.casefold().find(query.casefold())
    start = max(0, at - _HIT_CHARS // 2)
    end = min(len(text), start + _HIT_CHARS)
    shaper.message_truncated = True
    prefix = f"[{start} characters cut] …" if start else ""
    suffix = f"… [{len(text) - end} characters cut]" if end < len(text) else ""
    return f"{prefix}{text[start:end]}{suffix}"


def _attach_nodes(conn: sqlite3.Connection, run_id: int, hits: list[dict[str, Any]]) -> None:
    """Fill each message hit's id and owning node (one lookup per distinct node)."""
    base = run_base(run_id)
    nodes: dict[int, tuple[str, str, str, str]] = {}
    for hit in hits:
        if "_node_pre" not in hit:
            continue
        pre = hit.pop("_node_pre")
        if pre not in nodes:
            nodes[pre] = conn.execute(
                "SELECT node_id, type, name, status FROM nodes WHERE key = ?", (base + pre,)
            ).fetchone()
        node_id, ntype, name, status = nodes[pre]
        hit.update({"id": f"{node_id}-m{hit.pop('_msg_no')}", "node_id": node_id,
                    "node_type": ntype, "node_name": name, "node_status": status})
