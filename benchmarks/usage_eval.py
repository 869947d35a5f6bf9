#!/usr/bin/env python3
"""The v0.5 evaluation: scripted agent sessions replayed over the MCP server (stdio, the
official client) on a corpus of failing runs, then what the usage record says about them
(`rf-log-mcp usage`), next to the roadmap's baseline.

    python benchmarks/usage_eval.py                   # the corpus below
    python benchmarks/usage_eval.py --outputs DIR     # every output*.xml / *.json under DIR
    python benchmarks/usage_eval.py --json FILE       # ... and the figures saved
    python benchmarks/usage_eval.py --before FILE     # a saved figures file beside these

The corpus: the suites in benchmarks/eval/suites, written to fail the way product tests
fail (retries with Wait Until Keyword Succeeds, errors three user keywords down, one bad
iteration in a long loop, setup and teardown failures, HTTP-like error bodies, long TRACE
payloads, a job polled 150 times, a 300 KB page source), the project's demo suite, and the
committed RF 7.5 fixture. Each run is imported with parse_result and triaged as the server's
instructions recommend: summary, failure paths, the steps around the deepest failure, tree
expansions down the failing branch and into loops, searches scoped to the test and run-wide.
A cut message is read whole and a truncated answer's next page followed, as an agent does.

Two strategies: ``v04`` uses only what the v0.4 tools offer (tree page by page, a cut message
looked up by search); ``v05`` also uses what v0.5 added (tree_snapshot, message parts,
search group_by). Repeated-message folding is on for both (it is not a choice): the
figures of a checkout before it are the --before file (benchmarks/usage_eval_before.json:
commit e542edf, the usage record before the v0.5 additions, with the record's two later
fixes, sessions and targets, applied so its figures compare; replayed with --keep and
reported by this checkout's usage_report).

Target (issue 20): answers cut by message_truncated or budget_truncated <= 10 %; page
truncation (paging by design) reported apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "benchmarks" / "eval" / "suites"
TRACE_SUITES = {"trace.robot"}
sys.path.insert(0, str(ROOT / "src"))


def build_corpus(folder: Path) -> list[Path]:
    """Run robot on every corpus suite (and the demo); the output files."""
    outputs = []
    suites = [*sorted(SUITES.glob("*.robot")), SUITES / "teardowns",
              ROOT / "src" / "rf_log_mcp" / "demo" / "shop"]
    for suite in suites:
        out = folder / suite.stem
        options = ["--loglevel", "TRACE"] if suite.name in TRACE_SUITES else []
        subprocess.run([sys.executable, "-m", "robot", "--output", "output.xml", "--log", "NONE",
                        "--report", "NONE", "--outputdir", str(out), "--console", "none",
                        *options, str(suite)], check=False, cwd=suite.parent)
        outputs.append(out / "output.xml")
    fixture = ROOT / "tests" / "fixtures" / "results" / "7.5" / "output.xml"
    if fixture.exists():
        outputs.append(fixture)
    return outputs


def found_outputs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".xml", ".json")
                  and p.name.startswith(("output", "rebot")))


class Agent:
    """One scripted triage session over one MCP client."""

    def __init__(self, client: Any, strategy: str) -> None:
        self.client, self.strategy = client, strategy
        self.calls = 0

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        self.calls += 1
        result = await self.client.call_tool(tool, {k: v for k, v in arguments.items()
                                                    if v is not None})
        return result.structured_content or {}

    async def view(self, run_id: int, view: str, **arguments: Any) -> dict[str, Any]:
        return await self.call("get_view", run_id=run_id, view=view, **arguments)

    async def triage(self, path: Path) -> None:
        imported = await self.call("parse_result", path=str(path))
        run_id = imported.get("run_id")
        if run_id is None:
            return
        summary = (await self.view(run_id, "summary")).get("summary") or {}
        tests = [t["node_id"] for t in summary.get("failed_tests", [])]
        for group in summary.get("failure_groups") or []:
            tests.extend(group["test_ids"][:2])
        words: list[str] = []
        for test in list(dict.fromkeys(tests))[:6]:
            words.extend(await self.test(run_id, test))
        await self.call("search_messages", run_id=run_id, min_level="WARN")
        if words:
            await self.call("search_messages", run_id=run_id, query=words[0])

    async def test(self, run_id: int, test: str) -> list[str]:
        answer = await self.view(run_id, "failure_path", selector=test)
        steps = list((answer.get("failure_path") or {}).get("path") or [])
        pages = 1
        while answer.get("budget_truncated") and answer.get("next_cursor") and pages < 3:
            answer = await self.view(run_id, "failure_path", selector=test,
                                     cursor=answer["next_cursor"])
            steps.extend((answer.get("failure_path") or {}).get("path") or [])
            pages += 1
        nodes = [s for s in steps if "node_id" in s and "type" in s]
        if not nodes:
            return []
        deepest = nodes[-1]
        await self.view(run_id, "step_window", selector=deepest["node_id"])
        loops = [n["node_id"] for n in nodes if n["type"] in ("FOR", "WHILE")]
        await self.expand(run_id, test, loops)
        message = deepest.get("message") or next(
            (m["text"] for m in deepest.get("messages") or [] if m["level"] == "FAIL"), "")
        for step in reversed(nodes):
            for logged in step.get("messages") or []:
                if "characters cut]" in logged["text"]:
                    await self.read_whole(run_id, logged["id"], step["node_id"], logged["text"])
                    break
        word = _word(message)
        if word:
            await self.call("search_messages", run_id=run_id, query=word, selector=test,
                            group_by="iteration" if loops and self.strategy == "v05" else None)
        return [word] if word else []

    async def expand(self, run_id: int, test: str, loops: list[str]) -> None:
        """The failing branch below the test, and the loops on it."""
        if self.strategy == "v05":
            await self.view(run_id, "tree_snapshot", selector=test, projection="failures",
                            max_depth=3)
        else:
            selector: str | None = test
            for _ in range(3):  # down the failing branch, a level at a time
                tree = (await self.view(run_id, "tree", selector=selector,
                                        projection="failures")).get("tree") or {}
                failing = [c for c in tree.get("children", []) if c.get("has_children")]
                if not failing:
                    break
                selector = failing[0]["node_id"]
        for loop in loops[:2]:
            tree = (await self.view(run_id, "tree", selector=loop)).get("tree") or {}
            bad = [c for c in tree.get("children", []) if c.get("type") == "ITERATION"
                   and c.get("status") == "FAIL"]
            if bad:
                await self.view(run_id, "tree", selector=bad[0]["node_id"])

    async def read_whole(self, run_id: int, message_id: str, node_id: str, cut: str) -> None:
        """A message shown cut: v0.5 reads it in parts; v0.4 could only search inside it."""
        if self.strategy == "v05":
            answer = await self.view(run_id, "message", selector=message_id)
            for _ in range(2):
                if not answer.get("next_cursor"):
                    break
                answer = await self.view(run_id, "message", selector=message_id,
                                         cursor=answer["next_cursor"])
        else:
            word = _word(cut.split("… [")[-1]) or _word(cut)
            if word:
                await self.call("search_messages", run_id=run_id, query=word, selector=node_id,
                                scope="node")


def _word(text: str) -> str | None:
    """A distinctive word of a message to search for (the longest, letters first)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9_.:-]{3,}", text or "") if "*" not in w]
    return max(words, key=len)[:40] if words else None


