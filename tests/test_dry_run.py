"""robot --dryrun: its keywords are checked, not run, so a test's PASS there says its data is
valid, not that it passes. Runs captured live (the listener asks robot) and imported from
output.xml and output.json (the file does not say: ``rows.ran_dry`` reads it from the
statuses) are marked as dry runs, and left out of every answer across runs: a team whose
argument file names the listener captures its dry runs too (tests/data/dry_run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "dry_run"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run 1 runs the suite, run 2 is its dry run (output.json), run 3 runs it again; all
    live into one store. The dry run's output.json and a dry run's output.xml imported."""
    work = tmp_path_factory.mktemp("dry_run")
    db = work / "store.sqlite3"
    for number, options in ((1, ()), (2, ("--dryrun",)), (3, ())):
        output = "run2.json" if number == 2 else f"run{number}.xml"
        done = robot("--listener", f"rf_log_listener:db={db}", "--output", str(work / output),
                     *options, str(SUITE), cwd=work)
        assert done.returncode == (1 if options else 2), done.stderr
        assert "rf_log_listener" not in done.stderr, done.stderr
    done = robot("--dryrun", "--output", str(work / "dry.xml"), str(SUITE), cwd=work)
    assert done.returncode == 1, done.stderr
    imported = open_store(work / "imported.sqlite3")
    for name in ("run1.xml", "run2.json", "dry.xml"):
        import_result(imported, work / name, stable_window=0)
    return {"work": work, "db": db, "conn": open_store(db), "imported": imported}


def _ok(answer: Any) -> Any:
    assert answer.ok, answer.error
    return answer


def test_dry_runs_are_marked_live_and_imported(runs: dict[str, Any]) -> None:
    marks = "SELECT run_id, dry_run FROM runs ORDER BY run_id"
    assert runs["conn"].execute(marks).fetchall() == [(1, 0), (2, 1), (3, 0)]
    # run1.xml, the dry run's output.json, another dry run's output.xml
    assert runs["imported"].execute(marks).fetchall() == [(1, 0), (2, 1), (3, 1)]
    conn = runs["conn"]
    dry = _ok(service.get_view(conn, "summary", run_id=2))["summary"]
    assert dry["dry_run"] is True and dry["totals"] == {"total": 4, "passed": 3, "failed": 1,
                                                      "skipped": 0}
    assert [t["name"] for t in dry["failed_tests"]] == ["Broken Data"]
    ran = _ok(service.get_view(conn, "summary", run_id=3))["summary"]
    assert "dry_run" not in ran and ran["totals"]["failed"] == 2
    listed = _ok(service.list_runs(conn))["runs"]
    assert [(r["run_id"], r.get("dry_run")) for r in listed] == [(3, None), (2, True), (1, None)]
    shown = cli("summary", "2", env={"RF_LOG_MCP_DB": str(runs["db"])})
    assert "a dry run (robot --dryrun): keywords were checked, not run" in shown.stdout
    lines = cli("runs", env={"RF_LOG_MCP_DB": str(runs["db"])}).stdout.splitlines()
    assert [line.split()[0] for line in lines if "dry run" in line] == ["2"]


