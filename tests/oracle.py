"""Canonical dumps for the central invariant (DESIGN.md): the store vs RF's own model.

``dump_store`` reads a run back from SQLite; ``dump_execution_result`` walks
``robot.api.ExecutionResult`` of the same file, independently of our parser. Both produce
the same shape: one dict per node in pre-order (id, parent, type, name, owner, status,
message, args, assign and type-specific fields, empty values dropped), then one per message
and one per run error. Times and origin differ by nature and are left out.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from rf_log_listener.store import open_store, run_base

# ExecutionResult attribute -> canonical key, per normalized type.
_KEYWORD = ("name", "owner", "source_name", "args", "assign", "doc", "tags", "timeout")
_ATTRS: dict[str, tuple[str, ...]] = {
    "SUITE": ("name", "source", "doc", "metadata"),
    "TEST": ("name", "lineno", "doc", "tags", "timeout", "metadata"),
    "KEYWORD": _KEYWORD, "SETUP": _KEYWORD, "TEARDOWN": _KEYWORD,
    "FOR": ("assign", "flavor", "values", "start", "mode", "fill"),
    "ITERATION": ("assign",),
    "WHILE": ("condition", "limit", "on_limit", "on_limit_message"),
    "IF/ELSE ROOT": (), "TRY/EXCEPT ROOT": (),
    "IF": ("condition",), "ELSE IF": ("condition",), "ELSE": (),
    "TRY": (), "EXCEPT": ("patterns", "pattern_type", "assign"), "FINALLY": (),
    "VAR": ("name", "value", "scope", "separator"),
    "RETURN": ("values",), "ERROR": ("values",), "BREAK": (), "CONTINUE": (),
    "GROUP": ("name",),
}


def _clean(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)


def _node_entry(node_id: str, parent: str | None, ntype: str, status: str, message: str,
                attrs: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": node_id, "parent": parent, "type": ntype, "status": status}
    if message:
        entry["message"] = message
    for key, value in attrs.items():
        if value not in (None, "", [], (), {}):
            entry[key] = _clean(value)
    return entry


def dump_store(conn: sqlite3.Connection, run_id: int) -> dict[str, list[dict[str, Any]]]:
    base = run_base(run_id)
    ids: dict[int, str] = {}
    nodes = []
    for (pre, parent_pre, node_id, ntype, name, owner, status, message, args, assign,
         fields) in conn.execute(
        "SELECT pre, parent_pre, node_id, type, name, owner, status, message, args, assign,"
        " fields FROM nodes WHERE key >= ? AND key < ? ORDER BY key",
        (base, run_base(run_id + 1)),
    ):
        ids[pre] = node_id
        attrs: dict[str, Any] = json.loads(fields) if fields else {}
        if ntype not in ("IF/ELSE ROOT", "TRY/EXCEPT ROOT", "FOR", "ITERATION", "WHILE",
                         "BREAK", "CONTINUE", "RETURN", "ERROR", "IF", "ELSE IF", "ELSE",
                         "TRY", "EXCEPT", "FINALLY"):
            attrs["name"] = name
        attrs["owner"] = owner
        attrs["args"] = json.loads(args) if args else None
        attrs["assign"] = json.loads(assign) if assign else None
        wanted = _ATTRS[ntype]
        attrs = {k: v for k, v in attrs.items() if k in wanted}
        nodes.append(_node_entry(
            node_id, ids.get(parent_pre) if parent_pre is not None else None, ntype, status,
            message or "", attrs,
        ))
    messages = [
        {"id": f"{ids[node_pre]}-m{msg_no}", "level": level, "html": bool(html), "text": text}
        for node_pre, msg_no, level, html, text in conn.execute(
            "SELECT node_pre, msg_no, level, html, text FROM messages"
            " WHERE key >= ? AND key < ? ORDER BY key", (base, run_base(run_id + 1)),
        )
    ]
    errors = [
        {"id": f"errors-m{seq}", "level": level, "html": bool(html), "text": text}
        for seq, level, html, text in conn.execute(
            "SELECT seq, level, html, text FROM errors WHERE run_id = ? ORDER BY seq", (run_id,)
        )
    ]
    return _canonical(nodes, messages, errors)


def dump_import(store: Any, source: Any, **options: Any) -> dict[str, list[dict[str, Any]]]:
    """``source`` imported into the store ``store`` names (a new one), as ``dump_store``
    gives it; ``options``: ``import_result``'s."""
    from rf_log_listener.importers import import_result

    conn = open_store(store)
    try:
        return dump_store(conn, import_result(conn, source, stable_window=0, **options).run_id)
    finally:
        conn.close()


