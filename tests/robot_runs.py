"""Running the real robot from tests: this venv's RF or another version's fixture venv,
and waiting for a live store to show a row while robot runs (shared by the test modules)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures.generate import venv_python


def robot(*args: str, cwd: Path, wait: bool = True, version: str = "",
          env: dict[str, str] | None = None) -> Any:
    """Run robot from this venv, or (``version``) from that RF version's fixture venv with
    only this checkout's capture side added to its path; ``env``: variables added."""
    python = sys.executable
    env = {**os.environ, **env} if env else None
    if version:
        found = venv_python(version)
        if found is None:
            pytest.skip(f"no venv for RF {version}: python tests/fixtures/generate.py --venvs-only {version}")
        python, env = str(found), {**(env or os.environ),
                                   "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    command = [python, "-m", "robot", "--log", "NONE", "--report", "NONE", "--console", "none", *args]
    if not wait:
        return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env=env)


def wait_for_row(db: Path, query: str, seconds: float = 30) -> None:
    """Poll the store from this process until ``query`` finds a row (robot is running)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            with sqlite3.connect(db, timeout=10) as reader:
                if reader.execute(query).fetchone():
                    return
        except sqlite3.OperationalError:
            continue
    raise AssertionError(f"no row for {query!r} within {seconds} s")



def without_flattened(dump: dict, flattened_kw: str) -> dict:
    inside = flattened_kw + "-"
    return {
        "nodes": [n for n in dump["nodes"] if not n["id"].startswith(inside)],
        "messages": [m for m in dump["messages"] if not m["id"].startswith(inside)],
        "errors": dump["errors"],
    }



# A step that waits for the test to say go (it creates the file): robot runs on only after
# the test has seen what it wants, however slow a loaded machine makes either side.
WAIT_FOR_GO = "Wait Until Created    ${CURDIR}/go    timeout=300s"
