"""Bad input gives a structured error with a stable code and leaves no run behind."""

from __future__ import annotations

import gzip
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS, all_at_once, race_for_the_write_lock

from rf_log_listener.errors import ResultError
from rf_log_listener.importers import import_result
from rf_log_listener.importers.xml_source import XmlSource
from rf_log_listener.store import STALE_HEARTBEAT_S, open_store, reap_stale_runs

XML = FIXTURE_RESULTS / "7.5" / "output.xml"
JSON = FIXTURE_RESULTS / "7.5" / "output.json"


def _error(conn: sqlite3.Connection, path: Path, **kwargs: object) -> ResultError:
    with pytest.raises(ResultError) as info:
        import_result(conn, path, stable_window=0, **kwargs)
    return info.value


def _run_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM runs").fetchone()[0]


def _leftovers(conn: sqlite3.Connection) -> tuple[int, int, int, int]:
    return tuple(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[return-value]
                 for t in ("runs", "nodes", "messages", "errors"))


def test_missing_file_and_directory(conn: sqlite3.Connection, tmp_path: Path) -> None:
    err = _error(conn, tmp_path / "nope.xml")
    assert err.code == "FILE_NOT_FOUND" and "nope.xml" in err.message
    err = _error(conn, tmp_path)
    assert err.code == "FILE_NOT_FOUND" and "directory" in err.message
    assert err.hint == "Pass the output.xml or output.json inside it."
    (tmp_path / "output.xml").write_bytes(XML.read_bytes())
    (tmp_path / "output-rerun.json").write_bytes(JSON.read_bytes())
    (tmp_path / "notes.xml").write_text("<notes/>")
    err = _error(conn, tmp_path)  # the folder robot wrote: its result files are named
    assert err.hint == (f"Pass the output.xml or output.json inside it: {tmp_path / 'output-rerun.json'},"
                        f" {tmp_path / 'output.xml'}.")
    # pabot's folder (a CI artifact's): a process's result in a folder of its own, named too
    for process in ("0", "1"):
        (tmp_path / "pabot_results" / process).mkdir(parents=True)
        (tmp_path / "pabot_results" / process / "output.xml").write_bytes(XML.read_bytes())
    err = _error(conn, tmp_path / "pabot_results")
    assert err.hint == ("Pass the output.xml or output.json inside it:"
                        f" {tmp_path / 'pabot_results' / '0' / 'output.xml'},"
                        f" {tmp_path / 'pabot_results' / '1' / 'output.xml'}.")


