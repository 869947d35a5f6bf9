"""Offline importers: an existing output.xml / output.json becomes a run in the store.

The importers are only event sources; :class:`~rf_log_listener.writer.RunWriter` does the
writing. This module does what surrounds a parse: finding and sniffing the file, refusing
one that is still being written, deduplicating by content hash (waiting for another
process's import of the same bytes rather than parsing them twice), and making sure a failed
import (bad input, exception, Ctrl-C, a killed process) leaves no run a reader would take
for complete.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..cpus import one_cpu
from ..errors import (
    FILE_NOT_FOUND,
    IMPORT_FAILED,
    INCOMPLETE_RESULT,
    UNSUPPORTED_FORMAT,
    ResultError,
)
from ..events import RunInfo
from ..file_identity import file_sha256
from ..rows import StoreRowSink
from ..run_context import ci_context
from ..store import (
    delete_run,
    find_reusable_run,
    import_dead,
    reap_stale_runs,
    release_free_pages,
)
from ..usage import measured_import
from ..writer import RunWriter
from .json_source import JsonSource
from .parallel import PARALLEL_MIN_BYTES, import_in_child
from .xml_source import XmlSource

# No fixed wait to see whether a file is still growing: the file's identity (size, mtime,
# inode) before and after the parse must match, and a cut file fails the parse itself.
# ``stable_window`` > 0 (tests, callers who want it) still watches a just-written file.
STABLE_WINDOW_S = 0.0
# How often an import that waits for another import of the same bytes looks at its run.
TWIN_POLL_S = 0.2
_NO_FILE_IS_THIS_LARGE = 1 << 62  # as parallel_min_bytes: every file parsed in this process

# progress(bytes read, bytes in all, nodes written so far); it may raise to stop the import
# (ImportCancelled), which then leaves nothing behind.
Progress = Callable[[int, int, int], None]


@dataclass
class ImportOutcome:
    """What ``parse_result`` / ``rf-log-mcp import --json`` report for a successful import."""

    run_id: int
    source_format: str
    status: str  # complete | interrupted
    deduplicated: bool
    source_path: str
    generator: str | None
    rf_version: str | None
    name: str | None
    result_status: str | None
    total: int | None
    passed: int | None
    failed: int | None
    skipped: int | None
    node_count: int | None
    message_count: int | None
    error_count: int | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"ok": True, **asdict(self)}


def import_result(
    conn: sqlite3.Connection,
    path: str | os.PathLike[str],
    *,
    allow_incomplete: bool = False,
    stable_window: float = STABLE_WINDOW_S,
    progress: Progress | None = None,
    label: str | None = None,
    parallel_min_bytes: int | None = None,
) -> ImportOutcome:
    """Import one result file (or find the run that already holds the same bytes).

    Files of ``parallel_min_bytes`` or more are parsed in a child process while this one
    writes (see ``parallel.py``). By default that is PARALLEL_MIN_BYTES, and never where
    this process may use one CPU only: the two processes would take turns, and the pipe
    between them is all they would add. The result is the same either way.
    """
    if parallel_min_bytes is None:
        parallel_min_bytes = _NO_FILE_IS_THIS_LARGE if one_cpu() else PARALLEL_MIN_BYTES
    started = time.perf_counter()
    with measured_import(conn) as facts:
        source = _checked_path(path)
        facts.format = fmt = sniff_format(source)
        stat = _stable_stat(source, stable_window, allow_incomplete)
        facts.input_bytes = stat.st_size
        key = str(source)
        reap_stale_runs(conn)
        reuse = {"allow_interrupted": allow_incomplete}
        run_id = find_reusable_run(conn, key, stat.st_size, stat.st_mtime_ns, None, **reuse)
        deduplicated = True
        if run_id is None:
            digest = file_sha256(source)
            run_id = find_reusable_run(conn, key, stat.st_size, stat.st_mtime_ns, digest, **reuse)
            if run_id is None and _await_import_of(conn, digest, stat.st_size, progress):
                run_id = find_reusable_run(conn, key, stat.st_size, stat.st_mtime_ns, digest,
                                           **reuse)
            if run_id is None:
                run_id, deduplicated = _parse_into_store(
                    conn, source, fmt, stat, digest, allow_incomplete, progress, label,
                    parallel_min_bytes)
        outcome = _outcome(conn, run_id, deduplicated, started)
        facts.outcome = "deduplicated" if deduplicated else outcome.status
        facts.nodes, facts.messages = outcome.node_count, outcome.message_count
    return outcome


def _checked_path(path: str | os.PathLike[str]) -> Path:
    source = Path(path)
    try:
        source = source.expanduser().resolve(strict=True)
    except FileNotFoundError:
        raise ResultError(
            FILE_NOT_FOUND, f"No result file at {source}.",
            "Pass the path of an output.xml or output.json (absolute, or relative to the"
            " server's working directory).",
        ) from None
    except (OSError, RuntimeError, ValueError) as exc:  # symlink loops, NUL in the path
        raise ResultError(FILE_NOT_FOUND, f"Cannot resolve {source!r}: {exc}") from None
    if source.is_dir():
        raise ResultError(
            FILE_NOT_FOUND, f"{source} is a directory, not a result file.",
            _results_hint(source, "Pass the output.xml or output.json inside it"),
        )
    return source


def _results_hint(folder: Path, advice: str) -> str:
    """``advice``, naming the result files robot or rebot leave in ``folder`` or a folder in
    it (``output*.xml`` and ``output*.json``, as robot names them by default and with
    --output; pabot's ``pabot_results/0/output.xml``, a CI artifact's), when any."""
    found = sorted(str(path) for path in _result_files(folder, depth=1))
    if not found:
        return f"{advice}."
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return f"{advice}: {', '.join(found[:5])}{more}."


def _result_files(folder: Path, depth: int) -> list[Path]:
    """The ``output*.xml`` and ``output*.json`` files in ``folder`` and, ``depth`` levels
    down, in its folders (the first 200 entries of each)."""
    found: list[Path] = []
    try:
        entries = sorted(folder.iterdir())[:200]
    except OSError:
        return found
    for path in entries:
        try:
            if path.is_file() and path.name.lower().startswith("output") \
                    and path.suffix.lower() in (".xml", ".json"):
                found.append(path)
            elif depth and path.is_dir():
                found += _result_files(path, depth - 1)
        except OSError:
            continue
    return found


def sniff_format(source: Path) -> str:
    """'xml' or 'json' from the first bytes; anything else is UNSUPPORTED_FORMAT."""
    try:
        with source.open("rb") as fh:
            head = fh.read(512)
    except OSError as exc:
        raise ResultError(FILE_NOT_FOUND, f"Cannot read {source}: {exc}") from None
    if not head:
        raise ResultError(
            INCOMPLETE_RESULT, f"{source} is empty.",
            "robot may have just created it; wait for the run to write it.",
        )
    if head.startswith(b"\x1f\x8b"):
        raise ResultError(
            UNSUPPORTED_FORMAT, f"{source} is gzip-compressed.",
            "Decompress it first (gunzip), then import the output.xml/output.json.",
        )
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:14].lower().startswith((b"<!doctype html", b"<html")):
        raise ResultError(
            UNSUPPORTED_FORMAT, f"{source} is an HTML page (robot's log.html or report.html?),"
            " not a result file.",
            _results_hint(source.parent, "Import the output.xml or output.json robot wrote"
                          " beside it (log.html and report.html are made from it)"),
        )
    if text.startswith(b"<"):
        return "xml"
    if text.startswith(b"{") or text.startswith(b"["):
        return "json"
    kind = "binary data" if b"\x00" in head else "text that is neither XML nor JSON"
    raise ResultError(
        UNSUPPORTED_FORMAT, f"{source} holds {kind}, not a Robot Framework result.",
        "Pass the output.xml (RF 4.0+) or output.json (RF 7.2+) written by robot or rebot.",
    )


def _stable_stat(source: Path, window: float, allow_incomplete: bool) -> os.stat_result:
    stat = source.stat()
    age = time.time() - stat.st_mtime
    if window <= 0 or age >= window:
        return stat
    time.sleep(window - max(age, 0.0))
    again = source.stat()
    if (again.st_size, again.st_mtime_ns) != (stat.st_size, stat.st_mtime_ns):
        if allow_incomplete:
            return again
        raise ResultError(
            INCOMPLETE_RESULT,
            f"{source} is still being written (it changed during {window:.1f} s).",
            "Wait for the run to finish, or import what is there with allow_incomplete.",
        )
    return again


def _await_import_of(conn: sqlite3.Connection, digest: str, size: int,
                     progress: Progress | None) -> bool:
    """Whether another import of the same bytes was running (a CLI import beside an MCP
    server's, two agents' servers, two CI steps) and this one waited for it to end, rather
    than parse the file a second time: it published (its run answers) or it died (this one
    parses). Progress is told while waiting (0 bytes read), so a caller can cancel."""
    waited = False
    while True:
        now = time.time()
        if all(import_dead(pid, host, heartbeat, now) for pid, host, heartbeat in conn.execute(
                "SELECT pid, host, heartbeat FROM runs WHERE source_hash = ?"
                " AND status = 'importing'", (digest,)).fetchall()):
            return waited
        if progress:
            progress(0, size, 0)
        waited = True
        time.sleep(TWIN_POLL_S)


def _identity(stat: os.stat_result) -> tuple[int, int, int]:
    """What tells that a file changed: size, modification time, inode (replaced)."""
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


def _parse_into_store(
    conn: sqlite3.Connection, source: Path, fmt: str, stat: os.stat_result, digest: str,
    allow_incomplete: bool, progress: Progress | None, label: str | None,
    parallel_min_bytes: int,
) -> tuple[int, bool]:
    """The run the file's rows went into, and whether it is another import's of the same
    bytes that published first (this one's rows are then removed)."""
    info = RunInfo(
        origin="import", source_path=str(source), source_format=fmt, source_hash=digest,
        source_size=stat.st_size, source_mtime_ns=stat.st_mtime_ns, label=label,
        output_dir=str(source.parent), ci=ci_context(),
    )
    sink = StoreRowSink(conn, background_index=True, once_by=("source_hash", digest))
    report = (lambda done: progress(done, stat.st_size, sink.nodes_written)) if progress else None
    try:
        if stat.st_size >= parallel_min_bytes:
            import_in_child(sink, source, fmt, info, allow_incomplete, report)
        else:
            parser_cls = XmlSource if fmt == "xml" else JsonSource
            with source.open("rb") as fh:
                parser_cls(RunWriter(sink), info).feed_file(fh, report, allow_incomplete)
        if progress:
            progress(stat.st_size, stat.st_size, sink.nodes_written)  # a last look: cancelled?
        if _identity(source.stat()) != _identity(stat) and not allow_incomplete:
            raise ResultError(
                INCOMPLETE_RESULT, f"{source} changed while it was being imported.",
                "Wait for the run to finish, then import again.",
            )
    except BaseException as exc:
        with _interrupts_held():  # a second Ctrl-C must not leave half a run behind
            sink.close()
            if sink.run_id is not None:
                _discard(conn, sink.run_id)
        if isinstance(exc, (ResultError, KeyboardInterrupt, SystemExit, sqlite3.DatabaseError)):
            raise  # the store's own failures are classified by its callers (read-only, damaged)
        raise ResultError(
            IMPORT_FAILED, f"Importing {source} failed: {type(exc).__name__}: {exc}",
            "This is a bug in rf-log-mcp if the file is a valid RF output; please report it.",
        ) from exc
    sink.close()
    assert sink.run_id is not None
    if sink.published_twin is not None:
        with _interrupts_held():
            _discard(conn, sink.run_id)
        return sink.published_twin, True
    return sink.run_id, False


def _discard(conn: sqlite3.Connection, run_id: int) -> None:
    """Remove a failed import's rows and give their space back to the file system."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    delete_run(conn, run_id)
    release_free_pages(conn)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C waits until the block is done, then interrupts as usual. Python runs signal
    handlers in the main thread whichever thread the signal reached (a signal mask would hold
    it for one thread only), so the handler is swapped for one that notes it. Elsewhere (an
    MCP server's worker thread) there is no Ctrl-C to hold."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed and previous is signal.default_int_handler:
        raise KeyboardInterrupt


def _outcome(conn: sqlite3.Connection, run_id: int, deduplicated: bool, started: float) -> ImportOutcome:
    row = conn.execute(
        "SELECT source_format, status, source_path, generator, rf_version, name, result_status,"
        " total, passed, failed, skipped, node_count, message_count, error_count"
        " FROM runs WHERE run_id = ?", (run_id,),
    ).fetchone()
    return ImportOutcome(run_id, row[0], row[1], deduplicated, row[2], *row[3:],
                         seconds=round(time.perf_counter() - started, 3))
