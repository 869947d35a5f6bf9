"""Live capture with the real robot: invariant with the import, live visibility, SIGKILL,
concurrent runs, a store that cannot be written, --output NONE."""

from __future__ import annotations

import json
import os
import pickle
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
from fixtures.generate import VERSIONS, _suite_dir, venv_python
from oracle import dump_store

from rf_log_listener.flushing import ENV_HAND_OVER
from rf_log_listener.importers import import_result
from rf_log_listener.listener import EARLY_CHECKPOINT_BYTES
from rf_log_listener.store import open_store
from rf_log_mcp import service


def robot(*args: str, cwd: Path, wait: bool = True, version: str = "",
          env: dict[str, str] | None = None) -> Any:
    """Run robot from this venv, or (``version``) from that RF version's fixture venv with
    only this checkout's capture side added to its path; ``env``: variables added."""
    python = sys.executable
    env = {**os.environ, **env} if env else None
    if version:
        found = venv_python(version)
        if found is None:
            pytest.skip(f"no venv for RF {version}: python tests/fixtures/generate.py --venvs-only {version}")
        python, env = str(found), {**(env or os.environ),
                                   "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    command = [python, "-m", "robot", "--log", "NONE", "--report", "NONE", "--console", "none", *args]
    if not wait:
        return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env=env)


def _wait_for_row(db: Path, query: str, seconds: float = 30) -> None:
    """Poll the store from this process until ``query`` finds a row (robot is running)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            with sqlite3.connect(db, timeout=10) as reader:
                if reader.execute(query).fetchone():
                    return
        except sqlite3.OperationalError:
            continue
    raise AssertionError(f"no row for {query!r} within {seconds} s")


@pytest.fixture(scope="module")
def fixture_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _suite_dir(tmp_path_factory.mktemp("suite"), VERSIONS["7.5"])


FLATTENED = "Flattened Keyword"  # robot:flatten: live sees the children, the file does not


def _without_flattened(dump: dict, flattened_kw: str) -> dict:
    inside = flattened_kw + "-"
    return {
        "nodes": [n for n in dump["nodes"] if not n["id"].startswith(inside)],
        "messages": [m for m in dump["messages"] if not m["id"].startswith(inside)],
        "errors": dump["errors"],
    }


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
    assert _without_flattened(live, flattened) == _without_flattened(reference, flattened)
    # the documented exception, explicitly: live keeps the flattened keyword's children
    live_inside = [n["name"] for n in live["nodes"] if n["id"].startswith(flattened + "-")]
    file_inside = [n for n in reference["nodes"] if n["id"].startswith(flattened + "-")]
    assert live_inside == ["Log", "Inner Of Flattened", "Log"] and file_inside == []
    assert [m["text"] for m in reference["messages"] if m["id"].startswith(flattened + "-m")] == [
        "flattened outer", "flattened inner"]


# A step that waits for the test to say go (it creates the file): robot runs on only after
# the test has seen what it wants, however slow a loaded machine makes either side.
WAIT_FOR_GO = "Wait Until Created    ${CURDIR}/go    timeout=300s"


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
        _wait_for_row(db, "SELECT 1 FROM messages WHERE text = 'progress one'", seconds=20)
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
    _wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Sleep'")
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
    _wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Wait Until Created' AND status = 'RUNNING'")
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
    ref = open_store(tmp_path / "imported.sqlite3")
    reference = dump_store(ref, import_result(ref, tmp_path / "out.xml", stable_window=0).run_id)
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


CHATTY_LISTENER = """\
from robot.api import logger

ROBOT_LISTENER_API_VERSION = 3


def start_keyword(data, result):
    logger.info(f"chatty starts {result.name}")


def end_keyword(data, result):
    logger.info(f"chatty ends {result.name}")
    if result.name == "Fail":
        result.message += " (seen by chatty)"


def end_test(data, result):
    logger.info(f"chatty ends test {result.name}")
