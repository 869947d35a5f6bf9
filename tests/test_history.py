"""Questions across runs, on a history built by real robot runs: one suite run night after
night (tests/data/history/nightly.robot), live through the listener and by importing its
output files; compare_runs, test_history, flaky_tests, failure groups, run context (CI
variables, labels) and list_runs' filters, through the service, the CLI and the MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from conftest import cli

from rf_log_listener.importers import import_result
from rf_log_listener.run_context import PROVIDERS, ci_context
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITE = Path(__file__).parent / "data" / "history" / "nightly.robot"
PASSWORD = "N1ght-Pw-4417"
GITHUB = {"GITHUB_ACTIONS": "true", "GITHUB_SHA": "0123abcd", "GITHUB_REF_NAME": "main",
          "GITHUB_RUN_NUMBER": "41", "GITHUB_SERVER_URL": "https://github.example",
          "GITHUB_REPOSITORY": "team/shop", "GITHUB_RUN_ID": "9001", "GITHUB_JOB": "nightly",
          # never recorded: not on the whitelist
          "AWS_SECRET_ACCESS_KEY": "decoy-aws-key-771", "GITHUB_TOKEN": "ghp_decoytoken1234567"}


def night(db: Path, out: Path, number: int, *, listener: bool = True,
          env: dict[str, str] | None = None, label: str | None = None) -> Path:
    """Run the nightly suite as night ``number``; the live capture goes to ``db``."""
    excluded = "later" if number < 3 else "early"
    listener_args = ["--listener", f"rf_log_listener:db={db}" + (f":label={label}" if label else "")]
    command = [sys.executable, "-m", "robot", "--log", "NONE", "--report", "NONE",
               "--console", "none", "--variable", f"NIGHT:{number}", "--exclude", excluded,
               "--outputdir", str(out), "--output", f"night{number}.xml",
               *(listener_args if listener else []), str(SUITE)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI"))}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False,
                            env={**clean, **(env or {})})
    assert result.returncode in (0, 1, 2, 3, 4, 5, 6, 7), result.stderr
    return out / f"night{number}.xml"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Nights 1-3 live, night 4 imported from its output.xml: runs 1, 2, 3, 4."""
    folder = tmp_path_factory.mktemp("history")
    db = folder / "store.sqlite3"
    for number in (1, 2):
        night(db, folder, number, label="nightly")
    night(db, folder, 3, env=GITHUB, label="nightly")
    xml4 = night(db, folder, 4, listener=False)
    conn = open_store(db)
    with outside_ci():
        assert import_result(conn, xml4, stable_window=0, label="nightly").run_id == 4
    return {"db": db, "conn": conn, "folder": folder}


@contextmanager
def outside_ci() -> Iterator[None]:
    """An import records the CI variables of its own process: none here, wherever the test
    suite itself runs."""
    markers = {marker for marker, _ in PROVIDERS.values()}
    with patch.dict(os.environ, {k: v for k, v in os.environ.items() if k not in markers},
                    clear=True):
        yield


def dumped(response: Any) -> dict[str, Any]:
    assert response.ok, response.error
    return response


