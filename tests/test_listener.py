"""Live capture with the real robot: invariant with the import, live visibility, SIGKILL,
concurrent runs, a store that cannot be written, --output NONE, the listener named twice.
Other listeners beside it: test_listener_others.py; where it writes (robot's process or a
writer process, checkpoints): test_writer_process.py."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.generate import VERSIONS, _suite_dir
from oracle import dump_import, dump_store
from robot_runs import WAIT_FOR_GO, robot, wait_for_row, without_flattened

from rf_log_listener.flushing import ENV_HAND_OVER
from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service


@pytest.fixture(scope="module")
def fixture_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _suite_dir(tmp_path_factory.mktemp("suite"), VERSIONS["7.5"])


FLATTENED = "Flattened Keyword"  # robot:flatten: live sees the children, the file does not


# process: the writer forked from robot (Linux); spawn: a fresh interpreter; inline: none;
# auto (the default): in robot's process, handed over to a writer process as soon as one is
# ready (the threshold 0 instead of HAND_OVER_AFTER_S: mid-run, whatever the machine's speed)
@pytest.mark.parametrize(("output", "writer"), [("output.xml", "process"), ("output.json", "process"),
                                               ("output.xml", "spawn"), ("output.xml", "inline"),
                                               ("output.xml", "auto"), ("output.json", "auto")])
def test_live_capture_equals_the_import_of_the_same_run(tmp_path: Path, fixture_suite: Path,
                                                        output: str, writer: str) -> None:
    db = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}:writer={writer}", "--loglevel", "DEBUG",
                 "--output", str(tmp_path / output), str(fixture_suite), cwd=tmp_path,
                 env={ENV_HAND_OVER: "0"})
    _assert_live_equals_import(done, open_store(db), tmp_path / output)


# A team's store: the listener writes into PostgreSQL (its URL holds ':', so the listener's
# options are separated with ';', as RF allows).
@pytest.mark.parametrize("writer", ["auto", "process", "inline"])
def test_live_capture_into_postgresql_equals_the_import_of_the_same_run(
        tmp_path: Path, fixture_suite: Path, pg_url: str, writer: str) -> None:
    done = robot("--listener", f"rf_log_listener;db={pg_url};writer={writer}", "--loglevel",
                 "DEBUG", "--output", str(tmp_path / "output.xml"), str(fixture_suite),
                 cwd=tmp_path, env={ENV_HAND_OVER: "0"})
    _assert_live_equals_import(done, open_store(pg_url), tmp_path / "output.xml")


def test_an_output_file_another_listener_rewrote_is_a_run_of_its_own(tmp_path: Path) -> None:
    """RetryFailed runs a failed test again and, when robot has written output.xml, rewrites
    it keeping each test's last attempt. The store keeps what ran (both attempts), and the
    rewritten file is no longer taken for the run: importing it said "already imported" and
    answered the run's three tests for a file of two."""
    retried = Path(__file__).parent / "data" / "retried"
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", str(retried / "retry_like.py"), "--listener",
                 f"rf_log_listener:db={db}", "--output", str(tmp_path / "output.xml"),
                 str(retried / "flaky.robot"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "output.xml holds 2 tests, the run 3: another listener rewrote it" in done.stderr
    conn = open_store(db)
    [(live, ran)] = conn.execute("SELECT run_id, source_hash FROM runs").fetchall()
    assert ran is None
    assert conn.execute("SELECT node_id, status FROM nodes WHERE type = 'TEST' ORDER BY key"
                        ).fetchall() == [("s1-t1", "SKIP"), ("s1-t2", "PASS"), ("s1-t3", "PASS")]
    imported = import_result(conn, tmp_path / "output.xml", stable_window=0)
    assert imported.run_id != live and not imported.deduplicated
    assert conn.execute("SELECT total, passed, skipped FROM runs WHERE run_id = ?",
                        (imported.run_id,)).fetchone() == (2, 2, 0)
    assert import_result(conn, tmp_path / "output.xml", stable_window=0).deduplicated


def test_a_result_files_tests_are_counted_across_the_chunks_it_is_read_in(tmp_path: Path) -> None:
    """What the listener compares with its run: every test once, a mark cut by a chunk's
    edge (1 MiB) counted whole, never twice; output.json compact or indented."""
    from rf_log_listener.file_identity import file_digest, file_sha256

    xml = tmp_path / "output.xml"
    xml.write_bytes(b"".join(b'<test id="s1-t%d">' % i + b"y" * (997 + i % 7) for i in range(3000)))
    assert file_digest(xml, "xml") == (file_sha256(xml), 3000)
    tests = [{"id": f"s1-s{i % 3 + 1}-t{i}", "pad": "x" * (1000 + i % 5)} for i in range(3000)]
    for indent in (None, 2):
        doc = tmp_path / "output.json"
        doc.write_text(json.dumps({"suite": {"id": "s1", "tests": tests}}, indent=indent))
        assert file_digest(doc, "json")[1] == 3000
    assert file_digest(doc)[1] is None


def _assert_live_equals_import(done: Any, conn: Any, output: Path) -> None:
    """The run robot just wrote into ``conn`` live equals the import of its output file."""
    assert done.returncode == 11, done.stderr  # 11 failed tests, on purpose
    assert "rf_log_listener" not in done.stderr  # no warnings from the capture
    [(run_id, status, origin, totals)] = [
        (r[0], r[1], r[2], r[3:]) for r in conn.execute(
            "SELECT run_id, status, origin, total, passed, failed, skipped FROM runs")]
    assert (status, origin, totals) == ("complete", "listener", (25, 12, 11, 2))
    # importing the file robot wrote finds the live run instead of importing it again
    again = import_result(conn, output, stable_window=0)
    assert again.run_id == run_id and again.deduplicated
    imported_db = output.parent / "imported.sqlite3"
    imported = import_result(open_store(imported_db), output, stable_window=0)
    reference = dump_store(open_store(imported_db), imported.run_id)
    live = dump_store(conn, run_id)
    flattened = next(n["id"] for n in live["nodes"] if n.get("name") == "Flattened")
    assert without_flattened(live, flattened) == without_flattened(reference, flattened)
    # the documented exception, explicitly: live keeps the flattened keyword's children
    live_inside = [n["name"] for n in live["nodes"] if n["id"].startswith(flattened + "-")]
    file_inside = [n for n in reference["nodes"] if n["id"].startswith(flattened + "-")]
    assert live_inside == ["Log", "Inner Of Flattened", "Log"] and file_inside == []
    assert [m["text"] for m in reference["messages"] if m["id"].startswith(flattened + "-m")] == [
        "flattened outer", "flattened inner"]




def test_another_process_sees_the_run_while_it_runs(tmp_path: Path) -> None:
    suite = tmp_path / "slow.robot"
    suite.write_text(
        "*** Settings ***\nLibrary    OperatingSystem\n\n"
        "*** Test Cases ***\nSlow Test\n    Log    before the wait\n    Waiting Keyword\n"
        "    Log    after the wait\n\n*** Keywords ***\nWaiting Keyword\n"
        f"    Log    waiting now\n    {WAIT_FOR_GO}\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", str(suite), cwd=tmp_path, wait=False)
    seen: dict[str, str] = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if not db.exists():
            continue
        reader = sqlite3.connect(db, timeout=10)
        try:
            rows = reader.execute("SELECT node_id, name, status FROM nodes").fetchall()
            run_status = reader.execute("SELECT status FROM runs").fetchone()
        except sqlite3.OperationalError:
            continue
        finally:
            reader.close()
        seen = {name: status for _, name, status in rows}
        if seen.get("Wait Until Created") == "RUNNING":
            break
    assert run_status == ("running",)
    assert seen["Slow Test"] == "RUNNING" and seen["Waiting Keyword"] == "RUNNING"
    assert seen["Wait Until Created"] == "RUNNING" and seen["Log"] == "PASS"  # finished steps too
    conn = open_store(db)
    summary = service.get_view(conn, "summary", run_id=1).summary
    assert summary is not None and summary.status == "running"
    assert [n.name for n in summary.unfinished or []][-2:] == ["Waiting Keyword",
                                                                 "Wait Until Created"]
    (tmp_path / "go").touch()
    process.wait(120)
    final = service.get_view(conn, "summary", run_id=1).summary
    assert final is not None and final.status == "complete" and final.totals.passed == 1


def test_a_running_keywords_messages_are_visible_before_it_ends(tmp_path: Path) -> None:
    (tmp_path / "SlowLib.py").write_text(
        "import os, time\nfrom robot.api import logger\n\n\ndef report_progress():\n"
        "    logger.info('progress one')\n"
        "    while not os.path.exists('go'):\n        time.sleep(0.05)\n"
        "    logger.info('progress two')\n")
    suite = tmp_path / "progress.robot"
    suite.write_text("*** Settings ***\nLibrary    SlowLib.py\n\n*** Test Cases ***\n"
                     "Progress\n    Report Progress\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", str(suite), cwd=tmp_path, wait=False)
    try:
        wait_for_row(db, "SELECT 1 FROM messages WHERE text = 'progress one'", seconds=20)
        with sqlite3.connect(db, timeout=10) as reader:
            still_running = reader.execute(
                "SELECT status FROM nodes WHERE name = 'Report Progress'").fetchone()
            later = reader.execute("SELECT count(*) FROM messages WHERE text = 'progress two'")
            assert still_running == ("RUNNING",) and later.fetchone() == (0,)
    finally:
        (tmp_path / "go").touch()
        process.wait(120)
    texts = [row[0] for row in sqlite3.connect(db).execute("SELECT text FROM messages ORDER BY key")]
    assert texts == ["progress one", "progress two"]


BUSY_SUITE = """\
*** Test Cases ***
Busy Test
    FOR    ${i}    IN RANGE    %d
        Step    ${i}
        # a quick host runs the loop in less than the listener's three looks (0.5 s apart)
        IF    ${i} %% 250 == 0    Sleep    0.3s
    END

After It
    Step    2
    # robot created the next iteration before it evaluates the condition, which takes long
    VAR    ${n}    ${0}
    WHILE    not time.sleep(0.7) and $n < 1
        ${n} =    Evaluate    ${n} + 1
    END

*** Keywords ***
Step
    [Arguments]    ${i}
    ${rest} =    Evaluate    ${i} %% 3
    IF    ${rest} == 0
        Log    zero ${i}
    ELSE IF    ${rest} == 1
        Inner    ${i}
    ELSE
        TRY
            Fail    odd ${i}
        EXCEPT    odd*    type=glob
            Log    caught ${i}
        END
    END
    VAR    ${n}    ${0}
    WHILE    ${n} < 2
        ${n} =    Evaluate    ${n} + 1
    END
    WHILE    True    limit=2    on_limit=pass
        Log    looping
    END
    [Teardown]    Log    teardown ${i}

Inner
    [Arguments]    ${i}
    [Setup]    Log    setup ${i}
    Log    inner ${i}
"""


@pytest.mark.slow
@pytest.mark.parametrize("version", ["", "7.2.2", "7.4.2"])  # "": this venv's RF
def test_a_busy_test_read_while_it_runs_equals_its_output_file(tmp_path: Path, version: str) -> None:
    """On RF 7.2+ the listener's thread reads the running test from RF's model every half
    second while robot runs at full speed: whatever it met half-done (a keyword being
    filled in, a WHILE's iteration that never runs, a teardown starting) ends up as in the
    file, and readers see the test grow while it runs."""
    suite = tmp_path / "busy.robot"
    suite.write_text(BUSY_SUITE % 1500)
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", "--loglevel", "TRACE",
                    "--output", str(tmp_path / "output.xml"), str(suite), cwd=tmp_path, wait=False,
                    version=version)
    growing: list[int] = []  # node rows seen while Busy Test was running
    while process.poll() is None:
        time.sleep(0.1)
        try:
            with sqlite3.connect(db, timeout=10) as reader:
                [(running, count)] = reader.execute(
                    "SELECT count(*) FILTER (WHERE name = 'Busy Test' AND status = 'RUNNING'),"
                    " count(*) FROM nodes").fetchall()
        except sqlite3.OperationalError:
            continue
        if running:
            growing.append(count)
    assert process.wait() == 0, process.stderr.read()
    assert len(set(growing)) >= 3, growing  # several looks into the test while it ran
    conn = open_store(db)
    imported = import_result(open_store(tmp_path / "imported.sqlite3"), tmp_path / "output.xml",
                             stable_window=0)
    assert dump_store(conn, 1) == dump_store(open_store(tmp_path / "imported.sqlite3"),
                                             imported.run_id)
    # the WHILE iterations that never ran are in RF's model but not in the file, nor here
    # (1,500 of the FOR; 2 + 2 for each of the 1,501 steps' two WHILEs and 1 for the slow
    # one, none for the one more each created before finding its condition false or its
    # limit reached)
    [(iterations,)] = conn.execute("SELECT count(*) FROM nodes WHERE type = 'ITERATION'").fetchall()
    assert iterations == 1500 + 1501 * 4 + 1