"""


def test_other_listeners_messages_and_changes_are_captured_as_the_file_has_them(
        tmp_path: Path) -> None:
    """This listener reads each message from the result body RF fills for its own output, and
    runs after every other listener: what they log in start_*/end_* (also into a keyword
    with a teardown, after it ran) and what they change reaches the store as it reaches
    the file, though this listener is named first."""
    (tmp_path / "chatty.py").write_text(CHATTY_LISTENER)
    suite = tmp_path / "chatty.robot"
    suite.write_text(
        "*** Test Cases ***\nTalkative\n    With Teardown\n    Log    in the test\n"
        "    Run Keyword And Expect Error    *    Fail    expected\n"
        "    [Teardown]    Log    test teardown\n\n"
        "*** Keywords ***\nWith Teardown\n    Log    inside\n    RETURN    done\n"
        "    [Teardown]    Log    keyword teardown\n")
    db = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--listener", str(tmp_path / "chatty.py"),
                 "--loglevel", "TRACE", "--output", str(tmp_path / "out.xml"), str(suite),
                 cwd=tmp_path)
    assert done.returncode == 0 and "rf_log_listener" not in done.stderr, done.stderr[-2000:]
    live = dump_store(open_store(db), 1)
    ref = open_store(tmp_path / "imported.sqlite3")
    reference = dump_store(ref, import_result(ref, tmp_path / "out.xml", stable_window=0).run_id)
    assert live == reference
    texts = [m["text"] for m in live["messages"]]
    assert "chatty ends With Teardown" in texts and "chatty ends test Talkative" in texts
    assert any(n.get("message") == "expected (seen by chatty)" for n in live["nodes"])


MASKING_LISTENER = """\
ROBOT_LISTENER_API_VERSION = 3


def end_keyword(data, result):
    result.args = tuple(arg.replace("secret-42", "***") for arg in result.args)
"""


def test_a_step_changed_by_another_listener_after_it_was_seen_running_is_stored_as_changed(
        tmp_path: Path) -> None:
    """The step runs long enough to be sent open (RUNNING) with its arguments as they were;
    another listener masks them in end_keyword, before robot writes them to the file: the
    store ends with the masked ones too."""
    (tmp_path / "masking.py").write_text(MASKING_LISTENER)
    suite = tmp_path / "masked.robot"
    suite.write_text("*** Settings ***\nLibrary    OperatingSystem\n\n"
                     "*** Test Cases ***\nLogs In\n    Log In With    secret-42\n\n"
                     "*** Keywords ***\nLog In With\n    [Arguments]    ${token}\n"
                     f"    {WAIT_FOR_GO}\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", "--listener",
                    str(tmp_path / "masking.py"), "--output", str(tmp_path / "out.xml"), str(suite),
                    cwd=tmp_path, wait=False)
    _wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Log In With' AND status = 'RUNNING'"
                      " AND args LIKE '%secret-42%'")
    (tmp_path / "go").touch()
    assert process.wait(120) == 0, process.stderr.read()
    live = dump_store(open_store(db), 1)
    ref = open_store(tmp_path / "imported.sqlite3")
    assert live == dump_store(ref, import_result(ref, tmp_path / "out.xml", stable_window=0).run_id)
    assert [n["args"] for n in live["nodes"] if n["name"] == "Log In With"] == [["***"]]


RENAMING_LISTENER = """\
ROBOT_LISTENER_API_VERSION = 3


def end_keyword(data, result):
    if result.name == "Log In With":
        result.name = "Renamed At End"
