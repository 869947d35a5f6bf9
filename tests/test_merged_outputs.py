"""Outputs merged by ``rebot --merge`` and HTML status messages, on real runs: the usual CI
pattern of a run, a re-run of its failed tests (``--rerunfailed``) and one merged output,
all three imported. RF writes each merged test's message as HTML holding the old and the
new message; answers show it as text and sign it by the failure it reports now, so the
merged run's failures are the failures the runs before it had."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest
from conftest import cli
from robot.utils import html_escape

from rf_log_listener.importers import import_result
from rf_log_listener.status_text import current, visible
from rf_log_listener.store import open_store
from rf_log_mcp import service

SUITE = """\
*** Variables ***
${ROUND}    1

*** Test Cases ***
Stable
    Log    fine

Flaky
    Should Be Equal    ${ROUND}    2    round ${ROUND} is not the second    values=False

Broken
    Fail    Connection refused: 10.0.3.${ROUND} after 30${ROUND}2 ms

Skips On Rerun
    Skip If    ${ROUND} == 2    not run again
    Fail    Quota exceeded for order ${ROUND}7

Html Message
    Fail    *HTML* <b>Checkout</b> failed:<br>total &lt; 0 in <a href="http://shop.example/o/1">order</a>

Added Later
    [Tags]    new
    Fail    Only in the second round
