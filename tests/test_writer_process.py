"""Where live capture writes: in robot's process or a writer process (forked, spawned,
handed over mid-run with the writer's state), and when the store is checkpointed."""

from __future__ import annotations

import os
import pickle
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from oracle import dump_store
from robot_runs import robot

from rf_log_listener.flushing import ENV_HAND_OVER
from rf_log_listener.importers import import_result
from rf_log_listener.listener import EARLY_CHECKPOINT_BYTES
from rf_log_listener.store import open_store
from rf_log_mcp import service

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
