"""search_messages' candidates: the rows SQL preselects for a search to confirm (read side,
views; ``search.py`` confirms every hit on the masked text and shapes the page).

Messages come in key order, ``_FETCH`` per query so a page stops reading early, through the
cheapest index the filter allows (``search.py``'s docstring): notable levels, the trigram
index for the part of the run it covers, else a scan of the scope's key range. HTML messages
come through their own index, by the query's longest word (their markup may hold the query
only apart), merged with the others in key order. Status messages come through the index of
nodes that have one, each said once where it is said first; run errors by run.
"""

from __future__ import annotations

import heapq
import re
import sqlite3
from collections.abc import Iterator

from rf_log_listener.events import LEVELS
from rf_log_listener.masking import MASK
from rf_log_listener.store import NOTABLE_MESSAGES, run_base

from .common import NODE_COLUMNS, NodeRow

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

    from .search import Filter, Span

_FETCH = 500  # candidates read per round while a page fills up
_NOTABLE = frozenset(level for level, rank in LEVELS.items() if rank >= LEVELS["WARN"])

# key, node_pre, msg_no, level, time, text, html
Candidate = tuple[int, int, int, str, str | None, str, int]
_COLUMNS = "m.key, m.node_pre, m.msg_no, m.level, m.time, m.text, m.html"


def candidates(conn: sqlite3.Connection, run: dict[str, Any], flt: Filter, span: Span,
                after: int | None) -> Iterator[Candidate]:
    lo = max(span.lo, after + 1) if after is not None else span.lo
    piece = _sql_piece(flt.query) if flt.query else ""
    if not piece:  # levels alone, or nothing SQL can preselect: every kind of message alike
        return _plain_candidates(conn, run, flt, span, lo, "TRUE", piece)
    # an HTML message is matched on what it shows (search._searched), which its markup may
    # hold only apart: it comes through the index of such messages (few), by the piece's
    # longest word; the others by the piece itself
    return heapq.merge(_plain_candidates(conn, run, flt, span, lo, "m.html = 0", piece),
                       _rounds(conn, "messages AS m INDEXED BY messages_html", "m.html = 1",
                               flt, span, lo, span.hi, _html_word(piece)),
                       key=lambda row: row[0])


def _plain_candidates(conn: sqlite3.Connection, run: dict[str, Any], flt: Filter, span: Span,
                      lo: int, condition: str, piece: str) -> Iterator[Candidate]:
    if flt.levels and flt.levels <= _NOTABLE:
        yield from _rounds(conn, "messages AS m INDEXED BY messages_notable",
                           f"({NOTABLE_MESSAGES}) AND {condition}", flt, span, lo, span.hi, piece)
        return
    indexed_upto = min(span.hi, run["fts_upto"] or run_base(run["run_id"]))
    if len(piece) >= 3 and lo < indexed_upto:
        yield from _rounds(conn, "messages_fts AS f JOIN messages AS m ON m.key = f.rowid",
                           f"f.text LIKE :pattern AND {condition}", flt, span, lo, indexed_upto,
                           None, pattern=f"%{piece}%", key="f.rowid")
        lo = indexed_upto
    if lo < span.hi:
        yield from _rounds(conn, "messages AS m", condition, flt, span, lo, span.hi, piece)


def _rounds(conn: sqlite3.Connection, source: str, condition: str, flt: Filter, span: Span,
            lo: int, hi: int, piece: str | None, pattern: str | None = None,
            key: str = "m.key") -> Iterator[Candidate]:
    """Candidates in key order, ``_FETCH`` per query so a page stops reading early."""
    where = [condition, f"{key} >= :lo", f"{key} < :hi"]
    params: dict[str, Any] = {"pattern": pattern, "fetch": _FETCH, "node_pre": span.node_pre}
    if span.node_pre is not None:
        where.append("m.node_pre = :node_pre")
    if flt.levels:
        names = sorted(flt.levels)
        where.append(f"m.level IN ({', '.join(f':lv{i}' for i in range(len(names)))})")
        params.update({f"lv{i}": name for i, name in enumerate(names)})
    if piece:
        where.append("m.text LIKE :like ESCAPE '\\'")
        params["like"] = f"%{_like_escaped(piece)}%"
    sql = f"SELECT {_COLUMNS} FROM {source} WHERE {' AND '.join(where)} ORDER BY {key} LIMIT :fetch"
    while lo < hi:
        rows = conn.execute(sql, {**params, "lo": lo, "hi": hi}).fetchall()
        yield from rows
        if len(rows) < _FETCH:
            return
        lo = rows[-1][0] + 1


STATUS_LEVEL = {"FAIL": "FAIL", "SKIP": "SKIP"}  # a status message's level, for level filters


