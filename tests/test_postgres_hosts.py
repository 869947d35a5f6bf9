"""A team's store under a team's load: several hosts write one PostgreSQL store at once.

Hosts are Linux network namespaces on this machine, each joined to it by a veth pair and
with a hostname of its own (a UTS namespace): robot runs there with the listener and reaches
the server over TCP, as a CI agent would. Meanwhile this host imports a result file and two
MCP servers (one on another host) answer. Every live run must equal its output.xml.
Skipped, saying why, where the kernel or the user may not make namespaces.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_RESULTS, pg_binaries
from fixtures.generate import VERSIONS, _suite_dir
from oracle import dump_store
from pg_server import SUPERUSER_PASSWORD, PgServer
from robot_runs import without_flattened

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store

HOSTS = 3
NETWORK = "10.77.0.0/16"


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture(scope="module")
def hosts() -> Iterator[list[tuple[str, str]]]:
    """(namespace, the server's address as seen from it) for each host."""
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        pytest.skip("no `ip` or `unshare` here: hosts cannot be made with network namespaces")
    made: list[tuple[str, str]] = []
    prefix = f"rflog{os.getpid() % 10000}"
    try:
        for n in range(1, HOSTS + 1):
            name, outside, inside = f"{prefix}h{n}", f"{prefix}o{n}", f"{prefix}i{n}"
            added = _ip("netns", "add", name)
            if added.returncode != 0:
                pytest.skip("the kernel or this user may not make network namespaces:"
                            f" {added.stderr.strip()}")
            made.append((name, f"10.77.{n}.1"))
            for step in (["link", "add", outside, "type", "veth", "peer", "name", inside],
                         ["link", "set", inside, "netns", name],
                         ["addr", "add", f"10.77.{n}.1/24", "dev", outside],
                         ["link", "set", outside, "up"],
                         ["netns", "exec", name, "ip", "addr", "add", f"10.77.{n}.2/24", "dev", inside],
                         ["netns", "exec", name, "ip", "link", "set", inside, "up"],
                         ["netns", "exec", name, "ip", "link", "set", "lo", "up"]):
                done = _ip(*step)
                assert done.returncode == 0, (step, done.stderr)
        yield made
    finally:
        for name, _ in made:
            _ip("netns", "del", name)  # takes its end of the veth pair, and so the pair
        for n in range(1, HOSTS + 1):
            _ip("link", "del", f"{prefix}o{n}")


@pytest.fixture(scope="module")
def team_server(hosts: list[tuple[str, str]]) -> Iterator[PgServer]:
    server = PgServer(pg_binaries(), listen="*", clients=NETWORK).start()
    yield server
    server.stop()


def _on_host(namespace: str, hostname: str, *command: str) -> list[str]:
    """``command`` as run on that host: its network namespace, its own hostname."""
    return ["ip", "netns", "exec", namespace, "unshare", "--uts", "sh", "-c",
            f'hostname {hostname} && exec "$@"', "sh", *command]


async def _read_while_they_run(url: str, prefix: list[str], until: Any) -> dict[str, Any]:
    """An MCP server (on the host ``prefix`` runs it on) asked for runs and summaries until
    ``until()``; how many answers were ok and how many not."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = [*prefix, sys.executable, "-m", "rf_log_mcp"]
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={**os.environ, "RF_LOG_MCP_DB": url})
    counts: dict[str, Any] = {"ok": 0, "failed": 0, "errors": []}
    async with Client(params) as client:
        while not until():
            runs = (await client.call_tool("list_runs", {})).structured_content or {}
            _count(counts, runs)
            for run in runs.get("runs", [])[:3]:
                view = (await client.call_tool("get_view", {"view": "summary", "run_id": run["run_id"]}))
                _count(counts, view.structured_content or {})
            await asyncio.sleep(0.05)
    return counts


def _count(counts: dict[str, Any], answer: dict[str, Any]) -> None:
    """An answer counted ok or failed; a failed one's error kept (what the test says)."""
    counts["ok" if answer.get("ok") else "failed"] += 1
    if not answer.get("ok"):
        counts["errors"].append(answer.get("error") or answer)


@pytest.mark.anyio
async def test_robots_on_several_hosts_an_import_and_two_servers_share_one_store(
        hosts: list[tuple[str, str]], team_server: PgServer, tmp_path: Path) -> None:
    database = team_server.new_database().rsplit("/", 1)[1]
    open_store(team_server.url(database)).close()  # the schema, before everyone starts
    suite = _suite_dir(tmp_path / "suite", VERSIONS["7.5"])
    robots = []
    for n, (namespace, address) in enumerate(hosts, start=1):
        url = f"postgresql://rflog:{SUPERUSER_PASSWORD}@{address}:{team_server.port}/{database}"
        out = tmp_path / f"host{n}"
        robots.append((n, out, subprocess.Popen(
            _on_host(namespace, f"ci-agent-{n}", sys.executable, "-m", "robot", "--loglevel",
                     "DEBUG", "--outputdir", str(out), "--log", "NONE", "--report", "NONE",
                     "--console", "none", "--listener", f"rf_log_listener;db={url}", str(suite)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    local = team_server.url(database)
    importer = subprocess.Popen([sys.executable, "-m", "rf_log_mcp", "--db", local, "import",
                                 str(FIXTURE_RESULTS / "7.2.2" / "output.json")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    running = lambda: any(p.poll() is None for _, _, p in robots) or importer.poll() is None  # noqa: E731
    far, near = hosts[-1]
    readers = await asyncio.gather(
        _read_while_they_run(local, [], lambda: not running()),
        _read_while_they_run(
            f"postgresql://rflog:{SUPERUSER_PASSWORD}@{near}:{team_server.port}/{database}",
            _on_host(far, "reader-host"), lambda: not running()))
    for _, _, process in robots:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 11, err  # 11 failed tests, on purpose
        assert "rf_log_listener" not in err, err  # no warning from the capture
    assert importer.communicate(timeout=300) and importer.returncode == 0
    assert all(r["ok"] > 0 and r["failed"] == 0 for r in readers), readers
    conn = open_store(local)
    runs = conn.execute("SELECT run_id, origin, status, host FROM runs ORDER BY run_id").fetchall()
    live = {host: run_id for run_id, origin, status, host in runs if origin == "listener"}
    assert sorted(live) == [f"ci-agent-{n}" for n in range(1, HOSTS + 1)]
    assert {status for _, _, status, _ in runs} == {"complete"} and len(runs) == HOSTS + 1
    for n, out, _ in robots:
        reference = open_store(tmp_path / f"ref{n}.sqlite3")
        imported = import_result(reference, out / "output.xml", stable_window=0)
        captured = dump_store(conn, live[f"ci-agent-{n}"])
        flattened = next(node["id"] for node in captured["nodes"] if node.get("name") == "Flattened")
        # robot:flatten, the documented difference: live keeps the keyword's children
        assert without_flattened(captured, flattened) == without_flattened(
            dump_store(reference, imported.run_id), flattened)
    conn.close()
