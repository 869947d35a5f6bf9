#!/usr/bin/env python3
"""Import speed and memory against RF's own ExecutionResult, on generated output.xml files.

    python benchmarks/import_bench.py                  # 100 MB, 3 rounds
    python benchmarks/import_bench.py --sizes 100 1000 --rounds 1 --er-max-mb 100

For each size a file is generated once (``benchmarks/data/``, seed 1), then, in one run and
alternating, the user's commands are measured end to end, startup included: ``python -c
"ExecutionResult(path)"`` and ``rf-log-mcp import path`` into a fresh store. Each runs under a
small wrapper process, so its wall time, its CPU time (user + sys of the command and every
process it started: the import's parser process too) and its peak RSS are its own. With
``--one-core`` both run under ``taskset -c 0``. Also printed: the raw parse floor (expat with
no handlers, in this process). Figures are medians.

Targets: import <= 0.35 x ExecutionResult's wall (issue #2); peak RSS <= 150 MiB at 100 MB,
at 1 GB within +10 % of the 100 MB figure; CPU <= 0.45 x ExecutionResult's, wall <= 0.30 x
on two cores and <= 0.55 x on one (issue #19). With ``--postgres`` each round also imports
into a PostgreSQL database (a server of its own, tests/pg_server.py; its CPU counted):
wall <= 2 x the SQLite import's, memory as flat (issue #21).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_env

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

_ER = """
import sys
from robot.api import ExecutionResult
print(ExecutionResult(sys.argv[1]).statistics.total.total)
"""

# Runs a command; prints its wall, its CPU (it and every process it started) and its peak RSS.
_WRAPPER = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
done = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True)
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": r.ru_utime + r.ru_stime, "rss": r.ru_maxrss / 1024,
                  "out": done.stdout}))
"""
PREFIX: list[str] = []  # taskset -c 0 with --one-core


