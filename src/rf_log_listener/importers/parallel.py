"""A large import on two cores: a child process parses and builds rows, this process writes.

Parsing and row building are Python work that holds the GIL; committing rows and building
the full-text index are SQLite work. On one process they add up; split across a process
boundary they overlap. The child runs the very same :class:`RunWriter` as an in-process
import, only its :class:`RowSink` forwards each call over a pipe (rows as ``marshal``
batches, the cheapest serialization of plain tuples) to a :class:`SqliteRowSink` here.
Nothing about the result differs; only small files skip this (process start-up costs more
than it saves).
"""

from __future__ import annotations

import contextlib
import gc
import json
import marshal
import os
import struct
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import IMPORT_FAILED, ResultError
from ..events import RunInfo
from ..rows import SqliteRowSink
from ..writer import RunWriter

# Below this size a single process is faster: the child's start-up is ~0.1-0.3 s.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024
_PROGRESS_EVERY = 8 * 1024 * 1024


class _Pipe:
    """Length-prefixed marshal frames over a pair of byte streams."""

    def __init__(self, inp: BinaryIO, out: BinaryIO) -> None:
        self.inp = inp
        self.out = out

    def send_bytes(self, data: bytes) -> None:
        self.out.write(struct.pack("<Q", len(data)))
        self.out.write(data)
        self.out.flush()

    def recv_bytes(self) -> bytes:
        head = self.inp.read(8)
        if len(head) < 8:
            raise EOFError
        (size,) = struct.unpack("<Q", head)
        data = self.inp.read(size)
        if len(data) < size:
            raise EOFError
        return data

    def close(self) -> None:
        for stream in (self.inp, self.out):
            with contextlib.suppress(OSError):
                stream.close()


class PipeRowSink:
    """The child's row sink: forwards every call to the writing process."""

    def __init__(self, pipe: _Pipe) -> None:
        self.pipe = pipe

    def _call(self, *message: Any) -> Any:
        self.pipe.send_bytes(marshal.dumps(message))
        return marshal.loads(self.pipe.recv_bytes())

    def begin_run(self, info: RunInfo) -> int:
        return int(self._call("begin", asdict(info)))

    def write(self, nodes: list[tuple[Any, ...]], messages: list[tuple[Any, ...]],
              errors: list[tuple[Any, ...]], msg_lo: int, msg_hi: int) -> None:
        # marshal version 2 (no object references) dumps ~3x faster than the default and the
        # parser process is the busier of the two; the writer pays a little more to load.
        self.pipe.send_bytes(marshal.dumps(("write", nodes, messages, errors, msg_lo, msg_hi), 2))

    def rewrite_suite_tests(self, lo: int, hi: int, teardown_status: str,
                            teardown_message: str) -> tuple[int, dict[str, int]]:
        newly_failed, counts = self._call("rewrite", lo, hi, teardown_status, teardown_message)
        return newly_failed, counts

    def finish_run(self, fields: dict[str, Any]) -> None:
        self._call("finish", fields)


def child_main(argv: list[str]) -> None:
    """The child's work; arguments: PATH FORMAT RUN_INFO_JSON ALLOW_INCOMPLETE(0|1)."""
    from .json_source import JsonSource
    from .xml_source import XmlSource

    path, fmt, info, allow_incomplete = argv[0], argv[1], json.loads(argv[2]), argv[3] == "1"
    # Millions of short-lived acyclic tuples: collecting young objects that often is wasted
    # work in this single-purpose process. Cycles (rare) are still collected, just later.
    gc.set_threshold(100_000, 50, 50)
    # Frames go over the real stdout; anything printed by accident goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    pipe = _Pipe(sys.stdin.buffer, out)
    last = [0]

    def progress(done: int) -> None:
        if done - last[0] >= _PROGRESS_EVERY:
            last[0] = done
            pipe.send_bytes(marshal.dumps(("progress", done)))

    try:
        writer = RunWriter(PipeRowSink(pipe))
        source_cls = XmlSource if fmt == "xml" else JsonSource
        with open(path, "rb") as fh:
            source_cls(writer, RunInfo(**info)).feed_file(fh, progress, allow_incomplete)
        pipe.send_bytes(marshal.dumps(("done",)))
    except ResultError as err:
        pipe.send_bytes(marshal.dumps(("error", err.code, err.message, err.hint)))
    except KeyboardInterrupt:
        pass
    except BaseException as exc:  # reported to the parent, which owns the outcome
        pipe.send_bytes(marshal.dumps(("crash", f"{type(exc).__name__}: {exc}",
                                       traceback.format_exc())))
    finally:
        pipe.close()


def import_in_child(sink: SqliteRowSink, source: Path, fmt: str, info: RunInfo,
                    allow_incomplete: bool, progress: Callable[[int], None] | None) -> None:
    """Parse ``source`` in a child process and write its rows through ``sink``.

    A plain ``python -m`` subprocess, not ``multiprocessing``: it never forks a process
    that has threads and never re-imports the caller's main module.
    """
    child = subprocess.Popen(
        [sys.executable, "-m", "rf_log_listener.importers._parser_process", str(source), fmt,
         json.dumps(asdict(info)), "1" if allow_incomplete else "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 20,
    )
    assert child.stdin is not None and child.stdout is not None
    pipe = _Pipe(child.stdout, child.stdin)
    try:
        _serve(pipe, sink, progress)
    finally:
        pipe.close()
        if child.poll() is None:
            child.kill()
        child.wait()


def _serve(pipe: _Pipe, sink: SqliteRowSink, progress: Callable[[int], None] | None) -> None:
    reply = pipe.send_bytes
    while True:
        try:
            message = marshal.loads(pipe.recv_bytes())
        except EOFError:
            raise ResultError(
                IMPORT_FAILED, "The parser process ended without finishing the import.",
                "It may have been killed (out of memory?); nothing was kept. Try again.",
            ) from None
        kind = message[0]
        if kind == "write":
            sink.write(*message[1:])
        elif kind == "progress":
            if progress:
                progress(message[1])
        elif kind == "begin":
            reply(marshal.dumps(sink.begin_run(RunInfo(**message[1]))))
        elif kind == "rewrite":
            reply(marshal.dumps(sink.rewrite_suite_tests(*message[1:])))
        elif kind == "finish":
            sink.finish_run(message[1])
            reply(marshal.dumps(None))
        elif kind == "done":
            return
        elif kind == "error":
            raise ResultError(*message[1:])
        else:
            raise ResultError(IMPORT_FAILED, f"Import failed in the parser process: {message[1]}",
                              f"Please report this with the traceback:\n{message[2]}")