"""


def test_a_step_renamed_by_another_listener_has_its_final_name_as_in_output_json(
        tmp_path: Path) -> None:
    """The documented difference: robot writes a step's name to output.xml at its start,
    before any listener ran, and to output.json at its end; the store has the final name."""
    (tmp_path / "renaming.py").write_text(RENAMING_LISTENER)
    suite = tmp_path / "renamed.robot"
    suite.write_text("*** Test Cases ***\nLogs In\n    Log In With    token\n\n"
                     "*** Keywords ***\nLog In With\n    [Arguments]    ${token}\n"
                     "    Log    in with ${token}\n")
    for output in ("output.xml", "output.json"):
        db = tmp_path / f"{output}.sqlite3"
        done = robot("--listener", f"rf_log_listener:db={db}", "--listener",
                     str(tmp_path / "renaming.py"), "--output", str(tmp_path / output), str(suite),
                     cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        live = dump_store(open_store(db), 1)
        ref = open_store(tmp_path / f"imported-{output}.sqlite3")
        reference = dump_store(ref, import_result(ref, tmp_path / output, stable_window=0).run_id)
        assert [n["name"] for n in live["nodes"]] == ["Renamed", "Logs In", "Renamed At End", "Log"]
        if output == "output.json":
            assert live == reference
        else:
            assert reference["nodes"][2]["name"] == "Log In With"
            reference["nodes"][2]["name"] = "Renamed At End"
            assert live == reference  # and nothing else differs


@pytest.mark.slow
def test_the_heartbeat_goes_on_while_robot_sleeps(tmp_path: Path) -> None:
    suite = tmp_path / "sleepy.robot"
    suite.write_text("*** Settings ***\nLibrary    OperatingSystem\n\n*** Test Cases ***\n"
                     f"Sleeps\n    Log    going to sleep\n    {WAIT_FOR_GO}\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", str(suite), cwd=tmp_path, wait=False)
    _wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Wait Until Created' AND status = 'RUNNING'")
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


CHILDREN_LIBRARY = '''\
from pathlib import Path


def log_child_processes():
    """Robot's child processes now, by name, "(store)" after those that have a store open:
    the writer process is one of them, if any, and has the store open once it writes."""
    names = []
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            files = [str(fd.readlink()) for fd in Path(f"/proc/{pid}/fd").iterdir()]
            store = any(name.endswith(".sqlite3") for name in files)
            names.append(Path(f"/proc/{pid}/comm").read_text().strip() + ("(store)" if store else ""))
    print("children: " + (" ".join(sorted(names)) or "none"))
'''


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux's /proc and two CPUs to tell one-CPU runs apart")
@pytest.mark.parametrize(("cpus", "option", "writer_process"), [
    (1, "", False), (1, ":writer=process", True), (2, "", False), (2, ":writer=process", True)])
def test_a_short_run_or_one_cpu_is_written_in_robots_process(
        tmp_path: Path, cpus: int, option: str, writer_process: bool) -> None:
    """A one-test suite costs less to write in place than to hand to a writer process, and
    on one CPU a writer process could only take turns with robot: no process unless told
    writer=process; the run is the same either way."""
    (tmp_path / "Children.py").write_text(CHILDREN_LIBRARY)
    suite = tmp_path / "cpus.robot"
    suite.write_text("*** Settings ***\nLibrary    Children.py\n\n*** Test Cases ***\n"
                     "Count\n    Log Child Processes\n")
    db = tmp_path / "store.sqlite3"
    allowed = sorted(os.sched_getaffinity(0))[:cpus]
    done = subprocess.run(
        [sys.executable, "-m", "robot", "--output", "NONE", "--log", "NONE", "--report", "NONE",
         "--console", "none", "--pythonpath", str(tmp_path),
         "--listener", f"rf_log_listener:db={db}{option}", str(suite)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env={k: v for k, v in os.environ.items() if k != ENV_HAND_OVER},  # the default threshold
        preexec_fn=lambda: os.sched_setaffinity(0, allowed))
    assert done.returncode == 0, done.stderr
    conn = open_store(db)
    [text] = [row[0] for row in conn.execute("SELECT text FROM messages")]
    assert text.startswith("children: ")
    assert (text != "children: none") == writer_process, text
    assert conn.execute("SELECT status, total, passed FROM runs").fetchall() == [("complete", 1, 1)]


# What robot's process must not load for a run written in place (issue #19: each module is
# paid by every robot run with the listener): the writer process's side, the importers, the
# read side, the queue only an import's full-text indexer uses, and the PostgreSQL store.
NOT_IN_ROBOT = ("rf_log_listener.writer_link", "rf_log_listener.writer_process",
                "rf_log_listener.row_pipe", "rf_log_listener.importers", "rf_log_mcp", "queue",
                "mcp", "pydantic", "rf_log_listener.postgres")


def test_a_run_written_in_robots_process_loads_no_writer_process_machinery(tmp_path: Path) -> None:
    (tmp_path / "Modules.py").write_text(
        "import sys\n\n\ndef log_loaded(*names):\n"
        "    print('loaded: ' + ' '.join(n for n in names if n in sys.modules))\n")
    suite = tmp_path / "one.robot"
    suite.write_text("*** Settings ***\nLibrary    Modules.py\n\n*** Test Cases ***\nOne\n"
                     f"    Log Loaded    rf_log_listener.listener    {'    '.join(NOT_IN_ROBOT)}\n")
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--pythonpath", str(tmp_path),
                 str(suite), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    texts = [row[0] for row in open_store(db).execute("SELECT text FROM messages")]
    assert texts == ["loaded: rf_log_listener.listener"]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux's /proc and two CPUs")
@pytest.mark.parametrize("env", [{ENV_HAND_OVER: "0.01"}, {ENV_HAND_OVER: "1000"}],
                         ids=["writing-cost-10ms", "a-busy-batch"])
def test_a_run_that_proves_big_is_handed_over_to_a_writer_process_mid_run(
        tmp_path: Path, env: dict[str, str]) -> None:
    """Written in robot's process first, the run goes to a writer process when writing it
    has cost robot HAND_OVER_AFTER_S (here 10 ms), or at once when one flush holds
    HAND_OVER_ITEMS (the cost threshold out of reach: 400 loop rounds before the first
    flush); the process takes the writer's state as it stands (open suite, test and loop,
    counters, secrets) and the events held meanwhile, and the stored run equals the output
    file robot wrote, messages and secrets included. (The sleep gives the ticker flushes:
    one starts the process, a later one hands over once it is ready.)"""
    (tmp_path / "Children.py").write_text(CHILDREN_LIBRARY)
    suite = tmp_path / "big.robot"
    suite.write_text(
        "*** Settings ***\nLibrary    Children.py\n\n*** Variables ***\n${PASSWORD}    hunter2\n\n"
        "*** Test Cases ***\nBefore\n    Log    the password is ${PASSWORD}\n"
        "Big\n    FOR    ${i}    IN RANGE    400\n        Log    row ${i}\n"
        "        IF    ${i} == 200    Sleep    2s\n    END\n    Log Child Processes\n"
        "    Should Be Equal    ${1}    ${2}\nAfter\n    Log    ${PASSWORD} once more\n")
    db = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--loglevel", "DEBUG", "--pythonpath",
                 str(tmp_path), "--output", str(tmp_path / "output.xml"), str(suite),
                 cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    assert "rf_log_listener" not in done.stderr
    conn = open_store(db)
    [children] = [row[0] for row in conn.execute(
        "SELECT text FROM messages WHERE text LIKE 'children: %'")]
    assert children.endswith("(store)"), children  # the writer process took over mid-test
    live = dump_store(conn, 1)
    imported = import_result(open_store(tmp_path / "imported.sqlite3"), tmp_path / "output.xml",
                             stable_window=0)
    assert live == dump_store(open_store(tmp_path / "imported.sqlite3"), imported.run_id)
    assert conn.execute("SELECT status, total, failed FROM runs").fetchall() == [("complete", 3, 1)]
    answer = service.search_messages(conn, "once more", run_id=1)
    assert [hit.text for hit in answer.hits] == ["*** once more"] and answer.masked_values == 1


def _written_in_robots_process(db: Path) -> tuple[sqlite3.Connection, Any, Any]:
    """A live run begun in ``db`` and written as robot's process writes it before a
    hand-over: its connection, its RunWriter's sink and the LocalEvents that feed it."""
    from rf_log_listener.event_pipe import LocalEvents
    from rf_log_listener.events import RunInfo
    from rf_log_listener.rows import StoreRowSink
    from rf_log_listener.writer import RunWriter

    conn = open_store(db)
    sink = StoreRowSink(conn, replace_nodes=True)
    run_id = sink.begin_run(RunInfo(origin="listener", generator="Robot 7.5"))
    writer = RunWriter(sink, live=True)
    writer.attach_run(run_id, "Robot 7.5")
    return conn, sink, LocalEvents(writer, run_id)


