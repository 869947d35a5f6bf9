"""SIGKILL at random points, 20 times each: the importer during a large import, and robot
with the listener during a run. Afterwards the store opens, no partial import is visible, a
re-import succeeds, and every killed live run is `interrupted` with a consistent tree."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gen_output import generate
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

KILLS = 20


@pytest.fixture(scope="module")
def big_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # above the size where a parser process is used, so both processes are in play
    return generate(tmp_path_factory.mktemp("kill") / "output.xml", size_mb=24, seed=5)


@pytest.mark.slow
def test_importer_killed_at_twenty_random_points(tmp_path: Path, big_output: Path) -> None:
    db = tmp_path / "store.sqlite3"
    chance = random.Random(2026)
    for _ in range(KILLS):
        process = subprocess.Popen(
            [sys.executable, "-m", "rf_log_mcp", "import", str(big_output), "--db", str(db)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(chance.uniform(0.05, 1.5))
        os.killpg(process.pid, signal.SIGKILL)  # the importer and its parser process
        process.wait()
        conn = open_store(db)
        visible = service.list_runs(conn)
        assert visible.ok and all(run.status == "complete" for run in visible.runs)
        conn.close()
    conn = open_store(db)
    outcome = import_result(conn, big_output, stable_window=0)
    assert outcome.status == "complete"
    statuses = [s for (s,) in conn.execute("SELECT status FROM runs")]
    assert statuses == ["complete"]  # killed imports were reaped, a finished one reused
    stray = conn.execute("SELECT count(*) FROM nodes WHERE run_id != ?", (outcome.run_id,))
    assert stray.fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == outcome.node_count
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")


SLOW_SUITE = """\
*** Test Cases ***
Counting
    FOR    ${i}    IN RANGE    400
        Log    step ${i}
        Sleep    0.005s
    END
Waiting
    Sleep    30s
"""


@pytest.mark.slow
def test_robot_killed_at_twenty_random_points(tmp_path: Path) -> None:
    suite = tmp_path / "slow.robot"
    suite.write_text(SLOW_SUITE)
    db = tmp_path / "store.sqlite3"
    chance = random.Random(7)
    for batch in range(KILLS // 4):  # four robots at a time, one store
        processes = [robot("--output", "NONE", "--listener", f"rf_log_listener:db={db}",
                           str(suite), cwd=tmp_path, wait=False) for _ in range(4)]
        for process in processes:
            _wait_until_capturing(db, process.pid)
        delays = sorted(chance.uniform(0.0, 3.0) for _ in processes)
        started = time.monotonic()
        for process, delay in zip(processes, delays, strict=True):
            time.sleep(max(0.0, started + delay - time.monotonic()))
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        conn = open_store(db)
        runs = service.list_runs(conn, limit=200)
        assert len(runs.runs) == 4 * (batch + 1)
        assert {run.status for run in runs.runs} == {"interrupted"}, runs.runs
        conn.close()
    _until_writer_processes_end()
    conn = open_store(db)
    assert conn.execute("SELECT count(*) FROM nodes WHERE status = 'RUNNING'").fetchone()[0] == 0
    orphans = conn.execute(
        "SELECT count(*) FROM nodes AS n WHERE n.parent_pre IS NOT NULL AND NOT EXISTS"
        " (SELECT 1 FROM nodes AS p WHERE p.key = (n.key >> 32 << 32) + n.parent_pre)")
    assert orphans.fetchone()[0] == 0
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
    for run in service.list_runs(conn, limit=200).runs:
        summary = service.get_view(conn, "summary", run_id=run.run_id)
        assert summary.ok and summary.summary is not None
        assert summary.summary.unfinished and summary.summary.unfinished[0].type == "SUITE"
        found = service.search_messages(conn, "step 0", run_id=run.run_id)
        assert found.ok


def _until_writer_processes_end(timeout: float = 30.0) -> None:
    """Until the writer processes killed robots left (a run handed over mid-run) have ended:
    each commits what robot sent (settling its rows if a reader marked the run meanwhile)
    and ends when its pipe closes, a few milliseconds after robot died."""
    proc = Path("/proc")
    deadline = time.monotonic() + timeout
    while proc.is_dir() and time.monotonic() < deadline:
        if not any(b"rf_log_listener.writer_process" in _command_line(entry)
                   for entry in proc.iterdir() if entry.name.isdigit()):
            return
        time.sleep(0.05)


def _command_line(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return b""


def _wait_until_capturing(db: Path, pid: int) -> None:
    """Until robot ``pid`` has its run and root suite in the store (the listener writes them
    at once); killing it earlier proves nothing."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=10) as conn:
                    if conn.execute("SELECT 1 FROM runs JOIN nodes ON nodes.key = runs.run_id"
                                    " << 32 WHERE runs.pid = ?", (pid,)).fetchone():
                        return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"robot {pid} did not start capturing within 60 s")
