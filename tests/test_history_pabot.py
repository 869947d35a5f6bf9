"""pabot: the processes of one execution, each with the listener, are one run group: listed,
summarized and compared as one run, each process still readable alone. Real pabot runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITES = Path(__file__).parent / "data" / "history" / "pabot"


def pabot(db: Path, out: Path, night: int) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pabot.pabot", "--processes", "2", "--listener",
         f"rf_log_listener:db={db}", "--variable", f"NIGHT:{night}", "--metadata",
         f"Night:{night}", "--outputdir", str(out),
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
    assert (data["runs"], data["run_group"], data["totals"], data["metadata"]) == (
        [3, 4], "g3", {"total": 4, "passed": 3, "failed": 1, "skipped": 0}, {"Night": "2"})
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
    from robot_runs import robot

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


def test_the_command_line_reads_a_pabot_execution_as_runs_lists_it(store) -> None:
    """`runs` lists g3; `summary` (the newest, or g3) and `failures g3` answer about the
    whole execution; a command that reads one run names the group's runs. Before, `summary`
    after pabot answered one process and `g3` was not a run id."""
    from conftest import cli

    from rf_log_listener.store import store_file

    db = Path(store_file(store))
    newest = cli("summary", db=db)
    assert newest.returncode == 0, newest.stderr
    assert newest.stdout.startswith("Run group g3 (runs 3, 4): Pabot")
    assert "4 tests: 3 passed, 1 failed, 0 skipped" in newest.stdout
    assert ":s1-s1-t2" in newest.stdout and "total off on night 2: 2 != 1" in newest.stdout
    assert cli("summary", "g3", db=db).stdout == newest.stdout
    assert cli("summary", "g1", db=db).stdout.startswith("Run group g1 (runs 1, 2): Pabot")
    assert cli("summary", "4", db=db).stdout.startswith("Run 4: ")  # one process alone
    failures = json.loads(cli("failures", "g3", "--json", db=db).stdout)
    assert (failures["run_group"], failures["runs"]) == ("g3", [3, 4])
    assert [(f["run_id"], f["start_id"]) for f in failures["failures"]] in (
        [(3, "s1-s1-t2")], [(4, "s1-s1-t2")])
    printed = cli("failures", db=db).stdout
    assert f"Failure path of s1-s1-t2 (run {failures['failures'][0]['run_id']}):" in printed
    one_run = cli("tree", "g3", db=db)
    assert one_run.returncode == 2 and "reads one run, not the pabot group g3" in one_run.stderr
    assert "(3, 4)" in one_run.stderr


def test_a_process_failing_like_its_siblings_is_not_seen_before(tmp_path: Path) -> None:
    """Two pabot processes failing alike: the signature is new in the execution; the other
    process is not an earlier run (before, each process's summary said "seen in 1 earlier
    run" of its sibling)."""
    suites = tmp_path / "suites"
    suites.mkdir()
    for number in (1, 2):
        (suites / f"part{number}.robot").write_text(
            f"*** Test Cases ***\nPart {number}\n    Fail    backend down on node {number}\n")
    db = tmp_path / "store.sqlite3"
    assert _pabot(db, suites, tmp_path / "out") == 2
    conn = open_store(db)
    for run_id in (1, 2):
        [test] = service.get_view(conn, "summary", run_id=run_id).summary.failed_tests
        assert test.signature_seen is None, test
    group = service.get_view(conn, "summary", run_id=2, selector="run_group")["summary"]
    [failure_group] = group["failure_groups"]
    assert failure_group["count"] == 2 and failure_group["seen_before"] == {"earlier_runs": 0}

    # the next execution passes: its failures say so once (before: nothing at all)
    for number in (1, 2):
        (suites / f"part{number}.robot").write_text(
            f"*** Test Cases ***\nPart {number}\n    No Operation\n")
    assert _pabot(db, suites, tmp_path / "out2") == 0
    from conftest import cli

    passed = cli("failures", db=db)
    assert (passed.returncode, passed.stdout) == (0, "No failed tests.\n")


def test_a_groups_summary_says_why_tests_were_skipped_across_its_processes(tmp_path: Path) -> None:
    """Each process skips a test for one reason: the group's summary groups them, each test
    with its run (before, a group's summary had no skip reasons: only each process's had)."""
    from conftest import cli

    suites = tmp_path / "suites"
    suites.mkdir()
    for number in (1, 2):
        (suites / f"part{number}.robot").write_text(
            f"*** Test Cases ***\nPart {number}\n    No Operation\n"
            f"Needs Sandbox {number}\n    Skip    sandbox is down\n")
    db = tmp_path / "store.sqlite3"
    assert _pabot(db, suites, tmp_path / "out") == 0
    group = service.get_view(open_store(db), "summary", run_id=1, selector="run_group")["summary"]
    assert group["totals"] == {"total": 4, "passed": 2, "failed": 0, "skipped": 2}
    [reason] = group["skip_reasons"]
    assert (reason["message"], reason["count"], reason["test_ids"], sorted(reason["test_runs"])) == (
        "sandbox is down", 2, ["s1-s1-t2", "s1-s1-t2"], [1, 2])
    printed = cli("summary", db=db).stdout
    assert "Skipped tests, by reason:\n  2 tests: sandbox is down\n" in printed
    assert "1:s1-s1-t2" in printed and "2:s1-s1-t2" in printed


def _pabot(db: Path, suites: Path, out: Path) -> int:
    """pabot on ``suites`` with two processes and the listener; its exit code."""
    done = subprocess.run(
        [sys.executable, "-m", "pabot.pabot", "--processes", "2", "--listener",
         f"rf_log_listener:db={db}", "--outputdir", str(out), "--log", "NONE",
         "--report", "NONE", str(suites)],
        capture_output=True, text=True, timeout=300, check=False, cwd=out.parent)
    assert "rf_log_listener" not in done.stderr, done.stderr
    return done.returncode


def test_pabots_merged_output_beside_its_processes_is_a_copy(store, tmp_path: Path) -> None:
    """pabot's output.xml merges its processes' outputs (rebot): imported into the store that
    captured the processes live, it is a copy of their group, left out across runs."""
    conn = open_store(tmp_path / "copy.sqlite3")  # the other tests keep their four runs
    store.backup(conn)
    process = Path(store.execute("SELECT output_dir FROM runs WHERE run_id = 3").fetchone()[0])
    merged = import_result(conn, process.parents[1] / "output.xml", stable_window=0).run_id
    assert merged == 5  # night2/pabot_results/1 → night2/output.xml
    assert conn.execute("SELECT generator, copy_of FROM runs WHERE run_id = ?",
                        (merged,)).fetchone()[1] == 3
    history = service.test_history(conn, "Pabot.Orders.Order Total Adds Up")
    held = [run_id for run_id, in conn.execute(  # the process of each night that ran it
        "SELECT run_id FROM run_tests JOIN test_names USING (name_id) WHERE longname = ?"
        " AND run_id < 5 ORDER BY run_id DESC", ("Pabot.Orders.Order Total Adds Up",))]
    assert [r["run_id"] for r in history["runs"]] == held and len(held) == 2
    assert service.compare_runs(conn, "g3")["base"]["run"] == "g1"
