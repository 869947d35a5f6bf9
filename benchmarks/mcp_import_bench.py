#!/usr/bin/env python3
"""Tool latency while a big import runs in the same MCP server (issue 18).

    python benchmarks/mcp_import_bench.py --size-mb 1000

Starts ``rf-log-mcp`` over stdio with the official client, imports a small fixture run,
then starts ``parse_result`` of a generated output.xml of the given size (cached in
benchmarks/data/) and, while it runs, calls ``list_runs`` and ``get_view(summary)`` of the
small run in a loop. Prints their p50/p99 (and the same with no import running, measured
first), the import's wall time, how many progress notifications came and the longest gap
between two. The client fails the import if ``--quiet-s`` (60, as mainstream hosts) pass
without progress: the TypeScript SDK's ``resetTimeoutOnProgress`` behaviour.
Targets: reads during the import about as fast as idle; no progress gap near 60 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURE = ROOT / "tests" / "fixtures" / "results" / "7.5" / "output.xml"


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1000:7.2f} ms  p99 {p99 * 1000:7.2f} ms  (n={len(ordered)})"


async def _bench(source: Path, quiet_s: float) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with tempfile.TemporaryDirectory() as tmp:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "rf_log_mcp"],
            env={"RF_LOG_MCP_DB": str(Path(tmp) / "store.sqlite3"),
                 "RF_LOG_MCP_ALLOWED_ROOTS": f"{source.parent}:{FIXTURE.parent}"})
        async with Client(params) as client:
            small = (await client.call_tool("parse_result", {"path": str(FIXTURE)})).structured_content
            assert small and small["ok"], small
            run_id = small["run_id"]

            async def reads(until: float | None, stop: anyio.Event | None) -> list[float]:
                samples = []
                while (until is None or time.monotonic() < until) and not (stop and stop.is_set()):
                    for name, arguments in (("list_runs", {}),
                                            ("get_view", {"run_id": run_id, "view": "summary"})):
                        started = time.perf_counter()
                        result = await client.call_tool(name, arguments)
                        samples.append(time.perf_counter() - started)
                        assert not result.is_error, result
                return samples

            idle = await reads(time.monotonic() + 5, None)
            print(f"reads, idle server:         {_percentiles(idle)}")
            gaps: list[float] = []
            last = [time.monotonic()]

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                now = time.monotonic()
                gaps.append(now - last[0])
                last[0] = now

            async def watchdog() -> None:
                while True:
                    await anyio.sleep(0.1)
                    if time.monotonic() - last[0] > quiet_s:
                        raise TimeoutError(f"no progress for {quiet_s} s: a host would cancel")

            done = anyio.Event()
            outcome: dict = {}
            busy: list[float] = []

            async def run_import() -> None:
                result = await client.call_tool("parse_result", {"path": str(source)},
                                                progress_callback=on_progress)
                outcome.update(result.structured_content or {})
                done.set()

            started = time.monotonic()
            last[0] = started
            async with anyio.create_task_group() as group:
                group.start_soon(watchdog)
                group.start_soon(run_import)
                await anyio.sleep(1)
                busy = await reads(None, done)
                await done.wait()
                group.cancel_scope.cancel()
            wall = time.monotonic() - started
            print(f"reads, during the import:   {_percentiles(busy)}")
            print(f"import of {source.stat().st_size / 1e6:,.0f} MB: ok={outcome.get('ok')}, "
                  f"{outcome.get('node_count'):,} nodes, {wall:.1f} s wall")
            print(f"progress notifications: {len(gaps)}, longest gap {max(gaps):.2f} s "
                  f"(the client gives up after {quiet_s:.0f} s without one)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1000)
    parser.add_argument("--quiet-s", type=float, default=60.0)
    options = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from gen_output import generate

    source = HERE / "data" / f"output-{options.size_mb}mb.xml"
    if not source.exists():
        source.parent.mkdir(exist_ok=True)
        generate(source, options.size_mb)
    anyio.run(_bench, source, options.quiet_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
