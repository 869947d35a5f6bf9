"""message view: one message read in parts, by character offset, so a 100 MB message is
readable without one giant answer. The selector is a message id (``<node id>-mN``, a run
error ``errors-mN``) or a node id (its status message: a failure's full text).

Each part is masked on its own, between boundaries where masking the text whole and in two
pieces gives the same result (``shaping.clean_cut``): a secret never straddles a part, and
a part costs O(part) whatever the message's length.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from rf_log_listener.errors import ResultError
from rf_log_listener.status_text import HTML_PREFIX, is_html, visible
from rf_log_listener.store import run_base

from ..attachments import Reference
from ..attachments import parse as parse_html
from ..shaping import Shaper, clean_cut, estimate_tokens
from .common import NODE_NOT_FOUND, NodeContext, NodeRow, node_by_id, shown_attachments

MESSAGE_NOT_FOUND = "MESSAGE_NOT_FOUND"
_CHARS_PER_TOKEN = 3  # dense text (JSON bodies, markup) runs about 3 characters a token
_ENVELOPE = 250  # tokens the view's other fields and the envelope take
_BREAK = re.compile(r"\s")


def message_part(conn: sqlite3.Connection, run_id: int, selector: str | None, shaper: Shaper,
                 offset: int | None) -> tuple[dict[str, Any], int | None]:
    """The part of the message starting at ``offset`` (0 first), as long as the budget
    allows; the position after it, when the message goes on."""
    if not selector:
        raise ResultError(MESSAGE_NOT_FOUND, "The message view needs a selector.",
                          "Pass a message id (s1-t1-k2-m1, errors-m1) or a node id (its status "
                          "message).")
    text, item, node, references = _message(conn, run_id, selector)
    start = min(offset or 0, len(text))
    end = _part_end(text, start, _part_chars(shaper.budget), shaper, node)
    part = text[start:end]
    shown = shaper.counted(shaper.mask_message(part, node))
    while estimate_tokens(shown) + _ENVELOPE > shaper.budget and end - start > 200:
        end = _part_end(text, start, (end - start) * 2 // 3, shaper, node)
        shown = shaper.counted(shaper.mask_message(text[start:end], node))
    item.update(length=len(text), offset=start, end=end, text=shown)
    if references and start == 0:  # what an HTML message shows besides its text
        item["attachments"] = shown_attachments(item["message_id"], references, shaper,
                                                NodeContext(conn, run_id))
    return item, end if end < len(text) else None


def _part_chars(budget: int) -> int:
    return max(200, (budget - _ENVELOPE) * _CHARS_PER_TOKEN)


def _part_end(text: str, start: int, chars: int, shaper: Shaper, node: NodeRow | None) -> int:
    """Where a part that starts at ``start`` ends: about ``chars`` on, at a line break or a
    space where possible, never inside something masking would replace."""
    target = start + chars
    if target >= len(text):
        return len(text)
    low = start + chars // 2
    candidates = [m.start() + 1 for m in _BREAK.finditer(text, low, target)][::-1][:16]
    candidates += [target, *(m.start() + 1 for m in _BREAK.finditer(text, target, target + 4096))][:8]
    for at in candidates:
        if clean_cut(text, at, lambda piece: shaper.mask_message(piece, node)[0]):
            return at
    return min(len(text), target + 4096)  # a secret's span longer than any cut tried: keep it whole


def _message(conn: sqlite3.Connection, run_id: int,
             selector: str) -> tuple[str, dict[str, Any], NodeRow | None, list[Reference]]:
    """The text (an HTML message's visible text), what the answer says about it, the node
    that logged it (None: a run error) and what an HTML message refers to."""
    node_id, _, number = selector.rpartition("-m")
    if node_id == "errors" and number.isdigit():
        row = conn.execute("SELECT level, time, html, text FROM errors WHERE run_id = ? AND seq = ?",
                           (run_id, int(number))).fetchone()
        if row is None:
            raise ResultError(MESSAGE_NOT_FOUND, f"Run {run_id} has no run error {selector}.")
        text, references = _visible(row[3], row[2])
        return text, {"message_id": selector, "level": row[0], "time": row[1]}, None, references
    if node_id and number.isdigit():
        try:
            node = node_by_id(conn, run_id, node_id)
        except ResultError:
            node = None
        if node is not None:
            base = run_base(run_id)
            row = conn.execute(
                "SELECT level, time, html, text FROM messages WHERE key >= ? AND key < ?"
                " AND node_pre = ? AND msg_no = ?",
                (base + node.msg_lo, base + node.msg_hi, node.pre, int(number))).fetchone()
            if row is None:
                raise ResultError(MESSAGE_NOT_FOUND, f"Run {run_id} has no message {selector}.",
                                  "Take message ids from failure_path, tree or search hits.")
            item = {"message_id": selector, "node_id": node.node_id, "level": row[0], "time": row[1]}
            if row[2]:
                item["html"] = True
            text, references = _visible(row[3], row[2])
            return text, item, node, references
    try:
        node = node_by_id(conn, run_id, selector)
    except ResultError:
        raise ResultError(NODE_NOT_FOUND, f"Run {run_id} has no message or node {selector!r}.",
                          "Pass a message id (s1-t1-k2-m1, errors-m1) or a node id.") from None
    if not node.message:
        raise ResultError(MESSAGE_NOT_FOUND, f"{selector} has no status message.",
                          "Its logged messages have ids <node id>-mN (tree, search_messages).")
    item = {"message_id": selector, "node_id": node.node_id, "kind": "status",
            "level": {"FAIL": "FAIL", "SKIP": "SKIP"}.get(node.status, "INFO")}
    if not is_html(node.message):
        return node.message, item, node, []
    item["html"] = True  # Set Test Message *HTML*, rebot --merge: read as log.html shows it
    return visible(node.message), item, node, parse_html(node.message[len(HTML_PREFIX):])[1]


def _visible(text: str, html: int) -> tuple[str, list[Reference]]:
    """An HTML message as its visible text (the markup is searchable, not shown) and what
    it refers to; any other as it is."""
    return parse_html(text) if html else (text, [])
