"""Hostile and extreme inputs: XML attacks, broken encodings, huge and deep results.

An XML attack must never read a local file or touch the network, and entity expansion must
not cost time or memory: RF never writes a DOCTYPE, so one is refused before anything in it
is used. Extreme but valid results (a 100 MB message, 10,000-deep keywords, 1,000,000
iterations of one loop) import completely and every view answers within its budget.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from rf_log_listener.errors import ResultError
from rf_log_listener.importers import import_result
from rf_log_mcp import service

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
ROBOT = ('<robot generator="Robot 7.5 (Python 3.11 on linux)" generated="2026-01-01T00:00:00"'
         ' rpa="false" schemaversion="5">')
STATUS = '<status status="{}" start="2026-01-01T00:00:00.000000" elapsed="0.001"/>'


def _result(body: str, status: str = "PASS") -> str:
    """A complete output.xml around ``body`` (the children of one test)."""
    return (f'{HEAD}{ROBOT}<suite id="s1" name="S"><test id="s1-t1" name="T">{body}'
            f'{STATUS.format(status)}</test>{STATUS.format(status)}</suite>'
            f'<statistics></statistics><errors></errors></robot>\n')


def _refused(conn: sqlite3.Connection, path: Path) -> ResultError:
    with pytest.raises(ResultError) as caught:
        import_result(conn, path, stable_window=0)
    assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0
    return caught.value


class _Listener:
    """A local TCP port that counts connections: proof that nothing was fetched."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                self.sock.accept()[0].close()
                self.connections += 1
            except OSError:
                continue

    def close(self) -> int:
        self.stop.set()
        self.thread.join(2)
        self.sock.close()
        return self.connections


