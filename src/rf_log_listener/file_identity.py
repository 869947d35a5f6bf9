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
