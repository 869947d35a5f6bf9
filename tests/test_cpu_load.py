"""scripts/cpu_load.py, the busy machine the test suite and the benchmarks run on: stopped in
any way, it leaves no process spinning or writing behind (a loaded run cancelled with SIGKILL
kept two cores busy for every run after it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "cpu_load.py"


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_cpu_load_stops_its_busy_processes(tmp_path: Path, stop: signal.Signals) -> None:
    load = subprocess.Popen([sys.executable, str(SCRIPT), "--hogs", "1", "--disk-writers", "1", "--",
                             sys.executable, "-c", "import time; time.sleep(60)"],
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 30
        while len(busy := [pid for pid in _children(load.pid) if b"spawn_main" in _cmdline(pid)]) < 2 \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(busy) == 2, busy  # a hog and a disk writer
        children = _children(load.pid)  # and the command, and multiprocessing's resource tracker
        load.send_signal(stop)
        load.wait(timeout=30)
        deadline = time.monotonic() + 10
        while len(left := [pid for pid in children if _alive(pid)]) > (stop == signal.SIGKILL) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        if stop == signal.SIGKILL:  # the command is the caller's: it goes on without the load
            assert len(left) == 1 and b"time.sleep(60)" in _cmdline(left[0]), left
            os.kill(left[0], signal.SIGKILL)
        else:  # stopped as when the command ends: the command too, the scratch files removed
            assert left == [] and load.returncode == 128 + signal.SIGTERM
            assert list(tmp_path.iterdir()) == []
    finally:
        load.kill()
        for pid in _children(load.pid):
            os.kill(pid, signal.SIGKILL)
