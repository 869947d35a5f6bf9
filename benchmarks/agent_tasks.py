#!/usr/bin/env python3
"""What a root cause costs an agent: calls and cl100k tokens for the 15 triage tasks of
issue 15, each reproduced by a suite in tests/data/agent/.

    python benchmarks/agent_tasks.py                    # the figures of this checkout
    python benchmarks/agent_tasks.py --json after.json  # ... and saved
    python benchmarks/agent_tasks.py --before benchmarks/agent_tasks_before.json

Each task runs robot on its suite, imports the output.xml, and makes the calls an agent
makes when it follows the tool descriptions: first the one the task calls for, then the one
the first answer points to. Every answer is counted as the MCP tool result's text the
server sends (``server._respond``), with the cl100k tokenizer (tiktoken, the test extra).
A task is solved at the first call after which every piece of its evidence (the root
cause's text, ids, values) has appeared in the answers. ``--before FILE`` prints a figures
file of another checkout (run this script with that checkout's ``src`` on PYTHONPATH,
e.g. a ``git worktree`` of an older commit) beside this one's:
benchmarks/agent_tasks_before.json was measured on 1533725, before issue 15's changes,
agent_tasks_after.json on the commit that added this script.

Targets (issue 15): every task solved in <= 2 calls and <= 1,500 tokens; recursion <= 2,000;
the 25-hit search <= 1,500.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_env import text_tokens

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "tests" / "data" / "agent"

Call = Callable[[Any, int, list[dict[str, Any]]], Any]


@dataclass
class Task:
    name: str
    suite: str
    evidence: list[str]
    calls: list[Call]
    robot_options: list[str] = field(default_factory=list)
    limit: int = 1500


def _view(view: str, selector: str | Callable[[list[dict[str, Any]]], str] | None = None,
          **options: Any) -> Call:
    def call(conn: Any, run_id: int, answers: list[dict[str, Any]]) -> Any:
        from rf_log_mcp import service

        chosen = selector(answers) if callable(selector) else selector
        return service.get_view(conn, view, run_id=run_id, selector=chosen, **options)
    return call


def _search(query: str | None, **options: Any) -> Call:
    def call(conn: Any, run_id: int, answers: list[dict[str, Any]]) -> Any:
        from rf_log_mcp import service

        return service.search_messages(conn, query, run_id=run_id, **options)
    return call


class NoLead(Exception):
    """The answers so far give the next call nothing to go on: the task is not solved."""


def _first_hit_node(answers: list[dict[str, Any]]) -> str:
    hits = answers[-1].get("hits")
    if not hits:
        raise NoLead
    return str(hits[0].get("node_id") or hits[0]["id"])


TASKS = [
    Task("fatal stop: why did Order 17 fail", "fatal",
         ["cannot reach api.example"],
         [_view("failure_path", "s1-s2-t17")]),
    Task("fatal stop: search the stop text, then its origin", "fatal",
         ["cannot reach api.example"],
         [_search("Test execution stopped due to a fatal error"),
          _view("failure_path", _first_hit_node)]),
    Task("WHILE loop hit its limit", "status.robot",
         ["did not finish within the limit"], [_search("limit")]),
    Task("infinite recursion (~150 levels)", "recursion.robot",
         ["Recursive execution stopped", "Visit"], [_view("failure_path")], limit=2000),
    Task("retry: the last attempt decided", "retry.robot",
         ["no answer on attempt 4"], [_view("failure_path")]),
    Task("parent suite setup failed", "setup",
         ["Connection refused: db.example:5432", "\"s1-k1\""],
         [_view("failure_path", "s1-s1-t2")]),
    Task("parent suite teardown failed", "teardown.robot",
         ["cleanup failed", "own failure", "\"s1-k1\""], [_view("failure_path", "s1-t2")]),
    Task("continuable failures in three iterations", "continuable.robot",
         ["pear costs -1", "plum costs 0", "kiwi costs -7", "s1-t1-k1-k2", "s1-t1-k1-k3",
          "s1-t1-k1-k5"], [_view("failure_path")]),
    Task("loop values, condition and library on the path", "context.robot",
         ["south", "$warehouse != 'north'", "Collections", "9"], [_view("failure_path")]),
    Task("where the failing test is written: line, tags, doc", "context.robot",
         ["\"lineno\":6", "nightly", "Every warehouse reports"], [_view("failure_path")]),
    Task("a test with two continued failures", "status.robot",
         ["1 != 2", "second check"], [_view("failure_path", "s1-t2")]),
    Task("exit-on-failure: what stopped the rest", "warns.robot",
         ["boom"], [_view("failure_path", "s1-t2")],
         robot_options=["--exitonfailure"]),
    Task("run errors: 14 identical warnings", "warns.robot",
         ["deprecated keyword used", "14", "another warning"], [_view("summary")]),
    # 30 repeats of one warning: since v0.5 one hit with its count and first and last
    # samples (search folds repeats); the first 25 one by one cost a second call (unfold_cursor)
    Task("25-hit search", "search.robot",
         ["queue depth 0", "queue depth 29", '"count":30'], [_search("timeout", page_size=25)]),
    Task("summary of a stopped run: one cause, 40 tests", "fatal",
         ["cannot reach api.example", "40"], [_view("summary")]),
]

EXTRA_SUITES = {"teardown.robot": (
    "*** Settings ***\nSuite Teardown    Fail    cleanup failed\n\n*** Test Cases ***\n"
    "Passes\n    No Operation\nFails\n    Fail    own failure\n")}


def _text(response: Any) -> str:
    from rf_log_mcp.server import _respond

    return str(_respond(response).content[0].text)


def run_task(task: Task, workdir: Path) -> dict[str, Any]:
    from rf_log_listener.importers import import_result
    from rf_log_listener.store import open_store

    suite = SUITES / task.suite
    if task.suite in EXTRA_SUITES:
        suite = workdir / task.suite
        suite.write_text(EXTRA_SUITES[task.suite])
    output = workdir / "output.xml"
    subprocess.run([sys.executable, "-m", "robot", "--log", "NONE", "--report", "NONE",
                    "--console", "none", "--output", str(output), *task.robot_options, str(suite)],
                   cwd=workdir, check=False)
    conn = open_store(workdir / "store.sqlite3")
    run_id = import_result(conn, output, stable_window=0).run_id
    answers: list[dict[str, Any]] = []
    seen, tokens, figures = "", 0, []
    for number, call in enumerate(task.calls, 1):
        try:
            text = _text(call(conn, run_id, answers))
        except NoLead:
            break
        answers.append(json.loads(text))
        seen += text
        tokens += text_tokens(text)
        figures.append(tokens)
        if all(piece in seen for piece in task.evidence):
            return {"task": task.name, "solved": True, "calls": number, "tokens": tokens,
                    "limit": task.limit}
    missing = [piece for piece in task.evidence if piece not in seen]
    return {"task": task.name, "solved": False, "calls": len(answers), "tokens": tokens,
            "limit": task.limit, "missing": missing}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="save the figures here")
    parser.add_argument("--before", type=Path, help="figures of another checkout to print beside")
    options = parser.parse_args()
    results = []
    for task in TASKS:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(run_task(task, Path(tmp)))
    before = {r["task"]: r for r in json.loads(options.before.read_text())} if options.before else {}
    print(f"{'task':52} {'before':>16} {'after':>16}  target")
    for result in results:
        print(f"{result['task'][:52]:52} {_cell(before.get(result['task'])):>16}"
              f" {_cell(result):>16}  <= 2 calls, <= {result['limit']:,}")
    within = sum(r["solved"] and r["calls"] <= 2 and r["tokens"] <= r["limit"] for r in results)
    print(f"\n{within} of {len(results)} tasks within target")
    if options.json:
        options.json.write_text(json.dumps(results, indent=1))
    return 0


def _cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return "-"
    if not result["solved"]:
        return f"unsolved {result['calls']}/{result['tokens']:,}"
    return f"{result['calls']} / {result['tokens']:,}"


if __name__ == "__main__":
    sys.exit(main())
