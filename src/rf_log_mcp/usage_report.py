"""``rf-log-mcp usage``: the roadmap's v0.5 questions answered from the usage record
(read side; the record is written by ``usage.py`` and ``rf_log_listener/usage.py``).

Each section answers one question with numbers; the model is the ``--json`` answer and the
text rendering prints the same figures. Nothing here reads a run's content.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from pydantic import Field

from rf_log_listener.errors import INVALID_ARGUMENT, ResultError

from .models import BaseModel

# The roadmap's baseline (v0.4 era, 43 tasks): 417 of 853 structured responses truncated.
BASELINE = {"tasks": 43, "calls": 854, "responses": 853, "truncated": 417,
            "by_tool": {"summary": [43, 89], "failure_path": [41, 95], "step_window": [117, 133],
                        "search_messages": [216, 436]}}
WIDE_WINDOW = 25  # a step_window page larger than the default, or a third page, is "wide"


class Spread(BaseModel):
    count: int
    p50: float | None = None
    p95: float | None = None
    max: float | None = None


class ToolFigures(BaseModel):
    tool: str = Field(description="The tool, or get_view's view (get_view:tree).")
    calls: int
    tokens: Spread
    tokens_total: int
    duration_ms: Spread
    errors: dict[str, int] | None = Field(None, description="Failed calls by error code.")
    cut: float = Field(description="Share of answers shortened by message_truncated or "
                                   "budget_truncated.")
    message_truncated: float
    budget_truncated: float
    page_truncated: float = Field(description="Paging by design: more items follow.")
    pages: Spread = Field(description="Pages read per (session, target): 1 = no cursor "
                                      "followed.")


class TreeFigures(BaseModel):
    calls: int
    depth: Spread = Field(description="Levels of the node expanded (s1-t2-k3: 3).")
    projections: dict[str, float] = Field(description="Share of tree calls by projection.")
    snapshot_calls: int = 0


class FoldFigures(BaseModel):
    loop_calls: int = Field(description="tree calls on a FOR/WHILE or an iteration group.")
    items_after_folding: int
    items_before_folding: int = Field(description="The same pages with every folded iteration "
                                                  "counted as a node.")
    folded_groups: int
    calls_reaching_failed_iteration: int = Field(description="Answers of any view holding a "
                                                             "failed ITERATION node.")
    loop_calls_reaching_failed_iteration: int


class WindowFigures(BaseModel):
    calls: int
    wide: int = Field(description=f"Pages larger than {WIDE_WINDOW} steps, or a third page on.")
    steps: Spread


class SearchSide(BaseModel):
    calls: int
    hits: Spread
    tests_per_page: Spread = Field(description="Distinct tests among a page's hits (fewer: "
                                               "fewer unrelated hits).")
    empty: int = Field(description="Searches that found nothing.")


class SearchFigures(BaseModel):
    scoped: SearchSide
    run_wide: SearchSide
    grouped: int = Field(description="Searches with group_by.")
    repeats_folded: int = Field(description="Repeated messages folded into hits.")


class TruncationFigures(BaseModel):
    answers: int
    cut: int = Field(description="Answers with message_truncated or budget_truncated.")
    cut_rate: float
    page_truncated: int
    followed_on_same_target: int = Field(description="Cut answers followed in the same session "
                                                     "by another call on the same target.")
    follow_rate: float | None = None
    baseline_rate: float = Field(description="The roadmap's v0.4 baseline: 417 of 853 "
                                             "responses truncated (every kind).")


class FieldFigures(BaseModel):
    answers_with_nodes: int
    type_fields: float = Field(description="Share of those answers with type-specific fields.")
    definitions: float = Field(description="... with keyword definition metadata.")
    call_sites: float = Field(description="... with source lines.")
    attachments: float = Field(description="Share of all answers listing attachments.")


class ImportFigures(BaseModel):
    imports: int
    outcomes: dict[str, int]
    input_mb: Spread
    parse_s: Spread
    mb_per_s: Spread
    peak_rss_mb: Spread
    store_growth_mb: float
    store_mb: float | None = None
    recoveries: dict[str, int] = Field(description="Runs a dead process left: imports reaped, "
                                                   "live runs marked interrupted, cut files "
                                                   "imported as interrupted.")


class UsageReport(BaseModel):
    since: str | None = None
    until: str
    recording: bool = Field(description="Whether this process records usage (RF_LOG_MCP_USAGE).")
    calls: int
    sessions: int
    by_source: dict[str, int]
    tools: list[ToolFigures]
    truncation: TruncationFigures
    tree: TreeFigures
    folding: FoldFigures
    step_window: WindowFigures
    search: SearchFigures
    volume: dict[str, float] = Field(description="Share of returned tokens by node type / "
                                                 "message level / folded item.")
    fields: FieldFigures
    imports: ImportFigures


_COLUMNS = ("at", "session", "source", "tool", "view", "projection", "page", "selector_kind",
            "selector_depth", "target", "page_size", "tokens", "message_truncated",
            "budget_truncated", "page_truncated", "error", "duration_ms", "shape")


def parse_since(text: str | None) -> float | None:
    """``7d``, ``12h``, ``30m`` ago, or an ISO date/time; None for everything."""
    if not text:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([dhm])\s*", text)
    if match:
        amount, unit = float(match.group(1)), match.group(2)
        return time.time() - amount * {"d": 86400, "h": 3600, "m": 60}[unit]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ResultError(INVALID_ARGUMENT, f"--since {text!r} is neither a duration nor a date.",
                          "Use 7d, 12h, 30m, or an ISO date such as 2026-11-30.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def report(conn: sqlite3.Connection, since: float | None = None,
           source: str | None = None) -> UsageReport:
    from rf_log_listener.usage import enabled

    where, params = ["at >= ?"], [since or 0.0]
    if source:
        where.append("source = ?")
        params.append(source)
    rows = [dict(zip(_COLUMNS, row, strict=True)) for row in conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM usage_calls WHERE {' AND '.join(where)} ORDER BY id",
        params)]
    for row in rows:
        row["shape"] = json.loads(row["shape"] or "{}")
        row["name"] = f"get_view:{row['view']}" if row["tool"] == "get_view" else row["tool"]
    return UsageReport(
        since=_iso(since) if since else None, until=_iso(time.time()), recording=enabled(),
        calls=len(rows), sessions=len({r["session"] for r in rows}),
        by_source=dict(Counter(r["source"] for r in rows)),
        tools=[_tool(name, group) for name, group in sorted(_grouped(rows).items())],
        truncation=_truncation(rows), tree=_tree(rows), folding=_folding(rows),
        step_window=_window(rows), search=_search(rows), volume=_volume(rows),
        fields=_fields(rows), imports=_imports(conn, since or 0.0))


def _grouped(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["name"]].append(row)
    return groups


def spread(values: Iterable[float | int | None]) -> Spread:
    ordered = sorted(v for v in values if v is not None)
    if not ordered:
        return Spread(count=0)

    def at(share: float) -> float:
        return round(float(ordered[min(len(ordered) - 1, int(share * len(ordered)))]), 2)
    return Spread(count=len(ordered), p50=at(0.5), p95=at(0.95), max=round(float(ordered[-1]), 2))


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def _cut(row: dict[str, Any]) -> bool:
    return bool(row["message_truncated"] or row["budget_truncated"])


def _tool(name: str, rows: list[dict[str, Any]]) -> ToolFigures:
    pages: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["session"], row["target"])
        pages[key] = max(pages.get(key, 0), row["page"])
    errors = Counter(row["error"] for row in rows if row["error"])
    return ToolFigures(
        tool=name, calls=len(rows), tokens=spread(r["tokens"] for r in rows),
        tokens_total=sum(r["tokens"] or 0 for r in rows),
        duration_ms=spread(r["duration_ms"] for r in rows), errors=dict(errors) or None,
        cut=_share(sum(map(_cut, rows)), len(rows)),
        message_truncated=_share(sum(r["message_truncated"] for r in rows), len(rows)),
        budget_truncated=_share(sum(r["budget_truncated"] for r in rows), len(rows)),
        page_truncated=_share(sum(r["page_truncated"] for r in rows), len(rows)),
        pages=spread(pages.values()))


def _truncation(rows: list[dict[str, Any]]) -> TruncationFigures:
    """A cut answer is 'followed' when a later call of the same session asks about the same
    target (any tool): the cut cost the agent another query."""
    answered = [r for r in rows if not r["error"]]
    cut = followed = 0
    later: dict[tuple[str, str], int] = {}
    for index in range(len(answered) - 1, -1, -1):  # newest first: is there a later call?
        row = answered[index]
        key = (row["session"], row["target"])
        if _cut(row):
            cut += 1
            followed += key in later
        later[key] = index
    return TruncationFigures(
        answers=len(answered), cut=cut, cut_rate=_share(cut, len(answered)),
        page_truncated=sum(r["page_truncated"] for r in answered),
        followed_on_same_target=followed, follow_rate=_share(followed, cut) if cut else None,
        baseline_rate=_share(BASELINE["truncated"], BASELINE["responses"]))


def _tree(rows: list[dict[str, Any]]) -> TreeFigures:
    trees = [r for r in rows if r["name"] == "get_view:tree"]
    projections = Counter(r["projection"] or "all" for r in trees)
    return TreeFigures(calls=len(trees), depth=spread(r["selector_depth"] or 0 for r in trees),
                       projections={k: _share(v, len(trees)) for k, v in projections.items()},
                       snapshot_calls=sum(r["name"] == "get_view:tree_snapshot" for r in rows))


def _folding(rows: list[dict[str, Any]]) -> FoldFigures:
    loops = [r for r in rows if r["shape"].get("loop")]
    after = sum(r["shape"].get("items", 0) for r in loops)
    groups = sum(r["shape"].get("folded_groups", 0) for r in loops)
    return FoldFigures(
        loop_calls=len(loops), items_after_folding=after,
        items_before_folding=after - groups + sum(r["shape"].get("folded_iterations", 0)
                                                  for r in loops),
        folded_groups=groups,
        calls_reaching_failed_iteration=sum(bool(r["shape"].get("failed_iterations")) for r in rows),
        loop_calls_reaching_failed_iteration=sum(bool(r["shape"].get("failed_iterations"))
                                                 for r in loops))


def _window(rows: list[dict[str, Any]]) -> WindowFigures:
    windows = [r for r in rows if r["name"] == "get_view:step_window"]
    return WindowFigures(calls=len(windows),
                         wide=sum((r["page_size"] or WIDE_WINDOW) > WIDE_WINDOW or r["page"] >= 3
                                  for r in windows),
                         steps=spread(r["shape"].get("items", 0) for r in windows))


def _search(rows: list[dict[str, Any]]) -> SearchFigures:
    searches = [r for r in rows if r["tool"] == "search_messages" and not r["error"]]

    def side(chosen: list[dict[str, Any]]) -> SearchSide:
        return SearchSide(calls=len(chosen), hits=spread(r["shape"].get("hits", 0) for r in chosen),
                          tests_per_page=spread(r["shape"].get("hit_tests", 0) for r in chosen),
                          empty=sum(not r["shape"].get("hits") for r in chosen))
    return SearchFigures(
        scoped=side([r for r in searches if r["shape"].get("scoped")]),
        run_wide=side([r for r in searches if not r["shape"].get("scoped")]),
        grouped=sum(bool(r["shape"].get("group_by")) for r in searches),
        repeats_folded=sum(r["shape"].get("repeats_folded", 0) for r in searches))


def _volume(rows: list[dict[str, Any]]) -> dict[str, float]:
    totals: Counter[str] = Counter()
    for row in rows:
        totals.update(row["shape"].get("volume", {}))
    whole = sum(totals.values())
    return {kind: _share(tokens, whole) for kind, tokens in totals.most_common()}


def _fields(rows: list[dict[str, Any]]) -> FieldFigures:
    with_nodes = [r["shape"] for r in rows if r["shape"].get("nodes")]
    return FieldFigures(
        answers_with_nodes=len(with_nodes),
        type_fields=_share(sum(bool(s.get("type_fields")) for s in with_nodes), len(with_nodes)),
        definitions=_share(sum(bool(s.get("definitions")) for s in with_nodes), len(with_nodes)),
        call_sites=_share(sum(bool(s.get("call_sites")) for s in with_nodes), len(with_nodes)),
        attachments=_share(sum(bool(r["shape"].get("attachments")) for r in rows), len(rows)))


def _imports(conn: sqlite3.Connection, since: float) -> ImportFigures:
    rows = conn.execute("SELECT origin, outcome, input_bytes, parse_s, peak_rss_kb, store_growth"
                        " FROM usage_imports WHERE at >= ? ORDER BY id", (since,)).fetchall()
    imports = [r for r in rows if r[0] == "import" and r[1] != "reaped"]
    parsed = [r for r in imports if r[1] in ("complete", "interrupted") and r[3]]
    recoveries = Counter(r[1] for r in rows if r[1] in ("reaped", "marked_interrupted"))
    recoveries["imported_interrupted"] = sum(r[1] == "interrupted" for r in imports)
    store = conn.execute("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size"
                         ).fetchone()
    return ImportFigures(
        imports=len(imports), outcomes=dict(Counter(r[1] for r in imports)),
        input_mb=spread((r[2] or 0) / 1e6 for r in imports),
        parse_s=spread(r[3] for r in parsed),
        mb_per_s=spread((r[2] or 0) / 1e6 / r[3] for r in parsed),
        peak_rss_mb=spread(r[4] / 1024 for r in imports if r[4]),
        store_growth_mb=round(sum(r[5] or 0 for r in imports) / 1e6, 2),
        store_mb=round(store[0] / 1e6, 2) if store else None,
        recoveries={k: v for k, v in recoveries.items() if v})


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).isoformat(timespec="seconds")