def _handed_to_a_writer_process(local: Any, db: Path) -> tuple[subprocess.Popen[bytes], Any, Any]:
    """A real writer process (a fresh interpreter, as the listener starts it mid-run) that
    ``local``'s run is handed over to: the process, its pipe and the EventForwarder."""
    from rf_log_listener.writer_link import spawn_writer

    link = spawn_writer(True, pytest.fail)
    assert link is not None and link.pipe is not None
    deadline = time.monotonic() + 60
    while not link.ready():
        assert time.monotonic() < deadline, "the writer process never said it was ready"
        time.sleep(0.01)
    assert isinstance(link.process, subprocess.Popen)
    return link.process, link.pipe, link.take_over(local, str(db))


def test_a_writer_state_a_fresh_process_could_not_read_is_not_handed_over(tmp_path: Path) -> None:
    """An open node holding an object of a test library's own type (which the writer process
    would have to import to read the state) stops the hand-over before anything is sent;
    robot's process keeps the writer, its store connection and the run, and ends the run."""
    from fractions import Fraction

    from rf_log_listener import events as ev
    from rf_log_listener.event_pipe import MESSAGE, OPEN
    from rf_log_listener.events import RunEnd
    from rf_log_listener.row_pipe import FramedPipe

    conn, sink, local = _written_in_robots_process(tmp_path / "store.sqlite3")
    writer = local.writer
    local.extend((OPEN, ev.SUITE, "suite", "Suite", None, None, None, None,
                  OPEN, ev.TEST, "test", "Test", None, None, None, None,
                  OPEN, ev.KEYWORD, "kw", "Keep", "Lib", [Fraction(1, 3)], None, None,
                  MESSAGE, "INFO", "kept", False, "2026-12-01T00:00:00"))
    local.flush()
    read_end, write_end = os.pipe()
    pipe = FramedPipe(os.fdopen(read_end, "rb"), os.fdopen(write_end, "wb"))
    with pytest.raises(pickle.PicklingError, match="fractions"):
        local.hand_over(pipe, str(tmp_path / "store.sqlite3"))
    pipe.out.close()
    assert pipe.inp.read() == b""  # nothing went to the writer process
    assert writer.sink is sink
    local.end_run(RunEnd(complete=True))
    assert conn.execute("SELECT status FROM runs").fetchone() == ("complete",)
    assert [row[0] for row in conn.execute("SELECT text FROM messages")] == ["kept"]


