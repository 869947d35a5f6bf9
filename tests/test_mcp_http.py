"""rf-log-mcp serve --http (issue 18): Streamable HTTP with the official client; a bearer
token checked on every request (missing and wrong ones refused), required off loopback, read
from the environment or a file, never from the command line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import PromptReference
from test_mcp_server import XML

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup  # anyio's dependency before Python 3.11

TOKEN = "s3cret-team-token"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(tmp_path: Path, *options: str, env: dict[str, str] | None = None
                ) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "rf_log_mcp", "serve", "--http", "--port", str(port), *options],
        env={**os.environ, "RF_LOG_MCP_DB": str(tmp_path / "store.sqlite3"),
             "RF_LOG_MCP_ALLOWED_ROOTS": str(XML.parent), **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield port, process
    finally:
        process.terminate()
        process.wait(30)


def _client(port: int, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp",
                                         http_client=create_mcp_http_client(headers=headers)))


def _status(port: int, token: str | None, host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", method="POST", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    if host:
        request.add_header("Host", host)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, ""
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("WWW-Authenticate", "")


@pytest.mark.anyio
async def test_the_official_client_over_http_with_a_token(tmp_path: Path) -> None:
    with http_server(tmp_path, env={"RF_LOG_MCP_HTTP_TOKEN": TOKEN}) as (port, process):
        assert TOKEN not in " ".join(process.args)  # type: ignore[arg-type]
        async with _client(port, TOKEN) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert {"parse_result", "get_view", "search_messages"} <= tools
            imported = (await client.call_tool("parse_result", {"path": str(XML)})).structured_content
            assert imported and imported["ok"] and imported["failed"] == 11
            view = (await client.call_tool("get_view", {"run_id": imported["run_id"],
                                                        "view": "summary"})).structured_content
            assert view and view["summary"]["totals"]["failed"] == 11
            # prompts and completions over HTTP too
            triage = (await client.get_prompt("triage", {})).messages[0].content.text  # type: ignore[union-attr]
            assert f"get_view(run_id={imported['run_id']}" in triage
            runs = (await client.complete(PromptReference(name="triage"),
                                          {"name": "run_id", "value": ""})).completion
            assert runs.values == [f"{imported['run_id']} · FAIL · Fixture"]
        # DNS rebinding: a page elsewhere naming this server is refused (the SDK's check)
        assert _status(port, TOKEN, host="rebound.example:80")[0] in (400, 403, 421)
        for token in (None, "wrong-token"):
            status, challenge = _status(port, token)
            assert (status, challenge) == (401, 'Bearer realm="rf-log-mcp"'), token
            with pytest.raises(ExceptionGroup) as refused:
                async with _client(port, token) as client:
                    await client.list_tools()
            assert "Server returned an error response" in repr(refused.value)


@pytest.mark.anyio
async def test_an_import_over_http_reports_progress(tmp_path: Path) -> None:
    from gen_output import generate

    source = generate(tmp_path / "big" / "output.xml", size_mb=30, seed=11)
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, _message: str | None) -> None:
        seen.append((progress, total))

    with http_server(tmp_path, env={"RF_LOG_MCP_HTTP_TOKEN": TOKEN,
                                    "RF_LOG_MCP_ALLOWED_ROOTS": str(source.parent)}) as (port, _):
        async with _client(port, TOKEN) as client:
            result = await client.call_tool("parse_result", {"path": str(source)},
                                            progress_callback=on_progress)
            assert result.structured_content and result.structured_content["ok"]
    assert any(total == source.stat().st_size and done > 0 for done, total in seen), seen


def test_another_address_than_loopback_needs_a_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rf_log_mcp", "serve", "--http", "--host", "0.0.0.0", "--port",
         str(_free_port())], env={k: v for k, v in os.environ.items()
                                  if k != "RF_LOG_MCP_HTTP_TOKEN"},
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and "HTTP_TOKEN_REQUIRED" in done.stderr
    assert "RF_LOG_MCP_HTTP_TOKEN" in done.stderr and "--token-file" in done.stderr


@pytest.mark.anyio
async def test_a_token_file_on_every_address(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with http_server(tmp_path, "--host", "0.0.0.0", "--token-file", str(token_file)) as (port, _):
        assert _status(port, None)[0] == 401
        async with _client(port, TOKEN) as client:
            runs = (await client.call_tool("list_runs", {})).structured_content
            assert runs and runs["ok"] and runs["runs"] == []


def _http_examples() -> dict[str, tuple[str, str]]:
    """Each shipped HTTP host configuration: its URL and its Authorization header, the
    token reference filled in as the host would."""
    import json
    import re

    examples = Path(__file__).resolve().parents[1] / "examples" / "mcp" / "http"
    found = {}
    for host, name in (("claude-code", ".mcp.json"), ("vscode", "mcp.json"),
                       ("cursor", "mcp.json")):
        data = json.loads((examples / host / name).read_text())
        [entry] = data["servers" if host == "vscode" else "mcpServers"].values()
        header = re.sub(r"\$\{(env:|input:)?[\w-]+\}", TOKEN, entry["headers"]["Authorization"])
        found[host] = (entry["url"], header)
    codex = (examples / "codex" / "config.toml").read_text()
    url = re.search(r'^url = "(.+)"$', codex, re.MULTILINE)
    assert url and 'bearer_token_env_var = "RF_LOG_MCP_HTTP_TOKEN"' in codex
    found["codex"] = (url.group(1), f"Bearer {TOKEN}")
    return found


@pytest.mark.anyio
async def test_the_shipped_http_host_configurations_connect(tmp_path: Path) -> None:
    examples = _http_examples()
    assert {url for url, _ in examples.values()} == {"http://127.0.0.1:8765/mcp"}
    with http_server(tmp_path, env={"RF_LOG_MCP_HTTP_TOKEN": TOKEN}) as (port, _):
        for host, (url, header) in examples.items():
            local = url.replace(":8765/", f":{port}/")
            transport = streamable_http_client(
                local, http_client=create_mcp_http_client(headers={"Authorization": header}))
            async with Client(transport) as client:
                runs = (await client.call_tool("list_runs", {})).structured_content
                assert runs and runs["ok"], host
