"""Live capture, output.xml, robot's and rebot's output.json, and RF's own model, compared
node by node and message by message on the shapes where they can disagree
(tests/data/differential): argument values library code passes (bytes, dates, numbers, empty
strings, control characters), keyword setups in rebot's key order, another listener renaming
suites and tests, changing statuses and editing messages.

The documented differences (README, "Live capture") are asserted as such, each on its own:
output.xml cannot hold some text the run had (:func:`as_output_xml_has_it`), RF 6's format
(``--legacyoutput``) has no message on a failed step, and names
another listener changes after a start are in output.xml as they were at the start.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from oracle import as_postgresql_keeps_it, dump_execution_result, dump_store
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store

DATA = Path(__file__).parent / "data" / "differential"
# Characters RF's XML writer drops (robot.utils.markuputils); output.json keeps them.
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
RENAMED = {  # what another listener renamed after robot wrote the start to output.xml
    "Shapes (renamed at start)": "Shapes",
    "Renamed At Start (new)": "Renamed At Start",
    "Renamed At End (new)": "Renamed At End",
}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two runs of the suite with the other listener and this one, one writing output.xml,
    one output.json; rebot's output.json of the first. Each store kind: SQLite files, or
    PostgreSQL databases on the tests' server."""
    work = tmp_path_factory.mktemp("differential")

    def new_store(name: str) -> Path | str:
        if request.param == "sqlite":
            return work / f"{name}.sqlite3"
        return str(request.getfixturevalue("pg_server").new_database())

    stores = {}
    for output in ("output.xml", "output.json"):
        store = new_store(f"live-{output}")
        done = robot("--loglevel", "TRACE", "--listener", str(DATA / "Editor.py"),
                     "--listener", f"rf_log_listener;db={store}", "--output", str(work / output),
                     str(DATA / "shapes.robot"), cwd=work)
        assert done.returncode == 2, done.stdout + done.stderr  # as <statistics> counts them
        assert "rf_log_listener" not in done.stderr, done.stderr
        stores[output] = store
    rebot = subprocess.run([sys.executable, "-m", "robot.rebot", "--output", str(work / "rebot.json"),
                            "--log", "NONE", "--report", "NONE", str(work / "output.xml")],
                           check=False, capture_output=True, text=True)
    assert rebot.returncode == 1 and (work / "rebot.json").is_file(), rebot.stderr  # RF model: 1 failed
    imported = {}
    for name in ("output.xml", "output.json", "rebot.json"):
        conn = open_store(new_store(f"import-{name}"))
        imported[name] = (conn, import_result(conn, work / name, stable_window=0).run_id)
    return {"work": work, "stores": stores, "imported": imported, "kind": request.param}


def as_the_store_keeps_it(runs: dict[str, Any], dump: dict[str, Any]) -> dict[str, Any]:
    """RF's model as the store holds it: as is in SQLite, NULs as U+2400 in PostgreSQL."""
    return as_postgresql_keeps_it(dump) if runs["kind"] == "postgresql" else dump


@pytest.mark.parametrize("name", ["output.xml", "output.json", "rebot.json"])
def test_each_import_equals_rfs_own_model(runs: dict[str, Any], name: str) -> None:
    conn, run_id = runs["imported"][name]
    assert dump_store(conn, run_id) == as_the_store_keeps_it(
        runs, dump_execution_result(str(runs["work"] / name)))


def test_keyword_setups_keep_their_ids_in_rebots_json(runs: dict[str, Any]) -> None:
    """rebot writes a keyword's body before its setup; RF numbers the setup first."""
    conn, _ = runs["imported"]["rebot.json"]
    rows = conn.execute("SELECT node_id, type, name FROM nodes WHERE name IN ('With Fixtures', 'Log',"
                        " 'Evaluate') AND node_id LIKE 's1-t2-k1%' ORDER BY key").fetchall()
    assert rows == [("s1-t2-k1", "KEYWORD", "With Fixtures"), ("s1-t2-k1-k1", "SETUP", "Log"),
                    ("s1-t2-k1-k2", "KEYWORD", "Evaluate"), ("s1-t2-k1-k4", "TEARDOWN", "Log")]


def test_live_capture_equals_the_runs_output_json(runs: dict[str, Any]) -> None:
    live = open_store(runs["stores"]["output.json"])
    conn, run_id = runs["imported"]["output.json"]
    assert dump_store(live, 1) == dump_store(conn, run_id)


