"""Rows over a pipe: a :class:`RowSink` in one process, a :class:`StoreRowSink` in another.

Used both ways round: a large import parses in a child process and writes here; a live
run builds rows inside robot and a writer process commits them, so robot never waits for
SQLite. Frames are length-prefixed ``marshal`` payloads.
"""

from __future__ import annotations

import contextlib
import marshal
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

from .errors import IMPORT_FAILED, ResultError
from .events import RunInfo
from .rotation import Rotation
from .rows import LiveTotals, StoreRowSink


class FramedPipe:
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

    def __init__(self, pipe: FramedPipe) -> None:
        self.pipe = pipe

    def _call(self, *message: Any) -> Any:
        self.pipe.send_bytes(marshal.dumps(message))
        return marshal.loads(self.pipe.recv_bytes())

    def begin_run(self, info: RunInfo) -> int:
        return int(self._call("begin", info.to_dict()))

    def write(self, nodes: list[tuple[Any, ...]], messages: list[tuple[Any, ...]],
              errors: list[tuple[Any, ...]], msg_lo: int, msg_hi: int, secrets: list[str],
              definitions: list[tuple[Any, ...]] | None = None,
              totals: LiveTotals | None = None) -> None:
        # marshal's own version (4): a row's repeated strings (statuses, types, levels,
        # libraries) go once per batch and come back shared: 100 MB of output.xml is 106 MB
        # over the pipe, not 130, and both ends spend less (dumps 0.30 s, not 0.45; loads
        # 0.6-0.75 s, not 0.75-0.9) than with version 2's copies.
        self.pipe.send_bytes(marshal.dumps(("write", nodes, messages, errors, msg_lo, msg_hi,
                                            secrets, definitions, totals)))

    def rewrite_suite_tests(self, lo: int, hi: int, teardown_status: str,
                            teardown_message: str) -> tuple[int, dict[str, int]]:
        newly_failed, counts = self._call("rewrite", lo, hi, teardown_status, teardown_message)
        return newly_failed, counts

    def rotate(self, rotation: Rotation, msg_from: int) -> None:
        self.pipe.send_bytes(marshal.dumps(("rotate", rotation, msg_from)))  # ordered as writes

    def finish_run(self, fields: dict[str, Any]) -> None:
        self._call("finish", fields)


def serve(pipe: FramedPipe, sink: StoreRowSink, progress: Callable[[int], None] | None) -> None:
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
        elif kind == "rotate":
            sink.rotate(*message[1:])
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
