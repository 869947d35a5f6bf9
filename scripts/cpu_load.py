#!/usr/bin/env python3
"""Run a command while busy processes keep every core loaded (a ``stress``-like load).

    python scripts/cpu_load.py -- python -m pytest          # the test suite on a busy machine
    python scripts/cpu_load.py --hogs 4 -- python -m pytest -m "not slow"

CI machines and developers' laptops are often busy: tests must pass there too. This starts
``--hogs`` processes (default: one per core) that spin in pure Python at normal priority,
runs the command, stops them, and exits with the command's status. Also importable:
:func:`cpu_hogs` is the same load as a context manager (the live-capture stress test uses it).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Iterator


def _spin() -> None:
    while True:
        sum(range(10_000))


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy processes for the duration of the block."""
    context = multiprocessing.get_context("spawn")
    hogs = [context.Process(target=_spin, daemon=True) for _ in range(count)]
    for hog in hogs:
        hog.start()
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join()


def main() -> int:
    parser = argparse.ArgumentParser(description="Run a command on a machine kept busy.")
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2,
                        help="busy processes (default: one per core)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    started = time.monotonic()
    with cpu_hogs(args.hogs):
        code = subprocess.call(command)
    print(f"cpu_load: {' '.join(command)} exited {code} after {time.monotonic() - started:.0f} s"
          f" beside {args.hogs} busy processes", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
