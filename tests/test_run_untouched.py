"""The listener changes nothing about the run it captures: it makes no library instance the
run did not make, and robot calling it back from inside one of its own methods (a library
logging while the listener reads it) does not hang robot.

Both were found on RF's own acceptance data (``test_libraries/import_and_init_logging.robot``):
reading where a TEST scoped library's keywords are defined after its test made RF make a
new instance, whose ``__init__`` logged a warning, and RF's call of the listener's
``message`` waited for the lock the listener's ``end_suite`` held: robot hung for good.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from oracle import dump_store
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store

SCOPED = '''
from robot.api import logger


class Scoped:
    ROBOT_LIBRARY_SCOPE = "{scope}"

    def __init__(self):
        with open("instances.txt", "a") as made:
            made.write("made\\n")
        logger.warn("an instance made")

    def touch(self):
        pass
'''

# A dynamic library tells where its keywords are defined from its instance, logging as it does.
PLACING = '''
from robot.api import logger


class Placing:
    ROBOT_LIBRARY_SCOPE = "GLOBAL"

    def get_keyword_names(self):
        return ["Place"]

    def run_keyword(self, name, args, kwargs=None):
        return None

    def get_keyword_source(self, name):
        logger.warn(f"asked where {name} is")
        return __file__ + ":4"
'''

SUITE = """*** Settings ***
Library    Scoped.py
Library    Placing.py

*** Test Cases ***
First
    Touch
    Place

Second
    Touch
"""


def _run(folder: Path, *listener: str, version: str = "") -> subprocess.CompletedProcess[str]:
    """robot in ``folder``, killed after a minute: a hang fails the test instead of the suite."""
    process = robot("--output", "output.xml", *listener, "s.robot", cwd=folder, wait=False,
                    version=version)
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"robot hung in {folder} {listener}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize("scope, writer, version", [
    ("TEST", "inline", ""), ("SUITE", "process", ""), ("TEST", "inline", "7.0.1")])
def test_libraries_are_made_as_often_as_without_the_listener_and_robot_never_hangs(
        tmp_path: Path, scope: str, writer: str, version: str) -> None:
    made = {}
    for name, listener in (("plain", ()), ("captured", (
            "--listener", f"rf_log_listener;db={tmp_path / 'store.sqlite3'};writer={writer}"))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "Scoped.py").write_text(SCOPED.format(scope=scope))
        (folder / "Placing.py").write_text(PLACING)
        (folder / "s.robot").write_text(SUITE)
        done = _run(folder, *listener, version=version)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "rf_log_listener" not in done.stderr, done.stderr
        made[name] = (folder / "instances.txt").read_text().count("made")
    assert made["captured"] == made["plain"] == (3 if scope == "TEST" else 2)  # RF's import makes one
    live = open_store(tmp_path / "store.sqlite3")
    conn = open_store(tmp_path / "import.sqlite3")
    run_id = import_result(conn, tmp_path / "captured" / "output.xml", stable_window=0).run_id
    in_file = dump_store(conn, run_id)["errors"]
    if version:  # RF 7.0 does not call a listener back while it runs: the file has the warning
        in_file = [e for e in in_file if e["text"] != "asked where Place is"]  # the read logged
    assert [e["text"] for e in dump_store(live, 1)["errors"]] == [e["text"] for e in in_file]
    texts = [text for (text,) in live.execute("SELECT text FROM errors ORDER BY seq")]
    assert texts.count("an instance made") == made["plain"]
    if not version:  # RF 7.0's libraries have no get_keyword_source call at this point
        where = live.execute("SELECT source, lineno FROM definitions WHERE name_key LIKE '%touch%'"
                             ).fetchall()
        assert where == [(str(tmp_path / "captured" / "Scoped.py"), 13)]


def test_the_guard_takes_a_call_back_from_inside_a_method(tmp_path: Path) -> None:
    """A listener method that makes robot log (here: a library's ``get_keyword_source`` read
    at a suite's end): the warning reaches the store after that method, in order."""
    (tmp_path / "Scoped.py").write_text(SCOPED.format(scope="GLOBAL"))
    (tmp_path / "Placing.py").write_text(PLACING)
    (tmp_path / "s.robot").write_text(SUITE)
    db = tmp_path / "store.sqlite3"
    done = _run(tmp_path, "--listener", f"rf_log_listener;db={db}")
    assert done.returncode == 0 and "rf_log_listener" not in done.stderr, done.stdout + done.stderr
    texts = [text for (text,) in open_store(db).execute("SELECT text FROM errors ORDER BY seq")]
    assert texts[0] == "an instance made" and "asked where Place is" in texts, texts
