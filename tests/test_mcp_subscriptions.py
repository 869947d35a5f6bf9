"""Live runs pushed to subscribers (issue 18): a real robot run with the listener in another
process; a client subscribed to the run list and to the run's summary hears of the new run,
its failure and its end, both through resources/subscribe (2025-11-25) and through
subscriptions/listen (2026-07-28), and nothing of a run it did not subscribe to."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ResourceUpdatedNotification
from robot_runs import robot

SUITE = """\
*** Settings ***
Library    OperatingSystem

*** Test Cases ***
Waits
    Wait Until Created    {gate1}    60s
Fails
    Fail    the first failure
Waits Again
    Wait Until Created    {gate2}    60s
"""


def _params(db: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"],
                                 env={"RF_LOG_MCP_DB": str(db)})


async def _until(heard: list[str], wanted: Callable[[list[str]], bool], what: str) -> None:
    with anyio.fail_after(60):
        while not wanted(heard):
            await anyio.sleep(0.05)
    assert wanted(heard), what


class LiveRun:
    """robot with the listener on SUITE, its two gates opened by the test."""

    def __init__(self, tmp_path: Path, db: Path) -> None:
        self.gates = [tmp_path / "gate1", tmp_path / "gate2"]
        (tmp_path / "live.robot").write_text(SUITE.format(gate1=self.gates[0], gate2=self.gates[1]))
        self.process = robot("--output", "NONE", "--listener", f"rf_log_listener:db={db}",
                             "live.robot", cwd=tmp_path, wait=False)

    def open(self, number: int) -> None:
        self.gates[number].write_text("")

    def finish(self) -> int:
        for gate in self.gates:
            gate.write_text("")
        return int(self.process.wait(timeout=120))


async def _flow(tmp_path: Path, db: Path, heard: list[str], subscribe: Callable[[str], Any]) -> None:
    """Subscribe to the list, start the run, subscribe to its summary, open the gates,
    and check what was heard at each step."""
    await subscribe("rf://runs")
    await anyio.sleep(1.2)  # the watcher's first look notes where the store is
    run = LiveRun(tmp_path, db)
    try:
        await _until(heard, lambda h: "rf://runs" in h, "a new run is announced on the list")
        await subscribe("rf://runs/1/summary")
        await anyio.sleep(1.2)
        before = len(heard)
        run.open(0)  # Waits ends, Fails fails, Waits Again waits
        await _until(heard, lambda h: "rf://runs/1/summary" in h[before:], "the failure is pushed")
        # a second run nobody subscribed to: the list hears of it, its summary is silent
        other = tmp_path / "other"
        other.mkdir()
        (other / "quick.robot").write_text("*** Test Cases ***\nQuick\n    Fail    quick\n")
        assert robot("--output", "NONE", "--listener", f"rf_log_listener:db={db}", "quick.robot",
                     cwd=other).returncode == 1
        at_end = len(heard)
        assert run.finish() == 1
        await _until(heard, lambda h: "rf://runs/1/summary" in h[at_end:], "the end is pushed")
        await anyio.sleep(1.5)
    finally:
        run.finish()
    assert "rf://runs/2/summary" not in heard
    # at most one update per change: the failure, the end (a flush may carry both)
    assert 2 <= heard.count("rf://runs/1/summary") <= 3, heard


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # the flow under test
async def test_resources_subscribe_pushes_a_live_run(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite3"
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            heard.append(str(message.params.uri))

    async with Client(_params(db), mode="legacy", message_handler=on_message) as client:
        await _flow(tmp_path, db, heard, client.subscribe_resource)
        summary = await client.read_resource("rf://runs/1/summary")
        assert '"status":"complete"' in summary.contents[0].text.replace(" ", "")  # type: ignore[union-attr]


@asynccontextmanager
async def _connected(kind: str, tmp_path: Path, db: Path) -> AsyncIterator[Client]:
    """The official client over stdio, or over HTTP to `rf-log-mcp serve --http`."""
    if kind == "stdio":
        async with Client(_params(db)) as client:
            yield client
        return
    from test_mcp_http import TOKEN, _client, http_server

    with http_server(tmp_path, env={"RF_LOG_MCP_HTTP_TOKEN": TOKEN}) as (port, _):
        async with _client(port, TOKEN) as client:
            yield client


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["stdio", "http"])
async def test_subscriptions_listen_pushes_a_live_run(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "store.sqlite3"
    heard: list[str] = []
    async with _connected(kind, tmp_path, db) as client, anyio.create_task_group() as group:
        uris: list[str] = []
        changed = anyio.Event()

        async def listen() -> None:
            """One stream per set of URIs (the SDK's listen has no adding): reopen it when
            the set grows."""
            while True:
                wanted = list(uris)
                async with client.listen(resource_subscriptions=wanted) as stream:
                    with anyio.CancelScope() as scope:
                        async def reopen() -> None:
                            await changed.wait()
                            scope.cancel()
                        group.start_soon(reopen)
                        async for event in stream:
                            heard.append(str(getattr(event, "uri", "")))
                await anyio.sleep(0)

        async def subscribe(uri: str) -> None:
            nonlocal changed
            uris.append(uri)
            old, changed = changed, anyio.Event()
            old.set()

        group.start_soon(listen)
        await _flow(tmp_path, db, heard, subscribe)
        group.cancel_scope.cancel()
