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
from conftest import FIXTURE_RESULTS, cli, fixture_files
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


def test_failed_keywords_say_their_failure_whatever_rf_wrote_the_file(tmp_path: Path) -> None:
    """Before RF 7 (and with RF 7's --legacyoutput) output.xml gives keywords and control
    structures no status text: their failure is only the FAIL message the failing library
    keyword logged. Trees, the steps failing beside a path and handled failures said nothing
    of what failed; they say what RF 7's file says, read from that message (RF's model, and
    the store, keep the text empty). A WHILE its limit stopped, which no keyword logged,
    says its test's text, which says so (before: nothing)."""
    from rf_log_mcp import service

    conn = open_store(tmp_path / "store.sqlite3")
    runs = {version: import_result(conn, FIXTURE_RESULTS / version, stable_window=0).run_id
            for version in ("7.5/output.xml", "7.5/legacy.xml", "6.1.1/output.xml", "6.0.2/output.xml")}

    def failed_messages(run_id: int) -> dict[str, str | None]:
        found = conn.execute("SELECT node_id FROM nodes WHERE key >= ? AND key < ? AND status ="
                             " 'FAIL' AND type NOT IN ('TEST', 'SUITE') ORDER BY key",
                             (run_base(run_id), run_base(run_id + 1))).fetchall()
        return {node_id: service.get_view(conn, "tree", run_id=run_id, selector=node_id)
                .tree.node.get("message") for (node_id,) in found}

    rf7 = failed_messages(runs["7.5/output.xml"])
    assert len(rf7) == 23 and all(rf7.values())
    for version in ("7.5/legacy.xml", "6.1.1/output.xml", "6.0.2/output.xml"):
        assert conn.execute("SELECT count(*) FROM nodes WHERE key >= ? AND key < ? AND status ="
                            " 'FAIL' AND type NOT IN ('TEST', 'SUITE') AND message IS NULL",
                            (run_base(runs[version]), run_base(runs[version] + 1))).fetchone()[0] == 21
        older = failed_messages(runs[version])
        assert older == rf7, version
    # a step failing beside the path, in a continue-on-failure test (before: no message)
    path = service.get_view(conn, "failure_path", run_id=runs["6.0.2/output.xml"],
                            selector="s1-s1-t3").failure_path
    assert [(other.node_id, other.message) for step in path.path
            for other in getattr(step, "other_failures", None) or []] == [
        (other.node_id, other.message) for step in service.get_view(
            conn, "failure_path", run_id=runs["7.5/output.xml"], selector="s1-s1-t3").failure_path.path
        for other in getattr(step, "other_failures", None) or []] != []
    # the WHILE's limit, which no message below it says: its test's text
    printed = cli("failures", str(runs["6.0.2/output.xml"]), "s1-s5-t4",
                  db=tmp_path / "store.sqlite3").stdout
    assert printed.splitlines()[2:] == ["    WHILE s1-s5-t4-k1  [FAIL]  True  limit=3",
                                        "      → WHILE loop was aborted because it did not finish"
                                        " within the limit of 3 iterations. Use the 'limit' argument"
                                        " to increase or remove the limit if needed."], printed


def test_a_while_its_time_limit_stopped_says_so_in_a_legacy_file(tmp_path: Path) -> None:
    """``WHILE  True  limit=0.2s``: RF says "the limit of 200 milliseconds" (its own words for
    the limit), and an RF 6 style file (``--legacyoutput``) only on the test: the loop said
    nothing when its text was matched against the limit as written."""
    from robot_runs import robot

    from rf_log_mcp import service

    (tmp_path / "timed.robot").write_text(
        "*** Test Cases ***\nTimed\n    WHILE    True    limit=0.2s\n        Sleep    0.05s\n    END\n")
    assert robot("--legacyoutput", "--output", "out.xml", "timed.robot", cwd=tmp_path).returncode == 1
    conn = open_store(tmp_path / "store.sqlite3")
    run_id = import_result(conn, tmp_path / "out.xml", stable_window=0).run_id
    loop = service.get_view(conn, "tree", run_id=run_id, selector="s1-t1-k1").tree.node  # type: ignore[union-attr]
    assert loop.get("message", "").startswith(
        "WHILE loop was aborted because it did not finish within the limit of 200 milliseconds."), loop
