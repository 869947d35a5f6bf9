"""Large files are parsed in a child process; the result must not differ, and killing
either process mid-import must leave no run that looks complete."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS
from gen_output import generate
from oracle import dump_execution_result, dump_store

from rf_log_listener.errors import ImportCancelled, ResultError
from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store


@pytest.mark.parametrize("name", ["7.5/output.xml", "7.5/output.json", "7.5/rebot.json",
                                  "6.0.2/output.xml"])
def test_child_process_import_equals_in_process_and_rf(tmp_path: Path, name: str) -> None:
    path = FIXTURE_RESULTS / name
    single = open_store(tmp_path / "single.db")
    parallel = open_store(tmp_path / "parallel.db")
    one = import_result(single, path, stable_window=0)
    two = import_result(parallel, path, stable_window=0, parallel_min_bytes=0)
    assert (one.total, one.failed, one.node_count, one.message_count) == (
        two.total, two.failed, two.node_count, two.message_count)
    ours = dump_store(parallel, two.run_id)
    assert ours == dump_store(single, one.run_id)
    assert ours == dump_execution_result(str(path))
    # every message is in the full-text index: it finds what a scan of the table finds
    for needle in ("%700 == 700%", "%登录超时%", "%teardown%"):
        indexed = parallel.execute("SELECT count(*) FROM messages_fts WHERE text LIKE ?", (needle,))
        scanned = parallel.execute("SELECT count(*) FROM messages WHERE text LIKE ?", (needle,))
        assert indexed.fetchone()[0] == scanned.fetchone()[0] > 0


def test_child_process_reports_cut_files(tmp_path: Path) -> None:
    data = (FIXTURE_RESULTS / "7.5" / "output.xml").read_bytes()
    cut = tmp_path / "cut.xml"
    cut.write_bytes(data[: len(data) // 3])
    conn = open_store(tmp_path / "s.db")
    with pytest.raises(ResultError) as info:
        import_result(conn, cut, stable_window=0, parallel_min_bytes=0)
    assert info.value.code == "INCOMPLETE_RESULT"
    assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    salvaged = import_result(conn, cut, stable_window=0, parallel_min_bytes=0, allow_incomplete=True)
    reference = import_result(open_store(tmp_path / "ref.db"), cut, stable_window=0,
                              allow_incomplete=True)
    assert salvaged.status == reference.status == "interrupted"
    assert salvaged.node_count == reference.node_count > 1000


@pytest.fixture(scope="module")
def big_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("big") / "output.xml", size_mb=40, seed=3)


def _wait_for_rows(db: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "import ended before it could be killed"
        if db.exists():
            with sqlite3.connect(db, timeout=30) as conn:
                try:
                    if conn.execute("SELECT count(*) FROM nodes").fetchone()[0] > 20_000:
                        return
                except sqlite3.OperationalError:
                    pass
        time.sleep(0.05)
    raise AssertionError("no rows written within 60 s")


def _children_of(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(p) for p in out.stdout.split()]


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["importer", "parser"])
def test_killed_import_leaves_no_complete_run_and_reimport_works(
    tmp_path: Path, big_output: Path, victim: str,
) -> None:
    db = tmp_path / "s.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "rf_log_mcp", "import", str(big_output), "--db", str(db), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    _wait_for_rows(db, process)
    if victim == "importer":
        children = _children_of(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        for child in children:  # the parser notices its parent is gone and ends
            deadline = time.monotonic() + 30
            while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not Path(f"/proc/{child}").exists(), "orphaned parser process"
    else:
        for child in _children_of(process.pid):
            os.kill(child, signal.SIGKILL)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 1
        assert b'"code": "IMPORT_FAILED"' in out, err
    conn = open_store(db)
    statuses = [r[0] for r in conn.execute("SELECT status FROM runs")]
    assert "complete" not in statuses
    outcome = import_result(conn, big_output, stable_window=0)
    assert outcome.status == "complete" and not outcome.deduplicated
    assert [r[0] for r in conn.execute("SELECT status FROM runs")] == ["complete"]
    stray = conn.execute("SELECT count(*) FROM nodes WHERE run_id != ?", (outcome.run_id,))
    assert stray.fetchone()[0] == 0


_ONE_CPU_IMPORT = """
import os, sys
from rf_log_listener import importers
from rf_log_listener.store import open_store

