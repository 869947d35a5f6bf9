"""A large import on two cores: a child process parses and builds rows, this process writes.

Parsing and row building are Python work that holds the GIL; committing rows and building
the full-text index are SQLite work. On one process they add up; split across a process
boundary they overlap. The child runs the very same :class:`RunWriter` as an in-process
import, only its :class:`RowSink` forwards each call over a pipe (rows as ``marshal``
batches, the cheapest serialization of plain tuples) to a :class:`StoreRowSink` here.
Nothing about the result differs; only small files skip this (process start-up costs more
than it saves).
"""

from __future__ import annotations

import contextlib
import gc
import json
import marshal
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from ..errors import ResultError
from ..events import RunInfo
from ..row_pipe import FramedPipe, PipeRowSink, serve
from ..rows import StoreRowSink
from ..writer import RunWriter

# Below this size a single process is faster: the child's start-up is ~0.1-0.3 s.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024
_PROGRESS_EVERY = 8 * 1024 * 1024
# Python's collection thresholds for both ends of the row stream: millions of short-lived
# acyclic tuples, which collecting young objects that often only re-examines. Cycles (rare)
# are still collected, just later.
ROW_STREAM_GC = (100_000, 50, 50)


def child_main(argv: list[str]) -> None:
    """The child's work; arguments: PATH FORMAT RUN_INFO_JSON ALLOW_INCOMPLETE(0|1)."""
    from .json_source import JsonSource
    from .xml_source import XmlSource

    path, fmt, info, allow_incomplete = argv[0], argv[1], json.loads(argv[2]), argv[3] == "1"
    gc.set_threshold(*ROW_STREAM_GC)
    # Frames go over the real stdout; anything printed by accident goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    pipe = FramedPipe(sys.stdin.buffer, out)
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
    except (KeyboardInterrupt, BrokenPipeError):
        pass  # stopped, or the parent is gone (it stopped the import): nobody to tell
    except BaseException as exc:  # reported to the parent, which owns the outcome
        pipe.send_bytes(marshal.dumps(("crash", f"{type(exc).__name__}: {exc}",
                                       traceback.format_exc())))
    finally:
        with contextlib.suppress(BrokenPipeError):
            pipe.close()


def import_in_child(sink: StoreRowSink, source: Path, fmt: str, info: RunInfo,
                    allow_incomplete: bool, progress: Callable[[int], None] | None) -> None:
    """Parse ``source`` in a child process and write its rows through ``sink``.

    A plain ``python -m`` subprocess, not ``multiprocessing``: it never forks a process
    that has threads and never re-imports the caller's main module.
    """
    child = subprocess.Popen(
        [sys.executable, "-m", "rf_log_listener.importers._parser_process", str(source), fmt,
         json.dumps(info.to_dict()), "1" if allow_incomplete else "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 20,
    )
    assert child.stdin is not None and child.stdout is not None
    pipe = FramedPipe(child.stdout, child.stdin)
    try:
        serve(pipe, sink, progress)
    finally:
        pipe.close()
        if child.poll() is None:
            child.kill()
        child.wait()