def _canonical(nodes: list, messages: list, errors: list) -> dict[str, list[dict[str, Any]]]:
    """Messages ordered by (owning node in pre-order, message number).

    Execution order is not comparable: RF's model keeps a keyword's teardown apart from its
    body, while a message may be logged after the teardown ran (the assignment of a user
    keyword's return value), so the store's execution order is finer than the model's.
    """
    position = {node["id"]: index for index, node in enumerate(nodes)}

    def order(message: dict[str, Any]) -> tuple[int, int]:
        parent, number = message["id"].rsplit("-m", 1)
        return position.get(parent, -1), int(number)

    return {"nodes": nodes, "messages": sorted(messages, key=order), "errors": errors}


def dump_execution_result(path: str) -> dict[str, list[dict[str, Any]]]:
    from robot.api import ExecutionResult

    result = ExecutionResult(path)
    nodes: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    _Walk(nodes, messages).suite(result.suite, None)
    errors = [
        {"id": f"errors-m{i}", "level": m.level, "html": bool(m.html), "text": m.message}
        for i, m in enumerate(result.errors.messages, start=1)
    ]
    return _canonical(nodes, messages, errors)


def _attrs(item: Any, ntype: str) -> dict[str, Any]:
    attrs = {}
    for key in _ATTRS[ntype]:
        value = getattr(item, key, None)
        if key == "metadata" and value is not None:
            value = dict(value)
        elif key == "tags" and value is not None:
            value = list(value)
        attrs[key] = value
    return attrs