def test_compare_runs_names_every_kind_of_change_against_the_previous_run(history: dict) -> None:
    answer = dumped(service.compare_runs(history["conn"], "3"))
    assert answer["base"]["run"] == "2" and answer["head"]["run"] == "3"
    assert answer["base_reason"] == "the newest complete run before it with the same suite and label"
    assert answer["head"]["branch"] == "main" and answer["head"]["commit"] == "0123abcd"
    assert answer["counts"] == {
        "new_failure": 2, "still_failing_changed": 1, "still_failing": 4, "newly_skipped": 1,
        "fixed": 1, "no_longer_skipped": 0, "added": 1, "removed": 1, "slower": 0, "faster": 0,
        "unchanged": 1}
    changes = [(c["change"], c["test"]) for c in answer["changes"]]
    assert changes == [
        ("new_failure", "Nightly.Flipper"), ("new_failure", "Nightly.New Failure"),
        ("still_failing_changed", "Nightly.Changed Cause"),
        ("still_failing", "Nightly.Checkout Down 1"), ("still_failing", "Nightly.Checkout Down 2"),
        ("still_failing", "Nightly.Checkout Down 3"), ("still_failing", "Nightly.Login Refused"),
        ("newly_skipped", "Nightly.Skipped Later"), ("fixed", "Nightly.Fixed Tonight"),
        ("added", "Nightly.Added Later"), ("removed", "Nightly.Removed Later")]
    by_test = {c["test"]: c for c in answer["changes"]}
    new = by_test["Nightly.New Failure"]
    assert new["head"] == {"run_id": 3, "node_id": "s1-t3", "status": "FAIL",
                           "elapsed": new["head"]["elapsed"],
                           "signature": "Connection refused: <ip>:<n> after <duration> [in BuiltIn.Fail]"}
    assert new["base"]["status"] == "PASS" and new["signature_seen"] == {"earlier_runs": 0}
    flipper = by_test["Nightly.Flipper"]
    assert flipper["signature_seen"]["earlier_runs"] == 1
    assert flipper["signature_seen"]["first_run_id"] == 1
    changed = by_test["Nightly.Changed Cause"]
    assert changed["base"]["signature"] == "Timeout after <duration> waiting for '…' [in BuiltIn.Fail]"
    assert changed["head"]["signature"] == "<n> != <n> [in BuiltIn.Should Be Equal As Integers]"
    assert "signature" not in by_test["Nightly.Checkout Down 1"]["base"]  # the same as head's
    assert by_test["Nightly.Removed Later"]["base"]["node_id"] == "s1-t11"
    assert "head" not in by_test["Nightly.Removed Later"]


def test_a_skipped_test_that_passes_again_is_a_change(tmp_path: Path) -> None:
    """A ``robot:skip-on-failure`` test whose hidden failure is gone, and a test skipped by
    a tag no longer set: SKIP then PASS. The diff counted both as unchanged."""
    suite = tmp_path / "suite.robot"
    conn = open_store(tmp_path / "s.db")
    for night, (hidden, skipped) in enumerate([("Fail    backend down", "robot:skip"),
                                               ("Log    backend up", "other")], start=1):
        suite.write_text("*** Test Cases ***\n"
                         f"Hidden Failure\n    [Tags]    robot:skip-on-failure\n    {hidden}\n"
                         f"Skipped By Tag\n    [Tags]    {skipped}\n    Log    runs\n"
                         "Steady\n    Log    fine\n")
        subprocess.run([sys.executable, "-m", "robot", "--output", f"n{night}.xml", "--log", "NONE",
                        "--report", "NONE", "--console", "none", str(suite)], cwd=tmp_path,
                       capture_output=True, check=False)
        with outside_ci():
            import_result(conn, tmp_path / f"n{night}.xml", stable_window=0)
    answer = dumped(service.compare_runs(conn, "2"))
    assert answer["counts"]["no_longer_skipped"] == 2 and answer["counts"]["unchanged"] == 1
    assert [(c["change"], c["test"], c["base"]["status"], c["head"]["status"])
            for c in answer["changes"]] == [
        ("no_longer_skipped", "Suite.Hidden Failure", "SKIP", "PASS"),
        ("no_longer_skipped", "Suite.Skipped By Tag", "SKIP", "PASS")]
    shown = cli("diff", "--change", "no_longer_skipped", db=tmp_path / "s.db")
    assert shown.returncode == 0
    assert "  no longer skipped      Suite.Hidden Failure  (s1-t1)\n" in shown.stdout