def test_answers_across_runs_leave_dry_runs_out(runs: dict[str, Any]) -> None:
    """The dry run passed Checkout, which fails whenever it runs: counted, it would make it a
    flaky test fixed once, and run 3's failure new against run 2."""
    conn = runs["conn"]
    history = _ok(service.test_history(conn, "Dry Run.Shop.Checkout"))
    assert history["runs_total"] == 2
    assert [(r["run_id"], r["status"]) for r in history["runs"]] == [(3, "FAIL"), (1, "FAIL")]
    assert (history["streak"]["status"], history["streak"]["runs"]) == ("FAIL", 2)
    assert history["streak"]["since"]["run_id"] == 1 and "last_pass" not in history
    assert history["flakiness"]["flips"] == 0
    flaky = _ok(service.flaky_tests(conn))
    assert flaky["tests"] == [] and flaky["runs_in_window"] == 2
    compared = _ok(service.compare_runs(conn, "3"))
    assert compared["base"]["run"] == "1"
    assert {k: v for k, v in compared["counts"].items() if v and k != "unchanged"} == {
        "still_failing": 2}
    assert {c["test"] for c in compared["changes"]} == {
        "Dry Run.Shop.Checkout", "Dry Run.Shop.Broken Data"}
    for head, base in (("2", None), ("3", "2"), ("2", "1")):
        refused = service.compare_runs(conn, head, base=base)
        assert not refused.ok and refused.error.code == "INVALID_ARGUMENT", (head, base)
        assert "Run 2 is a dry run" in refused.error.message
    summary = _ok(service.get_view(conn, "summary", run_id=3))["summary"]
    seen = {t["name"]: t["signature_seen"] for t in summary["failed_tests"]}
    # Broken Data failed the same way in run 1 and in the dry run: one earlier run counts
    assert seen["Broken Data"]["earlier_runs"] == 1 and seen["Broken Data"]["first_run_id"] == 1


def test_each_store_reads_a_dry_run_from_its_statuses(runs: dict[str, Any], tmp_path: Path,
                                                      any_store: Any) -> None:
    """SQLite and PostgreSQL alike; statuses that look like a dry run's in part are not one:
    a run whose only test failed at its first step (no step passed), and one whose steps
    after a RETURN were not run (run1)."""
    suite = tmp_path / "ran.robot"
    suite.write_text("*** Test Cases ***\nFails At Once\n    Fail    no\n    Log    after\n\n"
                     "*** Keywords ***\nUnused\n    RETURN\n", encoding="utf-8")
    done = robot("--output", str(tmp_path / "ran.xml"), str(suite), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    files = [tmp_path / "ran.xml", runs["work"] / "run1.xml", runs["work"] / "dry.xml",
             runs["work"] / "run2.json"]
    marks = [any_store.execute("SELECT dry_run FROM runs WHERE run_id = ?", (
        import_result(any_store, path, stable_window=0).run_id,)).fetchone()[0] for path in files]
    assert marks == [0, 0, 1, 1]



@pytest.mark.parametrize("option", [("--removekeywords", "all"), ("--removekeywords", "passed"),
                                    ("--flattenkeywords", "name:Add*")])
def test_rebot_s_removed_and_flattened_keywords_keep_the_mark(runs: dict[str, Any], tmp_path: Path,
                                                              option: tuple[str, str]) -> None:
    """rebot can leave keywords without their steps (removed, flattened): a run that ran and
    a dry run still read as they were."""
    conn = open_store(tmp_path / "store.sqlite3")
    marks = []
    for name in ("run1.xml", "dry.xml"):
        rebot = subprocess.run([sys.executable, "-m", "robot.rebot", *option, "--output",
                                str(tmp_path / name), "--log", "NONE", "--report", "NONE",
                                str(runs["work"] / name)], capture_output=True, text=True,
                               check=False)
        assert rebot.returncode == (2 if name == "run1.xml" else 1), rebot.stderr  # failed tests
        run_id = import_result(conn, tmp_path / name, stable_window=0).run_id
        marks.append(conn.execute("SELECT dry_run FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])
    assert marks == [0, 1]


@pytest.mark.anyio
async def test_the_mcp_server_says_it(runs: dict[str, Any]) -> None:
    """Over stdio with the official client, each answer checked against its output schema."""
    async with server(runs["work"], env={"RF_LOG_MCP_DB": str(runs["db"])}) as client:
        listed = await call(client, "list_runs")
        assert [(r["run_id"], r.get("dry_run")) for r in listed["runs"]] == [
            (3, None), (2, True), (1, None)]
        summary = await call(client, "get_view", run_id=2, view="summary")
        assert summary["summary"]["dry_run"] is True
        refused = await call(client, "compare_runs", head="2")
        assert refused["error"]["code"] == "INVALID_ARGUMENT"
        history = await call(client, "test_history", test="Dry Run.Shop.Checkout")
        assert [r["run_id"] for r in history["runs"]] == [3, 1]