def _measured(*command: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _WRAPPER, *PREFIX, *command],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _expat_floor(path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of expat reading the file with no handlers: the parse floor."""
    from xml.parsers import expat

    wall, cpu = time.perf_counter(), time.process_time()
    with path.open("rb") as fh:
        expat.ParserCreate().ParseFile(fh)
    return time.perf_counter() - wall, time.process_time() - cpu


def _file(size_mb: int, fmt: str) -> Path:
    sys.path.insert(0, str(HERE))
    from gen_output import generate

    path = DATA / f"output-{size_mb}mb.xml"
    if not path.exists():
        print(f"generating {path} ...", flush=True)
        generate(path, size_mb, seed=1)
    if fmt == "json":
        json_path = path.with_suffix(".json")
        if not json_path.exists():  # the same run as JSON, written by RF's own rebot
            print(f"converting to {json_path} with rebot ...", flush=True)
            # rebot exits with the number of failed tests; the file is what matters
            subprocess.run([sys.executable, "-m", "robot.rebot", "--log", "NONE", "--report", "NONE",
                            "--output", str(json_path), str(path)], check=False,
                           stdout=subprocess.DEVNULL)
            if not json_path.exists():
                raise SystemExit(f"rebot did not write {json_path}")
        path = json_path
    return path


def _measured_pg(pg: Any, *command: str) -> dict:
    """``_measured``, with the PostgreSQL server's CPU over the command added to the CPU."""
    before = pg.cpu_seconds()
    measured = _measured(*command)
    measured["server_cpu"] = pg.cpu_seconds() - before
    measured["cpu"] += measured["server_cpu"]
    return measured


def bench(size_mb: int, rounds: int, with_er: bool, fmt: str = "xml", pg: Any = None) -> dict:
    path = _file(size_mb, fmt)
    er_runs, import_runs, pg_runs = [], [], []
    pg_mb = 0.0
    for round_no in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            store = str(Path(tmp) / "store.sqlite3")
            commands = [("import", [sys.executable, "-m", "rf_log_mcp", "--db", store, "import",
                                    "--json", str(path)])]
            if with_er:
                commands.append(("er", [sys.executable, "-c", _ER, str(path)]))
            if pg is not None:
                url = pg.new_database()
                commands.append(("pg", [sys.executable, "-m", "rf_log_mcp", "--db", url, "import",
                                        "--json", str(path)]))
            for kind, command in commands if round_no % 2 == 0 else commands[::-1]:
                if kind == "pg":
                    pg_runs.append(_measured_pg(pg, *command))
                    pg_mb = _database_mb(url)
                else:
                    (import_runs if kind == "import" else er_runs).append(_measured(*command))
            store_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
    imported = json.loads(import_runs[0]["out"])
    row = {
        "format": fmt,
        "size_mb": round(path.stat().st_size / 1e6, 1),
        "nodes": imported["node_count"], "messages": imported["message_count"],
        "import_s": statistics.median(r["wall"] for r in import_runs),
        "import_cpu_s": statistics.median(r["cpu"] for r in import_runs),
        "import_rss_mib": max(r["rss"] for r in import_runs),
        "store_mb": round(store_mb, 1),
    }
    if fmt == "xml":
        row["expat_s"], row["expat_cpu_s"] = _expat_floor(path)
    if pg_runs:
        row["pg_s"] = statistics.median(r["wall"] for r in pg_runs)
        row["pg_cpu_s"] = statistics.median(r["cpu"] for r in pg_runs)
        row["pg_server_cpu_s"] = statistics.median(r["server_cpu"] for r in pg_runs)
        row["pg_rss_mib"] = max(r["rss"] for r in pg_runs)
        row["pg_store_mb"] = round(pg_mb, 1)
        row["pg_ratio"] = row["pg_s"] / row["import_s"]
    if with_er:
        row["er_s"] = statistics.median(r["wall"] for r in er_runs)
        row["er_cpu_s"] = statistics.median(r["cpu"] for r in er_runs)
        row["er_rss_mib"] = max(r["rss"] for r in er_runs)
        row["ratio"] = row["import_s"] / row["er_s"]
        row["cpu_ratio"] = row["import_cpu_s"] / row["er_cpu_s"]
        assert {int(r["out"]) for r in er_runs} == {imported["total"]}, "different totals"
    return row


def _database_mb(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 1e6


def main() -> int:
    bench_env.with_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100], help="file sizes in MB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--er-max-mb", type=int, default=200,
                        help="skip ExecutionResult above this size (1 GB needs ~4.5 GB RAM, minutes)")
    parser.add_argument("--format", choices=("xml", "json"), default="xml",
                        help="json: the same generated run converted by rebot to output.json")
    parser.add_argument("--one-core", action="store_true", help="both commands on core 0 only")
    parser.add_argument("--postgres", action="store_true",
                        help="also import into a PostgreSQL store (a server of its own), alternating")
    args = parser.parse_args()
    if args.one_core:
        PREFIX[:] = ["taskset", "-c", "0"]
    cores = "one core (taskset -c 0)" if args.one_core else f"{os.cpu_count()} cores"
    print(f"python {sys.version.split()[0]}, {cores}, end to end (startup included)")
    with bench_env.postgres_server() if args.postgres else contextlib.nullcontext() as pg:
        rows = [bench(size, args.rounds, size <= args.er_max_mb, args.format, pg)
                for size in args.sizes]
    for row in rows:
        print(f"{row['format']} {row['size_mb']:>7} MB {row['nodes']:>9,} nodes"
              f" {row['messages']:>9,} msgs  store {row['store_mb']:,.0f} MB")
        print(f"  rf-log-mcp import   wall {row['import_s']:6.2f} s  cpu {row['import_cpu_s']:6.2f} s"
              f"  peak rss {row['import_rss_mib']:5.0f} MiB")
        if "pg_s" in row:
            print(f"  into PostgreSQL     wall {row['pg_s']:6.2f} s  cpu {row['pg_cpu_s']:6.2f} s"
                  f" (server {row['pg_server_cpu_s']:.2f} s)  peak rss {row['pg_rss_mib']:5.0f} MiB"
                  f"  database {row['pg_store_mb']:,.0f} MB")
            print(f"  PostgreSQL / SQLite wall {row['pg_ratio']:.2f}x (target <= 2x, issue #21)")
        if "expat_s" in row:
            print(f"  expat, no handlers wall {row['expat_s']:6.2f} s  cpu {row['expat_cpu_s']:6.2f} s"
                  "  (the parse floor)")
        if "er_s" in row:
            print(f"  ExecutionResult     wall {row['er_s']:6.2f} s  cpu {row['er_cpu_s']:6.2f} s"
                  f"  peak rss {row['er_rss_mib']:5.0f} MiB")
            print(f"  ratio wall {row['ratio']:.2f}x, cpu {row['cpu_ratio']:.2f}x")
    if len(rows) > 1:
        base, top = rows[0], rows[-1]
        for key, what in (("import_rss_mib", "peak RSS growth"), ("pg_rss_mib", "into PostgreSQL:")):
            if key in base:
                growth = top[key] / base[key] - 1
                print(f"{what} {base['size_mb']} MB -> {top['size_mb']} MB: {growth:+.1%}"
                      " (target <= +10%)")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
