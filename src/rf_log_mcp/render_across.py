"""The text the ``rf-log-mcp`` commands across runs print (``diff``, ``history``, ``flaky``)
and the usage report's (``usage``): read side, rendering, as ``render`` for one run's views."""

from __future__ import annotations

from .answer import Answer
from .render import context_text, page_ending, seen_text
from .render_text import Style

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any


def _ref(run: Any) -> str:
    return (f"run {run.run} {run.name or ''} {run.start_time or ''}"
            f" {context_text(run.label, run.branch, run.commit)}").rstrip()


def compare(response: Answer, style: Style) -> None:
    assert response.head is not None and response.base is not None
    print(f"{style('head', 'bold')}: {_ref(response.head)}")
    print(f"{style('base', 'bold')}: {_ref(response.base)}  ({response.base_reason})")
    counts = response.counts or {}
    print("  " + ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items() if n))
    for item in response.changes:
        side = item.head or item.base
        assert side is not None
        change = item.change.replace("_", " ")
        print(f"  {style(f'{change:<22}', 'FAIL' if 'fail' in item.change else 'dim')}"
              f" {item.test}  ({side.node_id})")
        if item.change in ("slower", "faster") and item.head and item.base:
            print(f"    {item.base.elapsed:.2f} s -> {item.head.elapsed:.2f} s")
        if item.head and item.head.signature:
            print(f"    {item.head.signature}")
        if item.base and item.base.signature and item.change == "still_failing_changed":
            print(style(f"    was: {item.base.signature}", "dim"))
        if item.signature_seen:
            print(style(f"    {seen_text(item.signature_seen)}", "dim"))
    page_ending(response, style, "more")


def _when(start_time: str | None) -> str:
    """`` (start time)``, or nothing for a run without one (an output rebot merged)."""
    return f" ({start_time})" if start_time else ""


def history(response: Answer, style: Style) -> None:
    print(f"{style(response.test, 'bold')}: {response.runs_total} finished run(s)")
    if response.streak:
        streak = response.streak
        print(f"  {style(streak.status, streak.status)} in the last {streak.runs} run(s), since"
              f" run {streak.since.run_id}{_when(streak.since.start_time)}")
    if response.last_pass:
        print(f"  last pass: run {response.last_pass.run_id}{_when(response.last_pass.start_time)}")
    flaky = response.flakiness
    if flaky and flaky.flip_rate is not None:
        print(f"  flip rate {flaky.flip_rate:.2f}: {flaky.flips} flip(s) in {flaky.runs} runs")
    for run in response.runs:
        elapsed = f"{run.elapsed:.2f} s" if run.elapsed is not None else "-"
        print(f"  {run.run:>6} {style(f'{run.status:<5}', run.status)} {elapsed:>9}"
              f"  {run.start_time or ''}  {run.node_id}  {context_text(run.label, run.branch)}")
        if run.signature:
            print(style(f"         {run.signature}", "dim"))
    page_ending(response, style, "older runs")


def flaky(response: Answer, style: Style) -> None:
    print(f"{style(response.suite, 'bold')}: {response.flaky_count} of {response.tests_seen}"
          f" tests flipped in the last {response.runs_in_window} run(s)"
          f" ({response.oldest_run} .. {response.newest_run})")
    for test in response.tests:
        print(f"  {test.flip_rate:5.2f}  {test.flips:>3} flips in {test.runs:>3} runs"
              f"  {test.passed:>3} passed {test.failed:>3} failed  last"
              f" {style(test.last_status, test.last_status)}  {test.test}")
    page_ending(response, style, "more")


def figures(report: Any, style: Style) -> None:
    """``rf-log-mcp usage``: the tools as a table, then each question's figures, one line
    each; a spread as its count, p50, p95 and max."""
    data = report.model_dump(mode="json", exclude_none=True)
    print(f"{data['calls']} calls in {data['sessions']} sessions "
          f"({', '.join(f'{k} {v}' for k, v in data['by_source'].items()) or '-'}), "
          f"{data.get('since') or 'all time'} to {data['until']}"
          + ("" if data["recording"] else style("  (recording is off here)", "dim")))
    print(style(f"{'tool / view':<26}{'calls':>6}{'tokens p50/p95/max':>22}{'cut':>7}"
                f"{'paged':>7}{'pages max':>10}{'ms p50':>8}", "bold"))
    for tool in data["tools"]:
        tokens = tool["tokens"]
        print(f"{tool['tool']:<26}{tool['calls']:>6}"
              f"{_spread_text(tokens):>22}{tool['cut']:>7.0%}{tool['page_truncated']:>7.0%}"
              f"{tool['pages'].get('max', 0):>10.0f}{tool['duration_ms'].get('p50', 0):>8.1f}"
              + (f"  errors {tool['errors']}" if tool.get("errors") else ""))
    for key in ("truncation", "tree", "folding", "step_window", "search", "volume", "fields",
                "imports"):
        print(style(key.replace("_", " "), "bold"))
        _figure_lines(data[key], "  ")


def _spread_text(spread: dict[str, Any]) -> str:
    if not spread.get("count"):
        return "-"
    return f"{spread['p50']:g}/{spread['p95']:g}/{spread['max']:g}"


def _figure_lines(value: dict[str, Any], indent: str) -> None:
    for key, item in value.items():
        name = key.replace("_", " ")
        if isinstance(item, dict) and "count" in item and set(item) <= {"count", "p50", "p95", "max"}:
            print(f"{indent}{name}: {item['count']}" + (
                f" (p50/p95/max {_spread_text(item)})" if item["count"] else ""))
        elif isinstance(item, dict) and any(isinstance(v, dict) for v in item.values()):
            print(f"{indent}{name}:")
            _figure_lines(item, indent + "  ")
        elif isinstance(item, dict):
            print(f"{indent}{name}: " + (", ".join(f"{k} {v}" for k, v in item.items()) or "-"))
        else:
            print(f"{indent}{name}: {item}")
