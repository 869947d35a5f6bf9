"""Keywords a listener runs in ``start_suite`` and ``end_suite`` (``BuiltIn().run_keyword``).

Robot writes them as keywords of the suite: before its setup, after its teardown. RF's reader
of output.xml puts them in the suite's setup (before the first test or child suite) or its
teardown, and makes an "Implicit setup" or "Implicit teardown" (PASS) where the suite has none;
RF's model of the running suite has them in the same places. Live capture lost them where a
suite had no setup or teardown, and both imports kept them as keywords of the suite: now every
source stores them where RF's model has them (RF's reader of output.json drops them: the
store keeps them as output.xml's reader does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from oracle import dump_execution_result, dump_import, dump_store
from robot_runs import robot

from rf_log_listener.store import open_store

RUNNING = '''
from robot.libraries.BuiltIn import BuiltIn

ROBOT_LISTENER_API_VERSION = 3


def start_suite(data, result):
    BuiltIn().run_keyword("Log", f"starting {data.name}")


def end_suite(data, result):
    BuiltIn().run_keyword("Log", f"ending {data.name}")
    if data.name == "Plain":
        BuiltIn().run_keyword("Log Many", "one", "two")
'''

INIT = """*** Settings ***
Suite Setup       Log    real setup
Suite Teardown    Real Teardown

*** Keywords ***
Real Teardown
    Log    real teardown
"""

PLAIN = """*** Test Cases ***
Only
    No Operation
"""

FIXTURES = """*** Settings ***
Suite Setup       Log    fixture setup
Suite Teardown    Fail   fixture teardown failed

*** Test Cases ***
First
    No Operation
"""


def _tree(tmp_path: Path) -> Path:
    top = tmp_path / "Top"
    top.mkdir()
    (top / "__init__.robot").write_text(INIT)
    (top / "plain.robot").write_text(PLAIN)
    (top / "fixtures.robot").write_text(FIXTURES)
    (tmp_path / "running.py").write_text(RUNNING)
    return top


def _capture(tmp_path: Path, output: str, version: str, ours_first: bool = False) -> Path:
    """robot with the keyword-running listener and the capture; the live store's path."""
    db = tmp_path / f"live-{output}.sqlite3"
    listeners = ["--listener", "running", "--listener", f"rf_log_listener;db={db}"]
    if ours_first:
        listeners = [*listeners[2:], *listeners[:2]]
    done = robot("--pythonpath", str(tmp_path), "--output", output, *listeners, "Top",
                 cwd=tmp_path, version=version)
    assert done.returncode == 1, done.stdout + done.stderr  # the fixture suite's teardown fails
    assert "rf_log_listener" not in done.stderr, done.stderr
    return db


def _imported(tmp_path: Path, name: str) -> dict[str, Any]:
    return dump_import(tmp_path / f"import-{name}.sqlite3", tmp_path / name)


@pytest.mark.parametrize("version", ["", "7.2.2", "7.0.1"])  # 7.2+ follow RF's model
def test_a_listeners_suite_keywords_are_where_rfs_model_has_them(tmp_path: Path,
                                                                   version: str) -> None:
    _tree(tmp_path)
    live = dump_store(open_store(_capture(tmp_path, "output.xml", version)), 1)
    expected = dump_execution_result(str(tmp_path / "output.xml"))
    assert _imported(tmp_path, "output.xml") == expected
    if version == "7.0.1":
        # RF 7.0 calls no listener while another listener's method runs: the keywords that
        # listener ran are in the output file only (imported as above)
        made = {n["id"] for n in expected["nodes"] if n["name"].startswith("Implicit")
                or (n.get("args") or [""])[0].startswith(("starting", "ending", "one"))}
        assert [n["id"] for n in live["nodes"]] == [
            n["id"] for n in expected["nodes"] if n["id"] not in made]
        assert len(made) == 9
        return
    assert live == expected
    suite_level = [(n["id"], n["type"], n["name"], n.get("args")) for n in live["nodes"]
                   if n["type"] in ("SETUP", "TEARDOWN") and "-t" not in n["id"]]
    assert suite_level == [
        ("s1-k1", "SETUP", "Log", ["real setup"]),
        ("s1-s1-k1", "SETUP", "Log", ["fixture setup"]),
        ("s1-s1-k2", "TEARDOWN", "Fail", ["fixture teardown failed"]),
        ("s1-s2-k1", "SETUP", "Implicit setup", None),
        ("s1-s2-k2", "TEARDOWN", "Implicit teardown", None),
        ("s1-k2", "TEARDOWN", "Real Teardown", None),
    ]
    children = {n["id"]: (n["name"], n.get("args")) for n in live["nodes"]}
    # a real setup keeps the listener's keyword first, as RF's reader does; a teardown last
    assert children["s1-k1-k1"] == ("Log", ["starting Top"])
    assert children["s1-s1-k1-k1"] == ("Log", ["starting Fixtures"])
    assert children["s1-s1-k2-k1"] == ("Log", ["ending Fixtures"])
    assert children["s1-s2-k1-k1"] == ("Log", ["starting Plain"])
    assert children["s1-s2-k2-k1"] == ("Log", ["ending Plain"])
    assert children["s1-s2-k2-k2"] == ("Log Many", ["one", "two"])
    assert children["s1-k2-k1"] == ("Log", ["real teardown"])
    assert children["s1-k2-k2"] == ("Log", ["ending Top"])
    logged = {(m["id"].rsplit("-m", 1)[0], m["text"]) for m in live["messages"]}
    assert {("s1-k1-k1", "starting Top"), ("s1-s2-k2-k2", "two"),
            ("s1-s1-k2", "fixture teardown failed")} <= logged
    statuses = {n["id"]: n["status"] for n in live["nodes"]}
    assert statuses["s1-s2-k1"] == statuses["s1-s2-k2"] == "PASS"
    assert statuses["s1-s1"] == "FAIL" and statuses["s1-s2"] == "PASS"