def test_a_killed_robot_leaves_an_interrupted_run(tmp_path: Path) -> None:
    suite = tmp_path / "killed.robot"
    suite.write_text("*** Test Cases ***\nFirst\n    Log    done\nSecond\n    Log    started\n"
                     "    Sleep    30s\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", str(suite), cwd=tmp_path, wait=False)
    wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Sleep'")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    conn = open_store(db)
    runs = service.list_runs(conn)
    assert [(r.run_id, r.status) for r in runs.runs] == [(1, "interrupted")]
    statuses = dict(conn.execute("SELECT name, status FROM nodes").fetchall())
    assert statuses["First"] == "PASS" and statuses["Second"] == "NOT FINISHED"
    assert statuses["Sleep"] == "NOT FINISHED"
    found = service.search_messages(conn, "started", run_id=1, detail="full")
    assert [h.node_id for h in found.hits] == ["s1-t2-k1"]


def test_a_killed_robot_on_another_host_is_marked_interrupted_by_its_heartbeat(
        tmp_path: Path, pg_url: str) -> None:
    """A team's store: a reader cannot ask another host whether robot's process lives, so the
    run's heartbeat tells. Until it is stale the run is running; then interrupted, and what
    the run committed stays."""
    suite = tmp_path / "killed.robot"
    suite.write_text("*** Test Cases ***\nFirst\n    Log    done\nSecond\n    Log    started\n"
                     "    Sleep    30s\n")
    process = robot("--listener", f"rf_log_listener;db={pg_url}", str(suite), cwd=tmp_path,
                    wait=False, env={"PYTHONUNBUFFERED": "1"})
    conn = open_store(pg_url)
    deadline = time.monotonic() + 60
    while not conn.execute("SELECT 1 FROM nodes WHERE name = 'Sleep'").fetchone():
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    conn.execute("UPDATE runs SET host = 'ci-agent-7'")  # as if robot ran on another machine
    assert [(r.run_id, r.status) for r in service.list_runs(conn).runs] == [(1, "running")]
    conn.execute("UPDATE runs SET heartbeat = heartbeat - 600")  # silent for ten minutes
    assert [(r.run_id, r.status) for r in service.list_runs(conn).runs] == [(1, "interrupted")]
    statuses = dict(conn.execute("SELECT name, status FROM nodes").fetchall())
    assert statuses["First"] == "PASS" and statuses["Second"] == "NOT FINISHED"
    assert statuses["Sleep"] == "NOT FINISHED"
    found = service.search_messages(conn, "started", run_id=1, detail="full")
    assert [h.node_id for h in found.hits] == ["s1-t2-k1"]