def status_candidates(conn: sqlite3.Connection, run_id: int, flt: Filter, span: Span,
                       after: int | None, fetch: int) -> Iterator[NodeRow]:
    """Nodes with a status message in the span that no node below says, in order, through
    the index of such nodes (failures and skips: few), prefiltered by level and by text
    (LIKE, confirmed masked; an ``*HTML*`` one is confirmed on the text it shows, markup
    and entities between its words); ``fetch`` per query (a page's worth: each is checked
    below)."""
    where = ["key >= ?", "key <= ?", "message IS NOT NULL"]
    params: list[Any] = [max(span.nodes_lo, after + 1) if after is not None else span.nodes_lo,
                         span.nodes_hi]
    if flt.levels is not None:
        wanted = [f"status = '{status}'" for status, level in STATUS_LEVEL.items()
                  if level in flt.levels]
        if "INFO" in flt.levels:  # any other status with a message shows as INFO
            wanted.append("status NOT IN ('FAIL', 'SKIP')")
        if not wanted:
            return
        where.append(f"({' OR '.join(wanted)})")
    piece = _sql_piece(flt.query) if flt.query else ""
    if piece:
        # an HTML one may hold the piece only as it shows (markup between its words, its
        # characters as entities): it is looked for by the piece's longest word, which
        # markup does not split nor entities spell
        where.append("(message LIKE ? ESCAPE '\\' OR (message LIKE '*HTML*%' AND message LIKE ?"
                     " ESCAPE '\\'))")
        params += [f"%{_like_escaped(piece)}%", f"%{_like_escaped(_html_word(piece))}%"]
    where.append(_NOT_SAID_BELOW)
    params += [run_base(run_id)] * 3
    sql = (f"SELECT {NODE_COLUMNS} FROM nodes INDEXED BY nodes_with_message WHERE"
           f" {' AND '.join(where)} ORDER BY key LIMIT {fetch}")
    while params[0] <= params[1]:
        rows = conn.execute(sql, params).fetchall()
        yield from (NodeRow(*row) for row in rows)
        if len(rows) < fetch:
            return
        params[0] = rows[-1][0] + 1


# A status message is said by the deepest node that says it: not by one whose descendant
# says the same (RF gives the keywords above a failure the failing one's message), nor by
# one that logged it itself. Checked in the candidates' query: no round trip per candidate.
# (``text || ''``: the node's own messages are read by key; PostgreSQL would otherwise take
# the trigram index for the equality and scan every message with that text, run after run.
# An ``*HTML*`` status message is logged as HTML without its prefix, as RF does.)
_NOT_SAID_BELOW = (
    "NOT EXISTS (SELECT 1 FROM nodes AS below INDEXED BY nodes_with_message"
    " WHERE below.key > nodes.key AND below.key <= ? + nodes.last"
    " AND below.message = nodes.message)"
    " AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.key >= ? + nodes.msg_lo"
    " AND messages.key < ? + nodes.msg_hi AND messages.node_pre = nodes.pre"
    " AND (messages.text || '' = nodes.message OR messages.html = 1"
    " AND nodes.message LIKE '*HTML*%' AND ltrim(substr(nodes.message, 7)) = messages.text))")


def error_candidates(conn: sqlite3.Connection, run_id: int, flt: Filter,
                      after: int) -> Iterator[tuple[int, str, str | None, str]]:
    """The run's errors after ``after``, prefiltered by text (LIKE, confirmed masked)."""
    piece = _sql_piece(flt.query) if flt.query else ""
    like = " AND text LIKE ? ESCAPE '\\'" if piece else ""
    rows = conn.execute(f"SELECT seq, level, time, text FROM errors WHERE run_id = ? AND seq > ?"
                        f"{like} ORDER BY seq",
                        (run_id, after, *([f"%{_like_escaped(piece)}%"] if piece else [])))
    for row in rows:
        if flt.levels is None or row[1] in flt.levels:
            yield row


def _sql_piece(query: str) -> str:
    """The longest piece of the query that SQL's LIKE (and the trigram index) match exactly
    as Python's casefold does: no wildcard characters, no non-ASCII letters with case, and
    no ``***`` (the store holds the value a mask stands for)."""
    pieces, current = [], []
    for char in query.replace(MASK, "%"):
        if char in "%_\\" or (not char.isascii() and char.lower() != char.upper()):
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
    pieces.append("".join(current))
    return max(pieces, key=len)


def _html_word(piece: str) -> str:
    """The longest run of the piece that HTML writes as it shows it: not split by what
    markup puts between words (spaces, tags, line breaks) nor spelt as an entity (``&``,
    ``<``, ``>``, quotes). Markup could still split it (``<b>Or</b>der``): rare, accepted."""
    return max(re.split(r"[\s<>&;\"']+", piece), key=len)


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
