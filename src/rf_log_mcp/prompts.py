"""MCP prompts and argument completions (read side, MCP): the flows people start by hand,
which hosts show as slash commands. A prompt assembles the tool calls a flow starts with and
the data they return, and says which calls come next; it judges no cause. Completions offer
run ids (with their label, status and name), test and node ids of a run, views and
projections."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from rf_log_listener.errors import ResultError
from rf_log_listener.store import FAILED_STARTS, VISIBLE_RUNS, mark_dead_live_runs, run_base

from . import service
from .views.common import RUN_NOT_FOUND

VIEWS = ("summary", "failure_path", "step_window", "tree")
PROJECTIONS = ("all", "failures", "warnings")
MAX_VALUES = 100  # the protocol's limit per completion
SEPARATOR = " · "  # a completed prompt value: "12 · nightly · FAIL · Shop"; the id comes first


def leading(value: str | None) -> str:
    """The id at the start of a completed value (``12 · nightly · FAIL`` -> ``12``)."""
    return (value or "").split(SEPARATOR, 1)[0].strip()


def _json(response: Any) -> str:
    return json.dumps(response, ensure_ascii=False, separators=(",", ":"))


def _run_id(conn: sqlite3.Connection, run: str | None, failed_only: bool = False) -> int:
    """The run a prompt argument names, or the newest (failed) run."""
    if leading(run):
        try:
            return int(leading(run))
        except ValueError:
            raise ResultError(RUN_NOT_FOUND, f"No run {run!r}: run ids are numbers.",
                              "Take run ids from list_runs.") from None
    mark_dead_live_runs(conn)
    wanted = " AND (result_status = 'FAIL' OR failed > 0)" if failed_only else ""
    row = conn.execute(f"SELECT run_id FROM runs WHERE {VISIBLE_RUNS}{wanted}"
                       " ORDER BY run_id DESC LIMIT 1").fetchone()
    if row is None:
        raise ResultError(RUN_NOT_FOUND, "The store has no failed run." if failed_only else
                          "The store has no run.",
                          "Import a result file with parse_result, or run robot with "
                          "--listener rf_log_listener.")
    return int(row[0])


def triage(conn: sqlite3.Connection, run: str | None) -> str:
    """The newest failed run (or ``run``): its summary and its first failure path."""
    try:
        run_id = _run_id(conn, run, failed_only=True)
    except ResultError as err:
        return f"Nothing to triage: {err.message} {err.hint or ''}".strip()
    summary = service.get_view(conn, "summary", run_id=run_id)
    first = service.get_view(conn, "failure_path", run_id=run_id)
    # what is new since the previous run of the suite, when there is one
    changed = service.compare_runs(conn, str(run_id), changes=[
        "new_failure", "still_failing_changed", "fixed"], page_size=10)
    history = (f"compare_runs(head=\"{run_id}\", changes=[\"new_failure\", "
               f"\"still_failing_changed\", \"fixed\"]) returned:\n{_json(changed)}"
               if changed.ok else "There is no earlier complete run of this suite to compare with.")
    return "\n\n".join([
        f"Triage Robot Framework run {run_id} with the rf-log-mcp tools. Find each failed "
        "test's root cause from the evidence below; say which failures share one cause and "
        "which are new since the previous run.",
        f"get_view(run_id={run_id}, view=\"summary\") returned:\n{_json(summary)}",
        f"get_view(run_id={run_id}, view=\"failure_path\") (the first failure) returned:\n"
        f"{_json(first)}",
        history,
        "Next calls: get_view(view=\"failure_path\", cursor=<next_cursor>) or with "
        "selector=<test id> for the other failures; get_view(view=\"step_window\", "
        "selector=<step id>) for the steps around one; search_messages(run_id, query) for a "
        "text; get_attachment(run_id, message_id, index) for a screenshot listed under "
        "attachments; test_history(test) for one test across runs (did it fail before, since "
        "when); get_view(view=\"summary\", selector=<tests_selector>) for one failure "
        "group's tests.",
    ])


def explain_test(conn: sqlite3.Connection, run: str, test: str) -> str:
    """One failed test: its failure path and the steps around its deepest failing step."""
    try:
        run_id = _run_id(conn, run)
    except ResultError as err:
        return f"{err.message} {err.hint or ''}".strip()
    test_id = leading(test)
    path = service.get_view(conn, "failure_path", run_id=run_id, selector=test_id)
    parts = [f"Explain why test {test_id} of Robot Framework run {run_id} failed, from the "
             "evidence below (rf-log-mcp tool answers).",
             f"get_view(run_id={run_id}, view=\"failure_path\", selector=\"{test_id}\") "
             f"returned:\n{_json(path)}"]
    steps = [s for s in (path.failure_path.path if path.failure_path else [])
             if getattr(s, "node_id", None)]
    if steps:
        deepest = steps[-1].node_id  # type: ignore[union-attr]
        window = service.get_view(conn, "step_window", run_id=run_id, selector=deepest,
                                  page_size=10)
        parts.append(f"get_view(run_id={run_id}, view=\"step_window\", selector=\"{deepest}\", "
                     f"page_size=10) returned:\n{_json(window)}")
    parts.append("Next calls: search_messages(run_id, selector=<test id>, scope=\"test\", "
                 "min_level=\"INFO\") for the test's log; get_view(view=\"tree\", "
                 "selector=<node id>) to open a step.")
    return "\n\n".join(parts)


def view_run(conn: sqlite3.Connection, run: str, view: str, selector: str | None,
             projection: str | None) -> str:
    """One view of a run, as get_view answers it."""
    try:
        run_id = _run_id(conn, run)
    except ResultError as err:
        return f"{err.message} {err.hint or ''}".strip()
    chosen = leading(projection) or "all"
    response = service.get_view(conn, leading(view) or "summary", run_id=run_id,  # type: ignore[arg-type]
                                selector=leading(selector) or None,
                                projection=chosen)  # type: ignore[arg-type]
    return (f"get_view(run_id={run_id}, view=\"{leading(view) or 'summary'}\", selector="
            f"{json.dumps(leading(selector) or None)}, projection=\"{chosen}\") returned:\n"
            f"{_json(response)}")


def complete(conn: sqlite3.Connection, argument: str, value: str,
             context: dict[str, str] | None, labelled: bool) -> tuple[list[str], bool]:
    """Values for ``argument`` that start with ``value`` (at most MAX_VALUES), and whether
    there are more. ``labelled`` (prompt arguments, free text): run and test values say what
    they are."""
    if argument == "view":
        return [v for v in VIEWS if v.startswith(value)], False
    if argument == "projection":
        return [p for p in PROJECTIONS if p.startswith(value)], False
    if argument in ("run", "run_id"):
        return _runs(conn, leading(value), labelled)
    run = leading((context or {}).get("run_id") or (context or {}).get("run"))
    if not run.isdigit():
        return [], False
    if argument in ("test", "test_id"):
        return _tests(conn, int(run), leading(value), labelled)
    if argument in ("selector", "node_id"):
        return _shown(_by_id(conn, int(run), leading(value), "1"), labelled)
    return [], False


def _runs(conn: sqlite3.Connection, prefix: str, labelled: bool) -> tuple[list[str], bool]:
    rows = conn.execute(
        f"SELECT run_id, label, coalesce(result_status, status), name FROM runs WHERE"
        f" {VISIBLE_RUNS} AND CAST(run_id AS TEXT) LIKE ? ORDER BY run_id DESC LIMIT ?",
        (f"{prefix}%", MAX_VALUES + 1)).fetchall()
    values = [SEPARATOR.join(str(part) for part in row if part) if labelled else str(row[0])
              for row in rows[:MAX_VALUES]]
    return values, len(rows) > MAX_VALUES


def _tests(conn: sqlite3.Connection, run_id: int, prefix: str,
           labelled: bool) -> tuple[list[str], bool]:
    """Failed tests first (the partial index of failures), then the others in id order."""
    base = run_base(run_id)
    failed = [row for row in conn.execute(
        f"SELECT node_id, name, status FROM nodes INDEXED BY nodes_failed WHERE key >= ?"
        f" AND key < ? AND {FAILED_STARTS} AND type = 'TEST' ORDER BY key",
        (base, run_base(run_id + 1))) if row[0].startswith(prefix)]
    rows = failed[:MAX_VALUES + 1]
    if len(rows) <= MAX_VALUES:
        seen = {row[0] for row in rows}
        rows += [row for row in _by_id(conn, run_id, prefix, "type = 'TEST'") if row[0] not in seen]
    return _shown(rows, labelled)


def _by_id(conn: sqlite3.Connection, run_id: int, prefix: str,
           condition: str) -> list[tuple[str, str, str]]:
    """Nodes of the run whose id starts with ``prefix``, in id order (the id index), the
    first MAX_VALUES + 1."""
    return conn.execute(
        f"SELECT node_id, name, status FROM nodes WHERE run_id = ? AND node_id >= ?"
        f" AND node_id < ? AND {condition} ORDER BY node_id LIMIT ?",
        (run_id, prefix, prefix + "\U0010ffff", MAX_VALUES + 1)).fetchall()


def _shown(rows: list[tuple[str, str, str]], labelled: bool) -> tuple[list[str], bool]:
    values = [SEPARATOR.join(p for p in row if p) if labelled else row[0]
              for row in rows[:MAX_VALUES]]
    return values, len(rows) > MAX_VALUES