def test_four_robots_write_one_store_at_once(tmp_path: Path, fixture_suite: Path) -> None:
    db = tmp_path / "shared.sqlite3"
    processes = [
        robot("--listener", f"rf_log_listener:db={db}:label=worker{i}", "--output",
              str(tmp_path / f"out{i}.xml"), str(fixture_suite), cwd=tmp_path, wait=False)
        for i in range(4)
    ]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 11 for p in processes), outputs
    warnings = [err for _, err in outputs if "rf_log_listener" in err]
    assert not warnings, warnings
    conn = open_store(db)
    runs = conn.execute("SELECT label, status, total, failed FROM runs ORDER BY label").fetchall()
    assert runs == [(f"worker{i}", "complete", 25, 11) for i in range(4)], runs
    counts = dict(conn.execute("SELECT run_id, count(*) FROM nodes GROUP BY run_id").fetchall())
    assert len(set(counts.values())) == 1, counts  # the same run, four times, complete each time


def test_an_unwritable_store_warns_once_and_the_run_goes_on(tmp_path: Path) -> None:
    suite = tmp_path / "ok.robot"
    suite.write_text("*** Test Cases ***\nPasses\n    Log    fine\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = robot("--listener", f"rf_log_listener:db={blocker / 'store.sqlite3'}", "--output",
                 str(tmp_path / "out.xml"), str(suite), cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr.count("[ WARN ] rf_log_listener") == 1
    assert "capture stopped, the run goes on" in done.stderr and str(blocker) in done.stderr
    assert (tmp_path / "out.xml").exists()


def test_output_none_makes_the_store_the_only_record(tmp_path: Path) -> None:
    suite = tmp_path / "none.robot"
    suite.write_text("*** Test Cases ***\nFails\n    Fail    only in the store\n")
    db = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--output", "NONE", "--loglevel", "TRACE",
                 str(suite), cwd=tmp_path)
    assert done.returncode == 1
    conn = open_store(db)
    path = service.get_view(conn, "failure_path", run_id=1).failure_path
    assert path is not None and "only in the store" in [m.text for m in path.path[-1].messages]
    # TRACE arguments (RF logs them as delayed messages) arrive as text
    texts = [row[0] for row in conn.execute("SELECT text FROM messages ORDER BY key")]
    assert texts[:2] == ["Arguments: [ 'only in the store' ]", "only in the store"]


