"""PostgreSQL as the store (issue 21): the same answers as SQLite, from the same events.

A real server (tests/pg_server.py); the answers of every tool, view, page and error that
tests/test_answers.py walks through are compared, store against store, field by field.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_RESULTS, all_at_once, cli, without_keys
from oracle import as_postgresql_keeps_it, dump_store
from test_answers import _answers, fill

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

# What differs between two imports of the same bytes whatever the store: wall times.
_VOLATILE = {"seconds", "created_at", "finished_at", "imported_at", "heartbeat"}


def _stable(data: object) -> object:
    return without_keys(data, _VOLATILE)


def test_every_answer_on_postgresql_equals_sqlites(pg_url: str, tmp_path: Path) -> None:
    lite = open_store(tmp_path / "store.sqlite3")
    pg = open_store(pg_url)
    fill(lite)
    fill(pg)
    lite_answers = list(_answers(lite))
    pg_answers = list(_answers(pg))
    for (tool, expected), (pg_tool, got) in zip(lite_answers, pg_answers, strict=False):  # lengths: below
        assert pg_tool == tool
        assert _stable(got) == _stable(expected), tool
    assert len(pg_answers) == len(lite_answers) > 100
    oks = sum(1 for _, answer in pg_answers if answer.ok)
    assert oks > 100
    pg.close()
    lite.close()


def _database(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_the_command_line_works_on_postgresql_and_never_shows_the_password(
        pg_server: Any, pg_url: str, tmp_path: Path) -> None:
    from pg_server import SUPERUSER_PASSWORD

    xml = FIXTURE_RESULTS / "7.5" / "output.xml"
    outputs = []

    def run(*args: str, env: dict[str, str] | None = None, code: int = 0) -> str:
        done = cli(*args, env=env)
        outputs.append(done.stdout + done.stderr)
        assert done.returncode == code, done.stdout + done.stderr
        return done.stdout

    assert '"ok": true' in run("--db", pg_url, "import", "--json", str(xml))
    listed = run("runs", env={"RF_LOG_MCP_DB": pg_url})
    assert "complete" in listed and "Fixture" in listed
    assert "25 tests: 12 passed, 11 failed" in run("--db", pg_url, "summary", "1")
    assert "values differ" in run("--db", pg_url, "search", "1", "values differ")
    doctor = run("--db", pg_url, "doctor")
    masked = pg_url.replace(SUPERUSER_PASSWORD, "***")
    assert masked in doctor and "OK: ready; 1 run in" in doctor and "writable        True" in doctor
    assert "deleted 1 runs: 1" in run("--db", pg_url, "prune", "--run", "1")
    assert "Fixture" not in run("--db", pg_url, "runs")
    # libpq's own ways to give the password: PGPASSWORD, a password file (service files too)
    bare = pg_url.replace(f":{SUPERUSER_PASSWORD}@", "@")
    assert '"ok": true' in run("--db", bare, "import", "--json", str(xml),
                               env={"PGPASSWORD": SUPERUSER_PASSWORD})
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg_server.port}:*:rflog:{SUPERUSER_PASSWORD}\n")
    passfile.chmod(0o600)
    assert "Fixture" in run("--db", bare, "runs", env={"PGPASSFILE": str(passfile)})
    # a wrong password, a server that is not there: STORE_UNAVAILABLE, the URL masked
    wrong = pg_url.replace(SUPERUSER_PASSWORD, "Wr0ng-pw-value")
    failed = run("--db", wrong, "runs", code=1)
    assert "STORE_UNAVAILABLE" in failed or "STORE_UNAVAILABLE" in outputs[-1]
    assert "password authentication failed" in outputs[-1]
    gone = pg_url.replace(str(pg_server.port), "1")
    run("--db", gone, "summary", "1", code=1)
    assert "Cannot connect to the store postgresql://rflog:***@127.0.0.1:1/" in outputs[-1]
    for text in outputs:
        assert SUPERUSER_PASSWORD not in text and "Wr0ng-pw-value" not in text


def test_without_the_driver_the_error_names_the_extra(pg_url: str) -> None:
    # as where psycopg is not installed: importing it fails
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['psycopg'] = None\n"
         "from rf_log_mcp.cli import main; sys.exit(main(['--db', sys.argv[1], 'runs']))", pg_url],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "error [STORE_UNAVAILABLE]" in done.stderr
    assert "pip install 'rf-log-mcp[postgres]'" in done.stderr
    assert "Sup3r" not in done.stderr


@pytest.mark.anyio
async def test_a_read_only_role_reads_everything_and_cannot_write(
        pg_server: Any, pg_url: str) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    conn = open_store(pg_url)
    fill(conn)
    conn.close()
    database = _database(pg_url)
    pg_server.admin(database, "CREATE ROLE reader LOGIN PASSWORD 'R3ader-pw'",
                    f"GRANT CONNECT ON DATABASE {database} TO reader",
                    "GRANT USAGE ON SCHEMA public TO reader",
                    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    reader = pg_server.url(database, user="reader", password="R3ader-pw")
    params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"],
                                   env={**os.environ, "RF_LOG_MCP_DB": reader})
    async with Client(params) as client:
        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            data = (await client.call_tool(tool, arguments)).structured_content
            assert data is not None and "R3ader-pw" not in json.dumps(data)
            return data

        runs = await call("list_runs")
        assert [r["run_id"] for r in runs["runs"]] == [3, 2, 1]
        summary = await call("get_view", view="summary", run_id=3)
        assert summary["summary"]["totals"] == {"total": 25, "passed": 12, "failed": 11, "skipped": 2}
        path = await call("get_view", view="failure_path", run_id=3)
        assert path["ok"] and path["failure_path"]["path"]
        hits = await call("search_messages", query="values differ", run_id=3)
        assert hits["hits"][0]["text"] == "values differ: expected-value != actual-value"
        history = await call("flaky_tests")
        assert history["ok"] and history["tests_seen"] == 25
        refused = await call("parse_result", path=str(FIXTURE_RESULTS / "7.2.2" / "output.json"))
        assert refused["ok"] is False and refused["error"]["code"] == "STORE_READ_ONLY"
    # and nothing was written by it
    check = open_store(pg_url)
    assert check.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
    check.close()


def test_the_listener_never_prints_the_password(pg_server: Any, pg_url: str, tmp_path: Path) -> None:
    from pg_server import SUPERUSER_PASSWORD

    suite = tmp_path / "one.robot"
    suite.write_text("*** Test Cases ***\nOne\n    Log    hello\n")

    def robot(listener: str) -> str:
        done = subprocess.run([sys.executable, "-m", "robot", "--output", "NONE", "--report", "NONE",
                               "--log", "NONE", "--listener", listener, str(suite)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
        assert done.returncode == 0, done.stderr  # the run goes on whatever the store does
        assert SUPERUSER_PASSWORD not in done.stdout + done.stderr
        return done.stderr

    # robot splits options at ':': the URL's pieces are not echoed, no file is written
    split = robot(f"rf_log_listener:db={pg_url}")
    assert "robot split the store's URL" in split and "rf_log_listener;db=postgresql://" in split
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.robot"]
    # a server that is not there: capture stops with one warning, the URL masked
    gone = robot(f"rf_log_listener;db={pg_url.replace(str(pg_server.port), '1')}")
    assert "capture stopped, the run goes on" in gone and "rflog:***@127.0.0.1:1/" in gone
    # and with ';' the run is captured
    assert robot(f"rf_log_listener;db={pg_url}") == ""
    conn = open_store(pg_url)
    runs = conn.execute("SELECT name, status, origin FROM runs").fetchall()
    assert runs == [("One", "complete", "listener")]
    conn.close()


def test_a_postgresql_store_of_an_older_schema_is_migrated_on_open(pg_url: str) -> None:
    """Migrations are versioned for both stores: SQLite's steps, translated (postgres.py)."""
    from rf_log_listener.schema import SCHEMA_VERSION

    conn = open_store(pg_url)
    fill(conn)
    # as a store of version 8 was: without the usage record's tables and pushed runs' digest
    conn.execute("DROP TABLE usage_calls")
    conn.execute("DROP TABLE usage_imports")
    conn.execute("ALTER TABLE runs DROP COLUMN content_hash")  # its index goes with it
    conn.execute("ALTER TABLE runs DROP COLUMN dry_run")  # (until schema 12)
    conn.execute("ALTER TABLE runs DROP COLUMN copy_of")  # (until schema 13)
    # and (until schema 11) a full-text index of each message's whole text
    conn.execute("DROP VIEW messages_fts")
    conn.execute("DROP INDEX messages_trgm")
    conn.execute("CREATE INDEX messages_trgm ON messages USING gin (text gin_trgm_ops)")
    conn.execute("CREATE VIEW messages_fts AS SELECT key AS rowid, text FROM messages")
    conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    conn.close()
    conn = open_store(pg_url)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),)
    assert conn.execute("SELECT count(*) FROM usage_calls").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM runs WHERE content_hash IS NULL"
                        " AND dry_run IS NULL AND copy_of IS NULL").fetchone() == (3,)
    assert conn.execute("SELECT to_regclass('runs_by_content') IS NOT NULL").fetchone() == (True,)
    (index,) = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'messages_trgm'").fetchone()
    assert "rf_indexed_text(text, html)" in index
    assert "rf_indexed_text" in conn.execute("SELECT pg_get_viewdef('messages_fts')").fetchone()[0]
    assert [r[0] for r in conn.execute("SELECT run_id FROM runs ORDER BY run_id")] == [1, 2, 3]
    conn.close()


