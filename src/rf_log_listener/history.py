"""A run's tests by full name, with their failure signatures: what questions across runs read.

Written when a run ends (``rows.StoreRowSink.finish_run``, before the run is published, and
``store.mark_dead_live_runs`` for a run whose robot died), from the run's stored rows: the
writer's hot path does not pay for it. A test is the same test in another run when its full
name (RF's ``longname``: suite names and the test name joined by dots) is the same; a renamed
or moved test is a new test. Two tests of one run with the same full name (RF warns about
them) keep the first.

The walk costs O(suites + tests), not O(nodes): a suite's children are found by skipping
each child's subtree (``last``), and a failed test's failing keyword through the partial
index of notable nodes, one seek per level.
"""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from collections.abc import Callable, Iterator

from . import events as ev
from .digest import digest
from .masking import Redactor, redactor
from .registry import known_values
from .schema import FAILED_STARTS, NOTABLE_NODES
from .signatures import RULES, signature
from .store import run_base, transaction

# longname: str, pre: int, status: str, elapsed: float | None, signature: str | None (failed
# tests only). collections' named tuple: typing's is 4-5 ms to import (issue #19).
StoredTest = namedtuple("StoredTest", "longname pre status elapsed signature")


_NODE = "SELECT last, type, name, status, elapsed, message FROM nodes WHERE key = ?"


def test_rows(conn: sqlite3.Connection, run_id: int) -> Iterator[StoredTest]:
    """The run's tests in run order, as stored now (a running run: those written so far)."""
    base = run_base(run_id)
    root = conn.execute(_NODE, (base,)).fetchone()
    if root is None or root[1] != ev.SUITE:
        return
    mask: Redactor | None = None  # built at the first failure: most runs need none
    suites = [(root[0], root[2] or "")]  # (last, full name) of the open suites
    pre = 1
    while suites:
        if pre > suites[-1][0]:
            suites.pop()
            continue
        row = conn.execute(_NODE, (base + pre,)).fetchone()
        if row is None:  # a live run: not written yet
            return
        last, ntype, name, status, elapsed, message = row
        if ntype == ev.SUITE:
            suites.append((last, f"{suites[-1][1]}.{name or ''}"))
            pre += 1
            continue
        if ntype == ev.TEST:
            failure = None
            if status == "FAIL":
                if mask is None:
                    mask = redactor().for_run(known_values(conn, [run_id]))
                failure = _signature(conn, mask, base, pre, last, message)
            yield StoredTest(f"{suites[-1][1]}.{name or ''}", pre, status, elapsed, failure)
        pre = last + 1


def failed_test_signatures(conn: sqlite3.Connection, run_id: int) -> Iterator[tuple[int, str]]:
    """(pre, signature) of the run's failed tests as stored now, through the index of failed
    nodes: O(failures), for a running run's summary."""
    base = run_base(run_id)
    mask = redactor().for_run(known_values(conn, [run_id]))
    for key, last, message in conn.execute(
            f"SELECT key, last, message FROM nodes INDEXED BY nodes_failed WHERE key >= ?"
            f" AND key < ? AND {FAILED_STARTS} AND type = 'TEST'", (base, run_base(run_id + 1))):
        pre = key - base
        yield pre, _signature(conn, mask, base, pre, last, message)


def _signature(conn: sqlite3.Connection, mask: Redactor, base: int, pre: int, last: int,
               message: str | None) -> str:
    """A failed test's signature: the failure its message reports now (a merged test's
    newest, an HTML one's text), masked, and the keyword that failed."""
    from .status_text import current  # loaded at a first failure: robot's end without one
    # (the usual run) does not pay for the module (issue #19)

    return signature(mask.text(current(message or ""))[0], _failing_keyword(conn, base, pre, last))


def _failing_keyword(conn: sqlite3.Connection, base: int, pre: int, last: int) -> str | None:
    """``Library.Keyword`` of the deepest failed keyword on the test's first failing path (a
    TRY branch whose failure an EXCEPT branch handled is not on it: ``error_handled``)."""
    from .branches import error_handled  # as status_text above

    found = None
    parent, after = pre, pre
    while True:
        row = conn.execute(
            f"SELECT key, type, name, owner, last FROM nodes INDEXED BY nodes_notable"
            f" WHERE parent_pre = ? AND key > ? AND key <= ? AND {NOTABLE_NODES}"
            f" AND status = 'FAIL' ORDER BY key LIMIT 1",
            (parent, base + after, base + last)).fetchone()
        if row is None:
            return found
        key, ntype, name, owner, child_last = row
        if ntype == ev.TRY and error_handled(conn, base, parent, last):
            after = child_last  # the next failing branch (EXCEPT, ELSE, FINALLY) is the cause
            continue
        if ntype in ev.KEYWORD_TYPES and name:
            found = f"{owner}.{name}" if owner else name
        parent = after = key - base
        last = child_last


def name_id(longname: str) -> int:
    """A test's full name as a 63-bit number: one name, one id, in every store."""
    return int.from_bytes(digest(longname.encode()), "big") >> 1


def index_run(conn: sqlite3.Connection, run_id: int,
              and_then: Callable[[], object] | None = None) -> int:
    """Write the run's tests (replacing what an earlier indexing wrote) in one transaction;
    returns how many. Readers use them once ``runs.tests_indexed`` says these rules.
    ``and_then`` writes more in the same transaction (a run's end: its publication)."""
    rows = list(test_rows(conn, run_id))
    signatures = {row.signature for row in rows if row.signature}
    with transaction(conn, immediate=True):
        conn.execute("DELETE FROM run_tests WHERE run_id = ?", (run_id,))
        conn.executemany("INSERT OR IGNORE INTO test_names (name_id, longname) VALUES (?, ?)",
                         [(name_id(row.longname), row.longname) for row in rows])
        conn.executemany("INSERT OR IGNORE INTO signatures (signature_id, text) VALUES (?, ?)",
                         [(name_id(text), text) for text in signatures])
        conn.executemany(
            "INSERT OR IGNORE INTO run_tests (run_id, name_id, pre, status, elapsed, signature_id)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(run_id, name_id(row.longname), row.pre, row.status, row.elapsed,
              name_id(row.signature) if row.signature else None) for row in rows])
        conn.execute("UPDATE runs SET tests_indexed = ? WHERE run_id = ?", (RULES, run_id))
        if and_then is not None:
            and_then()
    return len(rows)
