#!/usr/bin/env python3
"""How long a live writer can be kept waiting while prune deletes a big run.

    python benchmarks/prune_bench.py --size-mb 100

Imports a generated output.xml twice (two runs), then prunes one while a second connection
commits a small write transaction every 10 ms, as the listener's writer does. Prints the
longest and the 99th-percentile wait of those writes, the prune's wall time, and the file
size before and after (freed pages released incrementally).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_output import generate  # noqa: E402

from rf_log_listener.importers import import_result  # noqa: E402
from rf_log_listener.store import open_store, prune_run, release_free_pages  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        first = generate(work / "a.xml", args.size_mb, seed=1)
        second = generate(work / "b.xml", args.size_mb, seed=2)
        db = work / "store.sqlite3"
        conn = open_store(db)
        victim = import_result(conn, first, stable_window=0).run_id
        import_result(conn, second, stable_window=0)
        before = db.stat().st_size
        waits: list[float] = []
        stop = threading.Event()

        def writer() -> None:  # a stand-in for a live run's writer: small commits
            other = open_store(db)
            while not stop.is_set():
                started = time.perf_counter()
                other.execute("BEGIN IMMEDIATE")
                other.execute("UPDATE runs SET heartbeat = ? WHERE run_id = ?", (time.time(), 2))
                other.execute("COMMIT")
                waits.append((time.perf_counter() - started) * 1000)
                time.sleep(0.01)
            other.close()

        thread = threading.Thread(target=writer)
        thread.start()
        started = time.perf_counter()
        prune_run(conn, victim)
        released = release_free_pages(conn)
        wall = time.perf_counter() - started
        stop.set()
        thread.join()
        waits.sort()
        print(f"pruned a {args.size_mb} MB run in {wall:.1f} s; {released} pages released;"
              f" store {before / 1e6:.0f} MB -> {db.stat().st_size / 1e6:.0f} MB")
        print(f"a concurrent writer's commits ({len(waits)}): median {statistics.median(waits):.1f} ms,"
              f" p99 {waits[int(len(waits) * 0.99) - 1]:.1f} ms, longest {waits[-1]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
