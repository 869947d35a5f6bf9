"""search_messages: messages and run errors by text and/or level, run-wide or scoped to a
node, its subtree or its test, in execution order, each hit with the iteration or branch it
ran in and a short call path.

Text matching is a case-insensitive literal substring: ``%``, ``_`` and ``\\`` mean
themselves. SQL only preselects candidates; Python confirms every hit on the *masked* text,
so a query can never find (and so confirm) a secret value; an HTML message on what answers
show of it (``attachments.searchable``), never its markup. Preselection
(``search_candidates.py``), cheapest first:

* a level filter of WARN or worse alone: the ``messages_notable`` partial index;
* a query with a piece of 3+ characters SQLite folds like Python (ASCII, or characters
  without case such as CJK): the trigram index, for the part of the run it covers
  (``runs.fts_upto``; a live run's newest messages are scanned);
* otherwise a scan of the scope's key range, which a selector keeps small;
* HTML messages through their own index, by the query's longest word.

A scope is a message key range (``[msg_lo, msg_hi)`` of a node, see store.py), so scoped
searches cost O(scope), whatever the size of the run.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import namedtuple
from collections.abc import Callable, Iterator

from rf_log_listener.errors import ResultError
from rf_log_listener.events import LEVELS
from rf_log_listener.signatures import repeat_key
from rf_log_listener.store import run_base

from ..shaping import CUT_MARK, MASK_MARGIN, Cut, Shaper, visible_status
from .common import (
    SELECTOR_REQUIRED,
    NodeContext,
    NodeRow,
    enclosing_scope,
    node_by_id,
    node_by_key,
    node_item,
    run_row,
    shown_assign,
    shown_message,
)
from .search_candidates import STATUS_LEVEL, candidates, error_candidates, status_candidates
from .tree import group_span

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, Literal, TypeVar

    Scope = Literal["node", "subtree", "test"]
    Detail = Literal["compact", "full"]
    _T = TypeVar("_T")

INVALID_QUERY = "INVALID_QUERY"
# What a compact hit keeps: what an agent acts on. The message id names its node
# (<node id>-mN), the call path its test, iteration values and branch conditions.
_COMPACT = ("id", "kind", "level", "text", "html", "attachments", "call_path", "count", "last",
            "unfold_position")
FOLD_SCAN = 2_000  # repeats folded into one page at most: reading a page stays bounded
FOLD_CHARS = 2_000  # longer messages never fold (two page sources may differ anywhere)
SEVERITY = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL")  # SKIP ranks with WARN
_HIT_CHARS = 400
_PATH_NAMES = 6  # call paths longer than this keep their first two and last three names
_BRANCHES = frozenset({"IF", "ELSE IF", "ELSE", "TRY", "EXCEPT", "FINALLY"})
_UNLABELLED = frozenset({"FOR", "WHILE", "IF/ELSE ROOT", "TRY/EXCEPT ROOT"})


# What to look for: a casefolded needle, the query as given, the wanted levels (a frozenset);
# each may be None.
Filter = namedtuple("Filter", "needle query levels")
# Where to look: message keys [lo, hi), optionally one node's own messages only (node_pre);
# with_errors: run errors belong to no node, only a run-wide search has them; node keys
# [nodes_lo, nodes_hi] for status messages.
Span = namedtuple("Span", "lo hi node_pre with_errors nodes_lo nodes_hi", defaults=(0, 0))


def make_filter(query: str | None, level: str | None, min_level: str | None) -> Filter:
    text = query if query and query.strip() else None
    if text is None and not level and not min_level:
        raise ResultError(INVALID_QUERY, "Nothing to search for.",
                          "Pass query (plain text), or level / min_level (e.g. min_level='WARN') "
                          "to list messages by severity, or both (command line: QUERY, --level "
                          "or --min-level: a node's messages, --selector ID --min-level TRACE).")
    if level and min_level:
        raise ResultError(INVALID_QUERY, "Pass level or min_level, not both.",
                          "level='WARN' finds WARN messages; min_level='WARN' finds WARN and worse.")
    levels = None
    if level or min_level:
        name = (level or min_level or "").upper()
        if name not in LEVELS:
            raise ResultError(INVALID_QUERY, f"Unknown level {level or min_level!r}.",
                              f"Use one of {', '.join(SEVERITY)} or SKIP.")
        if level:
            levels = frozenset({name})
        else:
            levels = frozenset(lv for lv, rank in LEVELS.items() if rank >= LEVELS[name])
    return Filter(text.casefold() if text else None, text, levels)


def search(conn: sqlite3.Connection, run_id: int, flt: Filter, selector: str | None,
           scope: Scope | None, shaper: Shaper, position: list[Any] | None,
           page_size: int, detail: Detail = "compact") -> tuple[dict[str, Any], list[Any] | None]:
    """One page of hits; the position is [phase, last key] (phase 0: messages, 1: status
    messages of tests, keywords and control structures, 2: run errors). ``detail``: compact
    hits (``_COMPACT``), or full ones with time, position, iteration, branch and the nodes
    that logged them."""
    run = run_row(conn, run_id)
    span = _span(conn, run_id, selector, scope)
    context = _Context(conn, run_id, shaper)
    phase, after = position[:2] if position else (0, None)
    unfold_upto = position[2] if position and len(position) > 2 else None
    hits: list[dict[str, Any]] = []
    owners: list[list[dict[str, Any]]] = []  # the node each hit brings along, if new
    positions: list[list[Any]] = []  # where to continue after each hit
    last_key = after
    more = False
    if phase == 0:
        folds = _Folds(unfold_upto)
        for key, node_pre, msg_no, level, time, text, html in context.read_ahead(
                candidates(conn, run, flt, span, after), page_size, lambda row: row[1]):
            # The node only where the text is masked by it (RF's TRACE lines) or is a hit: a
            # page that folds thousands of repeats reads none of their nodes.
            node = context.node(node_pre) if shaper.needs_node(text) else None
            match = _message_match(text, html, node, flt, shaper)
            shown, masked, offset, total = match
            if shown is None:
                last_key = key
                continue
            folded = folds.into(hits, key, node_pre, level, shown, html)
            if folded is not None:
                shaper.masked += masked
                folded["last"] = (node_pre, msg_no, time, shown, offset, total)  # see below
                last_key = key
                if folds.members >= FOLD_SCAN:  # a page's reading stays bounded
                    more = True
                    break
                continue
            if len(hits) == page_size:
                more = True
                break
            node = context.node(node_pre)
            message_id = f"{node.node_id}-m{msg_no}"
            hit = {"id": message_id, "seq": key - run_base(run_id), "level": level, "time": time,
                   **context.of(node)}
            hit.update(_message_hit(message_id, level, text, html, node, match, flt, shaper,
                                    context))
            folds.started(hit, key, node_pre)
            hits.append(hit)
            owners.append(context.owner(node) if detail == "full" else [])
            positions.append(folds.position(key))
            last_key = key
        folds.finish(hits, positions)
        for hit in hits:  # a folded hit's last sample, made once, not for every repeat
            if "last" in hit:
                node_pre, msg_no, time, shown, offset, total = hit["last"]
                hit["last"] = {"id": f"{context.node(node_pre).node_id}-m{msg_no}", "time": time,
                               "text": _excerpt(shown, flt, shaper, offset, total)}
        if not more:
            phase, last_key = 1, None
    if phase == 1 and not more:
        for node in context.read_ahead(status_candidates(conn, run_id, flt, span, last_key,
                                                          page_size + 1),
                                       page_size, lambda node: node.pre):
            # an HTML one (rebot --merge, Set Test Message) is searched as the text it shows
            shown, masked, offset, total = _masked_match(visible_status(node.message), node,
                                                         flt, shaper)
            if shown is None:
                last_key = node.key
                continue
            if len(hits) == page_size:
                more = True
                break
            shaper.masked += masked
            light = context.node(node.pre)
            hits.append({"id": node.node_id, "kind": "status", "level": STATUS_LEVEL.get(
                node.status, "INFO"), "text": _excerpt(shown, flt, shaper, offset, total),
                **context.of(light)})
            owners.append(context.owner(light, node) if detail == "full" else [])
            positions.append([1, node.key])
            last_key = node.key
        if not more:
            phase, last_key = (2, 0) if span.with_errors else (3, None)
    if phase == 2 and not more:
        for seq, level, time, text in error_candidates(conn, run_id, flt, last_key or 0):
            shown, masked, offset, total = _masked_match(text, None, flt, shaper)
            if shown is None:
                continue
            if len(hits) == page_size:
                more = True
                break
            shaper.masked += masked
            hits.append({"id": f"errors-m{seq}", "level": level, "time": time,
                         "text": _excerpt(shown, flt, shaper, offset, total)})
            owners.append([])
            positions.append([2, seq])
            last_key = seq
    view: dict[str, Any] = {"query": flt.query, "selector": selector,
                            "scope": (scope or "subtree") if selector else None,
                            "levels": sorted(flt.levels, key=_rank) if flt.levels else None}
    if detail == "compact":
        hits = [{key: hit[key] for key in _COMPACT if key in hit} for hit in hits]
    kept = shaper.fit(view, hits, "hits", ("nodes", owners))
    if not view["nodes"]:
        del view["nodes"]  # compact hits, or hits with no node (run errors)
    if kept < len(hits):
        return view, positions[kept - 1]
    return view, [phase, last_key, *([unfold_upto] if phase == 0 and unfold_upto
                                     and last_key is not None and last_key < unfold_upto else [])
                  ] if more else None


class _Folds:
    """Repeated messages of one page folded into the hit of their first: the next message
    (consecutive), or a later one of the same node, equal to it once times, ids, addresses,
    durations and numbers are set aside (``signatures.repeat_key``). A folded hit has
    ``count``, the ``last`` sample, and where an unfolded listing of its messages starts
    (the service makes it ``unfold_cursor``). Messages up to ``unfold_upto`` (a cursor that
    unfolds) are listed one by one."""

    def __init__(self, unfold_upto: int | None) -> None:
        self.unfold_upto = unfold_upto
        self.keys: dict[Any, int] = {}  # (node, level, repeat key) -> index of its hit
        self.last: Any = None  # the previous hit's (level, repeat key)
        self.first_keys: list[int] = []
        self.last_keys: list[int] = []
        self.members = 0
        self._pending: tuple[Any, Any] | None = None
        self._text, self._repeat = "", ""  # the last text keyed, and its repeat key

    def _key(self, key: int, level: str, shown: str, html: int) -> Any:
        if html or len(shown) > FOLD_CHARS or (self.unfold_upto is not None and key <= self.unfold_upto):
            return None
        if shown != self._text:  # a line logged again word for word has the same key
            self._text, self._repeat = shown, repeat_key(shown)
        return level, self._repeat

    def into(self, hits: list[dict[str, Any]], key: int, node_pre: int, level: str, shown: str,
             html: int) -> dict[str, Any] | None:
        """The earlier hit this message folds into (now counted), or None."""
        repeat = self._key(key, level, shown, html)
        self._pending = (repeat, (node_pre, repeat))
        if repeat is None or not hits:
            return None
        index = len(hits) - 1 if repeat == self.last else self.keys.get((node_pre, repeat))
        if index is None:
            return None
        hit = hits[index]
        hit["count"] = hit.get("count", 1) + 1
        self.last_keys[index] = key
        self.last = repeat
        self.members += 1
        return hit

    def started(self, hit: dict[str, Any], key: int, node_pre: int) -> None:
        repeat, by_node = self._pending or (None, None)
        self.last = repeat
        if repeat is not None:
            self.keys[by_node] = len(self.first_keys)
        self.first_keys.append(key)
        self.last_keys.append(key)

    def position(self, key: int) -> list[Any]:
        return [0, key, self.unfold_upto] if self.unfold_upto and key < self.unfold_upto else [0, key]

    def finish(self, hits: list[dict[str, Any]], positions: list[list[Any]]) -> None:
        """Continue after a hit at the key before the next hit's first message: a later
        member of a kept hit may be shown again, never one skipped. Folded hits get the
        position of their unfolded listing."""
        for index in range(len(positions) - 1):
            positions[index][1] = self.first_keys[index + 1] - 1
        for index, hit in enumerate(hits):
            if hit.get("count"):
                hit["unfold_position"] = [0, self.first_keys[index] - 1, self.last_keys[index]]


def _rank(level: str) -> tuple[int, str]:
    return LEVELS.get(level, 3), level


# -- scope ---------------------------------------------------------------------------------

def _span(conn: sqlite3.Connection, run_id: int, selector: str | None, scope: Scope | None) -> Span:
    base = run_base(run_id)
    if not selector:
        if scope:
            raise ResultError(SELECTOR_REQUIRED, f"scope={scope!r} needs a selector.",
                              "Pass the node id to scope to, or leave scope out to search the run.")
        return Span(base, run_base(run_id + 1), None, True, base, run_base(run_id + 1) - 1)
    if selector.startswith("ig:"):
        _, first, last = group_span(conn, run_id, selector)
        if scope != "test":  # the group is the node: its iterations' messages
            return Span(base + first.msg_lo, _msg_end(run_id, last), None, False,
                        first.key, base + last.last)
        node = first
    else:
        node = node_by_id(conn, run_id, selector)
    if scope == "node":
        return Span(base + node.msg_lo, _msg_end(run_id, node), node.pre, False, node.key, node.key)
    if scope == "test":
        node = enclosing_scope(conn, run_id, node)
    return Span(base + node.msg_lo, _msg_end(run_id, node), None, False, node.key,
                base + node.last)


def _msg_end(run_id: int, node: NodeRow) -> int:
    """End of the node's message range. A node still open (a live run) or never closed (an
    interrupted one) owns every message after its start: all later nodes are inside it."""
    if node.status in ("RUNNING", "NOT FINISHED"):
        return run_base(run_id + 1)
    return run_base(run_id) + node.msg_hi


# -- hits ----------------------------------------------------------------------------------

def _message_match(text: str, html: int, node: Any, flt: Filter,
                   shaper: Shaper) -> tuple[str | None, int, int, int]:
    """``_masked_match`` of a logged message; an HTML one is matched on what answers show of
    it (its text, its images' labels, its references: ``attachments.searchable``), never on
    its tags and attributes."""
    if html:
        from ..attachments import searchable  # HTML messages are few: loaded for them

        text = searchable(text)
    return _masked_match(text, node, flt, shaper)


def _message_hit(message_id: str, level: str, text: str, html: int, node: Any,
                 match: tuple[str | None, int, int, int], flt: Filter, shaper: Shaper,
                 context: _Context) -> dict[str, Any]:
    """A logged message's hit (id, level, text; an HTML one's attachments) from its
    ``_message_match``, its masked values counted once: an HTML one as answers show it (which
    counts them), any other as the excerpt around the match."""
    if html:
        return shown_message(message_id, level, text, html, node, shaper, context.ids, _HIT_CHARS)
    shown, masked, offset, total = match
    shaper.masked += masked
    return {"id": message_id, "level": level, "text": _excerpt(shown, flt, shaper, offset, total)}


_HUGE = 4 * MASK_MARGIN  # texts longer than this are masked around the match only


def _masked_match(text: str, node: Any, flt: Filter,
                  shaper: Shaper) -> tuple[str | None, int, int, int]:
    """The masked text, the count of masked values, how many characters of the message come
    before it and the message's length (as shown). A huge text is masked only around its
    first match that survives masking. None when the query matches only inside masked
    values: a search never confirms a secret. ``node`` None: a run error, or a message that is
    not one of RF's TRACE lines (masked alike without its node)."""
    if len(text) <= _HUGE:
        shown, masked = shaper.mask_message(text, node)
        if flt.needle and flt.needle not in shown.casefold():
            return None, 0, 0, 0
        return shown, masked, 0, len(shown)
    folded = text.casefold()  # positions are close enough to the original's for a window
    at = folded.find(flt.needle) if flt.needle else 0
    while at >= 0:
        start = max(0, at - MASK_MARGIN)
        window, masked = shaper.redactor.text(text[start:at + MASK_MARGIN])
        if not flt.needle or flt.needle in window.casefold():
            return window, masked, start, len(text)
        at = folded.find(flt.needle, at + 1)
    return None, 0, 0, 0


