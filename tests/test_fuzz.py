"""Fuzzing (hypothesis): the importers on mutated real results, and every tool's arguments.

Whatever the input, the answer is a result or a structured error with a known code: never
another exception, never a hang (each example has a deadline), never a half-written run.
The number of examples is bounded so the default test run stays short.
"""

from __future__ import annotations

import base64
import json
import os
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from robot.api import ExecutionResult

from rf_log_listener.errors import ResultError
from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service
from rf_log_mcp.paths import PathPolicy

IMPORT_CODES = {"INVALID_XML", "INVALID_JSON", "UNSUPPORTED_FORMAT", "INCOMPLETE_RESULT",
                "FILE_NOT_FOUND"}
TOOL_CODES = {"RUN_NOT_FOUND", "NODE_NOT_FOUND", "SELECTOR_REQUIRED", "NODE_NOT_IN_TEST",
              "INVALID_CURSOR", "INVALID_QUERY", "NO_FAILURES", "INVALID_ARGUMENT",
              "FILE_NOT_FOUND"}
# The default run is reproducible (a fixed walk through the inputs, the same in CI every
# time); FUZZ_RANDOM=1 explores new inputs on each run, for hunting locally.
FUZZ = settings(max_examples=120, deadline=5000, database=None,
                derandomize=not os.environ.get("FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SMALL_XML = """<?xml version="1.0" encoding="UTF-8"?>
<robot generator="Robot 7.5 (Python 3.11 on linux)" generated="2026-01-01T00:00:00.000000"
 rpa="false" schemaversion="5">
<suite id="s1" name="Small" source="/tmp/small.robot">
<test id="s1-t1" name="Loop And Fail" line="2">
<for flavor="IN">
<iter><var name="${x}">a</var>
<kw name="Log" owner="BuiltIn">
<msg time="2026-01-01T00:00:00.000001" level="INFO">item a password=hunter2</msg>
<arg>item ${x}</arg><status status="PASS" start="2026-01-01T00:00:00.000001" elapsed="0.001"/></kw>
<status status="PASS" start="2026-01-01T00:00:00.000001" elapsed="0.001"/></iter>
<var>${x}</var><value>a</value>
<status status="PASS" start="2026-01-01T00:00:00.000001" elapsed="0.001"/></for>
<kw name="Fail" owner="BuiltIn"><msg time="2026-01-01T00:00:00.000002" level="FAIL">broken &amp; 失败</msg>
<arg>broken</arg><status status="FAIL" start="2026-01-01T00:00:00.000002" elapsed="0.001">broken</status></kw>
<status status="FAIL" start="2026-01-01T00:00:00.000001" elapsed="0.002">broken</status>
</test>
<status status="FAIL" start="2026-01-01T00:00:00.000000" elapsed="0.003"/>
</suite>
<statistics><total><stat pass="0" fail="1" skip="0">All Tests</stat></total><tag></tag>
<suite><stat name="Small" id="s1" pass="0" fail="1" skip="0">Small</stat></suite></statistics>
<errors><msg time="2026-01-01T00:00:00.000003" level="WARN">careful</msg></errors>
</robot>
""".encode()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A small valid output.xml, and the same run as output.json written by RF itself."""
    folder = tmp_path_factory.mktemp("fuzz")
    xml = folder / "small.xml"
    xml.write_bytes(SMALL_XML)
    result = ExecutionResult(str(xml))
    result.save(str(folder / "small.json"))
    return {"xml": SMALL_XML, "json": (folder / "small.json").read_bytes()}


def _mutated(data: bytes, cuts: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray(data)
    for position, remove, insert in cuts:
        at = position % (len(out) + 1)
        out[at:at + remove] = insert
    return bytes(out)


MUTATIONS = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 40),
                               st.one_of(st.binary(max_size=12),
                                         st.sampled_from([b"<", b">", b"</kw>", b"<kw>", b'"',
                                                          b"{", b"}", b"[", b"]", b",", b"\x00",
                                                          b"&", b"<!DOCTYPE x>", b"\xff\xfe"]))),
                     min_size=1, max_size=6)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["xml", "json"])
@settings(FUZZ, max_examples=300)
@given(cuts=MUTATIONS)
def test_importers_on_mutated_results(sources: dict[str, bytes], tmp_path: Path, kind: str,
                                      cuts: list[tuple[int, int, bytes]]) -> None:
    path = tmp_path / f"mutated.{kind}"
    path.write_bytes(_mutated(sources[kind], cuts))
    conn = open_store(tmp_path / "fuzz.sqlite3")
    try:
        before = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        try:
            outcome = import_result(conn, path, stable_window=0)
        except ResultError as err:
            assert err.code in IMPORT_CODES, (err.code, err.message)
            assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == before
            assert conn.execute("SELECT count(*) FROM runs WHERE status = 'importing'").fetchone()[0] == 0
            return
        # whatever parsed is a whole run the views can show
        summary = service.get_view(conn, "summary", run_id=outcome.run_id)
        assert summary.ok, summary.error
        tree = service.get_view(conn, "tree", run_id=outcome.run_id, selector="s1")
        assert tree.ok or tree.error.code == "NODE_NOT_FOUND"  # type: ignore[union-attr]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, sources: dict[str, bytes]) -> Path:
    folder = tmp_path_factory.mktemp("tools")
    (folder / "small.xml").write_bytes(sources["xml"])
    with closing(open_store(folder / "store.sqlite3")) as conn:
        import_result(conn, folder / "small.xml", stable_window=0)
    return folder / "store.sqlite3"


