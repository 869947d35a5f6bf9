from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # tests/oracle.py
sys.path.insert(0, str(TESTS / "stress"))  # the live-capture adversary
sys.path.insert(0, str(TESTS.parent / "benchmarks"))  # the project's output.xml generator

from rf_log_listener.store import open_store  # noqa: E402

FIXTURE_RESULTS = TESTS / "fixtures" / "results"


def fixture_files() -> list[Path]:
    files = sorted(p for p in FIXTURE_RESULTS.glob("*/*") if p.suffix in (".xml", ".json"))
    assert files, f"no fixtures under {FIXTURE_RESULTS}; run tests/fixtures/generate.py"
    return files


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        db: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``rf-log-mcp ARGS`` as a process; ``db`` sets the store through RF_LOG_MCP_DB."""
    extra = {**(env or {}), **({"RF_LOG_MCP_DB": str(db)} if db is not None else {})}
    return subprocess.run(
        [sys.executable, "-m", "rf_log_mcp", *args], capture_output=True, text=True,
        env={**os.environ, **extra}, cwd=cwd, timeout=300, check=False,
    )


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite3"


@pytest.fixture
def conn(db_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_store(db_path)
    yield connection
    connection.close()


@pytest.fixture
def anyio_backend() -> str:
    """The MCP client tests run on asyncio (the SDK's stdio transport)."""
    return "asyncio"