def test_push_copies_finished_runs_once_with_the_same_answers(pg_url: str, tmp_path: Path) -> None:
    local = tmp_path / "local.sqlite3"
    lite = open_store(local)
    fill(lite)
    first = cli("--db", str(local), "push", "--all", "--to", pg_url)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("pushed as run") == 3 and "Sup3r" not in first.stdout
    pg = open_store(pg_url)
    for run_id in (1, 2, 3):
        assert dump_store(pg, run_id) == dump_store(lite, run_id)
    # the pushed runs answer every tool as the local store does
    for (tool, expected), (_, got) in zip(_answers(lite), _answers(pg), strict=True):
        assert _stable(got) == _stable(expected), tool
    again = cli("--db", str(local), "push", "1", "3", "--to", pg_url, "--json")
    assert [(r["source_run_id"], r["run_id"], r["outcome"]) for r in json.loads(again.stdout)["runs"]] == [
        (1, 1, "already"), (3, 3, "already")]
    assert pg.execute("SELECT count(*) FROM runs").fetchone() == (3,)
    lite.close()
    pg.close()


def test_a_push_cut_off_resumes_where_it_stopped(pg_server: Any, pg_url: str, tmp_path: Path) -> None:
    local = tmp_path / "local.sqlite3"
    lite = open_store(local)
    import_result(lite, FIXTURE_RESULTS / "7.5" / "output.xml", stable_window=0)
    pg = open_store(pg_url)
    push = subprocess.Popen(
        [sys.executable, "-m", "rf_log_mcp", "--db", str(local), "push", "1", "--to", pg_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "RF_LOG_MCP_PUSH_STEP": "10"})
    deadline = time.monotonic() + 120
    while (pg.execute("SELECT count(*) FROM nodes").fetchone()[0] < 500
           and time.monotonic() < deadline and push.poll() is None):
        time.sleep(0.01)
    # the network goes: the server drops the pushing connection
    pg.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
               " WHERE datname = current_database() AND pid <> pg_backend_pid()")
    out, err = push.communicate(timeout=120)
    assert push.returncode == 1 and "STORE_UNAVAILABLE" in err, out + err
    assert "Sup3r" not in out + err
    [(hidden, status, nodes)] = pg.execute(
        "SELECT run_id, status, (SELECT count(*) FROM nodes) FROM runs").fetchall()
    assert status == "importing" and 500 <= nodes < 3529  # readers see no run
    assert service.list_runs(pg).runs == []
    resumed = cli("--db", str(local), "push", "1", "--to", pg_url)
    assert resumed.returncode == 0 and f"pushed (resumed) as run {hidden}" in resumed.stdout
    assert dump_store(pg, hidden) == dump_store(lite, 1)
    assert [(r.run_id, r.status) for r in service.list_runs(pg).runs] == [(hidden, "complete")]
    found = service.search_messages(pg, "values differ", run_id=hidden)
    assert found.hits and found.hits[0].text == "values differ: expected-value != actual-value"
    lite.close()
    pg.close()