"""

MERGED_BROKEN = ("Test has been re-executed and results merged.\nNew status: FAIL\n"
                 "New message: Connection refused: 10.0.3.2 after 3022 ms\n\n"
                 "Old status: FAIL\nOld message: Connection refused: 10.0.3.1 after 3012 ms")


def robot(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "robot", "--log", "NONE", "--report", "NONE",
                           "--console", "none", *args], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode < 250, done.stderr


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run 1: the suite without ``Added Later``; run 2: its failed tests again and
    ``Added Later``; run 3: rebot's merge of the two. All three imported."""
    folder = tmp_path_factory.mktemp("merged")
    suite = folder / "shop.robot"
    suite.write_text(SUITE)
    first, second, joined = folder / "first.xml", folder / "second.xml", folder / "merged.xml"
    robot("--exclude", "new", "--output", str(first), str(suite))
    robot("--variable", "ROUND:2", "--test", "Flaky", "--test", "Broken", "--test", "Skips On Rerun",
          "--test", "Html Message", "--test", "Added Later", "--output", str(second), str(suite))
    done = subprocess.run([sys.executable, "-m", "robot.rebot", "--merge", "--log", "NONE",
                           "--report", "NONE", "--output", str(joined), str(first), str(second)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert joined.is_file(), done.stderr
    conn = open_store(folder / "store.sqlite3")
    for run_id, path in enumerate((first, second, joined), start=1):
        assert import_result(conn, path, stable_window=0).run_id == run_id
    return {"conn": conn, "db": folder / "store.sqlite3"}


def ok(response: Any) -> Any:
    assert response.ok, response.error
    return response


def test_a_merged_run_shows_its_messages_as_text(merged: dict[str, Any]) -> None:
    conn = merged["conn"]
    summary = ok(service.get_view(conn, "summary", run_id=3))["summary"]
    assert summary["totals"] == {"total": 6, "passed": 2, "failed": 4, "skipped": 0}
    assert "failure_groups" not in summary  # four failures, each its own
    messages = {t["name"]: t["message"] for t in summary["failed_tests"]}
    assert messages["Broken"] == MERGED_BROKEN
    assert messages["Html Message"].startswith("Test has been re-executed and results merged.\n")
    assert messages["Html Message"].endswith("Old message: Checkout failed:\ntotal < 0 in order")
    assert messages["Added Later"] == "Test added from merged output.\nOnly in the second round"
    assert "<span" not in str(messages) and "*HTML*" not in str(messages)
    # the skipped re-run was ignored by rebot: the old failure stands, said so
    assert messages["Skips On Rerun"].startswith(
        "Test has been re-executed and results merged. Latter result had SKIP status and was"
        " ignored. Message:\nnot run again\nOriginal message:\nQuota exceeded for order 17")

    path = ok(service.get_view(conn, "failure_path", run_id=3, selector="s1-t3"))
    assert path["failure_path"]["path"][0]["message"] == MERGED_BROKEN
    status = ok(service.get_view(conn, "message", run_id=3, selector="s1-t3"))["message"]
    assert status["html"] is True and status["text"] == MERGED_BROKEN
    hits = ok(service.search_messages(conn, "re-executed", run_id=3))["hits"]
    assert {h["id"]: h["text"] for h in hits if h.get("kind") == "status"}["s1-t3"] == MERGED_BROKEN
    # searched as the text it shows: words the markup separates are found, the markup is not
    hits = ok(service.search_messages(conn, "New message: Connection refused", run_id=3))["hits"]
    assert [(h["id"], h["text"]) for h in hits] == [("s1-t3", MERGED_BROKEN)]
    # "total &lt; 0": the FAIL message the keyword logged (as HTML, without RF's prefix), not
    # again as its status; the merged test's status says it too
    hits = ok(service.search_messages(conn, "total < 0", run_id=3))["hits"]
    assert [(h["id"], h.get("kind")) for h in hits] == [("s1-t5-k1-m1", None), ("s1-t5", "status")]
    assert hits[0]["text"] == "Checkout failed:\ntotal < 0 in order"  # its line break kept
    for markup in ("span", "new-message", "&lt;", "*HTML*", "<br>"):
        assert ok(service.search_messages(conn, markup, run_id=3))["hits"] == [], markup
    # the first run's own HTML failure: its text, line break kept, and its link
    html = ok(service.get_view(conn, "message", run_id=1, selector="s1-t5"))["message"]
    assert html["text"] == "Checkout failed:\ntotal < 0 in order"
    assert [a["reference"] for a in html["attachments"]] == ["http://shop.example/o/1"]


def test_a_merged_failure_signs_as_the_runs_before_it(merged: dict[str, Any]) -> None:
    conn = merged["conn"]

    def signed(test: str) -> dict[int, str | None]:
        return dict(conn.execute(
            "SELECT r.run_id, s.text FROM run_tests r JOIN test_names t USING (name_id) LEFT JOIN"
            " signatures s USING (signature_id) WHERE t.longname = ?", (test,)).fetchall())

    assert signed("Shop.Broken") == dict.fromkeys(
        (1, 2, 3), "Connection refused: <ip> after <duration> [in BuiltIn.Fail]")
    assert signed("Shop.Skips On Rerun") == {
        3: "Quota exceeded for order <n> [in BuiltIn.Fail]", 2: None,
        1: "Quota exceeded for order <n> [in BuiltIn.Fail]"}
    assert set(signed("Shop.Html Message").values()) == {
        "Checkout failed: total < <n> in order [in BuiltIn.Fail]"}
    # the merged run repeats the two runs' tests: a copy (copies.py), their history is theirs
    assert conn.execute("SELECT copy_of FROM runs WHERE run_id = 3").fetchone() == (1,)
    quota = ok(service.test_history(conn, test="Shop.Skips On Rerun"))
    assert [(r["run_id"], r["status"]) for r in quota["runs"]] == [(2, "SKIP"), (1, "FAIL")]

    changes = ok(service.compare_runs(conn, head=3, base=1))
    kinds = {c["test"]: c["change"] for c in changes["changes"]}
    assert kinds == {"Shop.Broken": "still_failing", "Shop.Skips On Rerun": "still_failing",
                     "Shop.Html Message": "still_failing", "Shop.Flaky": "fixed",
                     "Shop.Added Later": "added"}, kinds
    summary = ok(service.get_view(conn, "summary", run_id=3))["summary"]
    seen = {t["name"]: (t["signature_seen"]["earlier_runs"], t["signature_seen"]["first_run_id"])
            for t in summary["failed_tests"]}
    assert seen == {"Broken": (2, 1), "Skips On Rerun": (1, 1), "Html Message": (2, 1),
                    "Added Later": (1, 2)}


def test_the_command_line_prints_a_merged_run_without_markup(merged: dict[str, Any]) -> None:
    done = cli("failures", "3", "--test", "s1-t3", db=merged["db"])
    assert done.returncode == 0, done.stderr
    assert "FAIL: Connection refused: 10.0.3.2 after 3022 ms" in done.stdout
    done = cli("message", "3", "s1-t3", db=merged["db"])
    assert done.stdout.strip() == MERGED_BROKEN, done.stdout
    summary = cli("summary", "3", db=merged["db"])
    assert "None" not in summary.stdout and "<span" not in summary.stdout, summary.stdout
    assert "took " in summary.stdout  # a merged output has no start time: not printed as None
    history = cli("history", "Shop.Broken", db=merged["db"])
    assert "None" not in history.stdout and "last pass" not in history.stdout, history.stdout


def test_visible_text_reads_back_what_robot_escaped() -> None:
    """RF escapes a plain message into a merged one with ``html_escape`` (links made
    anchors): its visible text is the message again, character for character."""
    pieces = ["a", " ", "  ", "\n", "\t", "<", ">", "&", "&amp;", '"', "'", "é", "😀", "<br>",
              "http://x.example/a?b=1&c=2", "www.example.com", "*HTML*", "**bold**", ";", "#"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20))).lstrip()
        assert visible("*HTML* " + html_escape(text)) == text
        assert current("*HTML* Test added from merged output.<hr>" + html_escape(text)) == text
    assert visible("plain <b>kept</b>") == "plain <b>kept</b>"
    assert current("plain") == "plain"
    assert visible("*HTML* a <!-- hidden --> b<br/>c &amp; <b>d</b> <!-- open") == "a  b\nc & d <!-- open"
    # long texts of what tags start with are read in one pass (they took 4 s and 62 s)
    assert visible("*HTML* " + "a<b " * 20000) == "a<b " * 20000
    assert visible("*HTML* " + "<!-- x " * 20000) == "<!-- x " * 20000
