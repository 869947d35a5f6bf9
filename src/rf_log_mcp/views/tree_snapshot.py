"""tree_snapshot view: a small subtree in one answer, a convenience over the paged tree view
and never a replacement for it. Nodes come in execution order with their depth, down to
``max_depth`` levels, each level's children paged and projected and its clean iterations
folded exactly as ``tree`` does (it is built from tree pages). Within the budget; where it
stops before the subtree's end, ``continue_at`` gives the tree selector and cursor that go
on from there.
"""

from __future__ import annotations

import sqlite3

from rf_log_listener.store import run_base

from ..shaping import Shaper, estimate_tokens, make_cursor
from .common import node_by_id, node_by_key
from .tree import tree

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

    from .tree import Projection

DEFAULT_DEPTH = 3
MAX_DEPTH = 6
_ENVELOPE = 120  # tokens of the view's own fields besides its nodes


def tree_snapshot(conn: sqlite3.Connection, run_id: int, selector: str | None,
                  projection: Projection, max_depth: int, shaper: Shaper,
                  page_size: int) -> dict[str, Any]:
    if selector is None:
        selector = node_by_key(conn, run_base(run_id)).node_id
    snapshot = _Snapshot(conn, run_id, projection, max_depth, shaper, page_size)
    root_view = snapshot.page(selector)
    view: dict[str, Any] = {"projection": projection, "max_depth": max_depth,
                            "node": root_view[0]["node"], "nodes": snapshot.nodes}
    snapshot.used += estimate_tokens(view["node"]) + _ENVELOPE
    snapshot.walk(selector, root_view, 1)
    if snapshot.continue_at:
        view["continue_at"] = snapshot.continue_at
    return view


class _Snapshot:
    def __init__(self, conn: sqlite3.Connection, run_id: int, projection: Projection,
                 max_depth: int, shaper: Shaper, page_size: int) -> None:
        self.conn, self.run_id, self.projection = conn, run_id, projection
        self.max_depth, self.shaper, self.page_size = max_depth, shaper, page_size
        self.nodes: list[dict[str, Any]] = []
        self.continue_at: list[dict[str, Any]] = []
        self.used = 0

    def page(self, selector: str) -> tuple[dict[str, Any], int | None]:
        """The first children page of ``selector``, shaped as the tree view shapes it (its
        masking and cuts counted in this answer)."""
        inner = Shaper(budget=10 ** 9, redactor=self.shaper.redactor)
        found = tree(self.conn, self.run_id, selector, self.projection, inner, None, self.page_size)
        self.shaper.masked += inner.masked
        self.shaper.message_truncated |= inner.message_truncated
        self.shaper.soft_cuts += inner.soft_cuts  # its Cut texts are in this answer now
        return found

    def walk(self, selector: str, found: tuple[dict[str, Any], int | None], depth: int) -> bool:
        """Add ``selector``'s children (and theirs, depth first); False once the budget ended
        (every open level then says where it goes on)."""
        view, after = found
        for child in view["children"]:
            child = {key: value for key, value in child.items() if key != "messages"}
            cost = estimate_tokens(child) + 1
            if self.used + cost > self.shaper.budget and self.nodes:
                self.shaper.budget_truncated = True
                self._go_on(selector, self._before(child), "budget")
                return False
            self.used += cost
            self.nodes.append({**child, "depth": depth} if "node_id" in child else child)
            if child.get("has_children") and depth < self.max_depth and not self.walk(
                    child["node_id"], self.page(child["node_id"]), depth + 1):
                self._go_on(selector, self._key(child), "budget")
                return False
        if after is not None:
            self._go_on(selector, after, "page")
        return True

    def _key(self, item: dict[str, Any]) -> int:
        """Where a tree page continues after ``item`` (a folded group: after its last one)."""
        return node_by_id(self.conn, self.run_id, item.get("last_node_id") or item["node_id"]).key

    def _before(self, item: dict[str, Any]) -> int | None:
        """Where a tree page continues to show ``item`` next: after its previous sibling,
        the ancestor of the node just before it that shares its parent."""
        first = node_by_id(self.conn, self.run_id, item.get("first_node_id") or item["node_id"])
        if first.seq == 0:
            return None
        node = node_by_key(self.conn, first.key - 1)
        while node.parent_pre != first.parent_pre and node.parent_pre is not None:
            node = node_by_key(self.conn, run_base(self.run_id) + node.parent_pre)
        return node.key

    def _go_on(self, selector: str, after: int | None, reason: str) -> None:
        item: dict[str, Any] = {"selector": selector, "reason": reason}
        if after is not None:
            item["cursor"] = make_cursor({"run": self.run_id, "view": "tree", "selector": selector,
                                          "projection": self.projection}, after)
        self.continue_at.append(item)
