"""The MCP host configurations in examples/mcp: each parses, has the documented shape, and
(for Linux/macOS, with this machine's paths put in) starts a server that answers over stdio."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "mcp"
HOSTS = {"claude-desktop": "claude_desktop_config.json", "claude-code": ".mcp.json",
         "cursor": "mcp.json", "vscode": "mcp.json", "codex": "config.toml"}
SYSTEMS = ("linux-macos", "windows")


def servers(host: str, system: str) -> dict[str, dict[str, Any]]:
    path = EXAMPLES / host / system / HOSTS[host]
    if path.suffix == ".toml":
        tomllib = pytest.importorskip("tomllib")  # Python 3.11+
        return tomllib.loads(path.read_text())["mcp_servers"]  # type: ignore[no-any-return]
    data = json.loads(path.read_text())
    return data["servers" if host == "vscode" else "mcpServers"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("host", HOSTS)
def test_configuration_shape(host: str, system: str) -> None:
    entries = servers(host, system)
    assert set(entries) == {"rf-log-mcp", "rf-log-mcp-venv"}
    assert entries["rf-log-mcp"]["command"] == "rf-log-mcp" and entries["rf-log-mcp"]["args"] == []
    venv = entries["rf-log-mcp-venv"]
    assert venv["args"] == ["-m", "rf_log_mcp"]
    python = "\\.venv\\Scripts\\python.exe" if system == "windows" else "/.venv/bin/python"
    assert venv["command"].endswith(python)
    assert venv["env"]["RF_LOG_MCP_DB"].endswith("rf-log-mcp.sqlite3")
    assert venv["env"]["RF_LOG_MCP_ALLOWED_ROOTS"].endswith("results")
    if host in ("vscode", "claude-code"):
        assert {entry["type"] for entry in entries.values()} == {"stdio"}


def _installed_script() -> str:
    script = Path(sys.executable).with_name("rf-log-mcp")
    found = str(script) if script.exists() else shutil.which("rf-log-mcp")
    assert found, "the rf-log-mcp script is installed with the package"
    return found


@pytest.mark.anyio
@pytest.mark.parametrize("host", HOSTS)
async def test_linux_macos_entries_start_a_working_server(host: str, tmp_path: Path) -> None:
    for name, entry in servers(host, "linux-macos").items():
        command = _installed_script() if entry["command"] == "rf-log-mcp" else sys.executable
        env = {"RF_LOG_MCP_DB": str(tmp_path / f"{name}.sqlite3")}  # never the user's store
        if "RF_LOG_MCP_ALLOWED_ROOTS" in entry.get("env", {}):
            env["RF_LOG_MCP_ALLOWED_ROOTS"] = str(tmp_path)
        params = StdioServerParameters(command=command, args=entry["args"], env=env)
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"parse_result", "get_view", "search_messages", "list_runs",
                         "get_attachment", "compare_runs", "test_history", "flaky_tests"}
            runs = (await client.call_tool("list_runs", {})).structured_content
            assert runs is not None and runs["ok"] and runs["runs"] == []
            if "RF_LOG_MCP_ALLOWED_ROOTS" in env:
                outside = (await client.call_tool("parse_result", {"path": __file__}))
                assert outside.structured_content["error"]["code"] == "PATH_NOT_ALLOWED"  # type: ignore[index]
        assert Path(env["RF_LOG_MCP_DB"]).exists(), name