def test_one_run_pushed_by_four_processes_at_once_is_stored_once(
        any_store_spec: Path | str, tmp_path: Path) -> None:
    """The same run pushed four times at once (a scheduled `push --all` meeting a manual
    one): each sees no copy, and none takes over another's hidden run while that one is
    being written; the first to publish wins, the others remove their copy and answer
    "already" with its run (there were four runs, or a push failed writing rows another
    push had written)."""
    from rf_log_listener.push import push_run

    local = tmp_path / "local.sqlite3"
    lite = open_store(local)
    import_result(lite, FIXTURE_RESULTS / "7.5" / "output.xml", stable_window=0)
    lite.close()
    open_store(any_store_spec).close()

    def pushes(_: int) -> tuple[int, str]:
        source, into = open_store(local), open_store(any_store_spec)
        try:
            pushed = push_run(source, into, 1)
            return pushed.run_id, pushed.outcome
        finally:
            source.close()
            into.close()

    outcomes = all_at_once(4, pushes)
    team = open_store(any_store_spec)
    [(run_id, status)] = team.execute("SELECT run_id, status FROM runs").fetchall()
    assert status == "complete" and {r for r, _ in outcomes} == {run_id}
    assert sorted(outcome for _, outcome in outcomes) == ["already", "already", "already", "pushed"]
    assert dump_store(team, run_id) == dump_store(open_store(local), 1)
    team.close()