def test_events_held_while_the_writer_process_starts_go_over_with_the_run(tmp_path: Path) -> None:
    """A busy run's events are held in robot's process while its writer process starts
    (flushing.HAND_OVER_ITEMS), not written there: the hand-over sends the writer's state as
    of the last flush, then the held events, and the real writer process stores them all,
    in order, after those robot wrote itself."""
    from rf_log_listener import events as ev
    from rf_log_listener.event_pipe import CLOSE, MESSAGE, OPEN
    from rf_log_listener.events import RunEnd

    db = tmp_path / "store.sqlite3"
    conn, _, local = _written_in_robots_process(db)
    local.extend((OPEN, ev.SUITE, "suite", "Suite", None, None, None, None,
                  OPEN, ev.TEST, "test", "Test", None, None, None, None,
                  OPEN, ev.KEYWORD, "kw", "Log", "BuiltIn", ("one",), None, None,
                  MESSAGE, "INFO", "written by robot", False, "2026-12-02T00:00:00"))
    local.flush()
    local.extend((MESSAGE, "INFO", "held 1", False, "2026-12-02T00:00:01",
                  CLOSE, "PASS", "", "2026-12-02T00:00:00", 1.0, None, None,
                  OPEN, ev.KEYWORD, "kw", "Log", "BuiltIn", ("two",), None, None,
                  MESSAGE, "WARN", "held 2", False, "2026-12-02T00:00:02"))
    process, pipe, forwarder = _handed_to_a_writer_process(local, db)
    assert len(local) == 0 and len(forwarder) == 25  # the held events go over with the run
    forwarder.extend((CLOSE, "PASS", "", "2026-12-02T00:00:02", 1.0, None, None,
                      CLOSE, "PASS", "", "2026-12-02T00:00:00", 3.0, None, None,
                      CLOSE, "PASS", "", "2026-12-02T00:00:00", 3.0, None, None))
    forwarder.end_run(RunEnd(complete=True))
    pipe.close()
    assert process.wait(30) == 0
    assert [row for row in conn.execute("SELECT level, text FROM messages ORDER BY key")] == [
        ("INFO", "written by robot"), ("INFO", "held 1"), ("WARN", "held 2")]
    assert conn.execute("SELECT status, total, passed FROM runs").fetchall() == [("complete", 1, 1)]
    assert [row[0] for row in conn.execute("SELECT node_id FROM nodes ORDER BY key")] == [
        "s1", "s1-t1", "s1-t1-k1", "s1-t1-k2"]