def no_child(*_args, **_kwargs):
    raise SystemExit("a parser process was started")

importers.import_in_child = no_child
os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:int(sys.argv[3])])
outcome = importers.import_result(open_store(sys.argv[1]), sys.argv[2])
print(outcome.node_count)
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs to tell one-CPU imports apart")
@pytest.mark.parametrize("cpus", [1, 2])
def test_a_large_file_is_parsed_in_a_child_process_only_where_two_cpus_can_work(
        tmp_path: Path, cpus: int) -> None:
    """On one CPU (taskset, a cpuset) the parser process and the writer would only take
    turns: the import stays in one process (about 13 % less CPU for a 100 MB file)."""
    big = tmp_path / "big.xml"
    generate(big, 17, seed=3)  # over PARALLEL_MIN_BYTES
    done = subprocess.run([sys.executable, "-c", _ONE_CPU_IMPORT, str(tmp_path / "s.db"),
                           str(big), str(cpus)], capture_output=True, text=True, timeout=300,
                          check=False)
    if cpus == 1:
        assert done.returncode == 0, done.stderr
        assert int(done.stdout) > 10_000
    else:
        assert "a parser process was started" in done.stderr


def _importing(db: Path, process: subprocess.Popen[bytes]) -> int:
    """The run another process's import is writing, once it has begun."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the first import ended before the second began"
        if db.exists():
            # the schema may not be there yet
            with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn, \
                    contextlib.suppress(sqlite3.OperationalError):
                row = conn.execute("SELECT run_id FROM runs WHERE status = 'importing'").fetchone()
                if row:
                    return int(row[0])
        time.sleep(0.02)
    raise AssertionError("the first import began no run within 60 s")


def test_an_import_of_bytes_another_process_is_importing_waits_for_it(
        tmp_path: Path, big_output: Path) -> None:
    """A CLI import beside an MCP server's, two agents' servers: the second import reads
    nothing of the file and answers with the first's run (it parsed it a second time, and
    threw its rows away at the end). Cancelled while waiting, it leaves the first alone."""
    db, copy = tmp_path / "s.db", tmp_path / "copy.xml"  # another path: found by its hash
    copy.write_bytes(big_output.read_bytes())
    first = subprocess.Popen([sys.executable, "-m", "rf_log_mcp", "import", str(big_output),
                              "--db", str(db), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run_id = _importing(db, first)
    conn = open_store(db)
    told: list[tuple[int, int, int]] = []

    def cancel(done: int, total: int, nodes: int) -> None:
        told.append((done, total, nodes))
        raise ImportCancelled(copy)

    with pytest.raises(ImportCancelled):
        import_result(conn, copy, progress=cancel)
    assert told == [(0, copy.stat().st_size, 0)]
    told.clear()
    outcome = import_result(conn, copy, progress=lambda *report: told.append(report))
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert json.loads(out)["run_id"] == run_id
    assert (outcome.run_id, outcome.status, outcome.deduplicated) == (run_id, "complete", True)
    assert told and {done for done, _, _ in told} == {0}  # waited; read no byte of the file
    assert conn.execute("SELECT run_id, status FROM runs").fetchall() == [(run_id, "complete")]


def test_an_import_waiting_for_another_that_dies_imports_the_file_itself(
        tmp_path: Path, big_output: Path) -> None:
    db = tmp_path / "s.db"
    first = subprocess.Popen([sys.executable, "-m", "rf_log_mcp", "import", str(big_output),
                              "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dead = _importing(db, first)
    told: list[int] = []

    def kill_the_first(done: int, _total: int, _nodes: int) -> None:
        if not told:
            first.kill()
            first.wait()
        told.append(done)

    conn = open_store(db)
    outcome = import_result(conn, big_output, progress=kill_the_first)
    assert outcome.status == "complete" and not outcome.deduplicated and outcome.run_id != dead
    assert told[0] == 0 and told[-1] == big_output.stat().st_size  # waited, then read it all
    assert conn.execute("SELECT status FROM runs WHERE run_id = ?", (dead,)).fetchone() == (
        "importing",)  # the dead one's rows: the next import's reaper removes them
    assert outcome.node_count == import_result(open_store(tmp_path / "ref.db"), big_output).node_count
