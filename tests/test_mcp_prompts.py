"""Prompts and argument completions (issue 18) over stdio with the official client: the
flows people start by hand assemble tool answers; completions offer runs, tests, nodes,
views and projections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.types import PromptReference, ResourceTemplateReference
from test_mcp_server import XML, call, server


def _data(text: str, call_text: str) -> dict:
    """The JSON a prompt quotes after ``call_text`` ... returned:"""
    after = text.split(call_text, 1)[1].split("returned:\n", 1)[1]
    return json.loads(after.split("\n\n", 1)[0])


@pytest.mark.anyio
async def test_prompts_assemble_the_calls_a_flow_starts_with(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        empty = await client.get_prompt("triage", {})
        assert "Nothing to triage" in empty.messages[0].content.text  # type: ignore[union-attr]
        run_id = (await call(client, "parse_result", path=str(XML)))["run_id"]
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(listed) == {"triage", "explain_test", "view_run"}
        assert [a.name for a in listed["explain_test"].arguments or []] == ["run_id", "test_id"]

        triage = (await client.get_prompt("triage", {})).messages[0].content.text  # type: ignore[union-attr]
        summary = _data(triage, 'view="summary")')
        direct = await call(client, "get_view", run_id=run_id, view="summary")
        assert summary["summary"] == direct["summary"] and summary["run_id"] == run_id
        path = _data(triage, 'view="failure_path")')
        assert path["failure_path"]["start_id"] == direct["summary"]["failed_tests"][0]["node_id"]
        assert "search_messages" in triage and "get_attachment" in triage

        explained = (await client.get_prompt("explain_test", {
            "run_id": f"{run_id} · FAIL · Fixture", "test_id": "s1-s1-t2 · Failing Assertion"})
        ).messages[0].content.text  # type: ignore[union-attr]
        path = _data(explained, 'selector="s1-s1-t2")')
        assert path["failure_path"]["path"][-1]["node_id"] == "s1-s1-t2-k3-k1-k2"
        window = _data(explained, 'view="step_window"')
        assert window["step_window"]["center_id"] == "s1-s1-t2-k3-k1-k2"
        by_name = (await client.get_prompt("explain_test", {  # as a user names it
            "run_id": str(run_id), "test_id": "failing assertion"})).messages[0].content.text  # type: ignore[union-attr]
        assert _data(by_name, 'selector="failing assertion")') == path

        view = (await client.get_prompt("view_run", {
            "run_id": str(run_id), "view": "tree", "selector": "s1-s1", "projection": "failures"})
        ).messages[0].content.text  # type: ignore[union-attr]
        tree = _data(view, 'view="tree"')
        assert tree["tree"]["projection"] == "failures"
        assert all(c.get("status") == "FAIL" or c.get("failed_descendant_count")
                   for c in tree["tree"]["children"])
        missing = (await client.get_prompt("explain_test", {"run_id": "x", "test_id": "s1"})
                   ).messages[0].content.text  # type: ignore[union-attr]
        assert "RUN_NOT_FOUND" not in missing and "run ids are numbers" in missing


@pytest.mark.anyio
async def test_completions_offer_runs_tests_nodes_views_and_projections(tmp_path: Path) -> None:
    async with server(tmp_path) as client:
        first = (await call(client, "parse_result", path=str(XML)))["run_id"]
        prompt = PromptReference(name="explain_test")
        runs = (await client.complete(prompt, {"name": "run_id", "value": ""})).completion
        assert runs.values == [f"{first} · FAIL · Fixture"] and not runs.has_more
        template = ResourceTemplateReference(uri="rf://runs/{run_id}/tests/{test_id}")
        plain = (await client.complete(template, {"name": "run_id", "value": ""})).completion
        assert plain.values == [str(first)]
        tests = (await client.complete(template, {"name": "test_id", "value": "s1-s1-t"},
                                       {"run_id": str(first)})).completion
        assert tests.values[0] == "s1-s1-t2"  # failed tests first
        assert set(tests.values) >= {"s1-s1-t1", "s1-s1-t2"} and all(
            v.startswith("s1-s1-t") for v in tests.values)
        labelled = (await client.complete(prompt, {"name": "test_id", "value": "s1-s1-t2"},
                                          {"run_id": f"{first} · FAIL"})).completion
        assert labelled.values[0] == "s1-s1-t2 · Failing Assertion · FAIL"
        view = PromptReference(name="view_run")
        nodes = (await client.complete(view, {"name": "selector", "value": "s1-s1-t2-k3"},
                                       {"run_id": str(first)})).completion
        assert [v.split(" · ")[0] for v in nodes.values][:2] == ["s1-s1-t2-k3", "s1-s1-t2-k3-k1"]
        views = (await client.complete(view, {"name": "view", "value": "s"})).completion
        assert views.values == ["summary", "step_window"]
        projections = (await client.complete(view, {"name": "projection", "value": ""})).completion
        assert projections.values == ["all", "failures", "warnings"]
        nothing = (await client.complete(template, {"name": "test_id", "value": ""})).completion
        assert nothing.values == []  # no run chosen yet