def test_rows_a_writer_process_commits_after_a_reader_marked_its_run_are_settled(
        tmp_path: Path) -> None:
    """Robot killed just after a flush: a reader sees robot's pid gone and marks the run
    interrupted, its open nodes NOT FINISHED, while the writer process is still committing
    that last batch, which holds the open chain as RUNNING again. The writer process
    settles them as the reader did in that same commit: no reader ever sees a node RUNNING
    in the interrupted run (the kill test found 5 once, on a loaded machine, when they were
    settled only as the pipe closed)."""
    from rf_log_listener import events as ev
    from rf_log_listener.event_pipe import MESSAGE, OPEN
    from rf_log_listener.store import mark_dead_live_runs

    db = tmp_path / "store.sqlite3"
    conn, _, local = _written_in_robots_process(db)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    conn.execute("UPDATE runs SET pid = ?", (gone.pid,))  # robot's process, killed
    local.extend((OPEN, ev.SUITE, "suite", "Suite", None, None, None, None,
                  OPEN, ev.TEST, "test", "Test", None, None, None, None))
    local.flush()
    process, pipe, forwarder = _handed_to_a_writer_process(local, db)
    assert mark_dead_live_runs(open_store(db)) == [1]  # the reader, first
    assert conn.execute("SELECT status FROM nodes ORDER BY key").fetchall() == [
        ("NOT FINISHED",), ("NOT FINISHED",)]
    forwarder.extend((OPEN, ev.KEYWORD, "kw", "Log", "BuiltIn", ("late",), None, None,
                      MESSAGE, "INFO", "late", False, "2026-12-02T00:00:01"))
    forwarder.flush()  # robot's last batch, committed after the mark
    deadline = time.monotonic() + 60
    while not conn.execute("SELECT 1 FROM messages WHERE text = 'late'").fetchone():
        assert time.monotonic() < deadline, "the writer process never committed the last batch"
        time.sleep(0.01)
    settled = [("s1", "NOT FINISHED"), ("s1-t1", "NOT FINISHED"), ("s1-t1-k1", "NOT FINISHED")]
    assert conn.execute("SELECT node_id, status FROM nodes ORDER BY key").fetchall() == settled
    pipe.close()  # robot is gone
    assert process.wait(30) == 0
    assert conn.execute("SELECT node_id, status FROM nodes ORDER BY key").fetchall() == settled
    assert conn.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
    assert [row[0] for row in conn.execute("SELECT text FROM messages")] == ["late"]
    assert conn.execute("SELECT t.longname, r.status FROM run_tests r"
                        " JOIN test_names t USING (name_id)").fetchall() == [("Suite.Test", "NOT FINISHED")]


