"""Row access shared by the views: runs and nodes by id, children, the visible-run rule."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections import namedtuple
from collections.abc import Iterator

from rf_log_listener.errors import ResultError
from rf_log_listener.events import LEVEL_NAMES
from rf_log_listener.registry import known_values
from rf_log_listener.status_text import HTML_PREFIX
from rf_log_listener.store import (
    NOTABLE_MESSAGES,
    NOTABLE_NODES,
    VISIBLE_RUNS,
    live_run_dead,
    mark_dead_live_runs,
    run_base,
)

from ..shaping import Shaper

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

    from ..attachments import Reference
    from ..sources import Locator

RUN_NOT_FOUND = "RUN_NOT_FOUND"
NODE_NOT_FOUND = "NODE_NOT_FOUND"
NODE_NOT_IN_TEST = "NODE_NOT_IN_TEST"
SELECTOR_REQUIRED = "SELECTOR_REQUIRED"

NODE_COLUMNS = (
    "key, pre, last, parent_pre, node_id, type, name, owner, status, message, elapsed,"
    " failed_descendant_count, max_descendant_level, msg_lo, msg_hi, args, owner_test, assign,"
    " fields, child_count, message_count, depth, seq"
)


# A node's stored columns, in NODE_COLUMNS' order: key, pre, last (int); parent_pre (int or
# None); node_id, type, name (str); owner (str or None); status (str); message (str or None);
# elapsed (float or None); failed_descendant_count, max_descendant_level, msg_lo, msg_hi
# (int); args (JSON or None); owner_test (int or None); assign, fields (JSON or None);
# child_count, message_count, depth (int); seq (int: position among the parent's children,
# from 0). A named tuple, not a dataclass: a page of nodes is built row by row (0.3 us a row
# against a frozen dataclass's 2 us), and a reading command does not import dataclasses and
# inspect, nor typing (issue #19).
_NodeColumns = namedtuple("_NodeColumns", NODE_COLUMNS.replace(",", " "))


class NodeRow(_NodeColumns):
    """A stored node. (A subclass without __slots__: its instances have the dict that
    ``field_values`` caches into.)"""

    @functools.cached_property
    def field_values(self) -> dict[str, Any]:
        """``fields`` parsed, once: the shaping, the locator and the definitions read it."""
        return json.loads(self.fields) if self.fields else {}


def run_row(conn: sqlite3.Connection, run_id: int) -> dict[str, Any]:
    """The run's row (a live run whose robot died is marked interrupted first)."""
    run = _visible_run(conn, run_id)
    if run["status"] == "running" and live_run_dead(run["pid"], run["host"], run["heartbeat"]):
        mark_dead_live_runs(conn)
        run = _visible_run(conn, run_id)
    return run


def _visible_run(conn: sqlite3.Connection, run_id: int) -> dict[str, Any]:
    cur = conn.execute(f"SELECT * FROM runs WHERE run_id = ? AND {VISIBLE_RUNS}", (run_id,))
    row = cur.fetchone()
    if row is None:
        raise ResultError(RUN_NOT_FOUND, f"No run {run_id} in the store.",
                          "Call list_runs for the runs in the store, or parse_result to import "
                          "a result file (command line: `rf-log-mcp runs`, `rf-log-mcp import`).")
    return dict(zip([d[0] for d in cur.description], row, strict=True))


METADATA_CHARS = 300


def mask_runs(conn: sqlite3.Connection, shaper: Shaper, run_ids: list[int]) -> None:
    """Mask in the answer the values these runs proved secret."""
    shaper.redactor = shaper.redactor.for_run(known_values(conn, run_ids))


def run_metadata(conn: sqlite3.Connection, run_id: int, shaper: Shaper) -> dict[str, Any] | None:
    """The root suite's metadata (what ``--metadata`` and the Metadata setting give: the
    build, the environment), masked by name as tree shows it (``Deploy Token: ***``), each
    value within METADATA_CHARS (a release note pasted into one stays in tree)."""
    root = conn.execute("SELECT fields FROM nodes WHERE key = ?", (run_base(run_id),)).fetchone()
    metadata = json.loads(root[0]).get("metadata") if root and root[0] else None
    if not metadata:
        return None
    return {name: shaper.cut(value, METADATA_CHARS) if isinstance(value, str) else value
            for name, value in shaper.counted(shaper.redactor.assign(metadata)).items()}


