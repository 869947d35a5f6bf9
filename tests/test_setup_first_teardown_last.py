"""Keywords a listener runs in ``start_test``/``start_keyword`` and ``end_test``/``end_keyword``.

Robot writes them where they ran: before a test's or user keyword's setup, after its teardown.
RF's model has the setup first and the teardown last (its readers of output.xml and
output.json, log.html, live capture). The writer numbers nodes as they open and used to keep
the file's order: the setup and teardown (and the keywords) took other ids and places, so a
screenshot a listener took in ``end_test`` of a test with a teardown was ``-k5`` where
log.html says ``-k4``. Now the writer moves them (``rotation.py``), in rows still pending and
in rows a batch already wrote, for every source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from oracle import dump_execution_result, dump_import, dump_store
from robot_runs import robot

from rf_log_listener.events import RunInfo
from rf_log_listener.importers import import_result
from rf_log_listener.importers.xml_source import XmlSource
from rf_log_listener.rows import StoreRowSink
from rf_log_listener.store import open_store
from rf_log_listener.writer import RunWriter

RUNNING = '''
from robot.libraries.BuiltIn import BuiltIn

ROBOT_LISTENER_API_VERSION = 2
run_keyword = BuiltIn().run_keyword


def start_test(name, attrs):
    run_keyword("Log", f"starting {name}")


def end_test(name, attrs):
    run_keyword("Log", f"ending {name}")
    if name == "Both Fixtures":
        run_keyword("Log Many", "one", "two")


def start_keyword(name, attrs):
    if name.endswith("With Fixtures"):
        run_keyword("Log", f"starting {name}")


def end_keyword(name, attrs):
    if name.endswith("With Fixtures"):
        run_keyword("Log", f"ending {name}")
'''

SUITE = """*** Test Cases ***
Both Fixtures
    [Setup]    Log    test setup
    Log    body
    [Teardown]    Log    test teardown

Failing Teardown
    [Setup]    Setup With Steps
    No Operation
    [Teardown]    Fail    teardown failed

No Fixtures
    With Fixtures    inner

*** Keywords ***
Setup With Steps
    Log    first step
    IF    True
        Log    in if
    END

With Fixtures
    [Arguments]    ${what}
    [Setup]    Log    keyword setup
    Log    ${what}
    [Teardown]    Log    keyword teardown
"""


def _run(tmp_path: Path, output: str, version: str = "") -> Path:
    """robot with the keyword-running listener and the capture; the live store's path."""
    (tmp_path / "running.py").write_text(RUNNING)
    (tmp_path / "order.robot").write_text(SUITE)
    db = tmp_path / f"live-{output}.sqlite3"
    done = robot("--pythonpath", str(tmp_path), "--output", output, "--listener", "running",
                 "--listener", f"rf_log_listener;db={db}", "order.robot", cwd=tmp_path,
                 version=version)
    assert done.returncode == 1, done.stdout + done.stderr  # the teardown that fails
    assert "rf_log_listener" not in done.stderr, done.stderr
    return db


def _imported(tmp_path: Path, name: str, **options: Any) -> dict[str, Any]:
    return dump_import(tmp_path / f"import-{name}-{len(options)}.sqlite3", tmp_path / name, **options)


def _shape(dump: dict[str, Any]) -> list[tuple[str, str, str, list[str] | None]]:
    return [(n["id"], n["type"], n["name"], n.get("args")) for n in dump["nodes"]
            if n["type"] not in ("SUITE", "IF/ELSE ROOT", "IF")]


@pytest.mark.parametrize("version", ["", "7.2.2", "7.0.1"])
def test_a_setup_is_first_and_a_teardown_last_as_in_rfs_model(tmp_path: Path,
                                                                 version: str) -> None:
    db = _run(tmp_path, "output.xml", version)
    expected = dump_execution_result(str(tmp_path / "output.xml"))
    assert _imported(tmp_path, "output.xml") == expected
    # the same file parsed in a child process, which sends its rows over a pipe
    assert _imported(tmp_path, "output.xml", parallel_min_bytes=0) == expected
    if version != "7.0.1":  # RF 7.0 calls no listener while another's method runs
        assert dump_store(open_store(db), 1) == expected
    shape = _shape(expected)
    assert shape[:6] == [
        ("s1-t1", "TEST", "Both Fixtures", None),
        ("s1-t1-k1", "SETUP", "Log", ["test setup"]),
        ("s1-t1-k2", "KEYWORD", "Log", ["starting Both Fixtures"]),
        ("s1-t1-k3", "KEYWORD", "Log", ["body"]),
        ("s1-t1-k4", "KEYWORD", "Log", ["ending Both Fixtures"]),
        ("s1-t1-k5", "KEYWORD", "Log Many", ["one", "two"]),
    ]
    assert shape[6] == ("s1-t1-k6", "TEARDOWN", "Log", ["test teardown"])
    assert ("s1-t2-k1-k2-k1", "KEYWORD", "Log", ["in if"]) in shape
    assert ("s1-t2-k5", "TEARDOWN", "Fail", ["teardown failed"]) in shape
    inner = [(row[0], row[1], (row[3] or [""])[0].split(" ")[0]) for row in shape
             if row[0].startswith("s1-t3-k2-")]
    assert inner == [  # RF 7's keyword setup and teardown; what the listener named it varies
        ("s1-t3-k2-k1", "SETUP", "keyword"), ("s1-t3-k2-k2", "KEYWORD", "starting"),
        ("s1-t3-k2-k3", "KEYWORD", "${what}"), ("s1-t3-k2-k4", "KEYWORD", "ending"),
        ("s1-t3-k2-k5", "TEARDOWN", "keyword"),
    ]
    logged = {(m["id"].rsplit("-m", 1)[0], m["text"]) for m in expected["messages"]}
    assert {("s1-t1-k1", "test setup"), ("s1-t1-k5", "two"), ("s1-t2-k5", "teardown failed"),
            ("s1-t3-k2-k5", "keyword teardown")} <= logged