def test_a_commit_that_waits_for_a_reader_marking_its_run_settles_what_it_wrote(
        any_store_spec: Path | str) -> None:
    """The reader's mark (store.mark_dead_live_runs: the run's row, then its open nodes)
    holds the run's row when the writer's next commit comes: the commit waits for it without
    holding a row the reader then needs (PostgreSQL would end one of the two as a deadlock),
    and then settles the rows it wrote: none is left RUNNING in the interrupted run."""
    from concurrent.futures import ThreadPoolExecutor

    from rf_log_listener import events as ev
    from rf_log_listener.event_pipe import OPEN
    from rf_log_listener.store import mark_not_finished, transaction

    conn, _, local = _written_in_robots_process(any_store_spec)
    local.extend((OPEN, ev.SUITE, "suite", "Suite", None, None, None, None,
                  OPEN, ev.TEST, "test", "Test", None, None, None, None))
    local.flush()
    reader = open_store(any_store_spec)
    with ThreadPoolExecutor(1) as pool:
        with transaction(reader, immediate=True):
            assert reader.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = 1"
                                  " AND status = 'running'").rowcount == 1
            local.extend((OPEN, ev.KEYWORD, "kw", "Log", "BuiltIn", ("late",), None, None))
            commit = pool.submit(local.flush)
            time.sleep(0.5)
            assert not commit.done(), "the writer's commit did not wait for the reader's mark"
            mark_not_finished(reader, 1)
        commit.result(timeout=60)
    assert conn.execute("SELECT node_id, status FROM nodes ORDER BY key").fetchall() == [
        ("s1", "NOT FINISHED"), ("s1-t1", "NOT FINISHED"), ("s1-t1-k1", "NOT FINISHED")]
    assert conn.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
    reader.close()


# A listener of the test's own, called before rf_log_listener (whose priority is lowest) when
# robot has written output.xml and at robot's end: how much of the store's WAL is copied into
# the store by then (at output_file at once, or once it all is: within 10 s). The WAL index
# (the -shm file, SQLite's documented layout): the last valid frame (mxFrame) at offset 16,
# the frames checkpointed (nBackfill) at offset 96, native 32-bit integers.
WAL_WATCHER = """
import struct, time
from pathlib import Path

ROBOT_LISTENER_API_VERSION = 3


def _frames(wait):
    deadline = time.monotonic() + 10
    while True:
        data = Path({shm!r}).read_bytes()
        last, copied = struct.unpack_from("=I", data, 16)[0], struct.unpack_from("=I", data, 96)[0]
        if not wait or (last and copied == last) or time.monotonic() > deadline:
            return f"{{last}} {{copied}}"
        time.sleep(0.01)


def output_file(path):
    Path({record!r}).write_text(_frames({wait_at_output!r}))


def close():
    with open({record!r}, "a") as record:
        record.write(" " + _frames(True))
"""


