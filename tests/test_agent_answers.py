"""What an agent pays for (issue 15): answers without repetition. Run errors come once per
run, identical ones folded with their count, on the summary's first page only and under the
run in tree; hints name the MCP tools."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_listener import robot

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import service

DATA = Path(__file__).parent / "data" / "agent"


def _imported(tmp_path: Path, suite: str, rc: int) -> tuple[sqlite3.Connection, int]:
    """robot on tests/data/agent/``suite``, imported: the store and the run id."""
    assert robot("--output", "out.xml", str(DATA / suite), cwd=tmp_path).returncode == rc
    conn = open_store(tmp_path / "store.sqlite3")
    return conn, import_result(conn, tmp_path / "out.xml", stable_window=0).run_id


def test_identical_run_errors_come_once_with_their_count(tmp_path: Path) -> None:
    conn, run_id = _imported(tmp_path, "warns.robot", 2)
    first = service.get_view(conn, "summary", run_id=run_id, page_size=1)
    assert first.summary is not None and first.next_cursor
    assert [(e.id, e.text, e.count) for e in first.summary.errors or []] == [
        ("errors-m1", "deprecated keyword used", 14), ("errors-m15", "another warning", None)]
    assert (first.summary.error_count, first.summary.error_kinds) == (15, 2)
    second = service.get_view(conn, "summary", run_id=run_id, page_size=1, cursor=first.next_cursor)
    assert second.summary is not None and second.summary.errors is None  # not on every page
    assert [t.name for t in second.summary.failed_tests] == ["Second Fails"]
    assert second.summary.error_count == 15
    tree = service.get_view(conn, "tree", run_id=run_id).model_dump(mode="json", exclude_none=True)
    errors = tree["tree"]["children"][1]
    assert (errors["kind"], errors["count"], errors["distinct"]) == ("RUN_ERRORS", 15, 2)
    assert [m.get("count") for m in errors["messages"]] == [14, None]
    # the rest of the warnings are a search away, each one
    ids, cursor = [], None
    while True:
        found = service.search_messages(conn, "deprecated", run_id=run_id, min_level="WARN",
                                        cursor=cursor)
        ids += [hit.id for hit in found.hits]
        cursor = found.next_cursor
        if cursor is None:
            break
    assert [i for i in ids if i.startswith("errors-m")] == [f"errors-m{n}" for n in range(1, 15)]


def test_a_failure_path_says_the_failure_once(tmp_path: Path) -> None:
    """Parents repeat their failing child's status message in RF's model; the path says it
    once, on the deepest step (its FAIL message), not on the test and every keyword above."""
    from conftest import FIXTURE_RESULTS

    conn = open_store(tmp_path / "store.sqlite3")
    run_id = import_result(conn, FIXTURE_RESULTS / "7.5" / "output.xml", stable_window=0).run_id
    view = service.get_view(conn, "failure_path", run_id=run_id, selector="s1-s1-t2")
    text = view.model_dump_json(exclude_none=True)
    assert text.count("values differ: expected-value != actual-value") == 1
    path = view.failure_path.path  # type: ignore[union-attr]
    assert [s.node_id for s in path] == ["s1-s1-t2", "s1-s1-t2-k3", "s1-s1-t2-k3-k1",
                                         "s1-s1-t2-k3-k1-k2"]
    assert path[-1].messages and path[-1].messages[-1].level == "FAIL"
    # a different message on the way down stays: the fixture's continuable failures
    several = service.get_view(conn, "failure_path", run_id=run_id, selector="s1-s1-t3")
    assert several.failure_path.path[0].message.startswith("Several failures occurred")  # type: ignore[union-attr]


def test_an_option_value_holding_another_option_is_warned_about(tmp_path: Path) -> None:
    """`db=...;label=...` after a ':' is one option to robot: the store's name would swallow
    the label. Robot's console says so; the run is still captured."""
    (tmp_path / "one.robot").write_text("*** Test Cases ***\nOne\n    Log    one\n")
    db = tmp_path / "store.sqlite3"
    done = robot("--output", "NONE", "--listener", f"rf_log_listener:db={db};label=ci", "one.robot",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "looks like it holds another option" in done.stderr and "label=ci" in done.stderr
    assert (tmp_path / "store.sqlite3;label=ci").exists()  # robot's split, as the warning says
    clean = robot("--output", "NONE", "--listener", f"rf_log_listener:db={db}:label=ci",
                  "one.robot", cwd=tmp_path)
    assert "holds another option" not in clean.stderr


def test_status_messages_are_searchable_as_hits_of_their_own_kind(tmp_path: Path) -> None:
    """A WHILE loop's limit, a test's combined message and a fatal stop are status messages,
    not logged ones: search finds them, each once (where it is said first: not on the
    keywords above a failure that repeat it, not beside the FAIL message a keyword logged)."""
    conn, run_id = _imported(tmp_path, "status.robot", 4)

    def hits(query: str, **options: str) -> list[tuple[str, str | None, str]]:
        found = service.search_messages(conn, query, run_id=run_id, **options)
        assert found.ok, found.error
        return [(h.id, h.kind, h.level) for h in found.hits]

    assert hits("did not finish within the limit") == [("s1-t1-k1", "status", "FAIL")]
    assert hits("Several failures occurred") == [("s1-t2", "status", "FAIL")]
    # said by Should Be Equal's own FAIL message: no status hits for it or the keyword above
    assert hits("1 != 2") == [("s1-t2-k1-k1-m1", None, "FAIL"), ("s1-t2", "status", "FAIL")]
    stopped = hits("Test execution stopped due to a fatal error")
    assert stopped == [("s1-t4", "status", "FAIL")]
    assert hits("database is gone", min_level="FAIL")[0] == ("s1-t3-k1-m1", None, "FAIL")
    assert hits("did not finish", level="INFO") == []  # levels filter status hits too
    assert hits("limit", selector="s1-t2") == []  # and scopes


def test_a_retry_s_failure_path_goes_into_its_last_attempt(tmp_path: Path) -> None:
    """Wait Until Keyword Succeeds: every attempt failed; the last one decided the test."""
    conn, run_id = _imported(tmp_path, "retry.robot", 1)
    path = service.get_view(conn, "failure_path", run_id=run_id).failure_path
    assert path is not None
    assert [s.node_id for s in path.path][:3] == ["s1-t1", "s1-t1-k1", "s1-t1-k1-k4"]
    assert path.path[-1].messages and path.path[-1].messages[-1].text == "no answer on attempt 4"
