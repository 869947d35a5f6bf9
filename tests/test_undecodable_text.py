"""Text that is not valid Unicode: lone surrogates, as Python keeps bytes that were not UTF-8
(a folder's or a file's name, a program's output decoded with ``surrogateescape``) and as RF
writes them to output.json (``\\udce9``). SQLite and PostgreSQL hold valid UTF-8 only: each
lone surrogate is stored as U+FFFD (``schema.stored_text``), and the run is captured and
imported whole. Before, the first such text stopped live capture (the store kept the root
suite only), the import of RF's output.json failed, and the CLI answered an argument with
such bytes with a traceback.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import ijson
import pytest
from conftest import cli
from oracle import dump_execution_result, dump_store
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.importers.json_source import _CountingReader
from rf_log_listener.schema import stored_text, stored_values
from rf_log_listener.store import open_store

FOLDER = "Caf\udce9"  # a folder named in Latin-1: the bytes b"Caf\xe9"
LIBRARY = '''
from robot.api import logger

def log_undecodable():
    logger.info("listing: caf\\udce9.txt and \\ud83d\\ude00")  # a file name's byte; a pair
    return "ret \\udcfe"

def fail_undecodable():
    raise AssertionError("expected caf\\udce9 here")
'''
SUITE = """*** Settings ***
Library    Odd.py

*** Test Cases ***
Logs
    ${x}=    Log Undecodable
    Log    ${x}
Fails
    Fail Undecodable
After
    Log    still captured
"""


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The suite in a folder with a Latin-1 name, run with the listener, robot writing
    output.json into that folder; its import into a second store."""
    work = tmp_path_factory.mktemp("undecodable")

    def new_store(name: str) -> Any:
        if request.param == "sqlite":
            return work / f"{name}.sqlite3"
        return str(request.getfixturevalue("pg_server").new_database())

    folder = work / FOLDER
    folder.mkdir()
    (folder / "Odd.py").write_text(LIBRARY)
    (folder / "a.robot").write_text(SUITE)
    live = new_store("live")
    done = robot("--listener", f"rf_log_listener;db={live}", "--outputdir", str(folder),
                 "--output", "output.json", str(folder), cwd=work)
    assert done.returncode == 1, done.stdout + done.stderr  # Fails failed
    assert "rf_log_listener" not in done.stderr, done.stderr
    return {"work": work, "output": folder / "output.json", "live": open_store(live),
            "imported": open_store(new_store("imported")), "db": live}


def test_a_run_with_undecodable_text_is_captured_and_imported_whole(run: dict[str, Any]) -> None:
    live = run["live"]
    (run_id, status, total, failed), = live.execute(
        "SELECT run_id, status, total, failed FROM runs").fetchall()
    assert (status, total, failed) == ("complete", 3, 1)
    texts = {text for (text,) in live.execute("SELECT text FROM messages")}
    assert "listing: caf\ufffd.txt and \U0001f600" in texts  # the pair is the character it spells
    assert {"ret \ufffd", "still captured"} <= texts
    (message,), = live.execute("SELECT message FROM nodes WHERE type = 'TEST' AND status = 'FAIL'")
    assert message == "expected caf\ufffd here"
    (name,), = live.execute("SELECT name FROM runs")
    assert name == "Caf\ufffd"

    model = stored_values(dump_execution_result(str(run["output"])))
    assert dump_store(live, run_id) == model
    outcome = import_result(run["imported"], run["output"], stable_window=0)
    assert outcome.status == "complete" and not outcome.deduplicated
    assert dump_store(run["imported"], outcome.run_id) == model
    # the file's path holds the folder's byte as well: found again by its path
    assert outcome.source_path == stored_text(str(run["output"]))
    again = import_result(run["imported"], run["output"], stable_window=0)
    assert again.deduplicated and again.run_id == outcome.run_id


def test_arguments_with_undecodable_bytes_are_answered(run: dict[str, Any]) -> None:
    if not isinstance(run["db"], Path):
        pytest.skip("the command line's arguments, once: on the SQLite store")
    db = run["db"]
    # what a terminal sends for "Café" in Latin-1: the store's name of the folder's test
    history = cli("history", f"{FOLDER}.A.Fails", db=db)
    assert history.returncode == 0, history.stderr
    assert "Caf\ufffd.A.Fails: 1 finished run(s)" in history.stdout
    search = cli("search", "1", "caf\udce9", db=db)
    assert search.returncode == 0, search.stderr
    assert "listing: caf\ufffd.txt" in search.stdout and "expected caf\ufffd here" in search.stdout
    tree = cli("tree", "1", "s1\udcff", db=db)
    assert tree.returncode == 1 and "Traceback" not in tree.stderr
    assert tree.stderr.startswith("error [NODE_NOT_FOUND]: Run 1 has no node 's1\ufffd'.")


class _SmallReads(io.RawIOBase):
    """A file read a few bytes at a time, as a pipe or a growing file may hand them out."""

    def __init__(self, data: bytes, rnd: random.Random) -> None:
        self.data, self.at, self.rnd = data, 0, rnd

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        step = self.rnd.randint(1, 20) if self.rnd.random() < 0.9 else self.rnd.randint(1, 300)
        chunk = self.data[self.at:self.at + step]
        self.at += len(chunk)
        return chunk


def test_the_json_reader_reads_lone_surrogates_escapes_as_replacement_characters() -> None:
    """Every escape whatever the reads cut it into: a lone surrogate's is U+FFFD, a pair's
    the character, an escaped backslash followed by "udc00" text."""
    rnd = random.Random(19)
    pieces = ["a", "\\", "\\\\", "\\\\\\", "u", "ud800", "udc00", "\udce9", "\ud83d\ude00",
              "\ud800", "\udc00", "\ud800\ud800\udc00", "é", "\U0001f600", '"', "\n", "x" * 30]
    for _ in range(2000):
        texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
                 for _ in range(rnd.randint(1, 4))]
        # as RF writes it (json with ensure_ascii), or raw UTF-8 where nothing is lone
        raw = json.dumps({"k": texts}, ensure_ascii=rnd.random() < 0.5)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in raw):
            raw = json.dumps({"k": texts})
        reader = _CountingReader(_SmallReads(raw.encode(), rnd), None)
        (parsed,) = ijson.items(reader, "", use_float=True)
        assert parsed == stored_values(json.loads(raw)), raw
        assert reader.at_eof and reader.done == len(raw.encode())


def test_stored_text_replaces_lone_surrogates_only() -> None:
    assert stored_text("plain é \U0001f600") == "plain é \U0001f600"
    assert stored_text("a\udce9b\ud800") == "a\ufffdb\ufffd"
    assert stored_text("\ud83d\ude00") == "\U0001f600"
    assert os.fsdecode(b"Caf\xe9") == FOLDER  # what Python makes of a Latin-1 name
    assert sys.getfilesystemencodeerrors() == "surrogateescape"