def test_live_capture_equals_the_runs_output_xml_but_for_the_documented_differences(
        runs: dict[str, Any]) -> None:
    live = dump_store(open_store(runs["stores"]["output.xml"]), 1)
    conn, run_id = runs["imported"]["output.xml"]
    from_xml = dump_store(conn, run_id)
    assert live != from_xml  # the differences are there, and are exactly these:
    if runs["kind"] == "postgresql":  # the characters output.xml drops, NUL as PostgreSQL keeps it
        live = json.loads(json.dumps(live).replace("\\u2400", "\\u0000"))
    assert as_output_xml_has_it(live) == from_xml


def test_what_the_store_keeps_that_output_xml_cannot(runs: dict[str, Any]) -> None:
    live = open_store(runs["stores"]["output.xml"])
    args = [a for (a,) in live.execute("SELECT args FROM nodes WHERE node_id LIKE 's1-t1-k1-k%'"
                                        " ORDER BY key")]
    assert args == ['["b\'raw \\\\x00bytes\'"]', '["2026-11-30"]',
                    '["1","True","None","2.5","","x"]', '["{\'key\': b\'value\'}"]',
                    '["control \\u0001\\u001b characters\\r\\nand CRLF"]',
                    '["","between empties",""]']
    texts = [t for (t,) in live.execute("SELECT text FROM messages WHERE text LIKE 'control%'")]
    assert texts == ["control \x01\x1b characters\nand CRLF"]  # RF's logger makes CRLF LF itself


def test_other_listeners_changes_are_stored_as_rfs_model_and_output_json_have_them(
        runs: dict[str, Any]) -> None:
    for store in runs["stores"].values():
        conn = open_store(store)
        names = dict(conn.execute("SELECT node_id, name FROM nodes WHERE type IN ('SUITE', 'TEST')"))
        assert names["s1"] == "Shapes (renamed at start)"
        assert names["s1-t3"] == "Renamed At Start (new)" and names["s1-t4"] == "Renamed At End (new)"
        statuses = dict(conn.execute("SELECT name, status FROM nodes WHERE type = 'TEST'"))
        assert statuses["Status Changed"] == "FAIL"
        assert statuses["Status Changed After Its End"] == "PASS"  # as its own record in the files
        # totals count the stored tests, as RF's model does; <statistics> counted the late change
        assert conn.execute("SELECT total, passed, failed, skipped FROM runs").fetchone() == (8, 7, 1, 0)
        texts = [t for (t,) in conn.execute("SELECT text FROM messages")]
        assert "please ***" in texts and "please mask me" not in texts  # edited before it was written
        assert "edited a test later" not in texts and "renamed at start" in texts  # edited after
        args = [a for (a,) in conn.execute("SELECT args FROM nodes WHERE node_id = 's1-t7-k2'")]
        assert args == ['["***"]']
    xml = (runs["work"] / "output.xml").read_text()
    assert '<stat pass="6" fail="2" skip="0">All Tests</stat>' in xml
    assert '<test id="s1-t4" name="Renamed At End"' in xml


