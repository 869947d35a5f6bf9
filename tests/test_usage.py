"""The usage record: every MCP call and CLI view recorded as shapes only (never a query, a
selector's name or content), imports with their cost and outcome, the report that answers
the roadmap's v0.5 questions, the off switch, retention and prune. Real robot runs, the
real MCP server over stdio, the real CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, race_for_the_write_lock
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener.store import open_store

SUITE = Path(__file__).parent / "data" / "v05" / "triage.robot"
QUERY = "status of job 77f3a"


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("usage")
    done = robot("--outputdir", str(tmp), str(SUITE), cwd=tmp)
    assert done.returncode == 3, done.stderr
    return tmp / "output.xml"


def rows(db: Path, table: str = "usage_calls") -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    cursor = conn.execute(f"SELECT * FROM {table} ORDER BY id")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


@pytest.mark.anyio
async def test_mcp_calls_are_recorded_as_shapes_of_one_session(output: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    async with server(tmp_path, env={"RF_LOG_MCP_ALLOWED_ROOTS": str(output.parent)}) as client:
        run_id = (await call(client, "parse_result", path=str(output)))["run_id"]
        summary = await call(client, "get_view", run_id=run_id, view="summary")
        first = await call(client, "get_view", run_id=run_id, view="tree", selector="s1",
                           page_size=1)
        second = await call(client, "get_view", run_id=run_id, view="tree", selector="s1",
                            page_size=1, cursor=first["next_cursor"])
        await call(client, "get_view", run_id=run_id, view="tree", selector="s1", page_size=1,
                   cursor=second["next_cursor"])
        loop = await call(client, "get_view", run_id=run_id, view="tree", selector="s1-t2-k1")
        hits = await call(client, "search_messages", run_id=run_id, query=QUERY, selector="s1-t1")
        missing = await call(client, "get_view", run_id=run_id, view="failure_path",
                             selector="s1-t9")
        assert not missing["ok"]
    recorded = rows(db)
    assert [(r["tool"], r["view"], r["page"]) for r in recorded] == [
        ("parse_result", None, 1), ("get_view", "summary", 1), ("get_view", "tree", 1),
        ("get_view", "tree", 2), ("get_view", "tree", 3), ("get_view", "tree", 1),
        ("search_messages", None, 1), ("get_view", "failure_path", 1)]
    assert {r["source"] for r in recorded} == {"mcp"} and len({r["session"] for r in recorded}) == 1
    tree = recorded[2]
    assert (tree["selector_kind"], tree["selector_depth"], tree["page_size"], tree["projection"]) == (
        "node", 1, 1, "all")
    assert tree["tokens"] == first["estimated_tokens"] and tree["page_truncated"] == 1
    assert tree["target"] == recorded[3]["target"] == recorded[4]["target"] != recorded[5]["target"]
    assert recorded[5]["selector_depth"] == 3 and recorded[5]["tokens"] == loop["estimated_tokens"]
    assert recorded[1]["tokens"] == summary["estimated_tokens"]
    assert recorded[-1]["error"] == "NODE_NOT_FOUND"
    run = sqlite3.connect(db).execute("SELECT node_count, message_count, source_size FROM runs"
                                      ).fetchone()
    assert (tree["run_nodes"], tree["run_messages"], tree["run_bytes"]) == run
    assert run[2] == output.stat().st_size
    # what the answers were made of: a loop's folded iterations, a failed iteration reached
    shape = json.loads(recorded[5]["shape"])
    assert shape["loop"] and shape["folded_groups"] == 1 and shape["folded_iterations"] == 87
    assert shape["failed_iterations"] == 1 and shape["items"] == 2
    assert json.loads(recorded[2]["shape"])["items"] == 1
    search = json.loads(recorded[6]["shape"])
    assert search["scoped"] and search["hits"] == 1 and search["repeats_folded"] == 59
    assert search["volume"]["message INFO"] > 0 and hits["hits"][0]["count"] == 60
    # shapes only: no query, selector, path or logged text anywhere in the record
    everything = json.dumps(rows(db)) + json.dumps(rows(db, "usage_imports"))
    for text in (QUERY, "s1-t2-k1", "s1-t9", "77f3a", str(output), "RUNNING", "Import Row"):
        assert text not in everything, text
    (imported,) = rows(db, "usage_imports")
    assert (imported["origin"], imported["outcome"], imported["format"]) == ("import", "complete", "xml")
    assert imported["input_bytes"] == output.stat().st_size and imported["nodes"] == run[0]
    assert imported["parse_s"] > 0 and imported["peak_rss_kb"] > 10_000 and imported["store_growth"] > 0


def test_cli_views_are_recorded_and_the_report_answers_each_question(output: Path,
                                                                   tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    env = {"RF_LOG_MCP_SESSION": "agent-1"}
    assert cli("import", str(output), db=db).returncode == 0
    cut = cli("search", "latest", "page source", "--selector", "s1-t3", "--json", db=db, env=env)
    assert json.loads(cut.stdout)["message_truncated"]  # a long message, shown around the match
    for args in (["message", "latest", "s1-t3-k3-m1"],  # the same target read whole
                 ["search", "latest", "row", "--selector", "s1-t2", "--group-by", "iteration"],
                 ["search", "latest", "RUNNING"],
                 ["window", "latest", "s1-t2-k1-k88-k1", "--page-size", "40"],
                 ["tree", "latest", "s1-t2", "--depth", "3"]):
        done = cli(*args, db=db, env=env)
        assert done.returncode == 0, done.stderr
    other = cli("summary", "latest", db=db, env={"RF_LOG_MCP_SESSION": "agent-2"})
    assert other.returncode == 0
    recorded = rows(db)
    assert {r["source"] for r in recorded} == {"cli"}
    assert len({r["session"] for r in recorded}) == 2
    report = json.loads(cli("usage", "--json", db=db).stdout)
    # 8: the message command reads its 216,000 characters in two parts, each a page of the view
    assert report["calls"] == len(recorded) == 8 and report["sessions"] == 2
    assert [r["page"] for r in recorded if r["view"] == "message"] == [1, 2]
    truncation = report["truncation"]
    assert truncation["cut"] >= 1 and truncation["followed_on_same_target"] == 1
    assert report["search"]["scoped"]["calls"] == 2 and report["search"]["run_wide"]["calls"] == 1
    assert report["search"]["grouped"] == 1 and report["search"]["repeats_folded"] == 59
    assert report["step_window"] == {"calls": 1, "wide": 1, "steps": report["step_window"]["steps"]}
    assert report["tree"]["calls"] == 0 and report["tree"]["snapshot_calls"] == 1
    assert report["folding"]["calls_reaching_failed_iteration"] >= 1
    assert report["imports"]["outcomes"] == {"complete": 1}
    assert report["imports"]["input_mb"]["max"] == round(output.stat().st_size / 1e6, 2)
    assert sum(report["volume"].values()) == pytest.approx(1, abs=0.01)
    assert {t["tool"] for t in report["tools"]} >= {"get_view:tree_snapshot", "get_view:message",
                                                   "search_messages", "get_view:summary"}
    text = cli("usage", db=db)
    assert text.returncode == 0 and "get_view:tree_snapshot" in text.stdout and "baseline rate" in text.stdout
    recent = json.loads(cli("usage", "--since", "1h", "--json", db=db).stdout)
    assert recent["calls"] == 8
    later = json.loads(cli("usage", "--since", "2099-01-01", "--json", db=db).stdout)
    assert later["calls"] == 0
    bad = cli("usage", "--since", "yesterday", db=db)
    assert bad.returncode == 2 and "INVALID_ARGUMENT" in bad.stderr


def test_recording_can_be_turned_off_is_pruned_and_keeps_its_retention(output: Path,
                                                                      tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    off = {"RF_LOG_MCP_USAGE": "off"}
    assert cli("import", str(output), db=db, env=off).returncode == 0
    assert cli("summary", "latest", db=db, env=off).returncode == 0
    assert rows(db) == [] and rows(db, "usage_imports") == []
    assert cli("summary", "latest", db=db).returncode == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE usage_calls SET at = ?", (time.time() - 100 * 86400,))
    conn.commit()
    assert cli("summary", "latest", db=db).returncode == 0  # the 100-day-old record goes
    assert len(rows(db)) == 1
    assert cli("summary", "latest", db=db, env={"RF_LOG_MCP_USAGE_DAYS": "0"}).returncode == 0
    assert len(rows(db)) == 0  # a retention of 0 days keeps nothing, not even the new one
    assert cli("summary", "latest", db=db).returncode == 0
    dry = json.loads(cli("prune", "--usage", "--dry-run", "--json", db=db).stdout)
    assert dry["usage_records"] == 1 and len(rows(db)) == 1
    pruned = json.loads(cli("prune", "--usage", "--json", db=db).stdout)
    assert pruned["usage_records"] == 1 and rows(db) == [] and rows(db, "usage_imports") == []


def test_imports_record_how_they_ended_cut_refused_and_killed(output: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    cut = tmp_path / "cut.xml"
    cut.write_bytes(output.read_bytes()[:20_000])
    refused = cli("import", str(cut), db=db)
    assert refused.returncode == 1 and "INCOMPLETE_RESULT" in refused.stderr
    assert cli("import", str(cut), "--allow-incomplete", db=db).returncode == 0
    assert cli("import", str(output), db=db).returncode == 0
    assert cli("import", str(output), db=db).returncode == 0  # the same bytes: found again
    # an import process killed half-way leaves an 'importing' run the next import reaps
    big = tmp_path / "big.xml"
    subprocess.run([sys.executable, str(Path(__file__).parents[1] / "benchmarks" / "gen_output.py"),
                    "--size-mb", "40", "-o", str(big)], check=True, capture_output=True)
    importer = subprocess.Popen([sys.executable, "-m", "rf_log_mcp", "import", str(big)],
                                env={**os.environ, "RF_LOG_MCP_DB": str(db)},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    conn = open_store(db)
    while not conn.execute("SELECT 1 FROM runs WHERE status = 'importing'").fetchone():
        assert time.monotonic() < deadline and importer.poll() is None
        time.sleep(0.05)
    importer.kill()
    importer.wait()
    assert cli("import", str(output), db=db).returncode == 0
    outcomes = [(r["origin"], r["outcome"], r["format"]) for r in rows(db, "usage_imports")]
    assert outcomes == [("import", "INCOMPLETE_RESULT", "xml"), ("import", "interrupted", "xml"),
                        ("import", "complete", "xml"), ("import", "deduplicated", "xml"),
                        ("import", "reaped", "xml"), ("import", "deduplicated", "xml")]
    reaped = rows(db, "usage_imports")[4]
    assert reaped["input_bytes"] == big.stat().st_size
    report = json.loads(cli("usage", "--json", db=db).stdout)["imports"]
    assert report["recoveries"] == {"reaped": 1, "imported_interrupted": 1}


def test_a_killed_robots_run_found_by_two_readers_at_once_is_marked_and_recorded_once(
        tmp_path: Path) -> None:
    """Every view looks for live runs whose robot died (store.mark_dead_live_runs); two
    readers that find the same one at once both see it running, and wait in turn for the
    store's write lock: the first marks it interrupted, indexes its tests and records the
    recovery; the second finds it marked and does none of it (the usage report counted two
    recoveries, and the run's tests were indexed twice)."""
    from robot_runs import wait_for_row

    from rf_log_listener.store import mark_dead_live_runs

    suite = tmp_path / "killed.robot"
    suite.write_text("*** Test Cases ***\nFirst\n    Log    done\nSecond\n    Sleep    30s\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", str(suite), cwd=tmp_path, wait=False)
    wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Sleep'")
    process.kill()
    process.wait()
    marked = race_for_the_write_lock(db, lambda _: None, mark_dead_live_runs, mark_dead_live_runs)
    assert sorted(marked) == [[], [1]]
    conn = open_store(db)
    assert conn.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
    assert [(r["origin"], r["outcome"]) for r in rows(db, "usage_imports")] == [
        ("listener", "marked_interrupted")]
    assert conn.execute("SELECT t.longname, r.status FROM run_tests r JOIN test_names t"
                        " USING (name_id) ORDER BY r.pre").fetchall() == [
        ("Killed.First", "PASS"), ("Killed.Second", "NOT FINISHED")]
    report = json.loads(cli("usage", "--json", db=db).stdout)["imports"]
    assert report["recoveries"] == {"marked_interrupted": 1}