def test_output_json_gives_them_where_output_xmls_reader_does(tmp_path: Path) -> None:
    """RF's own reader of output.json drops a suite's keywords (``TestSuite.from_dict``
    takes no ``body``); the store keeps them as in the run's output.xml and in live capture."""
    _tree(tmp_path)
    live = dump_store(open_store(_capture(tmp_path, "output.json", "")), 1)
    assert _imported(tmp_path, "output.json") == live
    _capture(tmp_path, "output.xml", "")
    as_xml = dump_execution_result(str(tmp_path / "output.xml"))
    assert [(n["id"], n["type"], n["name"]) for n in live["nodes"]] \
        == [(n["id"], n["type"], n["name"]) for n in as_xml["nodes"]]
    dropped = dump_execution_result(str(tmp_path / "output.json"))
    assert "Implicit setup" not in {n.get("name") for n in dropped["nodes"]}
    assert "ending Plain" not in {m["text"] for m in dropped["messages"]}


def test_the_order_the_listeners_are_named_in_does_not_matter(tmp_path: Path) -> None:
    """The capture is called after every other listener (its ``ROBOT_LISTENER_PRIORITY``):
    named first, it still finds the keywords another listener's ``end_suite`` ran."""
    _tree(tmp_path)
    live = dump_store(open_store(_capture(tmp_path, "output.xml", "", ours_first=True)), 1)
    assert live == dump_execution_result(str(tmp_path / "output.xml"))
    assert "Implicit teardown" in {n["name"] for n in live["nodes"]}


NESTED = """<?xml version="1.0" encoding="UTF-8"?>
<robot generator="Robot 7.5 (Python 3.11.7 on linux)" generated="2026-12-07T00:50:00.000000"
 rpa="false" schemaversion="5">
<suite id="s1" name="Nested" source="/tmp/nested.robot">
<kw name="With Setup">
<kw name="Log" owner="BuiltIn" type="SETUP">
<msg time="2026-12-07T00:50:00.100000" level="INFO">its own setup</msg>
<arg>its own setup</arg>
<status status="PASS" start="2026-12-07T00:50:00.100000" elapsed="0.001"/>
</kw>
<kw name="Log" owner="BuiltIn">
<arg>body</arg>
<status status="PASS" start="2026-12-07T00:50:00.200000" elapsed="0.001"/>
</kw>
<status status="PASS" start="2026-12-07T00:50:00.050000" elapsed="0.2"/>
</kw>
<test id="s1-t1" name="T" line="2">
<kw name="No Operation" owner="BuiltIn">
<status status="PASS" start="2026-12-07T00:50:01.000000" elapsed="0.001"/>
</kw>
<status status="PASS" start="2026-12-07T00:50:01.000000" elapsed="0.002"/>
</test>
<status status="PASS" start="2026-12-07T00:50:00.000000" elapsed="1.1"/>
</suite>
<statistics><total><stat pass="1" fail="0" skip="0">All Tests</stat></total><tag/><suite/></statistics>
<errors/>
</robot>
"""


def test_a_keyword_setup_inside_a_listeners_suite_keyword_stays_that_keywords(
        tmp_path: Path) -> None:
    """A setup deep in a suite's implicit setup is the setup of the keyword it is in (RF 7's
    keyword setups), not a real suite setup taking the implicit one over: before, it was,
    and the test after it was put inside a keyword."""
    (tmp_path / "nested.xml").write_text(NESTED)
    stored = _imported(tmp_path, "nested.xml")
    assert stored == dump_execution_result(str(tmp_path / "nested.xml"))
    assert [(n["id"], n["type"], n["name"]) for n in stored["nodes"]] == [
        ("s1", "SUITE", "Nested"), ("s1-k1", "SETUP", "Implicit setup"),
        ("s1-k1-k1", "KEYWORD", "With Setup"), ("s1-k1-k1-k1", "SETUP", "Log"),
        ("s1-k1-k1-k2", "KEYWORD", "Log"), ("s1-t1", "TEST", "T"),
        ("s1-t1-k1", "KEYWORD", "No Operation")]
