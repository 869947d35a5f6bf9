"""Which branch of a run's tree a failure went, shared by both sides: the store's history
(a failure's signature names the keyword on it) and the read side's failure paths.

Kept apart from ``history`` so a reading command that walks a failure (``failures``) does
not load the history's signing machinery (issue #19).
"""

from __future__ import annotations

import sqlite3

from . import events as ev


def error_handled(conn: sqlite3.Connection, base: int, root: int, last: int) -> bool:
    """Whether an EXCEPT branch of the TRY/EXCEPT root at position ``root`` (its subtree
    ending at ``last``) ran: its TRY branch's failure was then handled, and what
    made the root fail is a later branch. Walks the root's few branches, not their
    subtrees."""
    child = root + 1
    while child <= last:
        row = conn.execute("SELECT last, type, status FROM nodes WHERE key = ?",
                           (base + child,)).fetchone()
        if row is None or row[0] is None:  # a live run's branch not written yet
            return False
        if row[1] == ev.EXCEPT and row[2] != "NOT RUN":
            return True
        if row[1] not in (ev.TRY, ev.EXCEPT):  # ELSE, FINALLY: the EXCEPT branches are before
            return False
        child = row[0] + 1
    return False
