"""The store's set-up and the `rf-log-mcp` command line, run as real processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS, LineReader, cli, fixture_files

from rf_log_listener.errors import ResultError
from rf_log_listener.store import (
    EXIT_OPEN_FRAMES,
    SCHEMA_VERSION,
    default_store_path,
    open_store,
    wal_frames,
)

XML = FIXTURE_RESULTS / "7.5" / "output.xml"


def test_wal_frames_counts_what_a_checkpoint_would_copy(db_path: Path) -> None:
    """Read from the WAL index without a connection: the frames written since the last
    checkpoint, none once one has copied them, none without a WAL index."""
    assert wal_frames(str(db_path)) == 0  # no store yet
    conn = open_store(db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert wal_frames(str(db_path)) == 0
    conn.execute("CREATE TABLE scratch (blob BLOB)")
    conn.execute("INSERT INTO scratch VALUES (zeroblob(200000))")  # 49 pages of 4 KiB at least
    frames = wal_frames(str(db_path))
    assert frames >= 200_000 // 4096, frames
    reader = open_store(db_path)  # another connection sees the same index
    assert reader.execute("SELECT length(blob) FROM scratch").fetchone() == (200_000,)
    assert conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone() == (0, frames, frames)
    assert wal_frames(str(db_path)) == 0
    conn.execute("INSERT INTO scratch VALUES (1)")
    assert 1 <= wal_frames(str(db_path)) <= 3
    reader.close()
    conn.close()  # the last connection checkpoints and removes the WAL and its index
    assert wal_frames(str(db_path)) == 0


def test_a_read_command_leaves_a_small_wal_to_the_next_connection(tmp_path: Path) -> None:
    """Issue #19: a command that only reads writes its usage record; closing the store as
    its last connection would checkpoint it and delete the WAL (four fsyncs a command with
    the next one's). While the WAL is small the command leaves it: its frames stay committed
    and the next connection reads them; past EXIT_OPEN_FRAMES the command checkpoints."""
    db = tmp_path / "store.sqlite3"
    assert cli("import", str(XML), db=db).returncode == 0
    assert wal_frames(str(db)) == 0  # the import closed its store: checkpointed
    assert cli("summary", "latest", db=db).returncode == 0
    after_one = wal_frames(str(db))
    assert 0 < after_one <= EXIT_OPEN_FRAMES
    assert cli("tree", "latest", db=db).returncode == 0
    assert after_one < wal_frames(str(db)) <= EXIT_OPEN_FRAMES  # appended, not checkpointed
    conn = open_store(db)  # rebuilds the WAL's index from what the commands left
    assert [v for (v,) in conn.execute("SELECT view FROM usage_calls ORDER BY at")] == [
        "summary", "tree"]
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # a WAL past the bound, left by a process that ended without closing the store
    writer = ("import os, sys\nfrom rf_log_listener.store import open_store\n"
              "conn = open_store(sys.argv[1])\nconn.execute('CREATE TABLE scratch (b BLOB)')\n"
              f"conn.execute('INSERT INTO scratch VALUES (zeroblob({(EXIT_OPEN_FRAMES + 8) * 4096}))')\n"
              "os._exit(0)\n")
    conn.close()
    subprocess.run([sys.executable, "-c", writer, str(db)], check=True)
    assert wal_frames(str(db)) > EXIT_OPEN_FRAMES
    assert cli("failures", "latest", db=db).returncode == 0
    assert wal_frames(str(db)) == 0  # checkpointed and removed by the command's close
    conn = open_store(db)
    views = [v for (v,) in conn.execute("SELECT view FROM usage_calls ORDER BY at")]
    assert views[:2] == ["summary", "tree"] and len(views) > 2 and "summary" not in views[2:]
    assert conn.execute("SELECT length(b) FROM scratch").fetchone() == ((EXIT_OPEN_FRAMES + 8) * 4096,)
    conn.close()


def test_schema_wal_and_version(db_path: Path) -> None:
    conn = open_store(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "nodes", "messages", "messages_fts", "errors", "meta"} <= tables
    conn.close()
    assert open_store(db_path).execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_store_newer_than_code_is_refused(db_path: Path) -> None:
    open_store(db_path).execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(ResultError) as info:
        open_store(db_path)
    assert info.value.code == "STORE_UNAVAILABLE" and "999" in info.value.message


def test_default_path_and_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RF_LOG_MCP_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_store_path() == str(tmp_path / "xdg" / "rf-log-mcp" / "store.sqlite3")
    monkeypatch.setenv("RF_LOG_MCP_DB", str(tmp_path / "deep" / "er" / "x.db"))
    assert default_store_path() == str(tmp_path / "deep" / "er" / "x.db")
    open_store().close()  # parent folders are created
    assert (tmp_path / "deep" / "er" / "x.db").exists()


def test_unwritable_store_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ResultError) as info:
        open_store(blocker / "store.sqlite3")
    assert info.value.code == "STORE_UNAVAILABLE"
    assert str(blocker / "store.sqlite3") in info.value.message


def test_cli_import_json_payload_and_exit_codes(tmp_path: Path) -> None:
    env = {"RF_LOG_MCP_DB": str(tmp_path / "s.db")}
    ok = cli("import", str(XML), "--json", env=env)
    assert ok.returncode == 0, ok.stderr
    payload = json.loads(ok.stdout)
    assert payload["ok"] is True and payload["run_id"] == 1 and payload["source_format"] == "xml"
    assert (payload["total"], payload["passed"], payload["failed"], payload["skipped"]) == (25, 12, 11, 2)
    again = json.loads(cli("import", str(XML), "--json", env=env).stdout)
    assert again["run_id"] == 1 and again["deduplicated"] is True

    cut = tmp_path / "cut.xml"
    cut.write_bytes(XML.read_bytes()[:300_000])
    os.utime(cut, (1e9, 1e9))
    bad = cli("import", str(cut), "--json", env=env)
    assert bad.returncode == 1
    error_payload = json.loads(bad.stdout)
    assert error_payload["ok"] is False and "run_id" not in error_payload
    assert error_payload["error"]["code"] == "INCOMPLETE_RESULT"
    assert "allow_incomplete" in error_payload["error"]["hint"]
    salvaged = json.loads(cli("import", str(cut), "--json", "--allow-incomplete", env=env).stdout)
    assert salvaged["ok"] and salvaged["status"] == "interrupted" and salvaged["run_id"] == 2

    missing = cli("import", str(tmp_path / "none.xml"), env=env)
    assert missing.returncode == 1 and "FILE_NOT_FOUND" in missing.stderr
    assert cli("import", env=env).returncode == 2  # usage

    # several files (a shell's glob): each in turn, a failing one said and skipped, exit 1
    json_file = next(p for p in fixture_files() if p.name == "output.json")
    several = cli("import", str(XML), str(tmp_path / "none.xml"), str(json_file), env=env)
    assert several.returncode == 1
    lines = several.stdout.splitlines()
    assert lines[0].startswith(f"{XML}: run 1 (already imported): ") and len(lines) == 2
    assert lines[1].startswith(f"{json_file}: run 3: ")
    assert several.stderr.startswith(f"error [FILE_NOT_FOUND]: {tmp_path / 'none.xml'}: ")
    assert several.stderr.splitlines()[1].startswith("hint: Pass the path of an output.xml")
    listed = json.loads(cli("import", str(json_file), str(cut), "--json", env=env).stdout)
    assert [(a["path"], a["ok"], a.get("run_id")) for a in listed] == [
        (str(json_file), True, 3), (str(cut), False, None)]
    assert listed[1]["error"]["code"] == "INCOMPLETE_RESULT"


def test_cli_summary_and_failures(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert cli("import", str(XML), "--db", db).returncode == 0
    response = json.loads(cli("summary", "1", "--db", db, "--json").stdout)
    assert response["ok"] is True and response["run_id"] == 1 and response["view"] == "summary"
    summary = response["summary"]
    assert summary["totals"] == {"total": 25, "passed": 12, "failed": 11, "skipped": 2}
    failed = {t["name"]: t["message"] for t in summary["failed_tests"]}
    assert failed["Long Loop With One Failing Iteration"] == "700 == 700"
    assert [e["level"] for e in summary["errors"]] == ["ERROR", "WARN", "ERROR"]

    failures = json.loads(cli("failures", "1", "--db", db, "--test", "s1-s2-t1", "--json").stdout)
    path = failures["failures"][0]["path"]
    assert [step["node_id"] for step in path] == [
        "s1-s2-t1", "s1-s2-t1-k1", "s1-s2-t1-k1-k701", "s1-s2-t1-k1-k701-k1", "s1-s2-t1-k1-k701-k1-k1",
    ]
    assert path[-1]["messages"] == [  # not BuiltIn's "Argument types are:" (int and str)
        {"id": "s1-s2-t1-k1-k701-k1-k1-m2", "level": "FAIL", "text": "700 == 700"},
    ]

    text = cli("summary", "1", "--db", db).stdout
    assert "25 tests: 12 passed, 11 failed, 2 skipped" in text
    # right after a run: no run id is the newest (before, "the following arguments are required")
    assert cli("summary", "--db", db).stdout == text
    newest = cli("failures", "--db", db, "--test", "s1-s2-t1")
    assert newest.returncode == 0 and "Failure path of s1-s2-t1:" in newest.stdout
    missing = cli("summary", "9", "--db", db)
    assert missing.returncode == 1 and "RUN_NOT_FOUND" in missing.stderr


def test_demo_runs_robot_on_its_own_suite_and_prints_failures(tmp_path: Path) -> None:
    done = cli("demo", "--outputdir", str(tmp_path / "out"), cwd=tmp_path,  # from any folder
               env={"RF_LOG_MCP_DB": str(tmp_path / "s.db")})
    assert done.returncode == 0, done.stderr
    assert "5 tests: 2 passed, 3 failed, 0 skipped" in done.stdout
    assert "Login failed with HTTP 503: 503 != 200" in done.stdout
    assert "Failure path of" in done.stdout and "pear is out of stock" in done.stdout
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("SELECT status, origin FROM runs").fetchall() == [("complete", "import")]


def test_store_of_schema_1_is_migrated_on_open(db_path: Path) -> None:
    conn = open_store(db_path)
    conn.execute("DROP INDEX nodes_failed")
    conn.execute("DROP INDEX messages_notable")
    conn.execute("DROP INDEX nodes_notable")
    conn.execute("DROP TABLE secrets")
    conn.execute("ALTER TABLE runs DROP COLUMN output_dir")
    conn.execute("DROP INDEX nodes_with_message")
    conn.execute("DROP INDEX messages_html")
    conn.execute("DROP TABLE definitions")
    conn.execute("DROP INDEX runs_by_name")
    conn.execute("DROP INDEX runs_by_group")
    conn.execute("DROP INDEX runs_by_content")
    for column in ("ci", "run_group", "tests_indexed", "content_hash", "dry_run", "copy_of"):
        conn.execute(f"ALTER TABLE runs DROP COLUMN {column}")
    for table in ("run_tests", "test_names", "signatures", "usage_calls", "usage_imports"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    conn = open_store(db_path)
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)
    for index in ("nodes_failed", "messages_notable", "nodes_notable", "secrets", "messages_html",
                  "definitions", "nodes_with_message", "run_tests", "run_tests_by_name",
                  "run_tests_by_signature", "test_names", "signatures", "runs_by_name",
                  "runs_by_group", "usage_calls", "usage_imports", "usage_calls_by_time",
                  "runs_by_content"):
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (index,)).fetchone(), index
    assert {"output_dir", "ci", "run_group", "tests_indexed", "content_hash", "dry_run", "copy_of"} <= {
        row[1] for row in conn.execute("PRAGMA table_info(runs)")}


_OPEN_AT = """
import sys, time
from rf_log_listener.store import open_store
start = float(sys.argv[2])
while time.time() < start:
    pass
open_store(sys.argv[1]).close()
"""


def test_processes_opening_a_new_store_at_the_same_moment_all_succeed(tmp_path: Path) -> None:
    # Two processes that both read a new store and then both switch it to WAL: SQLite answers
    # one of them "database is locked" at once, without waiting (it would deadlock).
    for round_no in range(8):
        db = tmp_path / f"new{round_no}.sqlite3"
        start = time.time() + 0.6
        processes = [subprocess.Popen([sys.executable, "-c", _OPEN_AT, str(db), str(start)],
                                      stderr=subprocess.PIPE, text=True) for _ in range(6)]
        errors = [p.communicate(timeout=60)[1] for p in processes]
        assert all(p.returncode == 0 for p in processes), errors
        assert open_store(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_cli_tree_window_search_and_doctor(tmp_path: Path) -> None:
    env = {"RF_LOG_MCP_DB": str(tmp_path / "s.db")}
    assert cli("import", str(XML), env=env).returncode == 0
    tree = cli("tree", "1", "s1-s2-t1-k1", env=env)
    assert tree.returncode == 0 and "\033[" not in tree.stdout  # no colour when not a terminal
    lines = tree.stdout.splitlines()
    assert lines[0].startswith("FOR s1-s2-t1-k1") and "1100 children" in lines[0]
    assert "ITERATION_GROUP 700 passing iterations s1-s2-t1-k1-k1 … s1-s2-t1-k1-k700" in lines[1]
    assert "ITERATION s1-s2-t1-k1-k701" in lines[2] and "${i}=700" in lines[2]
    assert "(2 failed nodes below)" in lines[2]  # what is counted: nodes, not tests
    assert lines[3].strip() == "700 == 700"
    as_json = json.loads(cli("tree", "latest", "s1-s2-t1-k1", "--json", env=env).stdout)
    assert as_json["ok"] and len(as_json["tree"]["children"]) == 3

    window = cli("window", "1", "s1-s2-t1-k1-k701-k1-k1", "--page-size", "5", env=env).stdout
    centre = [line for line in window.splitlines() if line.startswith("▶")]
    assert len(centre) == 1 and "s1-s2-t1-k1-k701-k1-k1" in centre[0]
    assert "--cursor" in window
    page = json.loads(cli("window", "1", "s1-s2-t1-k1-k701-k1-k1", "--page-size", "5", "--json",
                          env=env).stdout)
    after = json.loads(cli("window", "1", "s1-s2-t1-k1-k701-k1-k1", "--page-size", "5", "--json",
                           "--cursor", page["next_cursor"], env=env).stdout)
    assert after["step_window"]["position"] == page["step_window"]["position"] + 5

    found = cli("search", "1", "700", "--level", "fail", env=env).stdout.splitlines()
    assert found[0].startswith("FAIL  s1-s2-t1-k1-k701-k1-k1-m2")
    assert "ITERATION ${i}=700" in found[0] and found[1].strip() == "700 == 700"
    nothing = cli("search", "latest", env=env)
    assert nothing.returncode == 1 and "INVALID_QUERY" in nothing.stderr
    assert cli("search", "1", env=env).stdout == cli("search", "latest", "1", env=env).stdout
    assert cli("search", "1", "--level", "LOUD", env=env).returncode == 2

    summary = cli("summary", "1", "--page-size", "2", env=env).stdout
    more = next(line for line in summary.splitlines() if "more failed tests" in line)
    cursor = more.split("--cursor ")[1]
    page_two = cli("summary", "1", "--page-size", "2", "--cursor", cursor, env=env)
    assert page_two.returncode == 0 and "Failed tests:" in page_two.stdout  # the hint works

    doctor = cli("doctor", env=env)
    assert doctor.returncode == 0, doctor.stdout
    assert doctor.stdout.splitlines()[-1] == f"OK: ready; 1 run in {tmp_path / 's.db'}"
    facts = json.loads(cli("doctor", "--json", env=env).stdout)
    assert facts["schema_version"] == SCHEMA_VERSION and facts["writable"] is True
    assert facts["integrity"] == "ok" and facts["robotframework"] and facts["mcp"]
    (tmp_path / "file").write_text("")
    broken = cli("doctor", "--db", str(tmp_path / "file" / "s.db"), env=env)
    assert broken.returncode == 1 and broken.stdout.splitlines()[-1].startswith("PROBLEM: ")

    for command in ("", "import", "runs", "summary", "failures", "tree", "window", "search",
                    "watch", "doctor", "serve", "demo"):
        helped = cli(*([command] if command else []), "--help", env=env)
        assert helped.returncode == 0 and "usage: rf-log-mcp" in helped.stdout, command


_LIVE_SUITE = """\
*** Settings ***
Library    OperatingSystem

*** Test Cases ***
First
    Wait Until Created    ${CURDIR}/go    timeout=300s
Second
    Fail    boom
Third
    Log    done
"""


def test_cli_watch_follows_a_live_run(tmp_path: Path) -> None:
    """watch starts before robot and waits for it; robot waits in its first test until watch
    has shown it running (the test says go), so neither side depends on the machine's speed."""
    env = {**os.environ, "RF_LOG_MCP_DB": str(tmp_path / "s.db")}
    (tmp_path / "live.robot").write_text(_LIVE_SUITE)
    watch = LineReader([sys.executable, "-m", "rf_log_mcp", "watch", "--interval", "0.2"], env=env)
    watch.wait_for(lambda line: line.startswith("waiting for a robot run"))
    assert not (tmp_path / "s.db").exists()  # waiting creates no store
    robot = subprocess.Popen([sys.executable, "-m", "robot", "--output", "NONE", "--report", "NONE",
                              "--log", "NONE", "--console", "none", "--listener", "rf_log_listener",
                              "live.robot"], cwd=tmp_path, env=env)
    watch.wait_for(lambda line: line.startswith("run 1 running: 0 passed, 0 failed") and "First" in line)
    (tmp_path / "go").touch()
    assert robot.wait(300) == 1
    lines = watch.finish()
    assert "FAIL s1-t2 Second: boom" in lines
    final = lines[lines.index("FAIL s1-t2 Second: boom") + 1:]
    summary = next(i for i, line in enumerate(final) if line.startswith("Run 1: "))
    assert final[summary] == "Run 1: Live  FAIL  (complete)"
    assert final[summary + 1] == "  3 tests: 2 passed, 1 failed, 0 skipped"
    status = [line for line in lines if line.startswith("run 1 running: ")]
    # in a pipe: a line when a test starts or ends (3 tests: at most 7), none wider than 200
    assert 1 <= len(status) <= 7 and all(len(line) <= 200 for line in status), status


def test_cli_watch_follows_a_run_that_started_and_ended_between_two_looks(tmp_path: Path) -> None:
    """A short suite may start and end while watch waits between two looks: watch followed
    only a running run, so it waited for another, forever (a CI step that waits on it hung).
    A run stored after watch started is followed whatever its status; one stored before
    (run 1 here) is not."""
    env = {**os.environ, "RF_LOG_MCP_DB": str(tmp_path / "s.db")}
    (tmp_path / "quick.robot").write_text("*** Test Cases ***\nQuick\n    Fail    quick boom\n")
    robot = [sys.executable, "-m", "robot", "--output", "NONE", "--report", "NONE", "--log",
             "NONE", "--console", "none", "--listener", "rf_log_listener", "quick.robot"]
    assert subprocess.run(robot, cwd=tmp_path, env=env).returncode == 1  # run 1: before watch
    watch = LineReader([sys.executable, "-m", "rf_log_mcp", "watch", "--interval", "4"], env=env)
    try:
        watch.wait_for(lambda line: line.startswith("waiting for a robot run"))
        assert subprocess.run(robot, cwd=tmp_path, env=env).returncode == 1  # run 2, whole
        lines = watch.finish(120)
    finally:
        watch.process.kill()
    assert "FAIL s1-t1 Quick: quick boom" in lines
    assert "Run 2: Quick  FAIL  (complete)" in lines and "Run 1: Quick  FAIL  (complete)" not in lines


def test_prune_deletes_finished_runs_in_chunks_and_gives_space_back(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    env = {"RF_LOG_MCP_DB": str(db)}
    sources = [FIXTURE_RESULTS / "7.0.1" / "output.xml", FIXTURE_RESULTS / "7.5" / "rebot.json",
               XML]
    for source in sources:
        assert cli("import", str(source), env=env).returncode == 0
    conn = open_store(db)
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
    conn.execute("UPDATE runs SET status = 'running', pid = ? WHERE run_id = 1", (os.getpid(),))
    assert cli("prune", env=env).returncode == 2  # a criterion is required

    dry = json.loads(cli("prune", "--keep", "0", "--dry-run", "--json", env=env).stdout)
    assert dry["chosen"] == [2, 3] and dry["deleted"] == []  # run 1 is running: never
    assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 3

    done = json.loads(cli("prune", "--keep", "1", "--json", env=env).stdout)
    assert done["deleted"] == [2] and done["pages_released"] > 0
    assert done["bytes_after"] < done["bytes_before"]
    assert [r for (r,) in conn.execute("SELECT run_id FROM runs ORDER BY run_id")] == [1, 3]
    assert conn.execute("SELECT count(*) FROM nodes WHERE run_id = 2").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM messages WHERE run_id = 2").fetchone()[0] == 0
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")  # FTS intact
    gone = json.loads(cli("summary", "2", "--json", env=env).stdout)
    assert gone["error"]["code"] == "RUN_NOT_FOUND"
    found = json.loads(cli("search", "3", "700", "--level", "FAIL", "--json", env=env).stdout)
    assert found["hits"][0]["text"] == "700 == 700"

    # a prune killed half-way leaves a 'deleting' run: invisible, and finished next time
    conn.execute("UPDATE runs SET status = 'deleting' WHERE run_id = 3")
    assert json.loads(cli("runs", "--json", env=env).stdout)["runs"] == [
        json.loads(cli("runs", "--json", env=env).stdout)["runs"][0]]
    later = json.loads(cli("prune", "--run", "99", "--json", env=env).stdout)
    assert later["deleted"] == [3]
    old = json.loads(cli("prune", "--older-than", "1", "--json", env=env).stdout)
    assert old["deleted"] == []  # the running run is new, and running