@pytest.mark.anyio
async def test_the_mcp_server_follows_a_live_run(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    suite = tmp_path / "live.robot"
    suite.write_text("*** Settings ***\nLibrary    OperatingSystem\n\n"
                     "*** Test Cases ***\nPasses First\n    Log    fine\n"
                     "Checks Then Waits\n    Log    checked\n"
                     "    Run Keyword And Continue On Failure    Should Be Equal    1    2"
                     "    early failure\n"
                     f"    {WAIT_FOR_GO}\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}:label=nightly-42", str(suite),
                    cwd=tmp_path, wait=False)
    wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Wait Until Created' AND status = 'RUNNING'")
    params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"],
                                   env={"RF_LOG_MCP_DB": str(db)})
    async with Client(params) as client:
        running = (await client.call_tool("list_runs", {"status": "running"})).structured_content
        assert [(r["run_id"], r["origin"]) for r in running["runs"]] == [(1, "listener")]
        # a running run's name, label and the tests ended so far
        assert {k: running["runs"][0].get(k) for k in ("name", "label", "total", "passed", "failed")} \
            == {"name": "Live", "label": "nightly-42", "total": 1, "passed": 1, "failed": 0}
        summary = (await client.call_tool("get_view", {"run_id": 1, "view": "summary"})).structured_content
        assert summary["summary"]["status"] == "running"
        assert [n["name"] for n in summary["summary"]["unfinished"]][-1] == "Wait Until Created"
        found = (await client.call_tool("search_messages", {"run_id": 1, "query": "early failure",
                                                               "detail": "full"}))
        assert [n["name"] for n in found.structured_content["nodes"]] == ["Should Be Equal"]
        (tmp_path / "go").touch()
        process.wait(120)
        done = (await client.call_tool("get_view", {"run_id": 1, "view": "summary"})).structured_content
        assert done["summary"]["status"] == "complete"
        assert [t["message"] for t in done["summary"]["failed_tests"]] == ["early failure: 1 != 2"]