class _Walk:
    """Walks RF's model, taking every id from RF's own algorithm.

    RF's ``BodyItem.id`` / ``Message.id`` properties list the parent's whole body for every
    item they number (quadratic in a loop of a thousand iterations: seconds per fixture).
    Here the same lists, built with the same calls (``BodyItem._get_id``: setup, the body
    flattened without messages, teardown; ``Message.id``: the body's messages), are made once
    per parent; RF's own property is still asked for the last item of every 25th parent (and
    the first), so a difference in the algorithm cannot go unnoticed.
    """

    def __init__(self, nodes: list, messages: list) -> None:
        self.nodes, self.messages = nodes, messages
        self._steps: dict[int, tuple[dict[int, int], str | None]] = {}
        self._messages: dict[int, dict[int, int]] = {}
        self._numbered: dict[str, int] = {}  # the last -kN given under each id
        self._roots_at: dict[str, tuple[int, int]] = {}  # each id's last root's N, repeats

    def step_id(self, item: Any) -> str | None:
        from robot.model import IfBranch, Keyword, TryBranch

        if isinstance(item, Keyword) and not item:
            return None
        parent = item.parent
        if isinstance(item, (IfBranch, TryBranch)) and parent.parent:
            parent = parent.parent  # branches are numbered in the root's parent
        if not parent:
            return "k1"
        known = self._steps.get(id(parent))
        if known is None:
            steps = [*([parent.setup] if getattr(parent, "has_setup", False) else ()),
                     *(parent.body.flatten(messages=False) if hasattr(parent, "body") else ()),
                     *([parent.teardown] if getattr(parent, "has_teardown", False) else ())]
            known = {id(step): index for index, step in enumerate(steps)}, parent.id
            self._steps[id(parent)] = known
            if steps and len(self._steps) % 25 == 1:  # RF's own property agrees (sampled:
                assert self.step_id(steps[-1]) == steps[-1].id  # it costs O(depth x body))
        indexes, parent_id = known
        number = indexes.get(id(item), len(indexes)) + 1
        return f"{parent_id}-k{number}" if parent_id else f"k{number}"

    def root_id(self, root: Any, parent: str) -> str:
        """RF gives roots no id; the store names them after the number their first branch
        gets (<base>-rN). A root without branches (their content removed by rebot) takes
        no number, so a next root at the same place is <base>-rN.2, .3, ..."""
        number = int(self.step_id(root.body[0]).rsplit("-k", 1)[1]) if root.body else \
            self._numbered.get(parent, 0) + 1
        last, repeats = self._roots_at.get(parent, (0, 1))
        repeats = repeats + 1 if last == number else 1
        self._roots_at[parent] = (number, repeats)
        return f"{parent}-r{number}" + (f".{repeats}" if repeats > 1 else "")

    def message_id(self, message: Any, parent_id: str) -> str:
        parent = message.parent
        indexes = self._messages.get(id(parent))
        if indexes is None:
            listed = parent.messages if hasattr(parent, "messages") else parent.body.filter(messages=True)
            indexes = self._messages[id(parent)] = {id(m): i for i, m in enumerate(listed)}
            if listed and len(self._messages) % 25 == 1:
                last = listed[-1]
                assert f"{parent_id}-m{indexes[id(last)] + 1}" == last.id  # RF's own property
        return f"{parent_id}-m{indexes[id(message)] + 1}"

    def suite(self, suite: Any, parent: str | None) -> None:
        nodes = self.nodes
        nodes.append(_node_entry(suite.id, parent, "SUITE", suite.status, suite.message,
                                 _attrs(suite, "SUITE")))
        if suite.has_setup:
            self.item(suite.setup, suite.id)
        for child in suite.suites:
            self.suite(child, suite.id)
        for test in suite.tests:
            nodes.append(_node_entry(test.id, suite.id, "TEST", test.status, test.message,
                                     _attrs(test, "TEST")))
            self.body(test, test.id)
        if suite.has_teardown:
            self.item(suite.teardown, suite.id)

    def body(self, owner: Any, owner_id: str) -> None:
        """Setup, body and teardown of anything that has them, in RF's id order."""
        if getattr(owner, "has_setup", False):
            self.item(owner.setup, owner_id)
        for item in owner.body:
            self.item(item, owner_id)
        if getattr(owner, "has_teardown", False):
            self.item(owner.teardown, owner_id)

    def item(self, item: Any, parent: str) -> None:
        ntype = item.type
        if ntype == "MESSAGE":
            self.messages.append({"id": self.message_id(item, parent), "level": item.level,
                                  "html": bool(item.html), "text": item.message})
            return
        if ntype in ("IF/ELSE ROOT", "TRY/EXCEPT ROOT"):
            node_id = self.root_id(item, parent)
            self.nodes.append(_node_entry(node_id, parent, ntype, item.status, item.message,
                                          _attrs(item, ntype)))
            for branch in item.body:
                self.item(branch, node_id)
            return
        node_id = self.step_id(item)
        if node_id and "-k" in node_id:  # a branch is numbered under its root's parent
            numbered_under, number = node_id.rsplit("-k", 1)
            self._numbered[numbered_under] = int(number)
        self.nodes.append(_node_entry(node_id, parent, ntype, item.status,
                                      getattr(item, "message", ""), _attrs(item, ntype)))
        self.body(item, node_id)


def as_postgresql_keeps_it(dump: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """``dump`` as the PostgreSQL store keeps it: PostgreSQL's text cannot hold the NUL
    character, so in a text column (a node's name, owner and status message, a message's or
    an error's text) each is U+2400 (rf_log_listener.postgres.NUL_SIGN); values held as JSON
    (arguments, assignments, the other fields) keep it, escaped."""
    def sign(value: Any) -> Any:
        return value.replace("\x00", "\u2400") if isinstance(value, str) else value

    text_columns = {"nodes": ("name", "owner", "message"), "messages": ("text",),
                    "errors": ("text",)}
    return {part: [{key: sign(value) if key in text_columns[part] else value
                    for key, value in entry.items()} for entry in entries]
            for part, entries in dump.items()}