def node_by_id(conn: sqlite3.Connection, run_id: int, node_id: str) -> NodeRow:
    """A node by its id; a selector that is no id may name a test (``test_named``)."""
    row = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE run_id = ? AND node_id = ?", (run_id, node_id)
    ).fetchone()
    if row is None:
        named = None if _node_id_shape().match(node_id) else test_named(conn, run_id, node_id)
        if named is None:
            raise ResultError(NODE_NOT_FOUND, f"Run {run_id} has no node {node_id!r}.",
                              "Node ids look like s1-s2-t3-k4; take them from summary or tree."
                              " A test's name (full or its own) works too.")
        return named
    return NodeRow(*row)


@functools.cache
def _node_id_shape() -> Any:
    import re

    return re.compile(r"s\d+(?:-[a-z]+\d+)*\Z")  # RF's ids (s1-s2-t3-k4) and roots' (-r1)


def robot_normalized(name: str) -> str:
    """A name as robot's --test compares it: case, spaces and underscores ignored (and the
    Unicode form: a macOS file name's decomposed é is the é typed)."""
    import unicodedata

    return "".join(unicodedata.normalize("NFC", name).casefold().replace("_", " ").split())


def names_test(wanted: str, longname: str) -> bool:
    """Whether ``wanted`` (``robot_normalized``) names the test ``longname`` as robot's
    --test would: the whole full name, or its end after a dot."""
    normalized = robot_normalized(longname)
    return normalized == wanted or normalized.endswith("." + wanted)


def test_named(conn: sqlite3.Connection, run_id: int, name: str) -> NodeRow | None:
    """The test of the run that ``name`` names as robot's --test would: its full name or
    its own, case, spaces and underscores ignored. None when none does; NODE_NOT_FOUND
    naming the candidates when several do. Read from the run's test index (a running run's
    from its nodes): only when a selector is no node id."""
    from rf_log_listener.history import test_rows

    tests = conn.execute("SELECT t.longname, r.pre FROM run_tests AS r JOIN test_names AS t"
                         " USING (name_id) WHERE r.run_id = ? ORDER BY r.pre", (run_id,)).fetchall()
    if not tests:  # a running run, or one not indexed yet
        tests = [(row.longname, row.pre) for row in test_rows(conn, run_id)]
    wanted = robot_normalized(name)
    found = [(longname, pre) for longname, pre in tests if longname == name] or [
        (longname, pre) for longname, pre in tests if names_test(wanted, longname)]
    if not found:
        return None
    nodes = [node_by_key(conn, run_base(run_id) + pre) for _, pre in found[:6]]
    if len(found) > 1:
        raise ResultError(NODE_NOT_FOUND, f"Run {run_id} has {len(found)} tests named {name!r}.",
                          "Pass one's id: " + "; ".join(f"{n.node_id} ({longname})" for n, (
                              longname, _) in zip(nodes, found, strict=False)) + ".")
    return nodes[0]


