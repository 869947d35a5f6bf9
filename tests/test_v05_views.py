"""What v0.5 added on the roadmap's deferred list: a message read in parts, a bounded tree
snapshot, search hits grouped by iteration or node, repeated messages folded; and the
Agent Skill. Real robot runs (the listener live, so the run knows its secret values),
real stores, the service, the CLI and the MCP server over stdio."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from robot_runs import robot
from test_mcp_server import call, server

from rf_log_listener.store import open_store, store_file
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "v05" / "triage.robot"
SECRET = "tok-4f9a8c7e21d3b6a0"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[sqlite3.Connection, int, Path]:
    """The suite run live with the listener: (store, run id, output.xml)."""
    tmp = tmp_path_factory.mktemp("v05")
    db = tmp / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--outputdir", str(tmp),
                 str(SUITE), cwd=tmp)
    assert done.returncode == 3, done.stderr  # three failing tests
    conn = open_store(db)
    return conn, conn.execute("SELECT max(run_id) FROM runs").fetchone()[0], tmp / "output.xml"


def dumped(response: Any) -> dict[str, Any]:
    assert response.ok, response.error
    return response


def test_a_long_message_is_read_whole_in_parts_each_masked_and_within_budget(live: Any) -> None:
    conn, run_id, output = live
    from robot.api import ExecutionResult

    logged = ExecutionResult(str(output)).suite.tests[2].body[2].body[0].message
    assert SECRET in logged and len(logged) > 20_000
    parts, cursor = [], None
    while True:
        answer = dumped(service.get_view(conn, "message", run_id=run_id, selector="s1-t3-k3-m1",
                                         cursor=cursor, budget=2000))
        part = answer["message"]
        assert answer["estimated_tokens"] <= 2000 and not answer["message_truncated"]
        assert SECRET not in part["text"] and "tok-4f9a" not in part["text"]
        assert part["offset"] == (parts[-1]["end"] if parts else 0) and part["length"] == len(logged)
        parts.append(part)
        assert ("***" in part["text"]) == (answer["masked_values"] > 0)  # the count says it
        cursor = answer.get("next_cursor")
        if not cursor:
            break
        assert answer["page_truncated"]
    assert len(parts) > 20
    # every part ends where masking the two sides apart equals masking them together
    assert "".join(p["text"] for p in parts) == logged.replace(SECRET, "***")
    # a node id reads its status message; an unknown id is a structured error
    status = dumped(service.get_view(conn, "message", run_id=run_id, selector="s1-t1"))["message"]
    assert status["kind"] == "status" and status["text"] == "job 77f3a ended FAILED after 60 polls"
    missing = service.get_view(conn, "message", run_id=run_id, selector="s1-t1-k9-m1")
    assert not missing.ok and missing.error is not None and missing.error.code == "NODE_NOT_FOUND"
    nothing = service.get_view(conn, "message", run_id=run_id, selector="s1-t1-k2-m7")
    assert not nothing.ok and nothing.error is not None and nothing.error.code == "MESSAGE_NOT_FOUND"


def test_repeated_messages_fold_with_first_and_last_samples_and_unfold_by_cursor(live: Any) -> None:
    conn, run_id, _ = live
    answer = dumped(service.search_messages(conn, "status of job", run_id=run_id))
    (hit,) = answer["hits"]
    assert hit["count"] == 60 and hit["id"] == "s1-t1-k1-k1-k1-k3-m1"
    assert hit["text"] == "status of job 77f3a: RUNNING (poll 1, 1.5 s)"
    assert hit["last"]["id"] == "s1-t1-k1-k60-k1-k3-m1"
    assert hit["last"]["text"] == "status of job 77f3a: RUNNING (poll 60, 60.5 s)"
    # the repeats' nodes are not read (a page may fold 2,000 of them): the hit's node and
    # the last sample's, each with its ancestors, in one query each, whatever the page size
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        small_pages = dumped(service.search_messages(conn, "status of job", run_id=run_id,
                                                     page_size=5))
    finally:
        conn.set_trace_callback(None)
    assert [(h["id"], h["count"], h["last"]) for h in small_pages["hits"]] == [
        (hit["id"], 60, hit["last"])]
    assert sum("WITH RECURSIVE up" in statement for statement in statements) == 2
    unfolded, cursor = [], hit["unfold_cursor"]
    while cursor and len(unfolded) < 60:
        page = dumped(service.search_messages(conn, "status of job", run_id=run_id, cursor=cursor))
        unfolded += [h for h in page["hits"] if "count" not in h]
        cursor = page.get("next_cursor")
    assert [h["text"] for h in unfolded[:60]] == [
        f"status of job 77f3a: RUNNING (poll {n}, {n}.5 s)" for n in range(1, 61)]
    # different texts do not fold: 120 imports fold into one hit, the failure stays apart
    rows = dumped(service.search_messages(conn, "row", run_id=run_id, selector="s1-t2"))["hits"]
    assert [(h["id"], h.get("count")) for h in rows] == [
        ("s1-t2-k1-k1-k1-k1-m1", 88), ("s1-t2-k1-k88-k1-k2-k1-m1", None)]
    assert rows[1]["text"] == "Row 87: column 'price' is not a number"


def test_search_groups_hits_by_iteration_and_by_node_with_counts(live: Any) -> None:
    conn, run_id, _ = live
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        first = dumped(service.search_messages(conn, "RUNNING", run_id=run_id, selector="s1-t1",
                                               group_by="iteration", page_size=25))
    finally:
        conn.set_trace_callback(None)
    # the page's 26 hits are each in a node of their own: their nodes and ancestors are read
    # in one query, not one a hit
    assert sum("WITH RECURSIVE up" in statement for statement in statements) == 1
    groups = first["groups"]
    assert [g["node_id"] for g in groups] == [f"s1-t1-k1-k{n}" for n in range(1, 26)]
    assert all(g["type"] == "ITERATION" and g["count"] == 1 and g["levels"] == {"INFO": 1}
               for g in groups)
    assert groups[4]["first"]["text"] == "status of job 77f3a: RUNNING (poll 5, 5.5 s)"
    rest = dumped(service.search_messages(conn, "RUNNING", run_id=run_id, selector="s1-t1",
                                          group_by="iteration", cursor=first["next_cursor"],
                                          page_size=50))
    assert [g["node_id"] for g in rest["groups"]] == [f"s1-t1-k1-k{n}" for n in range(26, 61)]
    assert "next_cursor" not in rest and rest["hits"] == []
    by_node = dumped(service.search_messages(conn, None, run_id=run_id, min_level="FAIL",
                                             group_by="node"))["groups"]
    assert [(g["node_id"], g["name"], g["count"]) for g in by_node] == [
        ("s1-t1-k2", "Fail", 1), ("s1-t2-k1-k88-k1-k2-k1", "Fail", 1), ("s1-t3-k4", "Fail", 1)]
    iteration = dumped(service.search_messages(conn, None, run_id=run_id, min_level="FAIL",
                                               group_by="iteration"))["groups"]
    assert iteration[1]["node_id"] == "s1-t2-k1-k88" and iteration[1]["values"] == {"${row}": "87"}
    bad = service.search_messages(conn, "x", run_id=run_id, group_by="test")
    assert not bad.ok and bad.error is not None and bad.error.code == "INVALID_ARGUMENT"


def test_tree_snapshot_is_bounded_folds_iterations_and_says_where_to_go_on(live: Any) -> None:
    conn, run_id, _ = live
    whole = dumped(service.get_view(conn, "tree_snapshot", run_id=run_id, selector="s1-t2",
                                    max_depth=3))["tree_snapshot"]
    shown = [(n.get("depth"), n.get("node_id") or n["group_id"]) for n in whole["nodes"]]
    assert shown == [(1, "s1-t2-k1"), (None, "ig:s1-t2-k1:1-87"), (2, "s1-t2-k1-k88"),
                     (3, "s1-t2-k1-k88-k1")]  # the loop stopped at its failing iteration
    assert whole["nodes"][-1]["has_children"]  # below max_depth: tree opens it
    assert whole["node"]["node_id"] == "s1-t2" and "continue_at" not in whole
    # a small budget stops early: every open level says where the tree view goes on
    small = dumped(service.get_view(conn, "tree_snapshot", run_id=run_id, max_depth=4,
                                    budget=500))
    assert small["budget_truncated"] and small["estimated_tokens"] <= 500
    stops = small["tree_snapshot"]["continue_at"]
    assert {s["reason"] for s in stops} == {"budget"} and stops[-1]["selector"] == "s1"
    last_shown = small["tree_snapshot"]["nodes"][-1]
    inner = stops[0]
    page = dumped(service.get_view(conn, "tree", run_id=run_id, selector=inner["selector"],
                                   cursor=inner.get("cursor")))["tree"]["children"]
    assert page and page[0].get("node_id") != last_shown.get("node_id")
    snapshot_ids = [n.get("node_id") for n in small["tree_snapshot"]["nodes"]]
    assert page[0].get("node_id") not in snapshot_ids  # it goes on, it does not repeat
    too_deep = service.get_view(conn, "tree_snapshot", run_id=run_id, max_depth=9)
    assert not too_deep.ok and too_deep.error is not None and too_deep.error.code == "INVALID_ARGUMENT"


def test_the_command_line_reads_messages_snapshots_and_groups(live: Any) -> None:
    conn, run_id, _ = live
    db = Path(store_file(conn))
    whole = cli("message", str(run_id), "s1-t3-k3-m1", db=db)
    assert whole.returncode == 0, whole.stderr
    assert SECRET not in whole.stdout and whole.stdout.count("token *** used") == 1
    assert whole.stdout.startswith("page source: header line\n")
    snapshot = cli("tree", str(run_id), "s1-t2", "--depth", "2", db=db)
    assert "ITERATION_GROUP 87 passing iterations" in snapshot.stdout
    assert "s1-t2-k1-k88" in snapshot.stdout
    grouped = cli("search", str(run_id), "RUNNING", "--selector", "s1-t1", "--group-by",
                  "iteration", "--json", db=db)
    data = json.loads(grouped.stdout)
    assert data["group_by"] == "iteration" and len(data["groups"]) == 25


@pytest.mark.anyio
async def test_the_new_views_over_mcp(live: Any, tmp_path: Path) -> None:
    _, _, output = live
    async with server(tmp_path, env={"RF_LOG_MCP_ALLOWED_ROOTS": str(output.parent)}) as client:
        run_id = (await call(client, "parse_result", path=str(output)))["run_id"]
        part = await call(client, "get_view", run_id=run_id, view="message",
                          selector="s1-t3-k3-m1", budget=1000)
        assert part["message"]["offset"] == 0 and part["next_cursor"]
        snap = await call(client, "get_view", run_id=run_id, view="tree_snapshot",
                          selector="s1-t1", max_depth=2)
        assert snap["tree_snapshot"]["max_depth"] == 2
        folded = await call(client, "search_messages", run_id=run_id, query="status of job")
        assert folded["hits"][0]["count"] == 60
        grouped = await call(client, "search_messages", run_id=run_id, query="row",
                             selector="s1-t2", group_by="iteration", page_size=3)
        assert [g["node_id"] for g in grouped["groups"]] == ["s1-t2-k1-k1", "s1-t2-k1-k2",
                                                             "s1-t2-k1-k3"]
        # the roadmap's rule: data and structure only. No tool's output has a field that
        # judges a cause or advises a next step, and no answer says one in words.
        schemas = json.dumps([tool.output_schema for tool in (await client.list_tools()).tools])
        answers = json.dumps([part, snap, folded, grouped]).lower()
        for word in ("root_cause", "likely", "suggest", "recommend", "next_step", "diagnos",
                     "you should", "probably"):
            assert word not in schemas.lower() and word not in answers, word


def test_the_skill_names_only_what_exists() -> None:
    """Every tool, view, argument, field and CLI command (with its options) that SKILL.md
    names exists; the repository's copy is the package's."""
    from rf_log_mcp import models
    from rf_log_mcp.cli import _parser
    from rf_log_mcp.cli.agents import skill_text
    from rf_log_mcp.server import RESPONSE_MODELS, ViewName, mcp

    text = skill_text()
    repository_copy = Path(__file__).parents[1] / "skills" / "rf-log-triage" / "SKILL.md"
    assert repository_copy.read_text(encoding="utf-8") == text
    front = re.match(r"---\nname: (\S+)\ndescription: (.+)\n---\n", text)
    assert front and front.group(1) == "rf-log-triage" and len(front.group(2)) < 1024
    tools = set(RESPONSE_MODELS)
    arguments = {name for tool in mcp._tool_manager.list_tools()
                 for name in tool.parameters.get("properties", {})}
    views = set(ViewName.__args__)  # type: ignore[attr-defined]
    fields = {name for model in vars(models).values()
              if isinstance(model, type) and issubclass(model, models.BaseModel)
              for name in model.model_fields}
    words = {"running", "failures", "node", "subtree", "test", "iteration", "ok", "latest",
             "ITERATION_GROUP", "INVALID_CURSOR", "new_failure", "fixed", "still_failing",
             "code", "message", "hint", "true", "false", "***"}
    named = set(re.findall(r"`([^`\s]+)`", text))
    unknown = named - tools - arguments - views - fields - words - {"rf-log-mcp", "--json", "--db",
                                                                    "$RF_LOG_MCP_DB"}
    assert not unknown, unknown
    assert {"get_view", "search_messages", "tree_snapshot", "message", "group_by",
            "unfold_cursor", "continue_at", "next_cursor"} <= named
    parser = _parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    blocks = "\n".join(re.findall(r"^```\n(.*?)^```", text, re.MULTILINE | re.DOTALL))
    assert blocks.count("rf-log-mcp ") >= 10
    for line in re.findall(r"^rf-log-mcp .+$", blocks, re.MULTILINE):
        words_of = line.split()
        sub = commands.get(words_of[1])
        assert sub is not None, line
        options = {o for action in sub._actions for o in action.option_strings}
        assert {w for w in words_of if w.startswith("--")} <= options, line
        assert sub.parse_args([w.strip('"') for w in re.findall(r'"[^"]*"|\S+', line)[2:]])
    for command in re.findall(r"`rf-log-mcp (\w+)`", text):
        assert command in commands, command


def test_skill_is_printed_and_installed(tmp_path: Path) -> None:
    printed = cli("skill")
    assert printed.returncode == 0 and printed.stdout.startswith("---\nname: rf-log-triage\n")
    installed = cli("skill", "--install", str(tmp_path / "skills"))
    assert installed.returncode == 0, installed.stderr
    target = tmp_path / "skills" / "rf-log-triage" / "SKILL.md"
    assert target.read_text(encoding="utf-8") == printed.stdout
    blocked = tmp_path / "file"
    blocked.write_text("x")
    refused = cli("skill", "--install", str(blocked))
    assert refused.returncode == 1 and "error [FILE_NOT_FOUND]" in refused.stderr


def test_a_part_never_ends_inside_a_secret() -> None:
    """Where the part's natural end falls inside a known secret value or a password=...
    pair with no space near, the cut moves to where masking each side alone equals masking
    both together."""
    from rf_log_listener.masking import KnownValues, redactor
    from rf_log_mcp.shaping import Shaper
    from rf_log_mcp.views.message import _part_end

    secret = "Zq" + "x7" * 300  # a known value with no space in it, 602 characters
    shaper = Shaper(redactor=redactor().for_run(KnownValues([secret])))
    for before in range(700, 1300, 37):
        text = "y" * before + secret + " tail " + "w" * 3000 + " password=hunter2horse more"
        end = _part_end(text, 0, 1000, shaper, None)
        assert not before < end < before + len(secret), (before, end)
        masked = shaper.mask_message(text[:end])[0] + shaper.mask_message(text[end:])[0]
        assert secret not in masked and "x7x7" not in masked
    text = "z" * 990 + " password=hunter2horse " + "q" * 2000
    end = _part_end(text, 0, 1000, shaper, None)
    pieces = shaper.mask_message(text[:end])[0] + shaper.mask_message(text[end:])[0]
    assert "hunter2" not in pieces and "horse" not in pieces


def test_the_budget_decides_what_is_cut_not_a_fixed_length(live: Any) -> None:
    """A failure message longer than a view's usual length (1,817 characters, failure_path
    shows 1,200) comes whole when the page leaves room in the budget, and cut, with
    message_truncated, when it does not."""
    conn, run_id, _ = live
    roomy = dumped(service.get_view(conn, "failure_path", run_id=run_id, selector="s1-t3"))
    step = roomy["failure_path"]["path"][-1]
    (failure,) = step["messages"]
    assert failure["text"] == "total not shown: " + ("<span>item</span> " * 100)
    assert not roomy["message_truncated"] and roomy["estimated_tokens"] <= 4000
    tight = dumped(service.get_view(conn, "failure_path", run_id=run_id, selector="s1-t3",
                                    budget=800))
    cut = tight["failure_path"]["path"][-1]["messages"][0]["text"]
    assert "characters cut]" in cut and tight["message_truncated"]
    assert tight["estimated_tokens"] <= 800
    # a text repeated in the page (a test and its failing keyword) grows back in both places
    from rf_log_mcp.shaping import Shaper

    shaper = Shaper(budget=4000)
    shown = shaper.cut("word " * 600, 300)
    page = {"steps": [{"message": shown}, {"message": shown}]}
    shaper.grow(page)
    assert [s["message"] for s in page["steps"]] == ["word " * 600] * 2 and not shaper.texts_cut
