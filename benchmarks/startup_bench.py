#!/usr/bin/env python3
"""How fast the command line and the server answer (issue #19): each command's wall time
against a bare ``python -c pass`` in the same run, and the MCP server's start to its first
answer.

    python benchmarks/startup_bench.py [--rounds 9]

A small store is made once in a temporary folder (the project's 7.5 fixture imported). Each
round runs every command once, in turn, so a drift of the machine touches all alike; medians
are printed with the ratio to the bare interpreter. The server: ``rf-log-mcp`` over stdio
with the official client, from the process start to the answer of ``initialize`` and to the
answer of a first ``list_runs`` call. Targets: commands <= 150 ms on an idle machine and
<= 3x the bare interpreter; the server's first answer <= 500 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_env

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "results" / "7.5" / "output.xml"
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "--version": ["-m", "rf_log_mcp", "--version"],
    "runs": ["-m", "rf_log_mcp", "runs"],
    "summary 1": ["-m", "rf_log_mcp", "summary", "1"],
    "failures 1": ["-m", "rf_log_mcp", "failures", "1", "--limit", "1"],
    "tree 1": ["-m", "rf_log_mcp", "tree", "1"],
    "search 1 setup": ["-m", "rf_log_mcp", "search", "1", "setup"],
}


def _server_start(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting the server to its initialize answer and to a list_runs answer."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def measure() -> tuple[float, float]:
        started = time.perf_counter()
        params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"], env=env)
        async with Client(params) as client:
            ready = time.perf_counter() - started
            await client.call_tool("list_runs", {})
            return ready, time.perf_counter() - started

    return anyio.run(measure)


def main() -> int:
    bench_env.with_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RF_LOG_MCP_DB": str(Path(tmp) / "store.sqlite3")}
        subprocess.run([sys.executable, "-m", "rf_log_mcp", "import", str(FIXTURE)], env=env,
                       check=True, capture_output=True)
        walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
        server: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            for name, command in COMMANDS.items():
                started = time.perf_counter()
                subprocess.run([sys.executable, *command], env=env, check=True,
                               capture_output=True)
                walls[name].append(time.perf_counter() - started)
            server.append(_server_start(env))
    bare = statistics.median(walls["python -c pass"])
    print(f"{args.rounds} rounds, medians")
    for name, times in walls.items():
        median = statistics.median(times)
        print(f"  {name:<16} {median * 1000:6.0f} ms  {median / bare:5.1f}x bare")
    print(f"  server: initialize answered {statistics.median(s[0] for s in server) * 1000:.0f} ms,"
          f" first list_runs {statistics.median(s[1] for s in server) * 1000:.0f} ms after its start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