def test_compare_runs_pages_filters_and_takes_any_base(history: dict) -> None:
    conn = history["conn"]
    whole = dumped(service.compare_runs(conn, "3", page_size=200))["changes"]
    seen, cursor = [], None
    while True:
        page = dumped(service.compare_runs(conn, "3", cursor=cursor, page_size=3))
        seen.extend(page["changes"])
        cursor = page.get("next_cursor")
        if cursor is None:
            break
        assert page["page_truncated"] is True
    assert seen == whole
    fixed = dumped(service.compare_runs(conn, "4", base="1", changes=["fixed", "added"]))
    assert fixed["base_reason"] == "given"
    assert [(c["change"], c["test"]) for c in fixed["changes"]] == [
        ("fixed", "Nightly.Flipper"), ("fixed", "Nightly.Fixed Tonight"),
        ("added", "Nightly.Added Later")]
    stale = service.compare_runs(conn, "3", base="1", cursor=page_cursor(conn))
    assert not stale.ok and stale.error and stale.error.code == "INVALID_CURSOR"
    for bad, code in (("x7", "INVALID_ARGUMENT"), ("99", "RUN_NOT_FOUND")):
        answer = service.compare_runs(conn, bad)
        assert not answer.ok and answer.error and answer.error.code == code
    first = service.compare_runs(conn, "1")
    assert not first.ok and first.error and first.error.code == "NO_BASE_RUN"
    wrong = service.compare_runs(conn, "3", changes=["broken"])
    assert not wrong.ok and wrong.error and wrong.error.code == "INVALID_ARGUMENT"


def page_cursor(conn: Any) -> str:
    cursor = service.compare_runs(conn, "3", page_size=1).next_cursor
    assert cursor
    return cursor


def test_test_history_gives_streak_last_pass_and_flip_rate(history: dict) -> None:
    conn = history["conn"]
    flipper = dumped(service.test_history(conn, "Nightly.Flipper"))
    assert [(r["run_id"], r["status"]) for r in flipper["runs"]] == [
        (4, "PASS"), (3, "FAIL"), (2, "PASS"), (1, "FAIL")]
    assert flipper["streak"]["status"] == "PASS" and flipper["streak"]["runs"] == 1
    assert flipper["last_pass"]["run_id"] == 4
    assert flipper["flakiness"]["flips"] == 3 and flipper["flakiness"]["flip_rate"] == 1.0
    assert flipper["runs"][1]["signature"] == "coin came up odd on night <n> [in BuiltIn.Should Not Be True]"
    assert flipper["runs"][1]["branch"] == "main" and flipper["runs"][1]["label"] == "nightly"

    failing = dumped(service.test_history(conn, "New Failure"))  # unique: its name is enough
    assert failing["test"] == "Nightly.New Failure"
    assert failing["streak"] == {"status": "FAIL", "runs": 2,
                                 "since": {"run_id": 3, "start_time": failing["runs"][1]["start_time"]}}
    assert failing["last_pass"]["run_id"] == 2
    assert failing["flakiness"]["flip_rate"] == round(1 / 3, 3)

    by_node = dumped(service.test_history(conn, run_id=3, node_id="s1-t3", limit=1))
    assert by_node["test"] == "Nightly.New Failure" and len(by_node["runs"]) == 1
    assert by_node["next_cursor"] and by_node["flakiness"]["window"] == 1
    older = dumped(service.test_history(conn, run_id=3, node_id="s1-t3", limit=1,
                                        cursor=by_node["next_cursor"]))
    assert [r["run_id"] for r in older["runs"]] == [3]

    missing = service.test_history(conn, "Nightly.No Such Test")
    assert not missing.ok and missing.error and missing.error.code == "TEST_NOT_FOUND"
    ambiguous = service.test_history(conn, "Down 1")
    assert not ambiguous.ok and ambiguous.error and ambiguous.error.code == "TEST_NOT_FOUND"
    keyword = service.test_history(conn, run_id=3, node_id="s1-t3-k1")
    assert not keyword.ok and keyword.error and keyword.error.code == "INVALID_ARGUMENT"


def test_a_test_is_found_by_its_name_as_robot_takes_it(history: dict) -> None:
    """Case, spaces and underscores ignored, as robot's --test does: a name typed the way
    it works with robot works here (before: TEST_NOT_FOUND unless spelled exactly)."""
    conn = history["conn"]
    for typed in ("nightly.new failure", "NewFailure", "new_failure", "NIGHTLY.NEW  FAILURE"):
        assert dumped(service.test_history(conn, typed))["test"] == "Nightly.New Failure", typed
    unknown = service.test_history(conn, "flip")  # a part of a name is no name
    assert unknown.error.code == "TEST_NOT_FOUND"
    done = cli("history", "nightly.flipper", db=history["db"])
    assert done.returncode == 0 and done.stdout.startswith("Nightly.Flipper: 4 finished run(s)")


