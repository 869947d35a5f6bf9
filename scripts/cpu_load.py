#!/usr/bin/env python3
"""Run a command while busy processes keep every core loaded (a ``stress``-like load),
and, with ``--disk-writers``, the disk busy as well.

    python scripts/cpu_load.py -- python -m pytest          # the test suite on a busy machine
    python scripts/cpu_load.py --hogs 4 -- python -m pytest -m "not slow"
    python scripts/cpu_load.py --hogs 0 --disk-writers 1 -- python benchmarks/listener_bench.py --fixed

CI machines and developers' laptops are often busy: tests must pass there too. This starts
``--hogs`` processes (default: one per core) that spin in pure Python at normal priority,
runs the command, stops them, and exits with the command's status. A disk writer writes
1 MiB blocks over a 256 MiB scratch file in the temporary folder (``TMPDIR``: put it on the
disk the command writes to) and syncs it every 16 MiB, as a build, a database or another
job's logs do: every other process's fsync then waits behind it (here 0.25 ms became 16 ms).
Also importable: :func:`cpu_hogs` is the same CPU load as a context manager (the live-capture
stress test uses it).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any


def _spin() -> None:
    while True:
        sum(range(10_000))


def _with_parent(parent: int, target: Callable[..., None], *args: Any) -> None:
    """``target`` in a process that dies with its parent: a cpu_load killed outright (SIGKILL,
    a CI job's timeout) must not leave processes spinning or writing (Linux; elsewhere the
    parent's exit handlers stop them)."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above
        return
    target(*args)


@contextlib.contextmanager
def _running(target: Callable[..., None], arguments: list[tuple[Any, ...]]) -> Iterator[None]:
    """One process per item of ``arguments`` running ``target`` for the duration of the block."""
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_with_parent, args=(os.getpid(), target, *args), daemon=True)
                 for args in arguments]
    for process in processes:
        process.start()
    try:
        yield
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy processes for the duration of the block."""
    with _running(_spin, [()] * count):
        yield


def _write_and_sync(path: str) -> None:
    block = os.urandom(1 << 20)
    with open(path, "wb", buffering=0) as scratch:
        written = 0
        while True:
            scratch.seek((written % 256) << 20)
            scratch.write(block)
            written += 1
            if written % 16 == 0:
                os.fsync(scratch.fileno())


@contextlib.contextmanager
def disk_writers(count: int) -> Iterator[None]:
    """``count`` processes writing and syncing scratch files for the duration of the block."""
    with tempfile.TemporaryDirectory(prefix="disk_load-") as folder, _running(
            _write_and_sync, [(os.path.join(folder, f"{n}.bin"),) for n in range(count)]):
        yield


def main() -> int:
    parser = argparse.ArgumentParser(description="Run a command on a machine kept busy.")
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2,
                        help="busy processes (default: one per core)")
    parser.add_argument("--disk-writers", type=int, default=0,
                        help="processes writing and syncing a scratch file (default: none)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    started = time.monotonic()
    # SIGTERM (kill, a CI job cancelled) unwinds as an exception does: the command and the
    # busy processes are stopped and the scratch files removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with cpu_hogs(args.hogs), disk_writers(args.disk_writers), subprocess.Popen(command) as running:
        try:
            code = running.wait()
        finally:
            if running.poll() is None:
                running.terminate()
    print(f"cpu_load: {' '.join(command)} exited {code} after {time.monotonic() - started:.0f} s"
          f" beside {args.hogs} busy processes and {args.disk_writers} disk writers", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
