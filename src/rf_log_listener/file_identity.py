"""What identifies a result file (both sides, and the listener when robot has written it):
the digest of its bytes, recorded with its run (``runs.source_hash``, which
``store.find_reusable_run`` finds the run by), and how many tests it holds, counted in the
same read (the listener compares it with the run it captured: another listener may have
rewritten the file)."""

from __future__ import annotations

import os
import re


def file_sha256(source: str | os.PathLike[str]) -> str:
    """The digest of a result file's bytes, recorded with its run (``source_hash``), which
    ``find_reusable_run`` finds the run by."""
    return file_digest(source)[0]


# What marks a test in a result file's bytes: an element of output.xml (a "<test " in a
# text is escaped), a test's id in output.json (a quote inside a string is escaped;
# robot writes it compact, an indented file has white space after the colon); the
# longest a mark can be, kept across the chunks the file is read in.
_TEST_MARKS = {"xml": rb"<test ", "json": rb'"id":[ \t\r\n]*"s\d+(?:-s\d+)*-t\d+"'}
_LONGEST_MARK = 256


def file_digest(source: str | os.PathLike[str], tests_of: str | None = None) -> tuple[str, int | None]:
    """The digest of a result file's bytes and, given its format (``tests_of``: "xml" or
    "json"), how many tests it holds, counted in the same read (else None)."""
    import hashlib  # here: the command line's parser loads this module, and hashlib is 4-5 ms

    digest = hashlib.sha256()
    mark = re.compile(_TEST_MARKS[tests_of]) if tests_of else None
    tests, tail = 0, b""
    with open(source, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            if mark is not None:
                window = tail + chunk  # a mark cut by the chunk's start is counted whole
                tests += sum(1 for found in mark.finditer(window) if found.end() > len(tail))
                tail = window[-_LONGEST_MARK:]
    return digest.hexdigest(), tests if mark is not None else None


# Where a result file's run errors begin (they come last: output.xml's <errors>, output.json's
# "errors" key; in either, the same bytes inside a text are escaped) and what marks each one.
# Compiled when used (re caches them): the command line's parser loads this module.
_ERRORS_START = {"xml": rb"<errors>", "json": rb'"errors"[ \t\r\n]*:'}
_ERROR_MARK = {"xml": rb"<msg ", "json": rb'"level"[ \t\r\n]*:'}


def error_count(source: str | os.PathLike[str], file_format: str) -> int | None:
    """How many run errors a result file holds, read from its end back to where they begin
    (its last 64 KiB, eight times more each time the errors begin further back); None when
    the file has no errors section."""
    start, mark = re.compile(_ERRORS_START[file_format]), re.compile(_ERROR_MARK[file_format])
    with open(source, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        window = 1 << 16
        while True:
            at = max(0, size - window)
            fh.seek(at)
            tail = fh.read()
            begins = [found.end() for found in start.finditer(tail)]
            if begins:
                return sum(1 for _ in mark.finditer(tail, begins[-1]))
            if at == 0:
                return None
            window *= 8