async def replay(outputs: list[Path], strategy: str, store: Path) -> int:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    roots = sorted({str(p.parent) for p in outputs})
    params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp"],
                                   env={"RF_LOG_MCP_DB": str(store), "PYTHONPATH": str(ROOT / "src"),
                                        "RF_LOG_MCP_ALLOWED_ROOTS": ":".join(roots)})
    async with Client(params) as client:
        agent = Agent(client, strategy)
        for path in outputs:
            await agent.triage(path)
    return agent.calls


def figures(store: Path) -> dict[str, Any]:
    from rf_log_listener.store import open_store
    from rf_log_mcp.usage_report import report

    return report(open_store(store), source="mcp").model_dump(mode="json", exclude_none=True)


def print_side_by_side(results: dict[str, dict[str, Any]]) -> None:
    names = list(results)
    print(f"\n{'':<34}" + "".join(f"{n:>16}" for n in names))

    def line(label: str, pick: Any) -> None:
        cells = []
        for name in names:
            try:
                cells.append(str(pick(results[name])))
            except (KeyError, TypeError, IndexError, StopIteration):
                cells.append("-")
        print(f"{label:<34}" + "".join(f"{c:>16}" for c in cells))

    line("calls", lambda r: r["calls"])
    line("answers cut (message/budget)", lambda r: f"{r['truncation']['cut']} "
         f"({r['truncation']['cut_rate']:.1%})")
    line("  cut and followed on target", lambda r: r["truncation"]["followed_on_same_target"])
    line("answers paged (by design)", lambda r: r["truncation"]["page_truncated"])
    line("tokens in all", lambda r: sum(t["tokens_total"] for t in r["tools"]))
    tools = sorted({t["tool"] for r in results.values() for t in r["tools"]})
    for tool in tools:
        line(f"{tool} calls / cut", lambda r, tool=tool: next(
            f"{t['calls']} / {t['cut']:.0%}" for t in r["tools"] if t["tool"] == tool))
        line("  tokens p50/p95/max", lambda r, tool=tool: next(
            f"{t['tokens']['p50']:g}/{t['tokens']['p95']:g}/{t['tokens']['max']:g}"
            for t in r["tools"] if t["tool"] == tool))
    line("loop pages: items before folding", lambda r: r["folding"]["items_before_folding"])
    line("loop pages: items after folding", lambda r: r["folding"]["items_after_folding"])
    line("answers reaching failed iteration", lambda r: r["folding"]["calls_reaching_failed_iteration"])
    line("search hits/page scoped p50", lambda r: r["search"]["scoped"]["hits"].get("p50", "-"))
    line("search hits/page run-wide p50", lambda r: r["search"]["run_wide"]["hits"].get("p50", "-"))
    line("repeated messages folded", lambda r: r["search"]["repeats_folded"])
    line("step_window wide", lambda r: f"{r['step_window']['wide']} of {r['step_window']['calls']}")
    print("\nbaseline (roadmap, v0.4 era): 417 of 853 structured answers truncated (48.9 %), "
          "every kind counted; summary 43/89, failure_path 41/95, step_window 117/133, "
          "search_messages 216/436")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outputs", type=Path, help="a folder of output files instead of the corpus")
    parser.add_argument("--strategy", choices=("v04", "v05", "both"), default="both")
    parser.add_argument("--json", type=Path, help="save the figures here")
    parser.add_argument("--before", type=Path, help="a saved figures file to print beside")
    parser.add_argument("--keep", type=Path, help="keep the stores (STRATEGY.sqlite3) in this folder")
    args = parser.parse_args()
    from rf_log_mcp import render

    with tempfile.TemporaryDirectory(prefix="rf-usage-eval-") as tmp:
        outputs = found_outputs(args.outputs) if args.outputs else build_corpus(Path(tmp))
        print(f"{len(outputs)} result files")
        results: dict[str, dict[str, Any]] = {}
        if args.before:
            results.update({f"before:{k}": v for k, v in json.loads(args.before.read_text()).items()})
        for strategy in (("v04", "v05") if args.strategy == "both" else (args.strategy,)):
            store = (args.keep or Path(tmp)) / f"{strategy}.sqlite3"
            store.unlink(missing_ok=True)
            asyncio.run(replay(outputs, strategy, store))
            results[strategy] = figures(store)
            print(f"\n== strategy {strategy}: rf-log-mcp usage")
            from rf_log_mcp.usage_report import UsageReport

            render.figures(UsageReport.model_validate(results[strategy]), render.Style())
        if args.json:
            args.json.write_text(json.dumps({k: v for k, v in results.items()
                                             if not k.startswith("before:")}, indent=1))
        print_side_by_side(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
