"""Every node as answers show it (``views.common.node_item``, the one shape of tree,
failure_path, step_window and search nodes) carries the roadmap's fields with RF's values:
for each fixture (RF 4.1 to 7.5, XML and JSON), each suite's, test's and keyword's name,
status, libname, doc, tags, timeout, metadata, source and lineno equal what RF's own
``ExecutionResult`` says, where the input has them; parent_id, owner_test_id and sequence
agree with the tree."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import fixture_files
from oracle import dump_execution_result

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store, run_base
from rf_log_mcp.models import COMMON_NODE_FIELDS, Node
from rf_log_mcp.shaping import Shaper
from rf_log_mcp.views.common import NODE_COLUMNS, NodeContext, NodeRow, node_item

# canonical key (oracle) -> node field shown
_SHOWN = {"name": "name", "owner": "libname", "doc": "doc", "tags": "tags", "timeout": "timeout",
          "metadata": "metadata", "lineno": "lineno", "source": "source"}


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_shown_nodes_carry_rf_values(path: Path, tmp_path: Path) -> None:
    conn = open_store(tmp_path / "store.sqlite3")
    run_id = import_result(conn, path, stable_window=0).run_id
    expected = {node["id"]: node for node in dump_execution_result(str(path))["nodes"]
                if node["type"] in ("SUITE", "TEST", "KEYWORD", "SETUP", "TEARDOWN")}
    context = NodeContext(conn, run_id)
    root = context.locator.root_dir
    shown: dict[str, dict[str, Any]] = {}
    parents: dict[int, str] = {}
    for row in conn.execute(f"SELECT {NODE_COLUMNS} FROM nodes WHERE key >= ? AND key < ?"
                            " ORDER BY key", (run_base(run_id), run_base(run_id + 1))):
        node = NodeRow(*row)
        parents[node.pre] = node.node_id
        item = Node.model_validate(node_item(node, Shaper(), context)).model_dump(exclude_none=True)
        assert set(COMMON_NODE_FIELDS) - {"parent_id", "owner_test_id", "elapsed_ms", "libname",
                                          "max_descendant_level"} <= set(item)
        assert item["sequence"] == node.pre
        assert item.get("parent_id") == (parents[node.parent_pre] if node.parent_pre is not None
                                         else None)
        if node.owner_test is not None:
            assert item["owner_test_id"] == parents[node.owner_test]
        shown[node.node_id] = item
    assert expected, path
    for node_id, want in expected.items():
        got = shown[node_id]
        assert got["type"] == want["type"] and got["status"] == want["status"], node_id
        for key, field in _SHOWN.items():
            if key not in want:
                continue
            value = got.get(field)
            if key == "source" and value is not None and root and not os.path.isabs(value):
                value = os.path.normpath(os.path.join(root, value))  # shown relative to the root
            assert value == want[key], (node_id, key, value, want[key])
        if want["type"] == "TEST" and "lineno" in want:
            assert got["source_origin"] == "suite" or "source" not in got
    json.dumps(shown)  # plain data, as it goes out