def test_test_timeouts_firing_during_capture_lose_nothing(tmp_path: Path) -> None:
    """RF 7.3+ raises test timeouts from SIGALRM, also inside listener code (reference 6.5).
    The listener holds the signal while it runs, so its own state stays whole: every node
    ends, numbering stays contiguous, and the store holds the output file's messages."""
    suite = tmp_path / "timeouts.robot"
    suite.write_text("*** Test Cases ***\n" + "".join(
        f"Times Out {n}\n    [Timeout]    0.{n + 2} seconds\n"
        f"    FOR    ${{i}}    IN RANGE    1000000\n        Log    message ${{i}}\n    END\n"
        for n in range(6)))
    db = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--output", str(tmp_path / "out.xml"),
                 str(suite), cwd=tmp_path)
    assert done.returncode == 6 and "rf_log_listener" not in done.stderr, done.stderr[-2000:]
    conn = open_store(db)
    assert conn.execute("SELECT status, failed FROM runs").fetchone() == ("complete", 6)
    unfinished = conn.execute("SELECT count(*) FROM nodes WHERE status IN ('RUNNING', 'NOT FINISHED')")
    assert unfinished.fetchone()[0] == 0
    live = dump_store(conn, 1)
    reference = dump_import(tmp_path / "imported.sqlite3", tmp_path / "out.xml")
    assert live["nodes"] == reference["nodes"]
    for message in live["messages"]:  # numbering per node is contiguous
        node, number = message["id"].rsplit("-m", 1)
        assert number == "1" or f"{node}-m{int(number) - 1}" in {m["id"] for m in live["messages"]}
    # The store reads each message where RF keeps it for its own output, so both hold the
    # same messages; a timeout firing inside RF's logger, between its output-file write and
    # its result-body append, can leave one message of the interrupted keyword on one side:
    # its last, or the one before the timeout's FAIL that RF then appends (file: "message
    # 661", FAIL; store: FAIL), at most one keyword a test.
    live_ids, file_ids = ({m["id"]: m for m in dump["messages"]} for dump in (live, reference))
    cut = {i.rsplit("-m", 1)[0] for i in set(live_ids) ^ set(file_ids)}
    assert len(cut) <= 6, sorted(cut)
    for node in cut:
        said = [[(m["level"], m["text"]) for i, m in ids.items() if i.rsplit("-m", 1)[0] == node]
                for ids in (live_ids, file_ids)]
        fewer, more = sorted(said, key=len)
        assert len(more) == len(fewer) + 1 and all(m in more for m in fewer), said
    assert [m for i, m in live_ids.items() if i.rsplit("-m", 1)[0] not in cut] == [
        m for i, m in file_ids.items() if i.rsplit("-m", 1)[0] not in cut]