def as_output_xml_has_it(dump: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """``dump`` as output.xml records it (README, "Live capture"): without the characters XML
    cannot hold, element text (arguments, values, loop values, messages) with CR LF and CR
    read back as LF, empty arguments and values not written, and suites and tests with the
    names they had when they started."""

    def text(value: str) -> str:
        return _NOT_IN_XML.sub("", value).replace("\r\n", "\n").replace("\r", "\n")

    def node(entry: dict[str, Any]) -> dict[str, Any]:
        entry = dict(entry)
        for key in ("args", "values"):
            written = [text(v) for v in entry.pop(key, ()) if v]
            if written:
                entry[key] = written
        if entry["type"] == "ITERATION":  # loop values: <var name="${x}">value</var>
            entry["assign"] = {name: text(value) for name, value in entry["assign"].items()}
        if entry["type"] in ("SUITE", "TEST"):
            entry["name"] = RENAMED.get(entry["name"], entry["name"])
        return entry

    return {
        "nodes": [node(n) for n in dump["nodes"]],
        "messages": [{**m, "text": text(m["text"])} for m in dump["messages"]],
        "errors": dump["errors"],
    }


UNPRINTABLE = '''
from robot.libraries.BuiltIn import BuiltIn


class Unprintable:
    def __str__(self):
        raise ValueError("no text for this one")

    __repr__ = __str__


def pass_unprintable():
    BuiltIn().run_keyword("Log Many", Unprintable(), b"by", 3)
'''


@pytest.mark.parametrize("writer", ["inline", "process"])
def test_a_value_whose_str_fails_is_kept_as_robot_framework_tells_it(tmp_path: Path, writer: str) -> None:
    """An argument whose ``str()`` raises (RF's own output writers fail on it, so robot
    writes no file here): capture goes on, the value stored as RF's ``safe_str`` tells it.
    Before, capture stopped at it and the store kept the root suite only."""
    (tmp_path / "OddObjects.py").write_text(UNPRINTABLE)
    (tmp_path / "s.robot").write_text("*** Settings ***\nLibrary    OddObjects.py\n\n"
                                      "*** Test Cases ***\nOdd\n    Pass Unprintable\n"
                                      "After\n    Log    still captured\n")
    db = tmp_path / "store.sqlite3"
    done = robot("--output", "NONE", "--listener", f"rf_log_listener;db={db};writer={writer}",
                 "s.robot", cwd=tmp_path)
    assert "rf_log_listener" not in done.stderr, done.stderr
    conn = open_store(db)
    assert conn.execute("SELECT status, total FROM runs").fetchall() == [("complete", 2)]
    (args,), = conn.execute("SELECT args FROM nodes WHERE name = 'Log Many'").fetchall()
    assert json.loads(args) == [
        "<Unrepresentable object Unprintable. Error: ValueError: no text for this one>",
        "b'by'", "3"]
    assert conn.execute("SELECT text FROM messages WHERE text = 'still captured'").fetchall()


TEXTS_CHANGED = """*** Settings ***
Documentation     emptied by its test
Metadata          Build    1234

*** Test Cases ***
Documented At Its End
    [Tags]    kept
    [Timeout]    2 minutes
    Set Test Documentation    written while it runs

Emptied
    [Documentation]    emptied while it runs
    [Tags]    first    second
    [Timeout]    1 minute
    Remove Tags    first    second
    Set Test Documentation    ${EMPTY}
    Set Suite Documentation    ${EMPTY}

Added
    Set Tags    added
    Set Test Documentation    added while it runs
    Set Suite Metadata    Added    late
"""


@pytest.mark.parametrize("writer", ["inline", "process"])
def test_texts_a_suite_or_test_lost_while_it_ran_are_gone_from_the_store_too(
        tmp_path: Path, writer: str) -> None:
    """A suite's and a test's documentation, tags and metadata are sent when they start (a
    running run shows them, a killed one keeps them) and again when they end: what a keyword
    emptied meanwhile (``Remove Tags``, ``Set Test Documentation    ${EMPTY}``) is emptied in
    the store too, as the run's output file has it, and a test's fields are stored in the
    order output.xml gives them (answers print them in stored order)."""
    (tmp_path / "texts.robot").write_text(TEXTS_CHANGED)
    db = tmp_path / "live.sqlite3"
    done = robot("--output", "output.xml", "--listener", f"rf_log_listener;db={db};writer={writer}",
                 "texts.robot", cwd=tmp_path)
    assert done.returncode == 0 and "rf_log_listener" not in done.stderr, done.stdout + done.stderr
    conn = open_store(tmp_path / "import.sqlite3")
    run_id = import_result(conn, tmp_path / "output.xml", stable_window=0).run_id
    live = dump_store(open_store(db), 1)
    assert live == dump_store(conn, run_id)
    tests = "SELECT fields FROM nodes WHERE type = 'TEST' ORDER BY key"
    assert open_store(db).execute(tests).fetchall() == conn.execute(tests).fetchall()  # in order
    texts = {n["id"]: {k: n[k] for k in ("doc", "tags", "metadata", "timeout") if k in n}
             for n in live["nodes"] if n["type"] in ("SUITE", "TEST")}
    assert texts == {"s1": {"metadata": {"Build": "1234", "Added": "late"}},
                     "s1-t1": {"doc": "written while it runs", "tags": ["kept"],
                               "timeout": "2 minutes"},
                     "s1-t2": {"timeout": "1 minute"},
                     "s1-t3": {"doc": "added while it runs", "tags": ["added"]}}


FAILING_STEPS = """*** Test Cases ***
Failing Keyword In A User Keyword
    Fails Inside

Expected Error
    Run Keyword And Expect Error    inner*    Fail    inner failure
    FOR    ${i}    IN RANGE    2
        Run Keyword And Ignore Error    Fail    ignored ${i}
    END

Failing Teardown
    No Operation
    [Teardown]    Fail    teardown failed

*** Keywords ***
Fails Inside
    Log    before
    Fail    deep failure
"""


def test_live_capture_equals_legacy_output_xml_but_for_the_steps_messages(tmp_path: Path) -> None:
    """RF 7's ``--legacyoutput`` writes RF 6's format, which has a message only on suites,
    tests and teardowns: a failed step's message is in the store (as RF's model has it)
    and not in that file, nor in RF's model read back from it."""
    (tmp_path / "steps.robot").write_text(FAILING_STEPS)
    db = tmp_path / "live.sqlite3"
    done = robot("--legacyoutput", "--output", "legacy.xml", "--listener", f"rf_log_listener;db={db}",
                 "steps.robot", cwd=tmp_path)
    assert done.returncode == 2 and "rf_log_listener" not in done.stderr, done.stdout + done.stderr
    conn = open_store(tmp_path / "import.sqlite3")
    run_id = import_result(conn, tmp_path / "legacy.xml", stable_window=0).run_id
    from_xml = dump_store(conn, run_id)
    assert from_xml == dump_execution_result(str(tmp_path / "legacy.xml"))
    live = dump_store(open_store(db), 1)
    steps_messages = {n["id"]: n["message"] for n in live["nodes"]
                      if "message" in n and n["type"] not in ("SUITE", "TEST", "TEARDOWN")}
    assert steps_messages == {"s1-t1-k1": "deep failure", "s1-t1-k1-k2": "deep failure",
                              "s1-t2-k1-k1": "inner failure", "s1-t2-k2-k1-k1-k1": "ignored 0",
                              "s1-t2-k2-k2-k1-k1": "ignored 1"}
    assert [n.get("message") for n in from_xml["nodes"] if n["type"] == "TEARDOWN"] == ["teardown failed"]
    legacy = {**live, "nodes": [
        {k: v for k, v in n.items() if k != "message" or n["id"] not in steps_messages}
        for n in live["nodes"]]}
    assert legacy == from_xml


CLOSING_LIBRARY = '''
class ClosingLibrary:
    """A library listener whose close fails as the root suite ends (robot's output file has
    that error; the run is published by then)."""
    ROBOT_LIBRARY_SCOPE = "GLOBAL"
    ROBOT_LISTENER_API_VERSION = 3

    def __init__(self):
        self.ROBOT_LIBRARY_LISTENER = self

    def close(self):
        raise RuntimeError("closing failed, api_token=Zq8vLateSecret")

    def noop(self):
        pass
'''

UPLOADER = '''
from pathlib import Path


def output_file(path):
    Path("uploaded").write_text(str(path))
    raise RuntimeError("upload failed")  # after robot wrote its output file: not in it
'''


@pytest.mark.parametrize("writer, output, kind", [
    ("inline", "output.xml", "sqlite"), ("process", "output.json", "sqlite"),
    ("inline", "NONE", "sqlite"), ("process", "output.xml", "postgresql")])
def test_errors_robot_reports_after_the_run_ended_are_stored_as_its_output_file_has_them(
        request: pytest.FixtureRequest, tmp_path: Path, writer: str, output: str, kind: str) -> None:
    """An error robot reports after the root suite ended (a library listener's ``close``)
    is in the output file's errors: the live store has it too, with the secret it names,
    numbered after the others. One reported after robot wrote the file (another listener's
    ``output_file`` failing) is in neither; without an output file (``--output NONE``) the
    store keeps every error robot reports. Before, both were lost."""
    (tmp_path / "ClosingLibrary.py").write_text(CLOSING_LIBRARY)
    (tmp_path / "Uploader.py").write_text(UPLOADER)
    (tmp_path / "s.robot").write_text("*** Settings ***\nLibrary    ClosingLibrary.py\n\n"
                                      "*** Test Cases ***\nT\n    Noop\n    Log    early    WARN\n")
    db = tmp_path / "live.sqlite3" if kind == "sqlite" else request.getfixturevalue(
        "pg_server").new_database()
    done = robot("--output", output, "--listener", "Uploader.py",
                 "--listener", f"rf_log_listener;db={db};writer={writer}", "s.robot", cwd=tmp_path)
    assert done.returncode == 0 and "rf_log_listener" not in done.stderr, done.stdout + done.stderr
    assert (tmp_path / "uploaded").is_file()  # the uploader failed
    live = open_store(db)
    errors = live.execute("SELECT seq, level, text FROM errors ORDER BY seq").fetchall()
    expected = [(1, "WARN", "early"), (2, "ERROR", "Calling method 'close' of listener"
                " 'ClosingLibrary' failed: closing failed, api_token=Zq8vLateSecret")]
    if output == "NONE":
        expected.append((3, "ERROR", f"Calling method 'output_file' of listener"
                         f" '{tmp_path / 'Uploader.py'}' failed: upload failed"))
    assert errors == expected
    assert live.execute("SELECT error_count FROM runs").fetchall() == [(len(expected),)]
    assert ("Zq8vLateSecret",) in live.execute("SELECT value FROM secrets").fetchall()
    if output != "NONE":
        conn = open_store(tmp_path / "import.sqlite3")
        run_id = import_result(conn, tmp_path / output, stable_window=0).run_id
        assert run_id == 1 and dump_store(live, 1) == dump_store(conn, run_id)