def _cursor_like() -> st.SearchStrategy[str]:
    payloads = st.one_of(
        st.text(max_size=40),
        st.builds(lambda b, p: json.dumps({"b": b, "p": p}), st.text(max_size=20),
                  st.one_of(st.none(), st.integers(), st.lists(st.integers(), max_size=3),
                            st.text(max_size=5))),
    )
    return st.one_of(st.text(max_size=60),
                     payloads.map(lambda t: base64.urlsafe_b64encode(t.encode()).decode()))


SELECTORS = st.one_of(st.none(), st.text(max_size=30),
                      st.sampled_from(["s1", "s1-t1", "s1-t1-k1", "s1-t1-k1-k1", "s1-t1-k2",
                                       "s1-t1-k1-k1-k1", "ig:s1-t1-k1:1-1", "ig:x:1-2", "ig:::",
                                       "s1-t1-r1", "errors-m1"]))
LEVELS = st.one_of(st.none(), st.sampled_from(["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL",
                                               "SKIP", "warn", "", "LOUD"]))
SIZES = st.one_of(st.none(), st.integers(-5, 10**6))


def _check(response: Any, budget: int | None) -> None:
    data = dict(response)
    json.dumps(data)  # serialisable
    if response.ok:
        effective = max(500, min(50_000, budget)) if budget is not None else 4000
        assert response.estimated_tokens <= effective
        shown = {key: value for key, value in data.items() if key != "query"}  # echoed input
        assert "hunter2" not in json.dumps(shown)
    else:
        assert response.error.code in TOOL_CODES, response.error


@FUZZ
@given(view=st.sampled_from(["summary", "failure_path", "step_window", "tree"]),
       run_id=st.one_of(st.just(1), st.integers(-3, 5)), selector=SELECTORS,
       projection=st.sampled_from(["all", "failures", "warnings"]), cursor=st.one_of(
           st.none(), _cursor_like()), page_size=SIZES, budget=SIZES)
def test_get_view_arguments(store: Path, view: str, run_id: int, selector: str | None,
                            projection: str, cursor: str | None, page_size: int | None,
                            budget: int | None) -> None:
    with closing(open_store(store)) as conn:
        _check(service.get_view(conn, view, run_id=run_id, selector=selector,  # type: ignore[arg-type]
                                cursor=cursor, page_size=page_size, budget=budget,
                                projection=projection), budget)  # type: ignore[arg-type]


@FUZZ
@given(query=st.one_of(st.none(), st.text(max_size=20), st.sampled_from(["%", "_", "\\", "失败",
                                                                         "hunter2", "***"])),
       selector=SELECTORS, scope=st.one_of(st.none(), st.sampled_from(["node", "subtree", "test"])),
       level=LEVELS, min_level=LEVELS, cursor=st.one_of(st.none(), _cursor_like()),
       page_size=SIZES, budget=SIZES, path=st.one_of(st.none(), st.text(max_size=20)))
@example(query="x", selector=None, scope=None, level=None, min_level=None, cursor=None,
         page_size=None, budget=None, path="\x00")  # once: ValueError from os.path
def test_search_arguments(store: Path, query: str | None, selector: str | None,
                          scope: str | None, level: str | None, min_level: str | None,
                          cursor: str | None, page_size: int | None, budget: int | None,
                          path: str | None) -> None:
    with closing(open_store(store)) as conn:
        response = service.search_messages(conn, query, run_id=None if path else 1, path=path,
                                           selector=selector, scope=scope,  # type: ignore[arg-type]
                                           level=level, min_level=min_level, cursor=cursor,
                                           page_size=page_size, budget=budget)
        _check(response, budget)


@FUZZ
@given(status=st.one_of(st.none(), st.text(max_size=10)), limit=st.integers(-5, 10**6),
       cursor=st.one_of(st.none(), _cursor_like()))
def test_list_runs_arguments(store: Path, status: str | None, limit: int, cursor: str | None) -> None:
    with closing(open_store(store)) as conn:
        _check(service.list_runs(conn, status, limit, cursor), None)


@FUZZ
@given(path=st.one_of(st.text(max_size=30), st.sampled_from(
    ["\x00", "~", "~nobody/x", "/", ".", "..", "/etc/passwd", "/proc/self/environ", "/dev/zero",
     "x" * 5000, "/tmp/../tmp", "\\\\server\\share"])))
@example(path="a\x00b")
def test_parse_result_paths(store: Path, tmp_path: Path, path: str) -> None:
    with closing(open_store(store)) as conn:
        policy = PathPolicy((tmp_path,), known_runs=False)
        response = service.parse_result(conn, path, policy=policy)
        assert not response.ok or Path(response.source_path or "").is_relative_to(tmp_path)
        if not response.ok:
            assert response.error.code in IMPORT_CODES | {"PATH_NOT_ALLOWED"}, response.error
        unrestricted = service.parse_result(conn, path)  # the CLI's way: no policy
        assert unrestricted.ok or unrestricted.error.code in IMPORT_CODES, unrestricted.error


def test_the_small_sources_are_valid(sources: dict[str, bytes], tmp_path: Path) -> None:
    """The fuzzing starts from results that import (so mutations probe deep, not the header)."""
    with closing(open_store(tmp_path / "s.sqlite3")) as store_conn:
        for kind, data in sources.items():
            path = tmp_path / f"small.{kind}"
            path.write_bytes(data)
            outcome = import_result(store_conn, path, stable_window=0)
            assert outcome.failed == 1 and outcome.total == 1, kind
