"""compare_runs view: what changed between two runs (or pabot groups) of a suite, test by test.

Tests are matched by full name. Each test present in either run gets at most one change, the
first that applies in this order: new failure, still failing with a changed signature, still
failing with the same one, newly skipped, fixed, added, removed, slower, faster. Slower and
faster: both runs have the test's time, it changed by at least ``MIN_DELTA_S`` seconds and
by a factor of ``RATIO`` or more. Changes are listed in that order, then in run order.
"""

from __future__ import annotations

import sqlite3

from ..shaping import Shaper
from .across import (
    Outcome,
    Unit,
    longnames,
    node_ids,
    seen_before,
    signature_texts,
    tests_of,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

CHANGES = ("new_failure", "still_failing_changed", "still_failing", "newly_skipped", "fixed",
           "no_longer_skipped", "added", "removed", "slower", "faster")
RATIO = 2.0
MIN_DELTA_S = 1.0
NO_BASE_RUN = "NO_BASE_RUN"


def _change(head: Outcome | None, base: Outcome | None) -> str | None:
    if base is None:
        return "added"
    if head is None:
        return "removed"
    if head.status == "FAIL":
        if base.status != "FAIL":
            return "new_failure"
        return "still_failing" if head.signature_id == base.signature_id else "still_failing_changed"
    if head.status == "SKIP" and base.status != "SKIP":
        return "newly_skipped"
    if head.status == "PASS" and base.status == "FAIL":
        return "fixed"
    if head.status == "PASS" and base.status == "SKIP":  # runs again (or its hidden failure
        return "no_longer_skipped"                       # is gone: robot:skip-on-failure)
    if head.elapsed is not None and base.elapsed is not None:
        delta = head.elapsed - base.elapsed
        if delta >= MIN_DELTA_S and head.elapsed >= base.elapsed * RATIO:
            return "slower"
        if -delta >= MIN_DELTA_S and base.elapsed >= head.elapsed * RATIO:
            return "faster"
    return None


def compare(conn: sqlite3.Connection, base: Unit, reason: str, head: Unit,
            changes: list[str] | None, shaper: Shaper, position: int | None,
            page_size: int) -> tuple[dict[str, Any], int | None]:
    head_tests, base_tests = tests_of(conn, head), tests_of(conn, base)
    counts = dict.fromkeys(CHANGES, 0)
    counts["unchanged"] = 0
    listed: list[tuple[int, tuple[int, int], int]] = []  # (change, place, name id)
    for nid in head_tests.keys() | base_tests.keys():
        h, b = head_tests.get(nid), base_tests.get(nid)
        change = _change(h, b)
        counts[change or "unchanged"] += 1
        if change is not None and (not changes or change in changes):
            shown = h or b
            assert shown is not None
            listed.append((CHANGES.index(change), (shown.run_id, shown.pre), nid))
    listed.sort()
    start = position or 0
    page = listed[start:start + page_size]
    view: dict[str, Any] = {"head": head.described(), "base": base.described(),
                            "base_reason": reason, "counts": counts}
    kept = shaper.fit(view, _items(conn, page, head_tests, base_tests, head.first, shaper),
                      "changes")
    after = start + kept
    return view, after if after < len(listed) else None


def _items(conn: sqlite3.Connection, page: list[tuple[int, tuple[int, int], int]],
           head_tests: dict[int, Outcome], base_tests: dict[int, Outcome], head_first: int,
           shaper: Shaper) -> Any:
    results = [r for _, _, nid in page for r in (head_tests.get(nid), base_tests.get(nid)) if r]
    names = longnames(conn, (nid for _, _, nid in page))
    ids = node_ids(conn, results)
    texts = signature_texts(conn, (r.signature_id for r in results))
    for change, _, nid in page:
        h, b = head_tests.get(nid), base_tests.get(nid)
        name = names.get(nid) or (h or b).longname  # type: ignore[union-attr]
        item: dict[str, Any] = {"change": CHANGES[change], "test": shaper.text(name or "", 300)}
        for side, result in (("head", h), ("base", b)):
            if result is not None:
                item[side] = {"run_id": result.run_id, "node_id": ids[(result.run_id, result.pre)],
                              "status": result.status, "elapsed": result.elapsed}
                if result.signature_id is not None and not (
                        side == "base" and CHANGES[change] == "still_failing"):  # the same
                    text = texts.get(result.signature_id) or result.signature or ""
                    item[side]["signature"] = shaper.text(text, 300)
        if CHANGES[change] in ("new_failure", "still_failing_changed") and h and h.signature_id:
            item["signature_seen"] = seen_before(conn, h.signature_id, head_first)
        yield item