def test_external_entities_never_read_files_or_the_network(conn: sqlite3.Connection,
                                                           tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    server = _Listener()
    attacks = {
        "file": f'<!DOCTYPE robot [<!ENTITY x SYSTEM "{secret.as_uri()}">]>',
        "http": f'<!DOCTYPE robot [<!ENTITY x SYSTEM "http://127.0.0.1:{server.port}/x">]>',
        "dtd": f'<!DOCTYPE robot SYSTEM "http://127.0.0.1:{server.port}/robot.dtd">',
        "parameter": (f'<!DOCTYPE robot [<!ENTITY % p SYSTEM "http://127.0.0.1:{server.port}/p">'
                      '%p;]>'),
    }
    try:
        for name, doctype in attacks.items():
            path = tmp_path / f"{name}.xml"
            path.write_text(HEAD + doctype + _result('<msg time="2026-01-01T00:00:00" '
                                                     'level="INFO">&x;</msg>')[len(HEAD):])
            err = _refused(conn, path)
            assert err.code == "INVALID_XML" and "DOCTYPE" in err.message, name
            assert "TOP-SECRET" not in err.message + (err.hint or "")
    finally:
        assert server.close() == 0  # not one connection


@pytest.mark.parametrize("name", ["billion_laughs", "quadratic_blowup"])
def test_entity_expansion_bombs_are_refused_before_expanding(conn: sqlite3.Connection,
                                                             tmp_path: Path, name: str) -> None:
    if name == "billion_laughs":
        entities = '<!ENTITY l0 "lol">' + "".join(
            f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
        use = "&l9;"
    else:
        entities = f'<!ENTITY big "{"x" * 100_000}">'
        use = "&big;" * 50_000
    path = tmp_path / f"{name}.xml"
    path.write_text(f'{HEAD}<!DOCTYPE robot [{entities}]>' + _result(
        f'<msg time="2026-01-01T00:00:00" level="INFO">{use}</msg>')[len(HEAD):])
    err = _refused(conn, path)
    assert err.code == "INVALID_XML" and "DOCTYPE" in err.message


@pytest.mark.parametrize(("content", "phrase"), [
    (_result('<msg time="2026-01-01T00:00:00" level="INFO">caf\xe9</msg>').encode("latin-1"),
     "not well-formed"),
    (_result('<msg time="2026-01-01T00:00:00" level="INFO">bell \x07 here</msg>').encode(),
     "not well-formed"),
])
def test_invalid_utf8_and_illegal_xml_characters(conn: sqlite3.Connection, tmp_path: Path,
                                                 content: bytes, phrase: str) -> None:
    path = tmp_path / "bad.xml"
    path.write_bytes(content)
    err = _refused(conn, path)
    assert err.code == "INVALID_XML" and phrase in err.message and "line 2, column" in err.message


def test_a_symlink_loop_and_a_directory_are_not_found(conn: sqlite3.Connection, tmp_path: Path) -> None:
    loop = tmp_path / "loop.xml"
    loop.symlink_to(tmp_path / "loop.xml")
    assert _refused(conn, loop).code == "FILE_NOT_FOUND"
    assert _refused(conn, tmp_path).code == "FILE_NOT_FOUND"


def _keyword(body: str, status: str = "PASS") -> str:
    return f'<kw name="Log" owner="BuiltIn">{body}{STATUS.format(status)}</kw>'


@pytest.mark.slow
def test_a_100_mb_message_is_stored_whole_and_shown_cut(conn: sqlite3.Connection, tmp_path: Path) -> None:
    path = tmp_path / "big.xml"
    middle = "needle-in-the-middle"
    text = "a" * 50_000_000 + middle + "z" * 50_000_000
    path.write_text(_result(_keyword(f'<msg time="2026-01-01T00:00:00" level="FAIL">{text}</msg>',
                                     "FAIL"), "FAIL"))
    run_id = import_result(conn, path, stable_window=0).run_id
    assert conn.execute("SELECT length(text) FROM messages").fetchone()[0] == len(text)
    failure = service.get_view(conn, "failure_path", run_id=run_id)
    assert failure.ok and failure.message_truncated and failure.estimated_tokens <= 4000
    found = service.search_messages(conn, middle, run_id=run_id)
    assert found.ok and middle in found.hits[0].text and len(found.hits[0].text) < 1000


@pytest.mark.slow
def test_ten_thousand_nested_keywords(conn: sqlite3.Connection, tmp_path: Path) -> None:
    depth = 10_000
    inner = '<msg time="2026-01-01T00:00:00" level="FAIL">deepest failure</msg>'
    body = ('<kw name="Nest">' * depth + inner + (STATUS.format("FAIL") + "</kw>") * depth)
    path = tmp_path / "deep.xml"
    path.write_text(_result(body, "FAIL"))
    run_id = import_result(conn, path, stable_window=0).run_id
    assert conn.execute("SELECT max(depth) FROM nodes").fetchone()[0] == depth + 1
    deepest = "s1-t1" + "-k1" * depth
    window = service.get_view(conn, "step_window", run_id=run_id, selector=deepest)
    assert window.ok and window.step_window is not None and window.step_window.steps
    assert window.step_window.steps_total == depth + 1 and window.budget_truncated
    # ids 30,000 characters long: a page still moves forward, one step at least
    assert window.step_window.steps[0].depth == depth - 12
    path_view = service.get_view(conn, "failure_path", run_id=run_id)
    assert path_view.ok and path_view.failure_path is not None
    # the levels fold (REPEATED_CALLS); the deepest step, 30,000 characters of id, stays
    steps = path_view.failure_path.path
    assert steps[0].node_id == "s1-t1" and steps[-1].node_id == deepest  # type: ignore[union-attr]
    assert path_view.budget_truncated and path_view.next_cursor
    found = service.search_messages(conn, "deepest", run_id=run_id)
    assert found.hits[0].id == deepest + "-m1" and "…" in (found.hits[0].call_path or "")


def _children(view: Any) -> list[dict[str, Any]]:
    """A tree answer's children as the client gets them (JSON, empty fields left out)."""
    return view["tree"]["children"]  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_million_iterations_of_one_loop(conn: sqlite3.Connection, tmp_path: Path) -> None:
    count = 1_000_000
    path = tmp_path / "wide.xml"
    with path.open("w") as out:
        out.write(f'{HEAD}{ROBOT}<suite id="s1" name="S"><test id="s1-t1" name="T">'
                  '<for flavor="IN RANGE"><var>${i}</var><value>1000000</value>')
        for i in range(count):
            status = "FAIL" if i == 777_777 else "PASS"
            out.write(f'<iter><var name="${{i}}">{i}</var>{STATUS.format(status)}</iter>')
        out.write(f'{STATUS.format("FAIL")}</for>{STATUS.format("FAIL")}</test>'
                  f'{STATUS.format("FAIL")}</suite><statistics></statistics><errors></errors></robot>')
    run_id = import_result(conn, path, stable_window=0).run_id
    assert conn.execute("SELECT child_count FROM nodes WHERE node_id = 's1-t1-k1'").fetchone()[0] == count
    tree = service.get_view(conn, "tree", run_id=run_id, selector="s1-t1-k1")
    assert tree.ok and tree.tree is not None
    children = _children(tree)
    kinds = [child.get("kind", child.get("type")) for child in children]
    assert kinds == ["ITERATION_GROUP", "ITERATION", "ITERATION_GROUP"]
    assert children[0]["count"] == 777_777
    assert children[1]["node_id"] == "s1-t1-k1-k777778"
    failures = service.get_view(conn, "tree", run_id=run_id, selector="s1-t1-k1",
                                projection="failures")
    assert [c["node_id"] for c in _children(failures)] == ["s1-t1-k1-k777778"]
    # groups count iterations as RF numbers them, and a page inside one is O(page)
    last_group = children[2]
    assert (last_group["expand_selector"], last_group["count"]) == ("ig:s1-t1-k1:777779-1000000",
                                                                    222_222)
    page = service.get_view(conn, "tree", run_id=run_id, selector=last_group["expand_selector"],
                            page_size=3)
    assert [c["node_id"] for c in _children(page)] == [
        f"s1-t1-k1-k{n}" for n in (777_779, 777_780, 777_781)]
    following = service.get_view(conn, "tree", run_id=run_id, selector=last_group["expand_selector"],
                                 page_size=3, cursor=page.next_cursor)
    assert [c["assign"] for c in _children(following)] == [
        {"${i}": str(n)} for n in (777_781, 777_782, 777_783)]
    end = service.get_view(conn, "tree", run_id=run_id, selector="ig:s1-t1-k1:999999-1000000")
    assert [c["node_id"] for c in _children(end)] == [
        "s1-t1-k1-k999999", "s1-t1-k1-k1000000"] and end.next_cursor is None
    found = service.search_messages(conn, None, run_id=run_id, selector="ig:s1-t1-k1:1-777777",
                                    min_level="TRACE")
    assert found.ok and found.hits == []  # the iterations logged nothing
    for wrong in ("ig:s1-t1-k1:0-5", "ig:s1-t1-k1:5-1000001", "ig:s1-t1:1-2", "ig:s1-t1-k1:9-3"):
        assert service.get_view(conn, "tree", run_id=run_id, selector=wrong).error.code == (  # type: ignore[union-attr]
            "NODE_NOT_FOUND"), wrong


CONTROLS_LIBRARY = '''\
from robot.api import logger


def log_controls():
    logger.info("osc\\x1b]0;pwned title\\x07 clear\\x1b[2J cr\\roverwritten nul\\x00 "
                "c1\\x9b31m \\x1b[31mred\\x1b[0m tab\\tend\\r\\nnext line")
    raise AssertionError("failed \\x1b]52;c;Y2xpcGJvYXJk\\x07 here \\x1b[33mleft yellow")
'''


def test_the_command_line_shows_control_characters_escaped(tmp_path: Path) -> None:
    """A program's output logged as it is (a subprocess's, a serial console's) holds control
    characters. The store keeps them (output.json does); the command line's text answers
    show them escaped, so a logged escape sequence cannot retitle the terminal, write its
    clipboard (OSC 52), clear it or overwrite a line; colours and CR LF pass, and a colour
    a text leaves on (a long coloured line cut before its reset) stops where the text ends.
    --json keeps the exact text (JSON escapes it)."""
    import json
    import subprocess
    import sys

    from conftest import cli

    (tmp_path / "Controls.py").write_text(CONTROLS_LIBRARY)
    suite = tmp_path / "controls.robot"
    suite.write_text("*** Settings ***\nLibrary    Controls.py\n\n*** Test Cases ***\n"
                     "Controls\n    Log Controls\n")
    db = tmp_path / "store.sqlite3"
    done = subprocess.run([sys.executable, "-m", "robot", "--output", "NONE", "--log", "NONE",
                           "--report", "NONE", "--console", "none", "--pythonpath", str(tmp_path),
                           "--listener", f"rf_log_listener:db={db}", str(suite)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1 and "rf_log_listener" not in done.stderr, done.stderr
    logged = ("osc\x1b]0;pwned title\x07 clear\x1b[2J cr\roverwritten nul\x00 c1\x9b31m"
              " \x1b[31mred\x1b[0m tab\tend\nnext line")  # RF itself makes CR LF one LF
    exact = cli("message", "1", "s1-t1-k1-m1", "--json", db=db)
    assert json.loads(exact.stdout)["message"]["text"] == logged
    shown = {command[0]: cli(*command, db=db).stdout for command in (
        ("message", "1", "s1-t1-k1-m1"), ("search", "1", "osc"), ("failures", "1"),
        ("summary", "1"))}
    for command, text in shown.items():
        assert not set(text) & {"\x00", "\x07", "\r", "\x9b"}, (command, text)
        assert "\x1b]" not in text and "\x1b[2J" not in text, (command, text)
    assert shown["message"].rstrip("\n") == (
        "osc\\x1b]0;pwned title\\x07 clear\\x1b[2J cr\\roverwritten nul\\x00 c1\\x9b31m"
        " \x1b[31mred\x1b[0m tab\tend\nnext line")
    assert "failed \\x1b]52;c;Y2xpcGJvYXJk\\x07 here" in shown["failures"]
    assert "failed \\x1b]52;c;Y2xpcGJvYXJk\\x07 here" in shown["summary"]
    for command in ("failures", "summary"):  # the next line is not yellow
        assert "here \x1b[33mleft yellow\x1b[0m\n" in shown[command], shown[command]
