#!/usr/bin/env python3
"""Cost of live capture: robot wall time with the listener against the same run without it.

    python benchmarks/listener_bench.py --rounds 5

A generated suite runs >= 50,000 keyword executions at --loglevel TRACE. Each round runs
plain robot (default output.xml), robot + listener (default output), robot + listener with
--output NONE; every other round in reverse order. Medians of the per-round ratios are
printed. Targets (issue #3): listener <= 1.10x plain; listener with --output NONE <= 1.05x
plain robot with its default output.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """\
*** Settings ***
Library    Collections

*** Test Cases ***
{tests}

*** Keywords ***
Process Item
    [Arguments]    ${{item}}
    ${{value}} =    Set Variable    item-${{item}}
    Should Not Be Empty    ${{value}}
    Log    processed ${{value}}
"""

TEST = """\
Batch {n}
    FOR    ${{i}}    IN RANGE    {iterations}
        Process Item    ${{i}}
    END
"""


def _suite(folder: Path, tests: int, iterations: int) -> Path:
    path = folder / "load.robot"
    path.write_text(SUITE.format(tests="\n".join(TEST.format(n=n, iterations=iterations)
                                                 for n in range(tests))))
    return path


def _run(suite: Path, folder: Path, *extra: str) -> float:
    command = [sys.executable, "-m", "robot", "--loglevel", "TRACE", "--log", "NONE",
               "--report", "NONE", "--console", "none", "--outputdir", str(folder), *extra, str(suite)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"robot failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--iterations", type=int, default=250)
    args = parser.parse_args()
    keywords = args.tests * args.iterations * 4  # Process Item + its three keywords
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = _suite(folder, args.tests, args.iterations)
        print(f"{keywords:,} keyword executions per run, --loglevel TRACE, {args.rounds} rounds")
        _run(suite, folder)  # warm-up (bytecode, page cache)
        plain, live, live_none = [], [], []
        for round_no in range(args.rounds):
            db = folder / f"store{round_no}.sqlite3"
            runs = [
                (plain, ()),
                (live, ("--listener", f"rf_log_listener:db={db}")),
                (live_none, ("--output", "NONE", "--listener", f"rf_log_listener:db={db}")),
            ]
            # Every other round in reverse order, so a drift of the machine (caches, clock,
            # other load) over a round does not favour whichever variant runs first.
            for times, extra in runs if round_no % 2 == 0 else runs[::-1]:
                times.append(_run(suite, folder, *extra))
    ratios = [b / a for a, b in zip(plain, live, strict=True)]
    ratios_none = [c / a for a, c in zip(plain, live_none, strict=True)]
    print(f"plain robot              median {statistics.median(plain):6.2f} s")
    print(f"robot + listener         median {statistics.median(live):6.2f} s"
          f"  ratio {statistics.median(ratios):.3f}x (target <= 1.10x;"
          f" rounds {min(ratios):.3f}-{max(ratios):.3f})")
    print(f"--output NONE + listener median {statistics.median(live_none):6.2f} s"
          f"  ratio {statistics.median(ratios_none):.3f}x (target <= 1.05x;"
          f" rounds {min(ratios_none):.3f}-{max(ratios_none):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
