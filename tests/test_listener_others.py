"""Other listeners beside the capture: their messages, and the changes they make to steps
and names, reach the store as they reach the output files."""

from __future__ import annotations

from pathlib import Path

from oracle import dump_import, dump_store
from robot_runs import WAIT_FOR_GO, robot, wait_for_row

from rf_log_listener.store import open_store

CHATTY_LISTENER = """\
from robot.api import logger

ROBOT_LISTENER_API_VERSION = 3


def start_keyword(data, result):
    logger.info(f"chatty starts {result.name}")


def end_keyword(data, result):
    logger.info(f"chatty ends {result.name}")
    if result.name == "Fail":
        result.message += " (seen by chatty)"


def end_test(data, result):
    logger.info(f"chatty ends test {result.name}")
"""


def test_other_listeners_messages_and_changes_are_captured_as_the_file_has_them(
        tmp_path: Path) -> None:
    """This listener reads each message from the result body RF fills for its own output, and
    runs after every other listener: what they log in start_*/end_* (also into a keyword
    with a teardown, after it ran) and what they change reaches the store as it reaches
    the file, though this listener is named first."""
    (tmp_path / "chatty.py").write_text(CHATTY_LISTENER)
    suite = tmp_path / "chatty.robot"
    suite.write_text(
        "*** Test Cases ***\nTalkative\n    With Teardown\n    Log    in the test\n"
        "    Run Keyword And Expect Error    *    Fail    expected\n"
        "    [Teardown]    Log    test teardown\n\n"
        "*** Keywords ***\nWith Teardown\n    Log    inside\n    RETURN    done\n"
        "    [Teardown]    Log    keyword teardown\n")
    db = tmp_path / "live.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--listener", str(tmp_path / "chatty.py"),
                 "--loglevel", "TRACE", "--output", str(tmp_path / "out.xml"), str(suite),
                 cwd=tmp_path)
    assert done.returncode == 0 and "rf_log_listener" not in done.stderr, done.stderr[-2000:]
    live = dump_store(open_store(db), 1)
    reference = dump_import(tmp_path / "imported.sqlite3", tmp_path / "out.xml")
    assert live == reference
    texts = [m["text"] for m in live["messages"]]
    assert "chatty ends With Teardown" in texts and "chatty ends test Talkative" in texts
    assert any(n.get("message") == "expected (seen by chatty)" for n in live["nodes"])


MASKING_LISTENER = """\
ROBOT_LISTENER_API_VERSION = 3


def end_keyword(data, result):
    result.args = tuple(arg.replace("secret-42", "***") for arg in result.args)
"""


def test_a_step_changed_by_another_listener_after_it_was_seen_running_is_stored_as_changed(
        tmp_path: Path) -> None:
    """The step runs long enough to be sent open (RUNNING) with its arguments as they were;
    another listener masks them in end_keyword, before robot writes them to the file: the
    store ends with the masked ones too."""
    (tmp_path / "masking.py").write_text(MASKING_LISTENER)
    suite = tmp_path / "masked.robot"
    suite.write_text("*** Settings ***\nLibrary    OperatingSystem\n\n"
                     "*** Test Cases ***\nLogs In\n    Log In With    secret-42\n\n"
                     "*** Keywords ***\nLog In With\n    [Arguments]    ${token}\n"
                     f"    {WAIT_FOR_GO}\n")
    db = tmp_path / "live.sqlite3"
    process = robot("--listener", f"rf_log_listener:db={db}", "--listener",
                    str(tmp_path / "masking.py"), "--output", str(tmp_path / "out.xml"), str(suite),
                    cwd=tmp_path, wait=False)
    wait_for_row(db, "SELECT 1 FROM nodes WHERE name = 'Log In With' AND status = 'RUNNING'"
                      " AND args LIKE '%secret-42%'")
    (tmp_path / "go").touch()
    assert process.wait(120) == 0, process.stderr.read()
    live = dump_store(open_store(db), 1)
    assert live == dump_import(tmp_path / "imported.sqlite3", tmp_path / "out.xml")
    assert [n["args"] for n in live["nodes"] if n["name"] == "Log In With"] == [["***"]]


RENAMING_LISTENER = """\
ROBOT_LISTENER_API_VERSION = 3


def end_keyword(data, result):
    if result.name == "Log In With":
        result.name = "Renamed At End"
"""


def test_a_step_renamed_by_another_listener_has_its_final_name_as_in_output_json(
        tmp_path: Path) -> None:
    """The documented difference: robot writes a step's name to output.xml at its start,
    before any listener ran, and to output.json at its end; the store has the final name."""
    (tmp_path / "renaming.py").write_text(RENAMING_LISTENER)
    suite = tmp_path / "renamed.robot"
    suite.write_text("*** Test Cases ***\nLogs In\n    Log In With    token\n\n"
                     "*** Keywords ***\nLog In With\n    [Arguments]    ${token}\n"
                     "    Log    in with ${token}\n")
    for output in ("output.xml", "output.json"):
        db = tmp_path / f"{output}.sqlite3"
        done = robot("--listener", f"rf_log_listener:db={db}", "--listener",
                     str(tmp_path / "renaming.py"), "--output", str(tmp_path / output), str(suite),
                     cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        live = dump_store(open_store(db), 1)
        reference = dump_import(tmp_path / f"imported-{output}.sqlite3", tmp_path / output)
        assert [n["name"] for n in live["nodes"]] == ["Renamed", "Logs In", "Renamed At End", "Log"]
        if output == "output.json":
            assert live == reference
        else:
            assert reference["nodes"][2]["name"] == "Log In With"
            reference["nodes"][2]["name"] = "Renamed At End"
            assert live == reference  # and nothing else differs