def test_a_push_takes_over_a_hidden_run_only_once_its_writer_is_gone(tmp_path: Path) -> None:
    """A push finds the hidden run of the same content: written by a live process it is
    left alone (a new copy is made and published); left by a process that is gone it is
    resumed."""
    from rf_log_listener.push import push_run

    local = tmp_path / "local.sqlite3"
    lite = open_store(local)
    import_result(lite, FIXTURE_RESULTS / "7.5" / "output.xml", stable_window=0)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    for pid in (os.getpid(), gone.pid):  # alive (this process), then gone
        team = open_store(tmp_path / f"team-{pid}.sqlite3")
        cut = push_run(lite, team, 1)  # a complete copy, then made a cut push's hidden run
        team.execute("UPDATE runs SET status = 'importing', pid = ?, heartbeat = ?",
                     (pid, time.time()))
        again = push_run(lite, team, 1)
        assert again.outcome == ("pushed" if pid == os.getpid() else "resumed")
        assert (again.run_id == cut.run_id) is (pid == gone.pid)
        assert team.execute("SELECT run_id, status FROM runs ORDER BY run_id").fetchall() == (
            [(cut.run_id, "importing"), (again.run_id, "complete")] if pid == os.getpid()
            else [(cut.run_id, "complete")])
        team.close()
    lite.close()


