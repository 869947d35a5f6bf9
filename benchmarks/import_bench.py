#!/usr/bin/env python3
"""Import speed and memory against RF's own ExecutionResult, on generated output.xml files.

    python benchmarks/import_bench.py                  # 100 MB, 3 rounds
    python benchmarks/import_bench.py --sizes 100 1000 --rounds 1 --er-max-mb 100

For each size a file is generated once (``benchmarks/data/``, seed 1), then, in one run and
alternating, ``ExecutionResult(path)`` and ``rf-log-mcp``'s import into a fresh store are timed,
each in its own process so peak RSS (``ru_maxrss``) is theirs alone. A large import uses two
processes (parser + writer); both peaks are reported. Figures are medians.

Targets (issue #2): import <= 0.35 x ExecutionResult; peak RSS <= 150 MiB at 100 MB; at
1 GB within +10 % of the 100 MB figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

_MEASURE_ER = """
import json, resource, sys, time
from robot.api import ExecutionResult
t = time.perf_counter()
result = ExecutionResult(sys.argv[1])
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "tests": result.statistics.total.total}))
"""

_MEASURE_IMPORT = """
import json, resource, sys, time
from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
conn = open_store(sys.argv[2])
t = time.perf_counter()
outcome = import_result(conn, sys.argv[1], stable_window=0)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "child_rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "tests": outcome.total, "nodes": outcome.node_count,
                  "messages": outcome.message_count}))
"""


def _run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def bench(size_mb: int, rounds: int, with_er: bool, fmt: str = "xml") -> dict:
    path = _file(size_mb, fmt)
    er_runs, import_runs = [], []
    for _ in range(rounds):
        if with_er:
            er_runs.append(_run(_MEASURE_ER, str(path)))
        with tempfile.TemporaryDirectory() as tmp:
            import_runs.append(_run(_MEASURE_IMPORT, str(path), str(Path(tmp) / "store.sqlite3")))
            store_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6
    row = {
        "format": fmt,
        "size_mb": round(path.stat().st_size / 1e6, 1),
        "nodes": import_runs[0]["nodes"], "messages": import_runs[0]["messages"],
        "import_s": statistics.median(r["wall"] for r in import_runs),
        "import_rss_mib": max(r["rss"] for r in import_runs),
        "parser_rss_mib": max(r["child_rss"] for r in import_runs),
        "store_mb": round(store_mb, 1),
    }
    if with_er:
        row["er_s"] = statistics.median(r["wall"] for r in er_runs)
        row["er_rss_mib"] = max(r["rss"] for r in er_runs)
        row["ratio"] = row["import_s"] / row["er_s"]
        assert {r["tests"] for r in er_runs} == {r["tests"] for r in import_runs}, "different totals"
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100], help="file sizes in MB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--er-max-mb", type=int, default=200,
                        help="skip ExecutionResult above this size (1 GB needs ~4.5 GB RAM, minutes)")
    parser.add_argument("--format", choices=("xml", "json"), default="xml",
                        help="json: the same generated run converted by rebot to output.json")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    rows = [bench(size, args.rounds, size <= args.er_max_mb, args.format) for size in args.sizes]
    for row in rows:
        line = (f"{row['format']} {row['size_mb']:>7} MB {row['nodes']:>9,} nodes {row['messages']:>9,} msgs "
                f"import {row['import_s']:6.2f} s  rss {row['import_rss_mib']:5.0f} MiB"
                f" (parser {row['parser_rss_mib']:4.0f} MiB)  store {row['store_mb']:,.0f} MB")
        if "er_s" in row:
            line += (f"  | ExecutionResult {row['er_s']:6.2f} s rss {row['er_rss_mib']:5.0f} MiB"
                     f"  | ratio {row['ratio']:.2f}x (target <= 0.35x)")
        print(line)
    if len(rows) > 1:
        base, top = rows[0], rows[-1]
        growth = max(top["import_rss_mib"], top["parser_rss_mib"]) / max(
            base["import_rss_mib"], base["parser_rss_mib"]) - 1
        print(f"peak RSS growth {base['size_mb']} MB -> {top['size_mb']} MB: {growth:+.1%} (target <= +10%)")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