def test_flaky_tests_rank_by_flip_rate(history: dict) -> None:
    answer = dumped(service.flaky_tests(history["conn"]))
    assert (answer["suite"], answer["runs_in_window"]) == ("Nightly", 4)
    top = answer["tests"][0]
    assert (top["test"], top["flip_rate"], top["flips"], top["runs"]) == ("Nightly.Flipper", 1.0, 3, 4)
    rates = [t["flip_rate"] for t in answer["tests"]]
    assert rates == sorted(rates, reverse=True)
    assert "Nightly.Stable Pass" not in [t["test"] for t in answer["tests"]]
    assert "Nightly.Login Refused" not in [t["test"] for t in answer["tests"]]  # fails always
    two = dumped(service.flaky_tests(history["conn"], suite="Nightly", window=2))
    assert two["runs_in_window"] == 2 and two["oldest_run"] == "3"


def test_summary_groups_failures_by_signature_with_their_history(history: dict) -> None:
    conn = history["conn"]
    summary = dumped(service.get_view(conn, "summary", run_id=3))["summary"]
    assert summary["failure_group_count"] == 1
    [group] = summary["failure_groups"]
    assert group["count"] == 3 and group["test_ids"] == ["s1-t6", "s1-t7", "s1-t8"]
    assert group["message"].startswith("HTTPError: 503 Server Error: Service Unavailable for url:")
    assert group["seen_before"] == {"earlier_runs": 1, "first_run_id": 2,
                                    "first_seen": group["seen_before"]["first_seen"]}
    listed = [t["node_id"] for t in summary["failed_tests"]]
    assert listed == ["s1-t2", "s1-t3", "s1-t4", "s1-t10"]  # no test of the group
    assert summary["failed_tests"][3]["signature_seen"]["earlier_runs"] == 2  # Login Refused
    assert summary["ci"]["build_url"] == "https://github.example/team/shop/actions/runs/9001"
    members = dumped(service.get_view(conn, "summary", run_id=3, selector=group["tests_selector"]))
    assert [t["node_id"] for t in members["summary"]["failed_tests"]] == ["s1-t6", "s1-t7", "s1-t8"]
    wrong = service.get_view(conn, "summary", run_id=3, selector="group:12")
    assert not wrong.ok and wrong.error and wrong.error.code == "NODE_NOT_FOUND"


def test_run_context_is_recorded_and_list_runs_filters_by_it(history: dict) -> None:
    conn = history["conn"]
    ci = json.loads(conn.execute("SELECT ci FROM runs WHERE run_id = 3").fetchone()[0])
    assert ci == {"provider": "github", "commit": "0123abcd", "branch": "main", "build": "41",
                  "build_url": "https://github.example/team/shop/actions/runs/9001",
                  "job": "nightly"}
    assert conn.execute("SELECT count(*) FROM runs WHERE ci IS NOT NULL").fetchone()[0] == 1
    runs = lambda **kw: [r.run_id for r in service.list_runs(conn, **kw).runs]  # noqa: E731
    assert runs(branch="main") == [3]
    assert runs(label="nightly") == [4, 3, 2, 1]
    assert runs(suite="Nightly", status="complete") == [4, 3, 2, 1]
    assert runs(suite="Other") == []
    start3 = conn.execute("SELECT start_time FROM runs WHERE run_id = 3").fetchone()[0]
    assert runs(since=start3) == [4, 3] and runs(until=start3) == [2, 1]
    item = next(r for r in service.list_runs(conn).runs if r.run_id == 3)
    assert (item.branch, item.commit, item.build) == ("main", "0123abcd", "41")


