#!/usr/bin/env python3
"""The tools across runs on a long history (issue #17). Server-side: the service calls the
MCP tools make, on a store written by the real writer into real SQLite.

    python benchmarks/history_bench.py                 # 1,000 runs x 1,000 tests (cached)
    python benchmarks/history_bench.py --runs 200      # a smaller history

The store (benchmarks/data/history-<runs>x<tests>.sqlite3, built once) holds:

* suite "Shop": ``--runs`` runs of ``--tests`` tests, each test one keyword. Statuses drift: a
  "broken" block of 20 tests changes every 50 runs, 8 flaky tests fail 30 % of the time, any
  test fails 0.5 % of the time; failures come from 4 causes, each message with volatile
  parts (addresses, durations, ids), so signatures cluster them;
* suite "Big": two runs of 10,000 tests, 10 % of them changing status between the two;
* suite "Grouping": one run with 5,000 failed tests on 3 causes (the summary's grouping), and
  one with 500 failed tests on 3 causes (the summary's tokens).

Printed: store growth of the history tables per run; test_history p50/p99 over 200 random
tests; compare_runs (two 10,000-test runs, first page); flaky_tests over the last 100 runs;
the summary of the 5,000-failure run; each as wall p50/p99 and CPU; the 500-failure run's
first summary page in tokens (cl100k via tiktoken when installed). Targets (issue #17):
test_history p99 <= 50 ms, compare_runs <= 300 ms, flaky_tests <= 500 ms, grouping <= 100 ms,
summary of the 500-failure run: one page <= 800 tokens showing all three causes.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_env import answer_tokens

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from rf_log_listener import events as ev  # noqa: E402
from rf_log_listener.events import Node, RunEnd, RunInfo  # noqa: E402
from rf_log_listener.rows import StoreRowSink  # noqa: E402
from rf_log_listener.store import open_store  # noqa: E402
from rf_log_listener.writer import RunWriter  # noqa: E402

CAUSES = [
    lambda r: f"Connection refused: 10.0.{r.randint(0, 9)}.{r.randint(1, 250)}:5432 after "
              f"{r.randint(2900, 3100)} ms",
    lambda r: f"HTTPError: 503 Server Error: Service Unavailable for url: http://api:8080/orders/"
              f"{r.randint(1, 9999)}",
    lambda r: f"Element 'id:row-{r.randint(1, 500)}' not visible after {r.choice((5, 10))} seconds.",
    lambda r: f"{r.randint(1, 99)} != {r.randint(100, 199)}",
]


def write_run(conn: Any, suite: str, statuses: list[tuple[str, str]], start: str,
              label: str = "nightly", branch: str = "main", sub_suites: int = 10) -> int:
    """One run through the real writer: ``statuses`` (status, failure message) per test."""
    writer = RunWriter(StoreRowSink(conn))
    run_id = writer.start_run(RunInfo(origin="import", label=label, generator="Robot 7.5",
                                      ci=json.dumps({"provider": "github", "branch": branch})))
    root = Node(ev.SUITE, "suite", suite, start_time=start)
    writer.open_node(root)
    per_suite = max(1, len(statuses) // sub_suites)
    for first in range(0, len(statuses), per_suite):
        child = Node(ev.SUITE, "suite", f"Part {first // per_suite + 1}")
        writer.open_node(child)
        for number, (status, message) in enumerate(statuses[first:first + per_suite], first):
            test = Node(ev.TEST, "test", f"Test {number:05d}", status=status, message=message,
                        elapsed=0.01 + (number % 7) / 100)
            writer.open_node(test)
            step = Node(ev.KEYWORD, "kw", "Fail" if status == "FAIL" else "Log", owner="BuiltIn",
                        status=status, message=message, args=[message or "ok"])
            writer.open_node(step)
            writer.message("FAIL" if status == "FAIL" else "INFO", message or "ok", False, None)
            writer.close_node(step)
            writer.close_node(test)
        child.status = "PASS"
        writer.close_node(child)
    root.status, root.elapsed = "PASS", 60.0
    writer.close_node(root)
    writer.end_run(RunEnd(complete=True, generator="Robot 7.5"))
    return run_id


def shop_statuses(rng: random.Random, run: int, tests: int) -> list[tuple[str, str]]:
    broken_start = (run // 50 * 37) % max(1, tests - 20)
    flaky = set(range(tests - 8, tests))
    out = []
    for test in range(tests):
        fails = (broken_start <= test < broken_start + 20 or (test in flaky and rng.random() < 0.3)
                 or rng.random() < 0.005)
        out.append(("FAIL", CAUSES[test % 4](rng)) if fails else ("PASS", ""))
    return out


def build(path: Path, runs: int, tests: int) -> None:
    rng = random.Random(17)
    conn = open_store(path)
    for run in range(runs):
        day = f"2024-{1 + run // 28 % 12:02d}-{1 + run % 28:02d}T02:00:00"
        write_run(conn, "Shop", shop_statuses(rng, run, tests), day, branch="main")
        if run % 100 == 99:
            print(f"  {run + 1} runs written", flush=True)
    base = [("FAIL", CAUSES[n % 4](rng)) if n % 10 == 0 else ("PASS", "") for n in range(10_000)]
    head = [(("PASS", "") if s == "FAIL" else ("FAIL", CAUSES[n % 3](rng))) if n % 10 == 0
            else (s, m) for n, (s, m) in enumerate(base)]
    for statuses in (base, head):
        write_run(conn, "Big", statuses, "2025-01-01T00:00:00", sub_suites=100)
    write_run(conn, "Grouping", [("FAIL", CAUSES[n % 3](rng)) for n in range(5_000)],
              "2025-01-02T00:00:00", sub_suites=50)
    write_run(conn, "Grouping", [("FAIL", CAUSES[n % 3](rng)) if n < 500 else ("PASS", "")
                                 for n in range(2_000)], "2025-01-03T00:00:00", sub_suites=20)
    conn.close()


def timed(call: Callable[[], Any], times: int) -> dict[str, float]:
    walls, cpus = [], []
    call()  # warm-up
    for _ in range(times):
        wall, cpu = time.perf_counter(), time.process_time()
        answer = call()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        assert answer.ok, answer.error
    walls.sort()
    return {"p50_ms": round(statistics.median(walls), 1),
            "p99_ms": round(walls[min(len(walls) - 1, int(len(walls) * 0.99))], 1),
            "cpu_p50_ms": round(statistics.median(cpus), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    path = HERE / "data" / f"history-{args.runs}x{args.tests}.sqlite3"
    path.parent.mkdir(exist_ok=True)
    if args.rebuild or not path.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        started = time.perf_counter()
        print(f"building {path.name} ...", flush=True)
        build(path, args.runs, args.tests)
        print(f"  built in {time.perf_counter() - started:.0f} s")

    from rf_log_mcp import service

    conn = open_store(path)
    sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
    history = sum(sizes.get(n, 0) for n in ("run_tests", "run_tests_by_name",
                                             "run_tests_by_signature", "test_names", "signatures"))
    rows = conn.execute("SELECT count(*) FROM run_tests").fetchone()[0]
    print(f"store {sum(sizes.values()) / 2**20:.0f} MiB; history tables and indexes "
          f"{history / 2**20:.1f} MiB = {history / rows * 1000 / 1024:.1f} KiB per 1,000 tests"
          f" of a run ({history / rows:.0f} bytes a test)")
    shop = [rid for (rid,) in conn.execute("SELECT run_id FROM runs WHERE name = 'Shop'")]
    big = [rid for (rid,) in conn.execute("SELECT run_id FROM runs WHERE name = 'Big' ORDER BY run_id")]
    grouping = [rid for (rid,) in conn.execute(
        "SELECT run_id FROM runs WHERE name = 'Grouping' ORDER BY run_id")]
    rng = random.Random(3)
    names = [f"Shop.Part {n // (args.tests // 10) + 1}.Test {n:05d}" for n in range(args.tests)]
    results = {
        f"test_history ({len(shop):,} runs, page of 20)": timed(
            lambda: service.test_history(conn, rng.choice(names)), 200),
        "compare_runs 10,000 tests, first page": timed(
            lambda: service.compare_runs(conn, str(big[1]), str(big[0])), 20),
        "compare_runs default base (Shop)": timed(
            lambda: service.compare_runs(conn, str(shop[-1])), 20),
        "flaky_tests window 100": timed(
            lambda: service.flaky_tests(conn, "Shop", window=100), 10),
        "summary 5,000 failures (grouping)": timed(
            lambda: service.get_view(conn, "summary", run_id=grouping[0]), 20),
    }
    for name, figures in results.items():
        print(f"{name:<40} p50 {figures['p50_ms']:>7} ms  p99 {figures['p99_ms']:>7} ms"
              f"  cpu p50 {figures['cpu_p50_ms']:>7} ms")
    page = service.get_view(conn, "summary", run_id=grouping[1])
    assert page.summary is not None
    groups = page.summary.failure_groups or []
    print(f"summary of 500 failures on 3 causes: {answer_tokens(page)} tokens, "
          f"{len(groups)} groups shown ({', '.join(str(g.count) for g in groups)} tests), "
          f"{len(page.summary.failed_tests)} tests listed alone, next page: {bool(page.next_cursor)}")


if __name__ == "__main__":
    main()
