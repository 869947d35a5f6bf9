"""Where nodes are written: source, lineno and the keyword definition of every node, with
their origin, checked against the real lines of the suite files (tests/data/sources/orders:
a directory suite with an __init__ file, Test Setup inherited from it, resources importing
resources, keywords of the suite file, FOR/WHILE/IF/TRY, Run Keyword).

The same locations for a live run (the listener), imports of its XML and JSON, and an RF 6.1
output.xml; `sources_changed` when a file changed since the run (an imported run: modified
after the run started; a live run: the fingerprint the listener recorded differs, so a file
that was only touched still resolves), `sources_missing` when the files are gone.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from robot_runs import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "sources" / "orders"
_OPENERS = {"FOR": "FOR", "WHILE": "WHILE", "IF/ELSE ROOT": "IF", "IF": "IF",
            "ELSE IF": "ELSE IF", "ELSE": "ELSE", "TRY/EXCEPT ROOT": "TRY", "TRY": "TRY",
            "EXCEPT": "EXCEPT", "FINALLY": "FINALLY", "RETURN": "RETURN", "VAR": "VAR",
            "GROUP": "GROUP"}


def _run(tmp_path: Path, *options: str, version: str = "") -> Path:
    folder = tmp_path / "run"
    shutil.copytree(SUITE, folder / "orders")
    done = robot(*options, "orders", cwd=folder, version=version)
    assert done.returncode == 2, done.stdout + done.stderr  # two tests fail on purpose
    return folder


def _locations(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Every node's location fields, as step_window shows them (every step of every test and
    of the suite setup), and the suites' and tests' from tree."""
    found: dict[str, dict[str, Any]] = {}
    starts = [row[0] for row in conn.execute(
        "SELECT node_id FROM nodes WHERE type = 'TEST' OR (type = 'SETUP' AND owner_test IS NULL)")]
    for start in starts:
        cursor = None
        while True:
            page = service.get_view(conn, "step_window", run_id=1, selector=start, cursor=cursor,
                                    page_size=200)
            assert page.ok, page.error
            for step in page.step_window.steps:  # type: ignore[union-attr]
                found[step.node_id] = {key: step[key] for key in (
                    "type", "name", "source", "lineno", "source_origin", "definition_source",
                    "definition_lineno") if key in step}
            cursor = page.next_cursor
            if cursor is None:
                break
    tree = service.get_view(conn, "tree", run_id=1, selector="s1")
    for node in [tree.tree.node, *tree.tree.children]:  # type: ignore[union-attr]
        found[node.node_id] = {key: node[key] for key in (  # type: ignore[union-attr]
            "type", "name", "source", "lineno", "source_origin") if key in node}
    return found


def _says(root: Path, source: str, lineno: int) -> str:
    return (root / source).read_text().splitlines()[lineno - 1].strip()


def _check_against_the_files(found: dict[str, dict[str, Any]], root: Path) -> None:
    unsupported = set()
    for node_id, node in found.items():
        kind = node["type"]
        if kind == "ITERATION":
            assert "source" not in node and "lineno" not in node  # its loop has them
            continue
        if kind == "SUITE":
            assert node["source_origin"] == "node"
            continue
        if node.get("source_origin") == "unsupported":
            unsupported.add(node_id)
            continue
        assert node["source_origin"] == ("suite" if kind == "TEST" else "source_files"), node_id
        line = _says(root, node["source"], node["lineno"])
        if kind in _OPENERS:
            assert line.startswith(_OPENERS[kind]), (node_id, line)
        elif kind != "TEST":
            assert node["name"].lower() in line.lower(), (node_id, node, line)
        if "definition_source" in node and node["definition_source"].endswith(".py"):
            defined = _says(root, node["definition_source"], node["definition_lineno"])
            assert defined.startswith(f"def {node['name'].lower().replace(' ', '_')}("), defined
        elif "definition_source" in node:
            assert _says(root, node["definition_source"], node["definition_lineno"]) == node["name"]
    # Run Keyword's child: RF gives no line for what a library keyword runs; nothing guessed
    assert unsupported == {"s1-s1-t2-k7-k1"}
    helper = found["s1-s1-t2-k7-k1"]
    assert (helper["definition_source"], helper["definition_lineno"]) == ("checkout.robot", 32)


