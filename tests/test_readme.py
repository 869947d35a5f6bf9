"""README.md's example requests and responses are what the real server answers today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_examples_are_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_examples.py"), "--check"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