def test_robots_html_log_and_report_are_named_as_such(conn: sqlite3.Connection,
                                                      tmp_path: Path) -> None:
    """log.html is what people have at hand after a run: told what it is and which file to
    import instead (before: "The file declares a DOCTYPE")."""
    import subprocess
    import sys

    (tmp_path / "output.xml").write_bytes(XML.read_bytes())
    done = subprocess.run([sys.executable, "-m", "robot.rebot", "--outputdir", str(tmp_path),
                           "--log", "log.html", "--report", "report.html", str(tmp_path / "output.xml")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert (tmp_path / "log.html").is_file(), done.stderr
    for page in ("log.html", "report.html"):
        err = _error(conn, tmp_path / page)
        assert (err.code, err.message) == ("UNSUPPORTED_FORMAT", f"{tmp_path / page} is an HTML page"
                                           " (robot's log.html or report.html?), not a result file.")
        assert err.hint == ("Import the output.xml or output.json robot wrote beside it (log.html"
                            f" and report.html are made from it): {tmp_path / 'output.xml'}.")
    assert _leftovers(conn) == (0, 0, 0, 0)


@pytest.mark.parametrize(("content", "code", "phrase"), [
    (b"", "INCOMPLETE_RESULT", "empty"),
    (gzip.compress(XML.read_bytes()[:2000]), "UNSUPPORTED_FORMAT", "gzip"),
    (b"\x00\x01\x02binary\xff" * 10, "UNSUPPORTED_FORMAT", "binary"),
    (b"hello, world", "UNSUPPORTED_FORMAT", "neither XML nor JSON"),
    (b'<?xml version="1.0"?>\n<testsuite name="x" tests="1"><testcase name="a"/></testsuite>',
     "UNSUPPORTED_FORMAT", "xUnit"),
    (b'<?xml version="1.0"?>\n<robot generator="Robot 3.2.2 (Python 3.8)" generated="20200101 '
     b'10:00:00.000"><suite id="s1" name="A"></suite></robot>', "UNSUPPORTED_FORMAT", "RF 3.x"),
    (b'<robot generator="Robot 7.5" schemaversion="5"><suite id="s1" name="A"><<</suite></robot>',
     "INVALID_XML", "line 1"),
    (b'<robot generator="Robot 7.5" schemaversion="5"><suite name="A"><status status="PASS"/>'
     b'</suite></robot>junk', "INVALID_XML", "after"),
    (b'<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot>&x;</robot>',
     "INVALID_XML", "DOCTYPE"),
    (b'{"name": "Bare", "tests": []}', "UNSUPPORTED_FORMAT", "bare suite"),
    # found by tests/test_fuzz.py: well-formed, but not what RF writes
    (b'<robot generator="Robot 7.5" schemaversion="5"><test id="t1" name="A"><status status="PASS"/>'
     b'</test></robot>', "UNSUPPORTED_FORMAT", "holds a TEST at the top"),
    (b'<robot generator="Robot 7.5" schemaversion="5"><suite id="s1" name="A"><status status="PASS"'
     b' start="2026-01-01T00:00:00" elapsed=":0.002"/></suite></robot>', "INVALID_XML",
     "could not convert"),
    (b'{"generator": "Robot 7.5", "suite": {"id": "s1", "name": "A", "tests": [], "status": "PASS",'
     b' "elapsed_time": "soon"}}', "INVALID_JSON", "could not convert"),
    (b'{"generator": "Robot 7.5", "suite": {"id": "s1", "name": "A", "tests": [], "status": "PASS"}}'
     b' trailing', "INVALID_JSON", "Invalid JSON"),
    # damaged inside, not cut: ijson's first read (of nothing, to learn the file's type) was
    # taken for the file's end, so any error read as a cut file
    (b'{"generator": "Robot 7.5", "suite": {"id": "s1", "name": "A" # "tests": []}}',
     "INVALID_JSON", "Invalid JSON"),
    (b"[1, 2, 3]", "UNSUPPORTED_FORMAT", "list"),
    # robot wrote a test inside a keyword once a listener's keywords recursed past RF's limit
    # (RF's reader: "Incompatible child element 'test' for 'kw'"); before: IMPORT_FAILED's
    # AttributeError, "a bug in rf-log-mcp"
    (b'<robot generator="Robot 7.5" schemaversion="5"><suite id="s1" name="A"><kw name="Log">'
     b'<test id="s1-t1" name="T"><status status="PASS"/></test><status status="PASS"/></kw>'
     b'<status status="PASS"/></suite></robot>', "UNSUPPORTED_FORMAT",
     "holds a test inside a KEYWORD at depth 3"),
    (b'{"generator": "Robot 7.5", "suite": {"id": "s1", "name": "A", "body": [{"name": "Log",'
     b' "suites": [{"name": "B"}]}]}}', "UNSUPPORTED_FORMAT", "holds a suite inside a KEYWORD at depth 3"),
    # a run's errors without its suite (seen from a robot that could not import its
    # libraries): before, the store refused the errors' rows (STORE_UNAVAILABLE)
    (b'<robot generator="Robot 7.5" schemaversion="5"><errors><msg time="2026-12-02T20:54:52"'
     b' level="ERROR">Importing library failed</msg></errors></robot>', "UNSUPPORTED_FORMAT",
     "no <suite>"),
    (b'<robot generator="Robot 7.5" schemaversion="5"></robot>', "UNSUPPORTED_FORMAT", "no <suite>"),
    (b'{"generator": "Robot 7.5", "errors": [{"message": "x", "level": "ERROR"}]}',
     "UNSUPPORTED_FORMAT", "no 'suite'"),
])
def test_foreign_and_broken_files(conn: sqlite3.Connection, tmp_path: Path, content: bytes,
                                  code: str, phrase: str) -> None:
    path = tmp_path / "result.xml"
    path.write_bytes(content)
    err = _error(conn, path)
    assert err.code == code
    assert phrase.lower() in err.message.lower()
    assert _leftovers(conn) == (0, 0, 0, 0)


@pytest.mark.parametrize("source", [XML, JSON], ids=["xml", "json"])
def test_cut_files_are_incomplete_at_every_fiftieth(conn: sqlite3.Connection, tmp_path: Path,
                                                    source: Path) -> None:
    data = source.read_bytes()
    for step in range(1, 50):
        cut = tmp_path / f"cut{step}{source.suffix}"
        cut.write_bytes(data[: len(data) * step // 50])
        err = _error(conn, cut)
        assert err.code == "INCOMPLETE_RESULT", (step, err.code, err.message)
        assert _leftovers(conn) == (0, 0, 0, 0), step


@pytest.mark.parametrize("source", [XML, JSON], ids=["xml", "json"])
def test_cut_file_prefix_imports_as_interrupted(conn: sqlite3.Connection, tmp_path: Path,
                                                source: Path) -> None:
    data = source.read_bytes()
    cut = tmp_path / f"cut{source.suffix}"
    cut.write_bytes(data[: len(data) // 2])
    outcome = import_result(conn, cut, stable_window=0, allow_incomplete=True)
    assert outcome.status == "interrupted"
    open_nodes = conn.execute(
        "SELECT node_id, type FROM nodes WHERE run_id = ? AND status = 'NOT FINISHED' ORDER BY key",
        (outcome.run_id,),
    ).fetchall()
    # the root suite, the suite and test being written, and what was open inside it
    assert open_nodes[0] == ("s1", "SUITE")
    assert [t for _, t in open_nodes].count("TEST") == 1
    finished = conn.execute(
        "SELECT count(*) FROM nodes WHERE run_id = ? AND status IN ('PASS', 'FAIL')",
        (outcome.run_id,),
    ).fetchone()[0]
    assert finished > 500
    # the same cut bytes again: the same interrupted run
    again = import_result(conn, cut, stable_window=0, allow_incomplete=True)
    assert again.run_id == outcome.run_id and again.deduplicated
    # without the option, the cut file is still refused
    assert _error(conn, cut).code == "INCOMPLETE_RESULT"


@pytest.mark.parametrize("window", [0.5, 0.0])
def test_file_still_being_written_is_refused(conn: sqlite3.Connection, tmp_path: Path,
                                             window: float) -> None:
    """With a window the file is watched first; without one (the default: no fixed wait)
    the parse itself finds it cut, or its size, time or inode moved during the parse."""
    data = XML.read_bytes()
    growing = tmp_path / "output.xml"
    growing.write_bytes(data[:1000])
    stop = threading.Event()

    def append() -> None:
        position = 1000
        while not stop.is_set() and position < len(data):
            with growing.open("ab") as fh:
                fh.write(data[position: position + 500])
            position += 500
            time.sleep(0.05)

    writer = threading.Thread(target=append)
    writer.start()
    try:
        with pytest.raises(ResultError) as info:
            import_result(conn, growing, stable_window=window)
    finally:
        stop.set()
        writer.join()
    assert info.value.code == "INCOMPLETE_RESULT"
    if window:
        assert "still being written" in info.value.message
    assert _leftovers(conn) == (0, 0, 0, 0)


def test_same_bytes_give_same_run_without_parsing_again(
    conn: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = import_result(conn, XML, stable_window=0)
    copy = tmp_path / "copy-of-output.xml"
    copy.write_bytes(XML.read_bytes())

    def must_not_parse(*_args: object, **_kwargs: object) -> bool:
        raise AssertionError("parsed again")

    monkeypatch.setattr(XmlSource, "feed_file", must_not_parse)
    same_path = import_result(conn, XML, stable_window=0)
    other_path = import_result(conn, copy, stable_window=0)
    assert first.run_id == same_path.run_id == other_path.run_id
    assert same_path.deduplicated and other_path.deduplicated and not first.deduplicated
    assert _run_count(conn) == 1


def test_interrupted_import_leaves_nothing(conn: sqlite3.Connection) -> None:
    calls = []

    def ctrl_c(done: int, total: int, nodes: int) -> None:
        calls.append(done)
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_result(conn, JSON, stable_window=0, progress=ctrl_c)
    assert calls
    assert _leftovers(conn) == (0, 0, 0, 0)
    assert conn.execute("SELECT count(*) FROM messages_fts").fetchone()[0] == 0
    # and the file imports fine afterwards
    assert import_result(conn, JSON, stable_window=0).status == "complete"


def _stale_import(conn: sqlite3.Connection, pid: int = 999999999, host: str | None = None,
                  heartbeat: float | None = None) -> None:
    """Run 7, left 'importing' with a root node by a process that is gone (by default)."""
    now = time.time()
    conn.execute(
        "INSERT INTO runs (run_id, origin, status, pid, host, heartbeat, created_at, source_hash,"
        " source_format, source_size) VALUES (7, 'import', 'importing', ?, ?, ?, ?, 'x', 'xml', 1234)",
        (pid, host or os.uname().nodename, now if heartbeat is None else heartbeat, now),
    )
    conn.execute(
        "INSERT INTO nodes (key, last, seq, depth, node_id, type, status, child_count,"
        " failed_descendant_count, max_descendant_level, message_count, msg_lo, msg_hi)"
        " VALUES (?, 0, 0, 0, 's1', 'SUITE', 'PASS', 0, 0, 0, 0, 0, 0)", (7 << 32,),
    )


def test_stale_import_of_a_dead_process_is_reaped(conn: sqlite3.Connection) -> None:
    _stale_import(conn)
    outcome = import_result(conn, XML, stable_window=0)
    assert outcome.run_id != 7
    assert conn.execute("SELECT count(*) FROM runs WHERE run_id = 7").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM nodes WHERE run_id = 7").fetchone()[0] == 0


def test_a_stale_import_two_imports_reap_at_once_is_deleted_and_recorded_once(
        conn: sqlite3.Connection, db_path: Path) -> None:
    """Two imports starting together both find the dead import's run and ask in turn to
    delete it: the first deletes it and records it in the usage record ('reaped'), the
    second finds it gone and records nothing (it recorded it too)."""
    _stale_import(conn)
    reaped = race_for_the_write_lock(db_path, lambda _: None, reap_stale_runs, reap_stale_runs)
    assert sorted(reaped) == [[], [7]]
    assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0
    assert conn.execute("SELECT origin, outcome, format, input_bytes FROM usage_imports"
                        ).fetchall() == [("import", "reaped", "xml", 1234)]


def test_a_silent_import_that_publishes_while_it_is_reaped_is_kept(
        conn: sqlite3.Connection, db_path: Path) -> None:
    """An import on another host whose heartbeat is older than STALE_HEARTBEAT_S looks dead;
    if it publishes its run between the reaper's look and its delete, the run stays whole
    (the reaper deleted a complete run), and so does one whose heartbeat came in between."""
    _stale_import(conn, host="another-host", heartbeat=time.time() - 10 * STALE_HEARTBEAT_S)

    def publishes(holder: sqlite3.Connection) -> None:
        holder.execute("UPDATE runs SET status = 'complete' WHERE run_id = 7")

    assert race_for_the_write_lock(db_path, publishes, reap_stale_runs) == [[]]
    assert conn.execute("SELECT status FROM runs").fetchall() == [("complete",)]
    assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == 1

    def beats(holder: sqlite3.Connection) -> None:
        holder.execute("UPDATE runs SET status = 'importing', heartbeat = ? WHERE run_id = 7",
                       (time.time(),))

    conn.execute("UPDATE runs SET status = 'importing', heartbeat = ?",
                 (time.time() - 10 * STALE_HEARTBEAT_S,))
    assert race_for_the_write_lock(db_path, beats, reap_stale_runs) == [[]]
    assert conn.execute("SELECT status FROM runs").fetchall() == [("importing",)]
    assert conn.execute("SELECT count(*) FROM usage_imports").fetchone()[0] == 0


def test_a_stale_import_is_reaped_from_either_kind_of_store(any_store: sqlite3.Connection) -> None:
    """The reaper's check that the run is as it was judged, on SQLite and on PostgreSQL:
    a gone process's run (its heartbeat compared as it was read) is deleted and recorded."""
    _stale_import(any_store, host="another-host", heartbeat=time.time() - 10 * STALE_HEARTBEAT_S)
    assert reap_stale_runs(any_store) == [7]
    assert any_store.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert any_store.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0
    assert any_store.execute("SELECT outcome, input_bytes FROM usage_imports").fetchall() == [
        ("reaped", 1234)]


def test_two_imports_of_one_file_at_once_leave_one_run(conn: sqlite3.Connection,
                                                       db_path: Path) -> None:
    """Both look for the file's run before either has one, and both parse it: the one that
    publishes second finds the first's run complete, removes its own rows and answers with
    that run, as a later import of the same bytes does (there were two identical runs)."""
    def imports(connection: sqlite3.Connection) -> tuple[int, str, bool]:
        outcome = import_result(connection, XML, stable_window=0)
        return outcome.run_id, outcome.status, outcome.deduplicated

    first, second = sorted(race_for_the_write_lock(db_path, lambda _: None, imports, imports),
                           key=lambda result: result[2])
    run_id = first[0]  # runs 1 and 2 were begun; either may publish first
    assert first == (run_id, "complete", False) and second == (run_id, "complete", True)
    assert conn.execute("SELECT run_id, status FROM runs").fetchall() == [(run_id, "complete")]
    assert conn.execute("SELECT count(*) FROM nodes WHERE key < ? OR key >= ?",
                        (run_id << 32, (run_id + 1) << 32)).fetchone()[0] == 0
    # the full-text index holds the run's messages and nothing of the removed one (FTS5
    # compares its index with the content table; a count of messages_fts reads the table)
    conn.execute("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")


def test_imports_of_one_file_started_together_leave_one_run(any_store_spec: Path | str) -> None:
    """Four imports of the same file started at once, each on its own connection: one run,
    complete, whoever publishes first (on PostgreSQL a lock per file's hash orders the
    publications); the others answer with it."""
    open_store(any_store_spec).close()

    def imports(_: int) -> int:
        connection = open_store(any_store_spec)
        try:
            return import_result(connection, XML, stable_window=0).run_id
        finally:
            connection.close()

    answered = set(all_at_once(4, imports))
    conn = open_store(any_store_spec)
    complete = [run_id for (run_id,) in conn.execute("SELECT run_id FROM runs WHERE status = 'complete'")]
    assert len(complete) == 1 and answered == set(complete)
    assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    conn.close()