def _expected(found: dict[str, dict[str, Any]]) -> None:
    """A few locations spelled out (the rest is checked against the files)."""
    assert found["s1"]["source"] == "." and found["s1-s1"]["source"] == "checkout.robot"
    assert (found["s1-k1"]["source"], found["s1-k1"]["lineno"]) == ("__init__.robot", 4)
    # Test Setup from the __init__ file: there, not on the test's own line
    assert (found["s1-s1-t1-k1"]["source"], found["s1-s1-t1-k1"]["lineno"]) == ("__init__.robot", 5)
    place = found["s1-s1-t1-k3-k1-k1"]  # Place Order in the FOR loop
    assert (place["source"], place["lineno"]) == ("checkout.robot", 12)
    assert (place["definition_source"], place["definition_lineno"]) == ("common.resource", 10)
    fail = found["s1-s1-t1-k3-k2-k1-k2-k1-k1"]  # Fail in Check Stock, in deeper.resource
    assert (fail["name"], fail["source"], fail["lineno"]) == ("Fail", "deeper.resource", 7)
    assert (found["s1-s1-t2"]["source"], found["s1-s1-t2"]["lineno"]) == ("checkout.robot", 15)


@pytest.fixture(scope="module")
def live_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("sources")
    live = work / "live.sqlite3"
    folder = _run(work, "--output", "out.xml", "--listener", f"rf_log_listener:db={live}")
    return folder, live


def test_every_step_is_located_where_the_files_say(live_run: tuple[Path, Path]) -> None:
    folder, live = live_run
    found = {}
    for kind, store in (("live", live), ("xml", folder / "xml.sqlite3")):
        if kind != "live":
            import_result(open_store(store), folder / "out.xml", stable_window=0)
        with open_store(store) as conn:
            found[kind] = _locations(conn)
            summary = service.get_view(conn, "summary", run_id=1).summary
            assert summary is not None and summary.source_root == str(folder / "orders")
    _check_against_the_files(found["xml"], folder / "orders")
    _check_against_the_files(found["live"], folder / "orders")
    _expected(found["xml"])
    # a library keyword's definition: RF's model gives it to the listener; no output file
    # has it, an import reads it from the library's file beside the suites
    count = "s1-s1-t2-k8"
    for kind in ("live", "xml"):
        assert (found[kind][count]["name"], found[kind][count]["definition_source"],
                found[kind][count]["definition_lineno"]) == ("Count Items", "Stock.py", 4), kind
    # installed libraries (BuiltIn) are left out; everything else is the same
    assert "definition_source" not in found["live"]["s1-s1-t2-k5"]  # Set Variable
    assert found["live"] == found["xml"]


def test_json_and_rf6_outputs_give_the_same_locations(tmp_path: Path,
                                                      live_run: tuple[Path, Path]) -> None:
    folder, _ = live_run
    imported = tmp_path / "reference.sqlite3"
    import_result(open_store(imported), folder / "out.xml", stable_window=0)
    with open_store(imported) as conn:
        reference = _locations(conn)
    for version, output in (("", "out.json"), ("6.1.1", "out.xml")):
        run = _run(tmp_path / (version or "json"), "--output", output, version=version)
        store = run / "store.sqlite3"
        import_result(open_store(store), run / output, stable_window=0)
        with open_store(store) as conn:
            assert _locations(conn) == reference, version or "json"


def test_changed_or_missing_sources_resolve_nothing(tmp_path: Path) -> None:
    folder = _run(tmp_path, "--output", "out.xml", "--listener",
                  f"rf_log_listener:db={tmp_path / 'live.sqlite3'}")
    imported = tmp_path / "xml.sqlite3"
    import_result(open_store(imported), folder / "out.xml", stable_window=0)
    checkout = folder / "orders" / "checkout.robot"
    time.sleep(0.05)
    checkout.touch()  # modified after the run, same text
    with open_store(imported) as conn:
        touched_import = _locations(conn)
    with open_store(tmp_path / "live.sqlite3") as conn:
        touched_live = _locations(conn)
    # the live run recorded the file's fingerprint: same bytes, same lines
    _check_against_the_files(touched_live, folder / "orders")
    # an import knows only when the run started: a file modified since then is not trusted
    place = touched_import["s1-s1-t1-k3-k1-k1"]
    assert place["source_origin"] == "sources_changed" and "lineno" not in place
    assert touched_import["s1-k1"]["source_origin"] == "source_files"  # __init__.robot is as it was
    assert touched_import["s1-s1-t1"]["lineno"] == 6  # the output file gives a test's line

    checkout.write_text("*** Comments ***\nshifted\n" + checkout.read_text())
    with open_store(tmp_path / "live.sqlite3") as conn:
        edited = _locations(conn)
    assert edited["s1-s1-t1-k3-k1-k1"]["source_origin"] == "sources_changed"
    assert all("lineno" not in node for node_id, node in edited.items()
               if node_id.startswith("s1-s1-t") and node["type"] != "TEST")

    shutil.rmtree(folder / "orders")
    with open_store(tmp_path / "live.sqlite3") as conn:
        gone = _locations(conn)
    assert gone["s1-s1-t1-k3-k1-k1"]["source_origin"] == "sources_missing"
    assert gone["s1-k1"]["source_origin"] == "sources_missing"
    assert {n.get("definition_source") for n in gone.values()} == {None}