def test_imported_and_live_runs_give_the_same_history(history: dict, tmp_path: Path) -> None:
    """Night 3's live capture and the imports of its output.xml and output.json: the same
    tests, statuses and signatures."""
    conn = open_store(tmp_path / "copy.sqlite3")  # the other tests keep their four runs
    history["conn"].backup(conn)
    json_file = tmp_path / "night3.json"
    subprocess.run([sys.executable, "-m", "robot.rebot", "--log", "NONE", "--report", "NONE",
                    "--output", str(json_file), str(history["folder"] / "night3.xml")],
                   capture_output=True, check=False, timeout=120)
    with outside_ci():
        rows = [import_result(conn, source, stable_window=0).run_id
                for source in (history["folder"] / "night3.xml", json_file)]
    dumps = [sorted(conn.execute(
        "SELECT t.longname, r.pre, r.status, s.text FROM run_tests r JOIN test_names t USING"
        " (name_id) LEFT JOIN signatures s USING (signature_id) WHERE r.run_id = ?",
        (run_id,)).fetchall()) for run_id in (3, *rows)]
    assert dumps[0] == dumps[1] == dumps[2] and len(dumps[0]) == 11


def test_secrets_never_come_back_from_the_tools_across_runs(history: dict) -> None:
    conn = history["conn"]
    answers = [service.compare_runs(conn, "3", page_size=200),
               service.test_history(conn, "Nightly.Login Refused"),
               service.flaky_tests(conn), service.get_view(conn, "summary", run_id=4),
               service.list_runs(conn)]
    for answer in answers:
        text = json.dumps(answer)
        assert PASSWORD not in text and "decoy" not in text
    login = dumped(answers[1])
    assert login["runs"][0]["signature"] == (
        "login refused for admin: password=*** on attempt <n> [in BuiltIn.Fail]")
    stored = [text for (text,) in conn.execute("SELECT text FROM signatures")]
    assert stored and not any(PASSWORD in text for text in stored)


def test_cli_diff_history_and_flaky(history: dict) -> None:
    db = history["db"]
    diff = cli("diff", "3", db=db)
    assert diff.returncode == 0, diff.stderr
    assert "base: run 2 Nightly" in diff.stdout and "new failure" in diff.stdout
    assert "Nightly.Changed Cause" in diff.stdout and "was: Timeout after <duration>" in diff.stdout
    two = json.loads(cli("diff", "1", "4", "--change", "fixed", "--json", db=db).stdout)
    assert [c["test"] for c in two["changes"]] == ["Nightly.Flipper", "Nightly.Fixed Tonight"]
    # the newest run against the one before it: nothing typed but diff (before: "required")
    newest = cli("diff", db=db)
    assert newest.returncode == 0 and newest.stdout == cli("diff", "4", db=db).stdout
    assert cli("diff", "1", "latest", db=db).stdout == cli("diff", "1", "4", db=db).stdout
    assert cli("diff", "1", "2", "3", db=db).returncode == 2
    hist = cli("history", "Nightly.Flipper", db=db)
    assert hist.returncode == 0 and "flip rate 1.00: 3 flip(s) in 4 runs" in hist.stdout
    flaky = cli("flaky", "--window", "4", db=db)
    assert flaky.returncode == 0 and "Nightly.Flipper" in flaky.stdout.splitlines()[1]
    summary = cli("summary", "3", db=db)
    assert "Failure groups (1, by failure signature):" in summary.stdout
    assert "tests s1-t6, s1-t7, s1-t8; seen in 1 earlier run(s), first in run 2" in summary.stdout
    runs = cli("runs", "--branch", "main", db=db)
    assert runs.stdout.count("Nightly") == 1 and "branch=main" in runs.stdout
    missing = cli("history", "Nope", "--json", db=db)
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"]["code"] == "TEST_NOT_FOUND"


