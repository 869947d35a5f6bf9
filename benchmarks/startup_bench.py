#!/usr/bin/env python3
"""How fast the command line and the server answer (issue #19): each command's wall and CPU
time, run as the installed ``rf-log-mcp`` program, against a bare ``python -c pass`` in the
same run, and the MCP server's start to its first answer.

    python benchmarks/startup_bench.py [--rounds 9]

A small store is made once in a temporary folder (the project's 7.5 fixture imported). Each
round runs every command once, in turn, so a drift of the machine touches all alike; medians
are printed with the ratio to the bare interpreter. The server: ``rf-log-mcp`` over stdio
with the official client, from the process start to the answer of ``initialize`` and to the
answer of a first ``list_runs`` call; then, in a second session, each tool kind's first call
as an agent makes it: after the host lists the tools and its model writes for a moment
(``--pause``, 0.5 s), from the request sent to the answer read (the official client's own
check of each answer against the tool's output schema is left out: its first one imports
jsonschema and compiles that tool's schema in the client, a cost of this client, not of the
server). Targets: commands <= 150 ms on an idle machine and
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
# The program as users run it: the console script pip installs beside the interpreter
# (``python -m rf_log_mcp`` also imports runpy and importlib.util: one row shows it).
SCRIPT = Path(sys.executable).with_name("rf-log-mcp" + (".exe" if os.name == "nt" else ""))
PROGRAM = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "rf_log_mcp"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "--version": [*PROGRAM, "--version"],
    "runs": [*PROGRAM, "runs"],
    "summary 1": [*PROGRAM, "summary", "1"],
    "failures 1": [*PROGRAM, "failures", "1", "--limit", "1"],
    "tree 1": [*PROGRAM, "tree", "1"],
    "search 1 setup": [*PROGRAM, "search", "1", "setup"],
    "-m ... summary 1": [sys.executable, "-m", "rf_log_mcp", "summary", "1"],
}


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system, from the child's own rusage) seconds of one run."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(command)} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def _server_start(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting the server to its initialize answer and to a list_runs answer."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def measure() -> tuple[float, float]:
        started = time.perf_counter()
        params = StdioServerParameters(command=PROGRAM[0], args=PROGRAM[1:], env=env)
        async with Client(params) as client:
            ready = time.perf_counter() - started
            await client.call_tool("list_runs", {})
            return ready, time.perf_counter() - started

    return anyio.run(measure)


# An agent's first calls, one of each kind a triage makes, in the order it makes them.
FIRST_CALLS = {
    "list_runs": ("list_runs", {}),
    "summary": ("get_view", {"view": "summary", "run_id": 1}),
    "failure_path": ("get_view", {"view": "failure_path", "run_id": 1}),
    "tree": ("get_view", {"view": "tree", "run_id": 1}),
    "search": ("search_messages", {"query": "setup", "run_id": 1}),
}


def _first_calls(env: dict[str, str], pause: float) -> dict[str, float]:
    """Seconds of each tool kind's first call in a server's life, made after listing the
    tools and pausing as a host's model writes between its calls."""
    import anyio
    from mcp import Client, types
    from mcp.client.stdio import StdioServerParameters

    async def measure() -> dict[str, float]:
        params = StdioServerParameters(command=PROGRAM[0], args=PROGRAM[1:], env=env)
        times = {}
        async with Client(params) as client:
            await client.list_tools()
            for name, (tool, arguments) in FIRST_CALLS.items():
                await anyio.sleep(pause)
                started = time.perf_counter()
                result = await client.session.send_request(types.CallToolRequest(
                    params=types.CallToolRequestParams(name=tool, arguments=arguments)),
                    types.CallToolResult)
                times[name] = time.perf_counter() - started
                if result.is_error:
                    raise SystemExit(f"{name}: {result.content}")
        return times

    return anyio.run(measure)


def main() -> int:
    bench_env.with_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--pause", type=float, default=0.5,
                        help="seconds between an agent's first calls (default 0.5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RF_LOG_MCP_DB": str(Path(tmp) / "store.sqlite3")}
        subprocess.run([*PROGRAM, "import", str(FIXTURE)], env=env, check=True, capture_output=True)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
        server: list[tuple[float, float]] = []
        first: list[dict[str, float]] = []
        for _ in range(args.rounds):
            for name, command in COMMANDS.items():
                runs[name].append(_timed(command, env))
            server.append(_server_start(env))
            first.append(_first_calls(env, args.pause))
    bare = statistics.median(wall for wall, _ in runs["python -c pass"])
    print(f"{args.rounds} rounds, medians; the program: {' '.join(PROGRAM)}")
    for name, times in runs.items():
        wall = statistics.median(w for w, _ in times)
        cpu = statistics.median(c for _, c in times)
        print(f"  {name:<18} {wall * 1000:6.0f} ms  {wall / bare:5.1f}x bare   cpu {cpu * 1000:5.0f} ms")
    print(f"  server: initialize answered {statistics.median(s[0] for s in server) * 1000:.0f} ms,"
          f" first list_runs {statistics.median(s[1] for s in server) * 1000:.0f} ms after its start")
    print(f"  server, each kind's first call after list_tools and a {args.pause:g} s pause: "
          + ", ".join(f"{name} {statistics.median(f[name] for f in first) * 1000:.0f} ms"
                      for name in FIRST_CALLS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