def node_by_key(conn: sqlite3.Connection, key: int) -> NodeRow:
    row = conn.execute(f"SELECT {NODE_COLUMNS} FROM nodes WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise ResultError(NODE_NOT_FOUND, f"No node at key {key}.")
    return NodeRow(*row)


def nodes_by_keys(conn: sqlite3.Connection, keys: list[int]) -> dict[int, NodeRow]:
    """Several nodes by key in one query (one round trip to a database server), by key."""
    if not keys:
        return {}
    rows = conn.execute(f"SELECT {NODE_COLUMNS} FROM nodes WHERE key IN"
                        f" ({','.join('?' * len(keys))})", keys).fetchall()
    return {row[0]: NodeRow(*row) for row in rows}


def enclosing_scope(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> NodeRow:
    """The test around ``node``, or the suite setup/teardown keyword around it."""
    base = run_base(run_id)
    if node.type == "TEST":
        return node
    if node.owner_test is not None:
        return node_by_key(conn, base + node.owner_test)
    if node.type == "SUITE":
        raise ResultError(NODE_NOT_IN_TEST, f"{node.node_id} is a suite, not a step of a test.",
                          "Pass a test id, a step inside one, or a suite setup/teardown node; "
                          "use the tree view to list a suite's children.")
    while node.parent_pre is not None:
        parent = node_by_key(conn, base + node.parent_pre)
        if parent.type == "SUITE":
            return node
        node = parent
    return node


class Siblings:
    """A parent's children, each after the one before it, read ahead a batch at a time.

    A child's next sibling starts right after its subtree (key ``base + last + 1``): a walk of
    primary-key seeks. One recursive query walks a batch of them, so a page of children is one
    round trip instead of one per child: little in SQLite's process, most of a page's time
    on a database server (PostgreSQL)."""

    BATCH = 32
    _WALK = (
        "WITH RECURSIVE walk(key, n) AS (SELECT CAST(? AS BIGINT), 1 UNION ALL"
        " SELECT ? + nodes.last + 1, walk.n + 1 FROM walk JOIN nodes ON nodes.key = walk.key"
        " WHERE walk.n < ? AND ? + nodes.last + 1 <= ?) SELECT "
        + ", ".join(f"nodes.{name.strip()}" for name in NODE_COLUMNS.split(","))
        + " FROM walk JOIN nodes ON nodes.key = walk.key ORDER BY nodes.key"
    )

    def __init__(self, conn: sqlite3.Connection, run_id: int, end_key: int) -> None:
        self.conn, self.base, self.end_key = conn, run_base(run_id), end_key
        self._ahead: dict[int, NodeRow] = {}

    def after(self, node: NodeRow) -> NodeRow | None:
        """The sibling after ``node``, if its key is at most ``end_key`` (the parent's last)."""
        key = self.base + node.last + 1
        if key > self.end_key:
            return None
        if key not in self._ahead:
            rows = self.conn.execute(self._WALK, (key, self.base, self.BATCH, self.base,
                                                  self.end_key)).fetchall()
            self._ahead = {row[0]: NodeRow(*row) for row in rows}
        return self._ahead.get(key) or node_by_key(self.conn, key)


# Children are found by hopping: the first child is at pre + 1, the next sibling of a node at
# its last + 1. Primary-key seeks only, so no index on parent is maintained on import.
def first_child(conn: sqlite3.Connection, parent: NodeRow) -> NodeRow | None:
    return node_by_key(conn, parent.key + 1) if parent.last > parent.pre else None


def next_notable_child(conn: sqlite3.Connection, run_id: int, parent: NodeRow, from_pre: int,
                       also: str = "TRUE") -> NodeRow | None:
    """The first child of ``parent`` at or after ``from_pre`` that is notable (NOTABLE_NODES:
    failed, above a failure, WARN or worse below, an iteration that did not pass) and meets
    the SQL condition ``also``; one seek of a small index, however many siblings it skips."""
    base = run_base(run_id)
    row = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes INDEXED BY nodes_notable WHERE parent_pre = ?"
        f" AND key >= ? AND key <= ? AND {NOTABLE_NODES} AND ({also}) ORDER BY key LIMIT 1",
        (parent.pre, base + from_pre, base + parent.last),
    ).fetchone()
    return NodeRow(*row) if row else None


def last_notable_child(conn: sqlite3.Connection, run_id: int, parent: NodeRow,
                       also: str = "TRUE") -> NodeRow | None:
    """The last child of ``parent`` that is notable and meets ``also`` (next_notable_child,
    backwards): one seek of the same index."""
    row = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes INDEXED BY nodes_notable WHERE parent_pre = ?"
        f" AND key > ? AND key <= ? AND {NOTABLE_NODES} AND ({also}) ORDER BY key DESC LIMIT 1",
        (parent.pre, parent.key, run_base(run_id) + parent.last),
    ).fetchone()
    return NodeRow(*row) if row else None


def notable_children(conn: sqlite3.Connection, run_id: int, parent: NodeRow,
                     also: str) -> Iterator[NodeRow]:
    """The notable children of ``parent`` that meet ``also``, in order (see next_notable_child)."""
    child = next_notable_child(conn, run_id, parent, parent.pre + 1, also)
    while child is not None:
        yield child
        child = next_notable_child(conn, run_id, parent, child.last + 1, also)


def child_before(conn: sqlite3.Connection, run_id: int, parent: NodeRow, key: int) -> NodeRow:
    """The child of ``parent`` just before ``key`` (a child's key, or the one past the
    parent's subtree): a backward seek through one sibling's subtree."""
    row = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE key < ? AND key > ? AND parent_pre = ?"
        " ORDER BY key DESC LIMIT 1", (key, parent.key, parent.pre),
    ).fetchone()
    if row is None:
        raise ResultError(NODE_NOT_FOUND, f"Run {run_id}: no child of {parent.node_id} before {key}.")
    return NodeRow(*row)


