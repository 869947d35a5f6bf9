"""The central invariant for imports: store dump == RF's own ExecutionResult walk."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS, fixture_files
from oracle import dump_execution_result, dump_store

from rf_log_listener.importers import import_result


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_store_equals_execution_result(any_store: sqlite3.Connection, path: Path) -> None:
    conn = any_store
    outcome = import_result(conn, path, stable_window=0)
    assert outcome.status == "complete"
    assert outcome.source_format == path.suffix[1:]
    ours, rf = dump_store(conn, outcome.run_id), dump_execution_result(str(path))
    assert len(ours["nodes"]) > 3000 and len(ours["messages"]) > 1000 and len(ours["errors"]) == 3
    assert ours["nodes"] == rf["nodes"]
    assert ours["messages"] == rf["messages"]
    assert ours["errors"] == rf["errors"]
    # a run that ran, whose file does not say so: not read as robot --dryrun's (rows.ran_dry)
    assert conn.execute("SELECT dry_run FROM runs WHERE run_id = ?",
                        (outcome.run_id,)).fetchone() == (0,)


@pytest.mark.parametrize("version", ["7.2.2", "7.5"])
def test_xml_and_json_of_one_run_are_equal(any_store: sqlite3.Connection, version: str) -> None:
    conn = any_store
    folder = FIXTURE_RESULTS / version
    from_xml = import_result(conn, folder / "output.xml", stable_window=0)
    from_json = import_result(conn, folder / "rebot.json", stable_window=0)
    assert from_xml.run_id != from_json.run_id
    assert dump_store(conn, from_xml.run_id) == dump_store(conn, from_json.run_id)


def _nodes(conn: sqlite3.Connection, run_id: int) -> dict[str, dict]:
    cur = conn.execute("SELECT * FROM nodes WHERE run_id = ?", (run_id,))
    names = [d[0] for d in cur.description]
    return {row[names.index("node_id")]: dict(zip(names, row, strict=True)) for row in cur}


def test_structure_columns_on_a_real_run(any_store: sqlite3.Connection) -> None:
    conn = any_store
    run_id = import_result(conn, FIXTURE_RESULTS / "7.5" / "output.json", stable_window=0).run_id
    nodes = _nodes(conn, run_id)
    loop_test = next(n for n in nodes.values() if n["name"] == "Long Loop With One Failing Iteration")
    test_id = loop_test["node_id"]
    loop = nodes[f"{test_id}-k1"]
    assert loop["type"] == "FOR" and loop["child_count"] == 1100
    failing = nodes[f"{test_id}-k1-k701"]
    assert failing["type"] == "ITERATION" and failing["status"] == "FAIL"
    assert failing["assign"] == '{"${i}":"700"}'
    # aggregates computed while streaming
    assert loop["failed_descendant_count"] == 3  # iteration, Run Keyword..., Should Not Be Equal
    assert loop_test["failed_descendant_count"] == 4
    assert loop["max_descendant_level"] == 6  # a FAIL message below
    # pre/last bound the subtree; depth and owner_test follow the tree
    assert loop["last"] - loop["pre"] == 1100 * 3
    assert failing["depth"] == loop["depth"] + 1
    assert failing["owner_test"] == loop_test["pre"]
    suite_setup = nodes["s1-k1"]
    assert suite_setup["type"] == "SETUP" and suite_setup["owner_test"] is None
    # IF/TRY roots get a synthetic id that cannot collide with RF's
    roots = [n for n in nodes.values() if n["type"] in ("IF/ELSE ROOT", "TRY/EXCEPT ROOT")]
    assert roots and all("-r" in n["node_id"] for n in roots)
    # type-specific fields only where non-empty
    assert all(n["fields"] is None for n in nodes.values() if n["type"] in ("BREAK", "CONTINUE"))
    var = next(n for n in nodes.values() if n["type"] == "VAR" and n["name"] == "${joined}")
    assert var["fields"] == '{"value":["x","y"],"separator":"-"}'
    kw = nodes["s1-s1-t1-k2"]
    assert kw["args"] == '["${GREETING}, world"]' and kw["assign"] == '["${value}"]'
    # CJK text is findable through the full-text index
    hits = conn.execute(
        "SELECT text FROM messages_fts WHERE text LIKE ? ORDER BY rowid", ("%登录超时%",)
    ).fetchall()
    assert hits == [("测试失败：登录超时，请检查网络连接",)]


def test_suite_teardown_failure_remarks_tests_like_rf(conn: sqlite3.Connection) -> None:
    run_id = import_result(conn, FIXTURE_RESULTS / "7.5" / "output.xml", stable_window=0).run_id
    nodes = _nodes(conn, run_id)
    suite = next(n for n in nodes.values() if n["name"] == "04 Teardown Failure")
    sid = suite["node_id"]
    passed_before = nodes[f"{sid}-s1-t1"]
    skipped_before = nodes[f"{sid}-s1-t2"]
    assert passed_before["status"] == "FAIL"
    assert passed_before["message"] == "Parent suite teardown failed:\nsub-suite teardown failed"
    assert skipped_before["status"] == "SKIP"
    assert skipped_before["message"].endswith("Also parent suite teardown failed:\nsub-suite teardown failed")
    assert nodes[f"{sid}-s1"]["status"] == "FAIL"
    assert nodes[f"{sid}-s1"]["failed_descendant_count"] == 1
    totals = conn.execute("SELECT total, passed, failed, skipped FROM runs WHERE run_id = ?",
                          (run_id,)).fetchone()
    assert totals == (25, 12, 11, 2)  # what robot's own <statistics> say


REBOT_OPTIONS = {  # what CI pipelines pass to rebot to keep logs small, and merges
    "remove-passed": ["--removekeywords", "passed"],
    "remove-for-while-wuks": ["--removekeywords", "for", "--removekeywords", "while",
                              "--removekeywords", "wuks"],
    "remove-all": ["--removekeywords", "all"],
    "remove-by-name-and-tag": ["--removekeywords", "name:BuiltIn.*", "--removekeywords", "tag:*"],
    "flatten": ["--flattenkeywords", "for", "--flattenkeywords", "while", "--flattenkeywords",
                "iteration", "--flattenkeywords", "name:*"],
    "merge": ["--merge"],
}


@pytest.mark.parametrize("suffix", ["xml", "json"])
@pytest.mark.parametrize("options", REBOT_OPTIONS, ids=str)
def test_rebots_removed_flattened_and_merged_keywords_import_as_rfs_model(
        conn: sqlite3.Connection, tmp_path: Path, options: str, suffix: str) -> None:
    """`--removekeywords passed` leaves IF/TRY roots without branches: two in a row at one
    place were both named <base>-rN, and the import failed on the store's unique node ids."""
    source = FIXTURE_RESULTS / "7.5" / "output.xml"
    output = tmp_path / f"rebot.{suffix}"
    inputs = [source, source] if options == "merge" else [source]
    done = subprocess.run([sys.executable, "-m", "robot.rebot", *REBOT_OPTIONS[options],
                           "--output", str(output), "--log", "NONE", "--report", "NONE", *map(str, inputs)],
                          capture_output=True, text=True, check=False)
    assert output.is_file(), done.stderr
    outcome = import_result(conn, output, stable_window=0)
    assert outcome.status == "complete"
    assert dump_store(conn, outcome.run_id) == dump_execution_result(str(output))
    if options == "remove-passed":  # the test "If Branches": two IFs whose branches are gone
        assert [row for row in conn.execute(
            "SELECT node_id, type, child_count FROM nodes WHERE run_id = ? AND node_id LIKE"
            " 's1-s2-t3-r%' ORDER BY key", (outcome.run_id,))] == [
            ("s1-s2-t3-r2", "IF/ELSE ROOT", 0), ("s1-s2-t3-r2.2", "IF/ELSE ROOT", 0)]
