"""A rebot output of runs of the store is a copy (rf_log_listener/copies.py): the usual CI
day, a run and its ``--rerunfailed`` re-run captured live, then ``rebot --merge`` of their
output.xml files imported (an agent given the job's merged artifact), counted its tests
twice across runs: a test that failed and passed in the re-run read FAIL, PASS, PASS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import delete_run, open_store, prune_run
from rf_log_mcp import service

SUITE = """*** Test Cases ***
Stable
    Log    ok
Flaky
    ${second} =    Evaluate    __import__('os').path.exists('second')
    Should Be True    ${second}    first attempt fails
Broken
    Fail    always broken
"""


def _rebot(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "robot.rebot", "--log", "NONE", "--report", "NONE", *args],
                   cwd=cwd, capture_output=True, check=False, timeout=120)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run 1 (two failures) and its re-run of the failed tests, run 2 (Flaky passes), both
    captured live into one store; their merged output, and run 1's output re-written."""
    work = tmp_path_factory.mktemp("copies")
    (work / "s.robot").write_text(SUITE)
    db = work / "live.sqlite3"
    robot("--listener", f"rf_log_listener:db={db}", "--output", "a.xml", "s.robot", cwd=work)
    (work / "second").touch()
    robot("--listener", f"rf_log_listener:db={db}", "--rerunfailed", "a.xml", "--output", "b.xml",
          "s.robot", cwd=work)
    _rebot("--merge", "--output", "merged.xml", "a.xml", "b.xml", cwd=work)
    _rebot("--output", "a.json", "a.xml", cwd=work)
    _rebot("--name", "Combined", "--output", "combined.xml", "a.xml", "b.xml", cwd=work)
    return {"work": work, "db": db}


def _ok(answer: Any) -> Any:
    assert answer.ok, answer.error
    return answer


def test_a_merged_rerun_is_counted_once_across_runs(outputs: dict[str, Any]) -> None:
    conn = open_store(outputs["db"])
    merged = import_result(conn, outputs["work"] / "merged.xml", stable_window=0).run_id
    assert merged == 3
    assert conn.execute("SELECT run_id, copy_of FROM runs ORDER BY run_id").fetchall() == [
        (1, None), (2, None), (3, 1)]
    history = _ok(service.test_history(conn, "S.Flaky"))
    assert [(r["run_id"], r["status"]) for r in history["runs"]] == [(2, "PASS"), (1, "FAIL")]
    assert history["runs_total"] == 2 and history["flakiness"]["flips"] == 1
    stable = _ok(service.test_history(conn, "S.Stable"))
    assert [(r["run_id"], r["status"]) for r in stable["runs"]] == [(1, "PASS")]
    flaky = _ok(service.flaky_tests(conn))
    assert flaky["runs_in_window"] == 2
    assert [(t["test"], t["flips"], t["runs"]) for t in flaky["tests"]] == [("S.Flaky", 1, 2)]
    # its own answers are whole: the merged run's summary, and compare_runs of it with the
    # run before the runs it copies (none here), or with a base given
    summary = _ok(service.get_view(conn, "summary", run_id=merged))["summary"]
    assert (summary["totals"]["passed"], summary["totals"]["failed"]) == (2, 1)
    assert summary["copy_of"] == 1
    assert [(r.run_id, r.copy_of) for r in service.list_runs(conn).runs] == [
        (3, 1), (2, None), (1, None)]
    assert "copy of run 1" in cli("runs", db=outputs["db"]).stdout
    assert "a rebot output of runs of this store from run 1 on: left out across runs" in cli(
        "summary", "3", db=outputs["db"]).stdout
    refused = service.compare_runs(conn, str(merged))
    assert not refused.ok and refused.error.code == "NO_BASE_RUN"
    compared = _ok(service.compare_runs(conn, str(merged), base="1"))
    assert {c["test"]: c["change"] for c in compared["changes"]} == {
        "S.Flaky": "fixed", "S.Broken": "still_failing"}
    # Broken's failure: seen in runs 1 and 2, not a third time in the merged run
    later = robot("--listener", f"rf_log_listener:db={outputs['db']}", "--output", "NONE",
                  "s.robot", cwd=outputs["work"])
    assert later.returncode == 1
    summary = _ok(service.get_view(conn, "summary", run_id=4))["summary"]
    seen = {t["name"]: t["signature_seen"] for t in summary["failed_tests"]}
    assert seen["Broken"]["earlier_runs"] == 2 and seen["Broken"]["first_run_id"] == 1
    assert _ok(service.compare_runs(conn, "4"))["base"]["run"] == "2"


def test_a_copy_is_marked_in_whichever_order_the_runs_come(outputs: dict[str, Any],
                                                           any_store: Any) -> None:
    """Imported before the runs it copies, the merged output is marked when the last of
    them is published; a re-written output of a run is a copy of it; rebot's combination of
    the two runs under a new top suite is not a copy (its tests' names are new)."""
    work = outputs["work"]
    ids = {name: import_result(any_store, work / name, stable_window=0).run_id
           for name in ("merged.xml", "combined.xml", "a.xml")}
    marks = dict(any_store.execute("SELECT run_id, copy_of FROM runs").fetchall())
    assert marks[ids["merged.xml"]] is None  # run 2's re-run is not there yet
    ids["b.xml"] = import_result(any_store, work / "b.xml", stable_window=0).run_id
    ids["a.json"] = import_result(any_store, work / "a.json", stable_window=0).run_id
    marks = dict(any_store.execute("SELECT run_id, copy_of FROM runs").fetchall())
    assert {name: marks[run_id] for name, run_id in ids.items()} == {
        "merged.xml": ids["a.xml"], "combined.xml": None, "a.xml": None, "b.xml": None,
        "a.json": ids["a.xml"]}
    history = _ok(service.test_history(any_store, "S.Flaky"))
    assert [r["run_id"] for r in history["runs"]] == [ids["b.xml"], ids["a.xml"]]


def test_a_copy_whose_runs_are_pruned_is_counted_again(outputs: dict[str, Any], tmp_path: Path) -> None:
    """Pruning the runs a copy repeats would take their tests out of every answer across
    runs, the copy's too: the copy is decided again when a run leaves the store."""
    conn = open_store(tmp_path / "pruned.sqlite3")
    for name in ("a.xml", "b.xml", "merged.xml"):
        import_result(conn, outputs["work"] / name, stable_window=0)
    assert conn.execute("SELECT copy_of FROM runs WHERE run_id = 3").fetchone() == (1,)
    assert prune_run(conn, 2)  # the re-run: Flaky's PASS is only in the merged run now
    assert conn.execute("SELECT copy_of FROM runs WHERE run_id = 3").fetchone() == (None,)
    history = _ok(service.test_history(conn, "S.Flaky"))
    assert [(r["run_id"], r["status"]) for r in history["runs"]] == [(3, "PASS"), (1, "FAIL")]
    delete_run(conn, 3)  # deleting the copy itself changes nothing for the others
    assert conn.execute("SELECT run_id, copy_of FROM runs").fetchall() == [(1, None)]