def with_failure_text(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> NodeRow:
    """``node``, a failed keyword or control structure without a status message given the
    last failure logged below it. Before RF 7 output.xml (and RF 7's ``--legacyoutput``, and
    RF 6's listener) gave keywords no status text: a failure is only the FAIL message the
    failing library keyword logged, where log.html shows it, so a tree, a step failing beside
    the path or a handled failure said nothing of what failed. RF's model (and the store)
    keeps the text empty; only the answer reads it from the message."""
    if node.message or node.status != "FAIL" or node.type in ("TEST", "SUITE"):
        return node
    base = run_base(run_id)
    row = conn.execute(
        f"SELECT text, html FROM messages INDEXED BY messages_notable WHERE key >= ? AND key < ?"
        f" AND {NOTABLE_MESSAGES} AND level = 'FAIL' ORDER BY key DESC LIMIT 1",
        (base + node.msg_lo, base + node.msg_hi)).fetchone()
    if row is None:
        return _loop_limit_text(conn, run_id, node) if node.type == "WHILE" else node
    return node._replace(message=f"{HTML_PREFIX} {row[0]}" if row[1] else row[0])  # as RF 7 says it


# What RF says of a WHILE its limit stopped ("... the limit of 3 iterations.", "... of 200
# milliseconds." for `limit=0.2s`). RF 6's file gives that text only to the test (no message
# below the loop says it); RF 7's to the loop too.
_WHILE_LIMIT = "WHILE loop was aborted because it did not finish within the limit of "


def _loop_limit_text(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> NodeRow:
    """A WHILE with a limit and without a text (nothing below it failed: its limit did),
    given its test's when that says a WHILE's limit stopped it."""
    if node.owner_test is None or not node.field_values.get("limit") or node.failed_descendant_count:
        return node
    row = conn.execute("SELECT message FROM nodes WHERE key = ?",
                       (run_base(run_id) + node.owner_test,)).fetchone()
    said = row[0] if row else None
    return node._replace(message=said) if said and said.startswith(_WHILE_LIMIT) else node


def own_messages(conn: sqlite3.Connection, run_id: int, node: NodeRow,
                 min_level: int = 0) -> list[tuple[str, str, str, int]]:
    """(message id, level, text, html) of the node's own messages, in order, unmasked: show
    each with ``shown_message``."""
    from rf_log_listener.events import LEVELS

    base = run_base(run_id)
    rows = conn.execute(
        "SELECT msg_no, level, text, html FROM messages WHERE key >= ? AND key < ?"
        " AND node_pre = ? ORDER BY key", (base + node.msg_lo, base + node.msg_hi, node.pre),
    ).fetchall()
    return [(f"{node.node_id}-m{n}", level, text, html) for n, level, text, html in rows
            if LEVELS.get(level, 3) >= min_level]


def run_errors(conn: sqlite3.Connection, run_id: int, shaper: Shaper, limit: int,
               after_seq: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """The run's errors and warnings (those after ``after_seq``), each distinct one once (the
    first's id, and ``count`` when it repeats: 14 identical deprecation warnings are one
    item), in order; and how many distinct ones there are (the rest: search_messages with a
    level)."""
    rows = conn.execute(
        "SELECT min(seq), level, text, count(*) FROM errors WHERE run_id = ? AND seq > ?"
        " GROUP BY level, text ORDER BY min(seq)", (run_id, after_seq or 0)).fetchall()
    shown = []
    for seq, level, text, count in rows[:limit]:
        item = {"id": f"errors-m{seq}", "level": level, "text": shaper.message(text, None, 300)}
        if count > 1:
            item["count"] = count
        shown.append(item)
    return shown, len(rows)


def shown_message(message_id: str, level: str, text: str, html: int, node: Any,
                  shaper: Shaper, context: NodeContext, limit: int = 1200) -> dict[str, Any]:
    """A message as answers show it (models.LogMessage): masked and shortened; an HTML one
    as its visible text and its attachments, not its markup."""
    if not html:
        return {"id": message_id, "level": level, "text": shaper.message(text, node, limit)}
    from ..attachments import parse as parse_html  # HTML messages are few: loaded for them

    visible, found = parse_html(text)
    return {"id": message_id, "level": level, "text": shaper.message(visible, node, limit),
            "html": True, "attachments": shown_attachments(message_id, found, shaper, context)}


def shown_attachments(message_id: str, found: list[Reference], shaper: Shaper,
                      context: NodeContext) -> list[dict[str, Any]] | None:
    """The attachments of an HTML message (its references, ``attachments.parse``) as
    answers show them (models.Attachment), references masked."""
    from ..attachments import describe

    shown = []
    for index, reference in enumerate(found):
        item = describe(reference, context.output_dir)
        item.update(message_id=message_id, index=index, reference=shaper.mask(item["reference"]))
        shown.append(item)
    return shown or None


class NodeContext:
    """What one answer looks up about a run's nodes, each thing once: the node_id of nodes
    by pre-order number (parents and owning tests are few and repeat), and their locations
    in the suite files (``sources.Locator``, made when a node is shown)."""

    def __init__(self, conn: sqlite3.Connection, run_id: int) -> None:
        self.conn, self.run_id, self.base = conn, run_id, run_base(run_id)
        self.known: dict[int, str] = {}
        self._locator: Locator | None = None
        self._output_dir: str | bool | None = False

    @property
    def output_dir(self) -> str | None:
        """The run's output folder: attachments' files are there."""
        if self._output_dir is False:
            row = self.conn.execute("SELECT output_dir FROM runs WHERE run_id = ?",
                                    (self.run_id,)).fetchone()
            self._output_dir = row[0] if row and row[0] else None
        return self._output_dir  # type: ignore[return-value]

    @property
    def locator(self) -> Locator:
        if self._locator is None:
            from ..sources import Locator  # here: answers that show no node never need it

            self._locator = Locator(self.conn, self.run_id)
        return self._locator

    def __call__(self, pre: int | None) -> str | None:
        if pre is None:
            return None
        node_id = self.known.get(pre)
        if node_id is None:
            row = self.conn.execute("SELECT node_id FROM nodes WHERE key = ?",
                                    (self.base + pre,)).fetchone()
            node_id = self.known[pre] = row[0] if row else None
        return node_id

    def seen(self, node: NodeRow) -> NodeRow:
        self.known[node.pre] = node.node_id
        return node


def node_item(node: NodeRow, shaper: Shaper, ids: NodeContext, *, arg_limit: int = 200,
              message_limit: int | None = 500) -> dict[str, Any]:
    """A node as every answer shows it (models.Node): the roadmap's common fields, then its
    non-empty type-specific ones, every text masked. ``message_limit`` None: its status
    message is said elsewhere in the answer, so it is left out (and never cut)."""
    ids.seen(node)  # a test is its own owner_test
    node = with_failure_text(ids.conn, ids.run_id, node)
    item: dict[str, Any] = {
        "node_id": node.node_id, "parent_id": ids(node.parent_pre),
        "owner_test_id": ids(node.owner_test), "sequence": node.pre, "type": node.type,
        "keyword_type": node.type, "name": node.name or "", "status": node.status,
        "elapsed_ms": round(node.elapsed * 1000) if node.elapsed is not None else None,
        "libname": node.owner, "child_count": node.child_count,
        "failed_descendant_count": node.failed_descendant_count,
        "max_descendant_level": LEVEL_NAMES.get(node.max_descendant_level),
        "has_children": node.last > node.pre,
    }
    if node.message and message_limit is not None:
        item["message"] = shaper.status(node.message, message_limit)
    if node.message_count:
        item["message_count"] = node.message_count
    if node.args:
        item["args"] = shown_args(node, shaper, arg_limit)
    if node.assign:
        item["assign"] = shown_assign(node, shaper)
    item.update(shown_fields(node, shaper))
    location = ids.locator.locate(node)
    item.update(source=location.source, lineno=location.lineno, source_origin=location.origin,
                definition_source=location.definition_source,
                definition_lineno=location.definition_lineno)
    return item


def shown_args(node: NodeRow, shaper: Shaper, limit: int) -> list[str]:
    """The node's arguments as a response shows them: masked, each shortened to ``limit``."""
    return shaper.args(node.name, json.loads(node.args), limit, node.owner) if node.args else []


def shown_assign(node: Any, shaper: Shaper) -> Any:
    """Assigned variable names (keywords, FOR), or an ITERATION's loop values, masked.
    ``node``: any row with an ``assign`` JSON column (a NodeRow, search's lighter rows)."""
    return shaper.counted(shaper.redactor.assign(json.loads(node.assign))) if node.assign else None


def shown_fields(node: NodeRow, shaper: Shaper) -> dict[str, Any]:
    """The node's non-empty type-specific fields, every value masked: a VAR's or a FOR's
    values by the name they are assigned to, texts by what they say."""
    values = node.field_values
    shown: dict[str, Any] = {}
    for key, value in values.items():
        if value in (None, "", [], {}) or key.startswith("_"):  # _: the store's own notes
            continue
        if key == "value" and isinstance(value, list):
            shown[key] = shaper.counted(shaper.redactor.var_values(node.name, [str(v) for v in value]))
        elif key == "values" and isinstance(value, list) and node.type == "FOR":
            shown[key] = shaper.counted(shaper.redactor.for_values(
                json.loads(node.assign or "null"), values.get("flavor"),
                [str(v) for v in value]))
        elif isinstance(value, str):
            shown[key] = shaper.mask(value)
        elif isinstance(value, list):
            shown[key] = shaper.args(None, [str(v) for v in value], 10_000)
        elif isinstance(value, dict):
            shown[key] = shaper.counted(shaper.redactor.assign(value))
        else:
            shown[key] = value
    return shown