def _wal_at_output_and_close(tmp_path: Path, suite_text: str, *options: str,
                             wait_at_output: bool = False) -> list[int]:
    """Robot runs ``suite_text`` into a checkpointed store with the WAL watcher; the WAL's
    (last frame, frames copied) when robot has written output.xml and at robot's close, and the
    store's page size."""
    db, record = tmp_path / "store.sqlite3", tmp_path / "wal.txt"
    open_store(db).close()  # the store exists (and is checkpointed) before the run
    suite = tmp_path / "suite.robot"
    suite.write_text(suite_text)
    (tmp_path / "WalWatcher.py").write_text(WAL_WATCHER.format(
        shm=f"{db}-shm", record=str(record), wait_at_output=wait_at_output))
    listener = ":".join(("rf_log_listener", f"db={db}", *options))
    done = robot("--listener", listener, "--listener", "WalWatcher", "--pythonpath", str(tmp_path),
                 "--log", "NONE", "--report", "NONE", str(suite), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    store = open_store(db)
    assert store.execute("SELECT status, source_hash IS NOT NULL FROM runs").fetchone() == (
        "complete", 1)
    return [*map(int, record.read_text().split()), store.execute("PRAGMA page_size").fetchone()[0]]


def test_a_short_runs_store_is_checkpointed_once_after_its_output_file_is_recorded(
        tmp_path: Path) -> None:
    """A short run written in robot's process (issue #19): its end makes one checkpoint, not
    two (each is two fsyncs, which robot's close waits for when it writes no log): none when
    robot has written output.xml, the WAL all in the store before the listener's close (the
    output file's record included), so not left to robot's very end either."""
    at_output_last, at_output_copied, at_close_last, at_close_copied, _ = _wal_at_output_and_close(
        tmp_path, "*** Test Cases ***\nOne\n    Log    hello\n")
    assert at_output_last > 0 and at_output_copied == 0, (at_output_last, at_output_copied)
    assert at_close_last > at_output_last and at_close_copied == at_close_last, (
        at_close_last, at_close_copied)


def test_a_long_runs_store_is_checkpointed_while_robot_writes_its_output(tmp_path: Path) -> None:
    """A run that left more than EARLY_CHECKPOINT_BYTES in the WAL: copying it is worth
    starting at once, while robot writes output.xml (issue #19): by the time robot has
    written it, every frame the run wrote is in the store, before the listener's close."""
    suite = ("*** Test Cases ***\nMany\n    ${text}=    Evaluate    ' '.join(map(str, range(900)))\n"
             "    FOR    ${i}    IN RANGE    1500\n        Log    ${i} ${text}\n    END\n")
    at_output_last, at_output_copied, _, _, page_size = _wal_at_output_and_close(
        tmp_path, suite, "writer=inline", wait_at_output=True)
    assert at_output_last * page_size > EARLY_CHECKPOINT_BYTES, at_output_last
    assert at_output_copied == at_output_last, (at_output_last, at_output_copied)


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


def test_no_row_a_live_run_writes_lacks_its_parent(tmp_path: Path) -> None:
    """A live run writes its open nodes (RUNNING) with every batch, not only at the clock's
    flush: a batch written mid-suite, or a suite's teardown rewrite, committed a test whose
    suite (opened since the clock's last flush) had no row, and the summary's walk from a
    test up to its suites' fixtures failed with NODE_NOT_FOUND (seen on PostgreSQL with
    three robots writing under load)."""
    from rf_log_listener import events as ev
    from rf_log_listener.event_pipe import CLOSE, OPEN, apply_batch

    conn, _, local = _written_in_robots_process(tmp_path / "store.sqlite3")
    local.writer.batch_rows = 2  # a batch at nearly every node

    def applied(*events: Any) -> None:  # as robot's events come, no clock's flush between
        apply_batch(local.writer, local.stack, list(events), flush=False)

    def orphans() -> list[str]:
        return [node_id for node_id, in conn.execute(
            "SELECT child.node_id FROM nodes AS child WHERE child.parent_pre IS NOT NULL AND"
            " NOT EXISTS (SELECT 1 FROM nodes AS parent WHERE parent.key ="
            " (child.key >> 32 << 32) + child.parent_pre)")]

    def opened(kind: str, name: str) -> tuple[Any, ...]:
        return (OPEN, kind, kind.lower(), name, None, None, None, None)

    def closed(status: str, message: str = "") -> tuple[Any, ...]:
        return (CLOSE, status, message, "2026-12-05T00:00:00", 0.1, None, None)

    applied(*opened(ev.SUITE, "Root"), *opened(ev.SUITE, "Outer"), *opened(ev.SUITE, "Inner"),
            *opened(ev.TEST, "One"), *opened(ev.KEYWORD, "Fail"), *closed("FAIL", "boom"),
            *closed("FAIL", "boom"), *opened(ev.TEST, "Two"), *opened(ev.KEYWORD, "Log"),
            *closed("PASS"), *closed("PASS"), *opened(ev.TEARDOWN, "Clean Up"),
            *closed("FAIL", "teardown broke"))
    assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] > 3  # batches written
    assert orphans() == []
    applied(*closed("FAIL"))  # Inner ends: its teardown failed, its tests re-marked
    assert conn.execute("SELECT message FROM nodes WHERE node_id = 's1-s1-s1-t2'").fetchone() == (
        "Parent suite teardown failed:\nteardown broke",)
    assert orphans() == []
    applied(*closed("FAIL"), *closed("FAIL"))
    local.writer.flush()
    assert orphans() == []