def test_a_copy_of_the_run_elsewhere_is_not_read(tmp_path: Path) -> None:
    """Paths are the run's: a file at another path is never taken for the run's."""
    folder = _run(tmp_path, "--output", "out.xml")
    store = tmp_path / "store.sqlite3"
    import_result(open_store(store), folder / "out.xml", stable_window=0)
    os.rename(folder, tmp_path / "moved")
    with open_store(store) as conn:
        found = _locations(conn)
    assert {n.get("source_origin") for n in found.values()} <= {
        "node", "suite", "sources_missing", None}


def test_test_metadata_live_and_imported(tmp_path: Path) -> None:
    """RF 7.5's test [Metadata]: in the file, and in what the listener captures."""
    (tmp_path / "meta.robot").write_text(
        "*** Test Cases ***\nOwned\n    [Metadata]    Owner    team-a\n    Log    owned\n")
    live = tmp_path / "live.sqlite3"
    done = robot("--output", "out.xml", "--listener", f"rf_log_listener:db={live}", "meta.robot",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    imported = tmp_path / "xml.sqlite3"
    import_result(open_store(imported), tmp_path / "out.xml", stable_window=0)
    for store in (live, imported):
        with open_store(store) as conn:
            tree = service.get_view(conn, "tree", run_id=1, selector="s1")
            (test,) = tree.tree.children  # type: ignore[union-attr]
            assert test.metadata == {"Owner": "team-a"}, store  # type: ignore[union-attr]


def _located_paths(tmp_path: Path, rc: int, *options: str, tests: tuple[str, ...]) -> list[list[Any]]:
    """robot OPTIONS (the suite last) in ``tmp_path``, imported: each test's failure path as (node id, source,
    line) of each step."""
    done = robot("--output", "out.xml", *options, cwd=tmp_path)
    assert done.returncode == rc, done.stdout + done.stderr
    import_result(open_store(tmp_path / "store.sqlite3"), tmp_path / "out.xml", stable_window=0)
    with open_store(tmp_path / "store.sqlite3") as conn:
        return [[(s.node_id, s.source, s.lineno) for s in service.get_view(  # type: ignore[union-attr]
            conn, "failure_path", run_id=1, selector=test).failure_path.path] for test in tests]


@pytest.mark.parametrize("given", [("legacy",), ("legacy/api", "legacy/smoke.robot")])
def test_a_legacy_projects_txt_suites_are_located(tmp_path: Path, given: tuple[str, ...]) -> None:
    """``robot --extension txt legacy/``: RF's builder reads a folder's ``.robot`` files
    unless told, so the folder parsed again had no suites and no step had a line. The
    store's suite files say which suffixes the run read (nested folders too; a folder among
    several paths too)."""
    nested = tmp_path / "legacy" / "api"
    nested.mkdir(parents=True)
    (nested / "orders.txt").write_text(
        "*** Test Cases ***\nOrder\n    Log    looking\n    Check    42\n\n"
        "*** Keywords ***\nCheck\n    [Arguments]    ${id}\n    Fail    no order ${id}\n")
    (tmp_path / "legacy" / "smoke.robot").write_text("*** Test Cases ***\nSmoke\n    Fail    down\n")
    # the same ids either way; paths relative to the folder the run's paths share
    assert _located_paths(tmp_path, 2, "--extension", "txt:robot", *given,
                          tests=("s1-s1-s1-t1", "s1-s2-t1")) == [
        [("s1-s1-s1-t1", "api/orders.txt", 2), ("s1-s1-s1-t1-k2", "api/orders.txt", 4),
         ("s1-s1-s1-t1-k2-k1", "api/orders.txt", 9)],
        [("s1-s2-t1", "smoke.robot", 2), ("s1-s2-t1-k1", "smoke.robot", 3)]]


def test_suites_in_the_language_robot_was_told_are_located(tmp_path: Path) -> None:
    """``robot --language fi``: Finnish headers and settings without a ``Language:`` line,
    in a suite and the resource it imports. Parsed again in English, neither had a test or
    a keyword, so no step had a line; the store does not know the option."""
    (tmp_path / "testi.robot").write_text(
        "*** Asetukset ***\nResurssi    yhteiset.resource\n\n*** Testit ***\nKokeilu\n"
        "    Log    hei\n    Tarkista    1\n")
    (tmp_path / "yhteiset.resource").write_text(
        "*** Avainsanat ***\nTarkista\n    [Argumentit]    ${x}\n    Fail    virhe ${x}\n")
    assert _located_paths(tmp_path, 1, "--language", "fi", "testi.robot", tests=("s1-t1",)) == [
        [("s1-t1", "testi.robot", 5), ("s1-t1-k2", "testi.robot", 7),
         ("s1-t1-k2-k1", "yhteiset.resource", 4)]]