def _excerpt(text: str, flt: Filter, shaper: Shaper, offset: int, total: int) -> str:
    """The (masked) text, or, when long, a window that keeps the first match visible.
    ``text`` may be a part of the message starting ``offset`` characters in, of ``total``."""
    if len(text) <= _HIT_CHARS + CUT_MARK and total == len(text):
        return text  # cutting less than the mark itself would make it longer
    if not flt.needle and total == len(text):
        return shaper.cut(text, _HIT_CHARS)
    at = text.casefold().find(flt.needle) if flt.needle else 0
    start = max(0, at - _HIT_CHARS // 2)
    end = min(len(text), start + _HIT_CHARS)
    if offset + start <= CUT_MARK and offset == 0:
        start = 0
    if total - offset - end <= CUT_MARK and offset + len(text) == total:
        end = len(text)
    before, after = offset + start, total - offset - end
    prefix = f"[{before} characters cut] …" if before else ""
    suffix = f"… [{after} characters cut]" if after > 0 else ""
    if offset == 0 and total == len(text):  # the whole message is at hand: it may grow back
        shaper.soft_cuts += 1
        return Cut(f"{prefix}{text[start:end]}{suffix}", text)
    shaper.message_truncated = True  # a window of a huge message: the message view reads it
    return f"{prefix}{text[start:end]}{suffix}"


# The columns of a node a hit shows (args, assign and fields: JSON or None).
_Node = namedtuple("_Node", "pre parent_pre node_id type name status args assign fields")


class _Context:
    """Nodes of one page, each read once: owners of hits and their ancestors."""

    def __init__(self, conn: sqlite3.Connection, run_id: int, shaper: Shaper) -> None:
        self.conn, self.base, self.shaper = conn, run_base(run_id), shaper
        self.nodes: dict[int, _Node] = {}
        self._batch: list[int] = []  # node pres of read_ahead's current batch
        self.ids = NodeContext(conn, run_id)
        self.owners: set[int] = set()

    def owner(self, node: _Node, row: NodeRow | None = None) -> list[dict[str, Any]]:
        """The node as answers show it (models.Node), the first time a hit names it; ``row``:
        its full row when the caller has read it already."""
        if node.pre in self.owners:
            return []
        self.owners.add(node.pre)
        return [node_item(row or node_by_key(self.conn, self.base + node.pre), self.shaper, self.ids)]

    def node(self, pre: int) -> _Node:
        """The node (its ancestors read with it); the first one asked of a read-ahead batch
        is read with those of the batch's other rows."""
        node = self.nodes.get(pre)
        if node is None:
            self._read_up(sorted({pre, *self._batch} - self.nodes.keys()))
            node = self.nodes[pre]
        return node

    def read_ahead(self, rows: Iterator[_T], size: int, pre_of: Callable[[_T], int]) -> Iterator[_T]:
        """``rows`` (candidates of hits) ``size`` at a time: the nodes of a batch and their
        ancestors are read in one query when the first of them is asked for (one round trip
        for a page, not one a hit); a batch whose nodes nobody asks for (repeats folded into
        a hit, texts that match only in masked values) costs no reading."""
        while batch := list(itertools.islice(rows, size)):
            self._batch = [pre_of(row) for row in batch]
            yield from batch
        self._batch = []

    def _read_up(self, pres: list[int]) -> None:
        """The nodes and their ancestors up to their tests (or suites), in one query: one
        round trip to a database server for the call paths of many hits, not one a level."""
        rows = self.conn.execute(
            f"WITH RECURSIVE up(k) AS (SELECT key FROM nodes WHERE key IN"
            f" ({','.join('?' * len(pres))}) UNION"
            " SELECT CAST(? AS BIGINT) + nodes.parent_pre FROM up JOIN nodes ON nodes.key = up.k"
            " WHERE nodes.parent_pre IS NOT NULL AND nodes.type NOT IN ('TEST', 'SUITE'))"
            " SELECT nodes.key, nodes.parent_pre, nodes.node_id, nodes.type, nodes.name,"
            " nodes.status, nodes.args, nodes.assign, nodes.fields"
            " FROM up JOIN nodes ON nodes.key = up.k",
            [*(self.base + pre for pre in pres), self.base])
        for key, *row in rows:
            self.nodes.setdefault(key - self.base, _Node(
                key - self.base, *row[:3], row[3] or "", *row[4:]))

    def of(self, node: _Node) -> dict[str, Any]:
        """Owner, enclosing iteration and branch, and call path of a message of ``node``."""
        chain = [node]  # the node, then its ancestors up to its test (or suite)
        while chain[-1].type not in ("TEST", "SUITE") and chain[-1].parent_pre is not None:
            chain.append(self.node(chain[-1].parent_pre))
        info: dict[str, Any] = {"node_id": node.node_id}
        iteration = next((n for n in chain if n.type == "ITERATION"), None)
        if iteration is not None:
            info["iteration"] = {"node_id": iteration.node_id,
                                 "values": shown_assign(iteration, self.shaper)}
        branch = next((n for n in chain if n.type in _BRANCHES), None)
        if branch is not None:
            info["branch"] = {"node_id": branch.node_id, "type": branch.type,
                              "condition": self._condition(branch)}
        # FOR and IF/TRY roots add nothing their iterations and branches do not say.
        info["call_path"] = self._path([self._label(n) for n in reversed(chain)
                                        if n.type not in _UNLABELLED])
        return info

    def _condition(self, node: _Node) -> str | None:
        fields = json.loads(node.fields) if node.fields else {}
        text = fields.get("condition") or " | ".join(fields.get("patterns") or []) or None
        return self.shaper.text(text, 80) if text else None

    def _label(self, node: _Node) -> str:
        if node.type == "ITERATION":
            values = shown_assign(node, self.shaper) or {}
            return "ITERATION " + ", ".join(f"{k}={v}" for k, v in values.items()) if values \
                else "ITERATION"
        if node.type in ("IF", "ELSE IF"):
            return f"{node.type} {self._condition(node) or ''}".strip()
        return self.shaper.text(node.name, 60) if node.name else node.type

    @staticmethod
    def _path(labels: list[str]) -> str:
        if len(labels) > _PATH_NAMES:
            labels = [*labels[:2], "…", *labels[-3:]]
        return " > ".join(labels)