def test_an_import_killed_half_way_leaves_no_run_readers_see(pg_url: str, tmp_path: Path) -> None:
    from gen_output import generate

    source = generate(tmp_path / "output.xml", size_mb=24, seed=5)
    pg = open_store(pg_url)
    importer = subprocess.Popen([sys.executable, "-m", "rf_log_mcp", "--db", pg_url, "import",
                                 str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while pg.execute("SELECT count(*) FROM nodes").fetchone()[0] < 1000:
        assert time.monotonic() < deadline and importer.poll() is None, importer.communicate()
        time.sleep(0.02)
    importer.kill()
    importer.wait()
    assert pg.execute("SELECT status FROM runs").fetchall() == [("importing",)]
    assert service.list_runs(pg).runs == []  # the half-written run is nobody's to read
    again = import_result(pg, source, stable_window=0)  # finds the dead import and removes it
    assert again.status == "complete" and not again.deduplicated
    assert pg.execute("SELECT run_id, status FROM runs").fetchall() == [(again.run_id, "complete")]
    assert pg.execute("SELECT count(*) FROM nodes").fetchone()[0] == again.node_count
    pg.close()


NUL_LIBRARY = """from robot.api import logger


def log_a_nul():
    logger.info("before\\x00after")
    return "returned\\x00value"
"""
NUL_SUITE = """*** Settings ***
Library    NulLib.py

*** Test Cases ***
Nul In Texts
    ${value}=    Log A Nul
    Fail    failed\\x00here
"""


def test_a_nul_character_stops_neither_capture_nor_import(pg_server: Any, tmp_path: Path) -> None:
    """PostgreSQL's text cannot hold NUL: each is kept as ␀, live and imported alike, and
    nothing else differs from SQLite, which keeps it."""
    (tmp_path / "NulLib.py").write_text(NUL_LIBRARY)
    (tmp_path / "nul.robot").write_text(NUL_SUITE)
    live_url, import_url = pg_server.new_database(), pg_server.new_database()
    done = subprocess.run(
        [sys.executable, "-m", "robot", "--output", "output.json", "--log", "NONE", "--report",
         "NONE", "--listener", f"rf_log_listener;db={live_url}", "nul.robot"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 1 and "rf_log_listener" not in done.stderr, done.stderr
    live, imported = open_store(live_url), open_store(import_url)
    lite = open_store(tmp_path / "store.sqlite3")
    for conn in (imported, lite):
        assert import_result(conn, tmp_path / "output.json", stable_window=0).status == "complete"
    texts = [t for (t,) in live.execute("SELECT text FROM messages ORDER BY key")]
    assert texts == ["before\u2400after", "${value} = returned\u2400value", "failed\u2400here"]
    assert live.execute("SELECT message FROM nodes WHERE type = 'TEST'").fetchone() == (
        "failed\u2400here",)
    assert lite.execute("SELECT text FROM messages ORDER BY key LIMIT 1").fetchone() == (
        "before\x00after",)
    assert dump_store(live, 1) == dump_store(imported, 1) == as_postgresql_keeps_it(dump_store(lite, 1))
    found = service.search_messages(live, "before", run_id=1)
    assert [hit.text for hit in found.hits] == ["before\u2400after"]
    for conn in (live, imported, lite):
        conn.close()


@pytest.mark.parametrize(("sqlite", "postgresql"), [
    ("SELECT a FROM t WHERE b = ? AND c = :name", "SELECT a FROM t WHERE b = %s AND c = %(name)s"),
    # a literal's '%', '?' and ':x' stay text; LIKE ignores ASCII case as SQLite's does
    ("SELECT 'a%?:x' FROM t WHERE m LIKE :like ESCAPE '\\'",
     "SELECT 'a%%?:x' FROM t WHERE m ILIKE %(like)s ESCAPE '\\'"),
    ("SELECT 1 FROM t WHERE a IS ? AND b IS NOT ?",
     "SELECT 1 FROM t WHERE a IS NOT DISTINCT FROM %s AND b IS DISTINCT FROM %s"),
    ("SELECT 1 FROM t WHERE a IN () OR b NOT IN ()", "SELECT 1 FROM t WHERE a = ANY('{}') OR b <> ALL('{}')"),
    ("SELECT key FROM nodes INDEXED BY nodes_failed WHERE json_extract(ci, '$.branch') = ?",
     "SELECT key FROM nodes WHERE (ci::jsonb ->> 'branch') = %s"),
    ("INSERT OR IGNORE INTO secrets (run_id, value) VALUES (?, ?)",
     "INSERT INTO secrets (run_id, value) VALUES (%s, %s) ON CONFLICT DO NOTHING"),
    ("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
     "INSERT INTO meta (key, value) VALUES ('schema_version', %s)"
     " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"),
    ("INSERT INTO runs (origin, status) VALUES (?, ?)",
     "INSERT INTO runs (origin, status) VALUES (%s, %s) RETURNING run_id"),
    ("BEGIN IMMEDIATE", "BEGIN"),
    ("INSERT INTO messages_fts (rowid, text) SELECT key, text FROM messages", ""),
])
def test_statements_translate_as_postgresql_takes_them(sqlite: str, postgresql: str) -> None:
    from rf_log_listener.postgres import translate

    assert translate(sqlite)[0] == postgresql


def test_a_url_is_shown_without_its_password() -> None:
    from rf_log_listener.postgres import redacted
    from rf_log_listener.store import shown, store_setting

    assert redacted("postgresql://ci:pw@db:5432/runs?sslmode=require&password=x") == (
        "postgresql://ci:***@db:5432/runs?sslmode=require&password=***")
    assert shown("postgres://ci@db/runs") == "postgres://ci@db/runs"
    assert store_setting("postgresql://ci:pw@db/runs") == "postgresql://ci:pw@db/runs"
    assert store_setting("store.sqlite3") == "store.sqlite3"