def test_prune_takes_a_runs_history_and_unused_names_with_it(history: dict, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite3"
    with closing(open_store(copy)) as conn:
        history["conn"].backup(conn)
    done = cli("prune", "--keep", "1", db=copy)
    assert done.returncode == 0, done.stderr
    with closing(open_store(copy)) as conn:
        assert {r for (r,) in conn.execute("SELECT DISTINCT run_id FROM run_tests")} == {4}
        names = {n for (n,) in conn.execute("SELECT longname FROM test_names")}
        assert "Nightly.Removed Later" not in names and "Nightly.Added Later" in names
        assert len(names) == 11
        texts = [t for (t,) in conn.execute("SELECT text FROM signatures")]
        assert not any(t.startswith("Timeout after") for t in texts)  # night 1-2 only


def test_ci_variables_of_each_provider_and_nothing_else() -> None:
    cases = {
        "gitlab": {"GITLAB_CI": "true", "CI_COMMIT_SHA": "c1", "CI_COMMIT_REF_NAME": "dev",
                   "CI_PIPELINE_IID": "7", "CI_JOB_URL": "https://gl/j/1", "CI_JOB_NAME": "e2e"},
        "jenkins": {"JENKINS_URL": "https://ci", "GIT_COMMIT": "c2", "GIT_BRANCH": "origin/main",
                    "BUILD_NUMBER": "12", "BUILD_URL": "https://ci/job/x/12/", "JOB_NAME": "x"},
        "azure": {"TF_BUILD": "True", "BUILD_SOURCEVERSION": "c3", "BUILD_SOURCEBRANCHNAME": "rel",
                  "BUILD_BUILDNUMBER": "20261201.3", "BUILD_BUILDID": "88",
                  "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI": "https://dev.azure.com/org/",
                  "SYSTEM_TEAMPROJECT": "shop", "SYSTEM_JOBDISPLAYNAME": "Run tests"},
        "circleci": {"CIRCLECI": "true", "CIRCLE_SHA1": "c4", "CIRCLE_BRANCH": "feat",
                     "CIRCLE_BUILD_NUM": "5", "CIRCLE_BUILD_URL": "https://circle/5",
                     "CIRCLE_JOB": "test"},
    }
    expected = {
        "gitlab": {"commit": "c1", "branch": "dev", "build": "7", "build_url": "https://gl/j/1",
                   "job": "e2e"},
        "jenkins": {"commit": "c2", "branch": "origin/main", "build": "12",
                    "build_url": "https://ci/job/x/12/", "job": "x"},
        "azure": {"commit": "c3", "branch": "rel", "build": "20261201.3",
                  "build_url": "https://dev.azure.com/org/shop/_build/results?buildId=88",
                  "job": "Run tests"},
        "circleci": {"commit": "c4", "branch": "feat", "build": "5",
                     "build_url": "https://circle/5", "job": "test"},
    }
    for provider, env in cases.items():
        found = json.loads(ci_context({**env, "DB_PASSWORD": "decoy", "HOME": "/root"}) or "{}")
        assert found == {"provider": provider, **expected[provider]}
    assert ci_context({"CI": "true", "DB_PASSWORD": "decoy"}) is None


@pytest.mark.anyio
async def test_the_tools_across_runs_over_mcp(history: dict, tmp_path: Path) -> None:
    """Through the real server over stdio and the official client: the results are
    structured, validated against the listed output schemas, errors in the same shape."""
    from test_mcp_server import call, server

    store = tmp_path / "store.sqlite3"
    with closing(open_store(store)) as conn:
        history["conn"].backup(conn)
    async with server(tmp_path) as client:
        changed = await call(client, "compare_runs", head="3", changes=["new_failure"])
        assert [c["test"] for c in changed["changes"]] == ["Nightly.Flipper", "Nightly.New Failure"]
        assert changed["counts"]["fixed"] == 1 and changed["base"]["run"] == "2"
        flipper = await call(client, "test_history", test="Nightly.Flipper", limit=2)
        assert [r["status"] for r in flipper["runs"]] == ["PASS", "FAIL"]
        assert flipper["next_cursor"] and flipper["flakiness"]["flip_rate"] == 1.0
        flaky = await call(client, "flaky_tests", window=4)
        assert flaky["tests"][0]["test"] == "Nightly.Flipper"
        runs = await call(client, "list_runs", branch="main")
        assert [r["run_id"] for r in runs["runs"]] == [3] and runs["runs"][0]["commit"] == "0123abcd"
        group = (await call(client, "get_view", run_id=3, view="summary"))["summary"]
        one = await call(client, "get_view", run_id=3, view="summary",
                         selector=group["failure_groups"][0]["tests_selector"])
        assert len(one["summary"]["failed_tests"]) == 3
        bad = await call(client, "compare_runs", head="3", changes=["bogus"])
        assert bad["error"]["code"] == "INVALID_ARGUMENT"
        unknown = await call(client, "test_history", test="Nightly.Nope")
        assert unknown["error"]["code"] == "TEST_NOT_FOUND"
        prompt = await client.get_prompt("triage", {"run_id": "3"})
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert 'compare_runs(head="3"' in text and '"change":"new_failure"' in text


def test_a_running_run_is_grouped_and_compared_from_its_nodes(history: dict, tmp_path: Path) -> None:
    """While robot runs, its tests are not indexed yet: the summary's groups and compare_runs
    read them from the nodes written so far, signature texts included."""
    db = tmp_path / "copy.sqlite3"
    with closing(open_store(db)) as conn:
        history["conn"].backup(conn)
    suite = tmp_path / "running.robot"
    suite.write_text("*** Test Cases ***\n"
                     "Checkout Down 1\n    Fail    HTTPError: 503 for url: http://checkout-7/1\n"
                     "Checkout Down 2\n    Fail    HTTPError: 503 for url: http://checkout-8/2\n"
                     "Waits\n    Sleep    30s\n")
    robot = subprocess.Popen([sys.executable, "-m", "robot", "--name", "Nightly", "--output",
                              "NONE", "--report", "NONE", "--log", "NONE", "--listener",
                              f"rf_log_listener:db={db}", str(suite)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        with closing(open_store(db)) as conn:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                running = conn.execute("SELECT run_id, failed FROM runs WHERE status = 'running'"
                                       ).fetchone()
                if running and running[1] == 2:
                    break
                time.sleep(0.2)
            else:
                raise AssertionError("the live run never showed its two failures")
            run_id = running[0]
            summary = dumped(service.get_view(conn, "summary", run_id=run_id))["summary"]
            [group] = summary["failure_groups"]
            assert group["count"] == 2 and group["signature"] == (
                "HTTPError: <n> for url: http://checkout-<n>/<n> [in BuiltIn.Fail]")
            changed = dumped(service.compare_runs(conn, str(run_id), base="3"))
            down = next(c for c in changed["changes"] if c["test"] == "Nightly.Checkout Down 1")
            assert down["change"] == "still_failing_changed"
            assert down["head"]["signature"] == group["signature"]
    finally:
        robot.kill()
        robot.wait()


def test_tests_sharing_a_full_name_are_grouped_with_the_others(tmp_path: Path) -> None:
    """Two tests of one suite with the same name (RF warns of them; run_tests keeps the
    first): the summary's groups still hold every failed test. Before, the second was left
    out of its group and listed alone, as a failure no other test shares."""
    suite = tmp_path / "dup.robot"
    suite.write_text("*** Test Cases ***\nSame Name\n    Fail    Backend down\n"
                     "Same Name\n    Fail    Backend down\nOther\n    Fail    Backend down\n"
                     "Alone\n    Fail    Another thing\n")
    db = tmp_path / "store.sqlite3"
    done = subprocess.run([sys.executable, "-m", "robot", "--output", "NONE", "--log", "NONE",
                           "--report", "NONE", "--console", "none",
                           "--listener", f"rf_log_listener:db={db}", str(suite)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 4 and "rf_log_listener" not in done.stderr, done.stderr
    conn = open_store(db)
    summary = dumped(service.get_view(conn, "summary", run_id=1))["summary"]
    [group] = summary["failure_groups"]
    assert group["count"] == 3 and group["test_ids"] == ["s1-t1", "s1-t2", "s1-t3"]
    assert [t["node_id"] for t in summary["failed_tests"]] == ["s1-t4"]
    members = dumped(service.get_view(conn, "summary", run_id=1, selector=group["tests_selector"]))
    assert [t["node_id"] for t in members["summary"]["failed_tests"]] == ["s1-t1", "s1-t2", "s1-t3"]