def test_output_json_is_imported_as_rfs_model_has_it(tmp_path: Path) -> None:
    """Robot's output.json has the listener's keywords in a ``body`` before ``setup``."""
    db = _run(tmp_path, "output.json")
    expected = dump_execution_result(str(tmp_path / "output.json"))
    assert _imported(tmp_path, "output.json") == expected
    assert dump_store(open_store(db), 1) == expected
    assert _shape(expected)[1] == ("s1-t1-k1", "SETUP", "Log", ["test setup"])


def _keyword(name: str, kind: str = "", steps: int = 0, text: str = "") -> str:
    """A ``<kw>`` of a robot-written RF 7 output.xml, ``steps`` logging keywords inside."""
    inner = "".join(_keyword("Log", text=f"step {i}") for i in range(steps))
    message = f'<msg time="2026-12-07T04:00:00.000001" level="INFO">{text}</msg>' if text else ""
    typed = f' type="{kind}"' if kind else ""
    return (f'<kw name="{name}" owner="BuiltIn"{typed}>{inner}{message}'
            '<status status="PASS" start="2026-12-07T04:00:00.000000" elapsed="0.001"/></kw>\n')


def _written_by_robot(steps: int) -> str:
    """A test as robot writes it when a listener's keywords (``steps`` steps each) ran
    before its setup and after its teardown, and one whose setup came first."""
    test = (_keyword("Listener Start", steps=steps, text="started")
            + _keyword("Log", "SETUP", text="setup") + _keyword("Log", text="body")
            + _keyword("Log", "TEARDOWN", text="teardown")
            + _keyword("Listener End", steps=steps, text="ended"))
    plain = _keyword("Log", "SETUP", text="plain setup") + _keyword("Log", text="plain body")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<robot generator="Robot 7.5 (Python 3.11'
            ' on linux)" generated="2026-12-07T04:00:00.000000" rpa="false" schemaversion="5">\n'
            f'<suite id="s1" name="Big"><test id="s1-t1" name="Late" line="1">{test}'
            '<status status="PASS" start="2026-12-07T04:00:00.000000" elapsed="1"/></test>\n'
            f'<test id="s1-t2" name="Plain" line="9">{plain}'
            '<status status="PASS" start="2026-12-07T04:00:01.000000" elapsed="1"/></test>\n'
            '<status status="PASS" start="2026-12-07T04:00:00.000000" elapsed="2"/></suite>\n'
            '<statistics/><errors/></robot>\n')


def test_rows_a_batch_already_wrote_are_moved_in_the_store(tmp_path: Path) -> None:
    """With a batch written after every node, each move finds its rows in the store."""
    (tmp_path / "late.xml").write_text(_written_by_robot(steps=3))
    expected = dump_execution_result(str(tmp_path / "late.xml"))
    conn = open_store(tmp_path / "store.sqlite3")
    for batch_rows in (1, 2, 3, 5):
        writer = RunWriter(StoreRowSink(conn), batch_rows=batch_rows)
        with (tmp_path / "late.xml").open("rb") as fh:
            XmlSource(writer, RunInfo(origin="import")).feed_file(fh)
        assert writer.run_id is not None
        assert dump_store(conn, writer.run_id) == expected, batch_rows
    assert _shape(expected)[:3] == [("s1-t1", "TEST", "Late", None),
                                    ("s1-t1-k1", "SETUP", "Log", None),
                                    ("s1-t1-k2", "KEYWORD", "Listener Start", None)]


def test_a_parser_process_moves_rows_in_either_store(tmp_path: Path, any_store: Any) -> None:
    """Listener keywords of more steps than a batch holds (20,000 rows), parsed in a child
    process: the move crosses its pipe and finds rows written in SQLite or PostgreSQL."""
    (tmp_path / "late.xml").write_text(_written_by_robot(steps=10_500))
    run_id = import_result(any_store, tmp_path / "late.xml", stable_window=0,
                           parallel_min_bytes=0).run_id
    expected = dump_execution_result(str(tmp_path / "late.xml"))
    assert dump_store(any_store, run_id) == expected
    assert [(n["id"], n["type"]) for n in expected["nodes"] if "-k" in n["id"]
            and n["id"].count("-") == 2][:5] == [("s1-t1-k1", "SETUP"), ("s1-t1-k2", "KEYWORD"),
                                               ("s1-t1-k3", "KEYWORD"), ("s1-t1-k4", "KEYWORD"),
                                               ("s1-t1-k5", "TEARDOWN")]


def test_an_rf_6_output_xml_is_imported_as_rfs_model_has_it(tmp_path: Path) -> None:
    """RF 6.1's output.xml (schema 4; no keyword setups), written with the same listener."""
    (tmp_path / "running.py").write_text(RUNNING)
    (tmp_path / "order.robot").write_text(SUITE.replace("    [Setup]    Log    keyword setup\n", ""))
    done = robot("--pythonpath", str(tmp_path), "--listener", "running", "order.robot",
                 cwd=tmp_path, version="6.1.1")
    assert done.returncode == 1, done.stdout + done.stderr
    expected = dump_execution_result(str(tmp_path / "output.xml"))
    assert _imported(tmp_path, "output.xml") == expected
    assert _shape(expected)[1:3] == [("s1-t1-k1", "SETUP", "Log", ["test setup"]),
                                     ("s1-t1-k2", "KEYWORD", "Log", ["starting Both Fixtures"])]