@pytest.mark.slow
def test_the_heartbeat_goes_on_while_robot_sleeps(tmp_path: Path) -> None:
    suite = tmp_path / "sleepy.robot"
    suite.write_text("*** Settings ***\nLibrary    OperatingSystem\n\n*** Test Cases ***\n"
                     f"Sleeps\n    Log    going to sleep\n    {WAIT_FOR_GO}\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", str(suite), cwd=tmp_path, wait=False)
    wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Wait Until Created' AND status = 'RUNNING'")
    with sqlite3.connect(db, timeout=10) as reader:
        first = reader.execute("SELECT heartbeat FROM runs").fetchone()[0]
    time.sleep(6.5)
    with sqlite3.connect(db, timeout=10) as reader:
        later, status = reader.execute("SELECT heartbeat, status FROM runs").fetchone()
    assert status == "running" and later - first >= 4
    (tmp_path / "go").touch()
    process.wait(120)


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in robot's process, inherited by the writer process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.slow
def test_a_full_disk_stops_capture_with_one_warning_and_keeps_what_was_committed(tmp_path: Path) -> None:
    suite = tmp_path / "chatty.robot"
    suite.write_text("*** Test Cases ***\nChatty\n    FOR    ${i}    IN RANGE    20000\n"
                     "        Log    line ${i}, padded so that the store grows quickly\n"
                     "    END\nAfter\n    Log    still running\n")
    db = tmp_path / "store.sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "robot", "--output", "NONE", "--report", "NONE", "--log", "NONE",
         "--console", "dotted", "--listener", f"rf_log_listener:db={db}", str(suite)],
        preexec_fn=_file_size_limit(600_000), capture_output=True, text=True, timeout=300,
        cwd=tmp_path, check=False)
    assert done.returncode == 0  # both tests passed: the run went on
    assert "2 tests, 2 passed, 0 failed" in done.stdout
    assert done.stderr.count("[ WARN ] rf_log_listener") == 1, done.stderr
    assert "cannot write the store" in done.stderr and "Traceback" not in done.stderr
    conn = open_store(db)
    assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    runs = service.list_runs(conn)
    assert [(r.run_id, r.status) for r in runs.runs] == [(1, "interrupted")]
    assert conn.execute("SELECT type, name FROM nodes WHERE key = 1 << 32").fetchone() == (
        "SUITE", "Chatty")  # the root suite, committed when the run started


def test_the_listener_named_twice_captures_one_run_per_store(tmp_path: Path) -> None:
    """``--listener`` in a configuration and again on the command line: one run in the store
    (before, two identical runs: history and flaky counted the run twice), one warning; a
    second store named beside it gets its own run; the next robot.run() of the same process
    is captured again."""
    (tmp_path / "s.robot").write_text("*** Test Cases ***\nOne\n    Log    one\nTwo\n    Fail    two\n")
    db, other = tmp_path / "store.sqlite3", tmp_path / "other.sqlite3"
    done = robot("--output", "NONE", "--listener", f"rf_log_listener;db={db};writer=process",
                 "--listener", f"rf_log_listener;db={tmp_path}/./store.sqlite3",
                 "--listener", f"rf_log_listener;db={other}", "s.robot", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("rf_log_listener") == 1, done.stderr
    assert "captured into" in done.stderr and "stays idle" in done.stderr
    for store in (db, other):
        conn = open_store(store)
        assert conn.execute("SELECT run_id, status, total, failed FROM runs").fetchall() == [
            (1, "complete", 2, 1)]
        conn.close()
    script = ("import robot\nfor _ in range(2):\n    robot.run('s.robot', output='NONE', log='NONE',"
              f" report='NONE', console='none', listener='rf_log_listener;db={db}')\n")
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, check=True, timeout=300)
    conn = open_store(db)
    assert [row[0] for row in conn.execute("SELECT status FROM runs ORDER BY run_id")] == [
        "complete"] * 3


