"""pabot: the processes of one execution, each with the listener, are one run group: listed,
summarized and compared as one run, each process still readable alone. Real pabot runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITES = Path(__file__).parent / "data" / "history" / "pabot"


def pabot(db: Path, out: Path, night: int) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pabot.pabot", "--processes", "2", "--listener",
         f"rf_log_listener:db={db}", "--variable", f"NIGHT:{night}", "--outputdir", str(out),
         "--log", "NONE", "--report", "NONE", str(SUITES)],
        capture_output=True, text=True, timeout=300, check=False, cwd=out.parent)
    assert result.returncode == 1, result.stdout + result.stderr  # one failure each night


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("pabot") is None and not (Path(sys.executable).parent / "pabot").exists():
        pytest.fail("robotframework-pabot is a test dependency: pip install -e '.[test]'")
    folder = tmp_path_factory.mktemp("pabot")
    db = folder / "store.sqlite3"
    for night in (1, 2):
        pabot(db, folder / f"night{night}", night)
    return open_store(db)


def test_one_pabot_execution_is_one_run_group(store) -> None:
    groups = [row[0] for row in store.execute("SELECT run_group FROM runs ORDER BY run_id")]
    assert len(groups) == 4 and groups[0] == groups[1] != groups[2] == groups[3]
    runs = service.list_runs(store).runs
    assert [(r.run_group, r.run_ids) for r in runs] == [("g3", [3, 4]), ("g1", [1, 2])]
    assert [(r.total, r.passed, r.failed, r.result_status) for r in runs] == [
        (4, 3, 1, "FAIL"), (4, 3, 1, "FAIL")]
    paged = service.list_runs(store, limit=1)
    assert [r.run_group for r in paged.runs] == ["g3"] and paged.next_cursor
    rest = service.list_runs(store, limit=1, cursor=paged.next_cursor)
    assert [r.run_group for r in rest.runs] == ["g1"] and rest.next_cursor is None


def test_a_group_is_compared_as_one_run_and_each_process_read_alone(store) -> None:
    answer = service.compare_runs(store, "g3")
    assert answer["ok"], answer
    assert (answer["head"]["run_ids"], answer["base"]["run_ids"]) == ([3, 4], [1, 2])
    assert answer["base"]["run"] == "g1"
    assert [(c["change"], c["test"]) for c in answer["changes"]] == [
        ("new_failure", "Pabot.Orders.Order Total Adds Up"),
        ("fixed", "Pabot.Payments.Payment Accepted")]
    assert answer["counts"]["unchanged"] == 2
    alone = service.compare_runs(store, "3", base="1")  # one process each: other suites
    assert alone.ok and alone.counts is not None
    member = service.get_view(store, "summary", run_id=4).summary
    assert member is not None and member.run_group == "g3" and member.totals.total == 2
    history = service.test_history(store, "Pabot.Payments.Payment Accepted")
    assert [(r.run, r.status) for r in history.runs] == [("g3", "PASS"), ("g1", "FAIL")]


def test_a_group_is_summarized_as_one_run(store) -> None:
    view = service.get_view(store, "summary", run_id=4, selector="run_group")
    assert view.ok, view.error
    data = view["summary"]
    assert (data["runs"], data["run_group"], data["totals"]) == (
        [3, 4], "g3", {"total": 4, "passed": 3, "failed": 1, "skipped": 0})
    [failed] = data["failed_tests"]
    assert (failed["name"], failed["message"]) == ("Order Total Adds Up", "total off on night 2: 2 != 1")
    assert failed["run_id"] in (3, 4) and failed["node_id"] == "s1-s1-t2"
    # night 1: whichever process is asked, the payments process's token (a secret-named
    # variable only that process registered) is masked in the group's answer
    for run_id in (1, 2):
        alone = service.get_view(store, "summary", run_id=run_id, selector="run_group")
        assert alone.summary is not None and alone.summary.runs == [1, 2]
        [payment] = alone.summary.failed_tests
        assert payment.name == "Payment Accepted"
        assert payment.message == "gateway timeout after 3000 ms (sent ***)"
        assert "s3cr3t" not in json.dumps(alone)


def test_a_robot_run_without_both_pabot_variables_is_in_no_group(tmp_path: Path) -> None:
    """The listener reads pabot's ${CALLER_ID} and ${PABOTQUEUEINDEX} (looked for in RF's
    scope first: RF's lookup of a variable that is not set ranks every name for a "did you
    mean"); only a process that has both is in a pabot group. And ${OUTPUT_DIR} is read."""
    from test_listener import robot

    suite = tmp_path / "one.robot"
    suite.write_text("*** Test Cases ***\nOne\n    Log    hello\n")
    db = tmp_path / "store.sqlite3"
    for variables in ((), ("--variable", "CALLER_ID:abc"),
                      ("--variable", "CALLER_ID:abc", "--variable", "PABOTQUEUEINDEX:0")):
        done = robot("--listener", f"rf_log_listener:db={db}", "--outputdir", str(tmp_path / "out"),
                     *variables, str(suite), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    rows = open_store(db).execute("SELECT run_group, output_dir FROM runs ORDER BY run_id").fetchall()
    assert [group for group, _ in rows[:2]] == [None, None]
    assert rows[2][0].startswith("pabot-") and len(rows[2][0]) == len("pabot-") + 16
    assert {output_dir for _, output_dir in rows} == {str(tmp_path / "out")}
