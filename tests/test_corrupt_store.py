"""A damaged store: not a database, truncated, pages overwritten. The server and the listener
move it aside and go on with a new one; the CLI says STORE_CORRUPT; `doctor --repair` starts
a new store and imports again the result files the old one came from."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS, cli
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

XML = FIXTURE_RESULTS / "7.5" / "output.xml"


def aside(db: Path) -> list[Path]:
    return sorted(p for p in db.parent.iterdir() if ".corrupt-" in p.name)


def imported_store(tmp_path: Path) -> Path:
    db = tmp_path / "store.sqlite3"
    conn = open_store(db)
    import_result(conn, XML, stable_window=0)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def damage_pages(db: Path) -> None:
    """Overwrite the second half of the file (node and message pages) with garbage."""
    data = bytearray(db.read_bytes())
    half = len(data) // 2
    data[half:] = bytes((i * 7919) % 251 for i in range(len(data) - half))
    db.write_bytes(bytes(data))


@pytest.mark.anyio
async def test_the_server_sets_a_garbage_store_aside_and_starts_anew(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    db.write_bytes(b"this is not a database, just bytes " * 200)
    async with server(tmp_path) as client:
        runs = await call(client, "list_runs")
        assert runs["ok"] and runs["runs"] == []
        imported = await call(client, "parse_result", path=str(XML))
        assert imported["ok"] and imported["run_id"] == 1
    moved = aside(db)
    assert len(moved) == 1 and moved[0].read_bytes().startswith(b"this is not a database")


def test_the_listener_sets_a_truncated_store_aside_and_captures(tmp_path: Path) -> None:
    db = imported_store(tmp_path)
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 3)
    suite = tmp_path / "one.robot"
    suite.write_text("*** Test Cases ***\nOne\n    Log    captured anyway\n")
    done = robot("--output", "NONE", "--listener", f"rf_log_listener:db={db}", str(suite),
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the store was damaged and was moved to" in done.stderr
    assert len(aside(db)) == 1
    conn = open_store(db)
    assert conn.execute("SELECT origin, status, total FROM runs").fetchall() == [
        ("listener", "complete", 1)]


def test_damaged_pages_give_store_corrupt_and_doctor_repairs(tmp_path: Path) -> None:
    db = imported_store(tmp_path)
    damage_pages(db)
    conn = sqlite3.connect(db)
    failing = [
        service.get_view(conn, "tree", run_id=1, selector="s1-s2-t1-k1"),
        service.search_messages(conn, "700", run_id=1),
    ]
    conn.close()
    codes = {response.error.code for response in failing if not response.ok}
    assert codes == {"STORE_CORRUPT"}, [r.error for r in failing]  # an answer, not an exception
    doctor = cli("doctor", db=db)
    assert doctor.returncode == 1 and "PROBLEM:" in doctor.stdout and "--repair" in doctor.stdout
    repaired = cli("doctor", "--repair", "--json", db=db)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    facts = json.loads(repaired.stdout)
    assert facts["repair"]["reimported"] == [str(XML.resolve())]
    assert Path(facts["repair"]["moved_to"]) == aside(db)[0]
    summary = json.loads(cli("summary", "1", "--json", db=db).stdout)
    assert summary["summary"]["totals"] == {"total": 25, "passed": 12, "failed": 11, "skipped": 2}


def test_the_cli_names_a_garbage_store(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    db.write_bytes(os.urandom(8192))
    runs = cli("runs", db=db)
    assert runs.returncode == 1 and "STORE_CORRUPT" in runs.stderr and "--repair" in runs.stderr
    assert aside(db) == []  # the command line does not move it by itself
    assert cli("doctor", "--repair", db=db).returncode == 0
    assert len(aside(db)) == 1 and cli("runs", db=db).returncode == 0


def test_a_store_damaged_under_a_command_answers_as_asked(tmp_path: Path) -> None:
    """The store opens, then a page the command reads is garbage: STORE_CORRUPT as JSON with
    --json (as every other error), as text without."""
    db = imported_store(tmp_path)
    with sqlite3.connect(db) as conn:
        [(runs_page,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'")
        [(page_size,)] = conn.execute("PRAGMA page_size")
    data = bytearray(db.read_bytes())
    data[(runs_page - 1) * page_size:runs_page * page_size] = b"\xa5" * page_size
    db.write_bytes(bytes(data))
    as_json = cli("summary", "latest", "--json", db=db)
    assert as_json.returncode == 1 and as_json.stderr == ""
    answer = json.loads(as_json.stdout)
    assert answer["ok"] is False and answer["error"]["code"] == "STORE_CORRUPT"
    assert "doctor --repair" in answer["error"]["hint"]
    as_text = cli("summary", "latest", db=db)
    assert as_text.returncode == 1 and as_text.stdout == ""
    assert as_text.stderr.startswith("error [STORE_CORRUPT]: The store is damaged")


def test_repair_salvages_the_readable_rows_of_a_live_run_without_output(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    suite = tmp_path / "only.robot"
    suite.write_text("*** Test Cases ***\nOnly Record\n    FOR    ${i}    IN RANGE    3000\n"
                     "        Log    line ${i} of a run whose only record is the store\n"
                     "    END\n    Fail    the end\n")
    done = robot("--output", "NONE", "--listener", f"rf_log_listener:db={db}:label=nightly",
                 str(suite), cwd=tmp_path, env={"GITHUB_ACTIONS": "true", "GITHUB_SHA": "c0ffee"})
    assert done.returncode == 1, done.stderr
    described = ("label, output_dir, ci, generator, name, result_status, total, failed, host,"
                 " pid, start_time, finished_at")
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        total_nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        before = conn.execute(f"SELECT {described} FROM runs").fetchone()
    assert before[:3] == ("nightly", str(tmp_path), '{"commit": "c0ffee", "provider": "github"}')
    data = bytearray(db.read_bytes())
    page = 4096
    # Three pages of node rows, from the middle of the table (only node rows hold the text
    # ITERATION): garbage in, say, full-text index blobs is something no check can see.
    node_pages = [start for start in range(0, len(data), page)
                  if b"ITERATION" in data[start:start + page]]
    middle = len(node_pages) // 2
    assert len(node_pages) > 10
    for start in node_pages[middle - 1:middle + 2]:
        data[start + 100:start + page] = b"\xa5" * (page - 100)
    db.write_bytes(bytes(data))
    repaired = cli("doctor", "--repair", "--json", db=db)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    salvaged = json.loads(repaired.stdout)["repair"]["salvaged_live_runs"]
    assert len(salvaged) == 1 and salvaged[0]["run_id"] == 1
    assert 0 < salvaged[0]["nodes"] <= total_nodes and salvaged[0]["messages"] > 1000
    conn = open_store(db)
    # The run keeps what described it: its label, the folder its attachments are read from,
    # its CI build (history groups runs by it), its totals and where it ran.
    assert conn.execute(f"SELECT {described} FROM runs WHERE run_id = 1").fetchone() == before
    summary = service.get_view(conn, "summary", run_id=1)
    assert summary.ok and summary.summary is not None and summary.summary.status == "interrupted"
    found = service.search_messages(conn, "line 42 of a run", run_id=1)
    assert found.ok
