"""Every bad call gets a structured answer from the MCP server, never prose or a dead server:
arguments a tool cannot take, resources of runs that are not there, a store this user cannot
write or open."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_mcp_server import XML, call, server


@pytest.mark.anyio
async def test_arguments_a_tool_cannot_take_are_invalid_argument(tmp_path: Path) -> None:
    cases = [
        ("get_view", {"view": "summary", "run_id": 1, "page_size": 500}, "page_size"),
        ("get_view", {"view": "summary", "run_id": 1, "page_size": 0}, "page_size"),
        ("get_view", {"view": "everything", "run_id": 1}, "view"),
        ("get_view", {"view": "summary", "run_id": "one"}, "run_id"),
        ("get_view", {"view": "summary", "run_id": 1, "colour": "red"}, "colour"),
        ("search_messages", {"run_id": 1, "query": "x", "budget": 10}, "budget"),
        ("search_messages", {"run_id": 1, "level": "LOUD"}, "level"),
        ("list_runs", {"limit": 0}, "limit"),
        ("parse_result", {}, "path"),
    ]
    async with server(tmp_path) as client:
        assert (await call(client, "parse_result", path=str(XML)))["ok"]
        for tool, arguments, named in cases:
            answer = await call(client, tool, **arguments)
            assert answer["error"]["code"] == "INVALID_ARGUMENT", (tool, arguments, answer)
            message = answer["error"]["message"]
            assert named in message and "pydantic" not in message, message
        # the valid call still works after all that
        assert (await call(client, "get_view", view="summary", run_id=1, page_size=200))["ok"]


@pytest.mark.anyio
async def test_resources_of_runs_that_are_not_there_are_run_not_found(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        for uri in ("rf://runs/x/summary", "rf://runs/999/summary", "rf://runs/x/tests/s1-t1",
                    "rf://runs/-1/tests/s1-t1"):
            result = await client.read_resource(uri)
            answer = json.loads(result.contents[0].text)  # type: ignore[union-attr]
            assert answer["ok"] is False and answer["error"]["code"] == "RUN_NOT_FOUND", (uri, answer)


@pytest.mark.anyio
async def test_a_store_that_cannot_be_opened_is_answered_by_every_tool(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    async with server(blocker) as client:  # its store would be a-file/store.sqlite3
        for tool, arguments in (("list_runs", {}), ("get_view", {"view": "summary", "run_id": 1}),
                                ("parse_result", {"path": str(XML)})):
            answer = await call(client, tool, **arguments)
            assert answer["error"]["code"] == "STORE_UNAVAILABLE", answer
            assert str(blocker) in answer["error"]["message"]


@pytest.fixture
def read_only_store() -> Iterator[tuple[Path, tuple[str, ...]]]:
    """A store with one run that the server's user cannot write: owned by root and served as
    nobody when the tests run as root, else made read-only with chmod."""
    folder = Path(tempfile.mkdtemp(prefix="rf-log-mcp-ro-"))
    try:
        done = subprocess.run([sys.executable, "-m", "rf_log_mcp", "import", str(XML), "--db",
                               str(folder / "store.sqlite3")], capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
        prefix: tuple[str, ...] = ()
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("running as root without setpriv: no user the store is read-only for")
            prefix = (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
            runs = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True,
                                  text=True, check=False)
            if runs.returncode != 0:  # pyenv's interpreter under /root: nobody cannot load it
                pytest.skip(f"nobody cannot run {sys.executable}: {runs.stderr.strip()[:200]}")
            folder.chmod(0o755)
        else:
            (folder / "store.sqlite3").chmod(0o444)
            folder.chmod(0o555)
        yield folder, prefix
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


@pytest.mark.anyio
async def test_a_store_this_user_cannot_write_is_served_for_reading(
        read_only_store: tuple[Path, tuple[str, ...]]) -> None:
    folder, prefix = read_only_store
    env = {"RF_LOG_MCP_ALLOWED_ROOTS": str(XML.parent.parent)}
    async with server(folder, env=env, prefix=prefix) as client:
        runs = await call(client, "list_runs")
        assert [(r["run_id"], r["failed"]) for r in runs["runs"]] == [(1, 11)]
        summary = await call(client, "get_view", view="summary", run_id=1)
        assert summary["summary"]["totals"]["failed"] == 11
        found = await call(client, "search_messages", run_id=1, min_level="FAIL")
        assert found["ok"] and found["hits"]
        refused = await call(client, "parse_result", path=str(XML.with_name("output.json")))
        assert refused["error"]["code"] == "STORE_READ_ONLY", refused
        assert "RF_LOG_MCP_DB" in refused["error"]["hint"]


def test_the_command_line_reads_a_store_this_user_cannot_write(
        read_only_store: tuple[Path, tuple[str, ...]]) -> None:
    """A store on a read-only mount (a CI artifact) or another user's: the server read it,
    the command line said STORE_UNAVAILABLE ("attempt to write a readonly database") for
    every command. Reading commands read it as it stands; an import says why it cannot."""
    folder, prefix = read_only_store

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*prefix, sys.executable, "-m", "rf_log_mcp", *args, "--db",
                               str(folder / "store.sqlite3")], capture_output=True, text=True,
                              check=False, cwd=folder)

    summary = command("summary")
    assert summary.returncode == 0 and "11 failed" in summary.stdout, summary.stderr
    failures = command("failures", "--limit", "1")
    assert failures.returncode == 0 and failures.stdout.startswith("Failure path of s1-"), failures.stderr
    assert command("search", "1", "--min-level", "FAIL").stdout.startswith("FAIL ")
    refused = command("import", str(XML.with_name("output.json")))
    assert refused.returncode != 0 and "STORE_" in refused.stderr, refused.stderr
    assert not any(name.endswith(("-wal", "-shm")) for name in os.listdir(folder))


def test_a_store_on_a_read_only_mount_is_read(tmp_path: Path) -> None:
    """On a read-only file system SQLite cannot create a WAL store's shared-memory file and
    says "unable to open database file" even to a read-only connection: the server and the
    command line said STORE_UNAVAILABLE. Needs root and mount (else skipped)."""
    source, mounted = tmp_path / "source", tmp_path / "mounted"
    source.mkdir()
    mounted.mkdir()
    done = subprocess.run([sys.executable, "-m", "rf_log_mcp", "import", str(XML), "--db",
                           str(source / "store.sqlite3")], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    if os.geteuid() != 0 or shutil.which("mount") is None or subprocess.run(
            ["mount", "--bind", str(source), str(mounted)], capture_output=True).returncode:
        pytest.skip("no read-only mount here (needs root and mount)")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(mounted)], capture_output=True).returncode:
            pytest.skip("no read-only remount here")
        shown = subprocess.run([sys.executable, "-m", "rf_log_mcp", "summary", "--db",
                                str(mounted / "store.sqlite3")], capture_output=True, text=True, check=False)
        assert shown.returncode == 0 and "11 failed" in shown.stdout, shown.stderr
    finally:
        subprocess.run(["umount", str(mounted)], capture_output=True, check=False)
