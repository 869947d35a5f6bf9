"""Live capture looking at RF's model where a listener's keywords make it differ from the files.

A listener that runs keywords (``BuiltIn().run_keyword``) puts them where RF's model and
robot's output files disagree with what live capture (RF 7.2+) assumed of the model:

* in ``start_test``/``start_keyword``, before RF makes the test's or keyword's setup: a look
  while the setup ran took it for ended (a step before it in the body), and a setup that had
  not ended was left out of the store, with what it ran;
* in ``end_test``/``end_keyword``, after the teardown: a look while such a keyword ran took
  it for ended (a teardown seen), and it was left out;
* in ``start_while``: RF makes the loop's first iteration before it calls listeners, so the
  keyword follows the iteration in the model (the files have it before), and a look while it
  ran took the iteration, not begun, for one a WHILE makes and never runs: it was left out.

The listener here looks (what the capture's ticker does every half second) from robot's
thread at exactly those moments; the live store must equal the output file and RF's model.
``tests/stress/live_race.py`` runs such a listener beside the adversary at random moments.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle import dump_execution_result, dump_import, dump_store
from robot_runs import robot

from rf_log_listener.store import open_store

LOOKING = '''
import gc

from robot.libraries.BuiltIn import BuiltIn

LOOK_WHILE = ("keyword setup", "test setup", "leaving", "ending", "loop starts")


def run(text):
    BuiltIn().run_keyword("Log", text)


class looking:
    ROBOT_LISTENER_API_VERSION = 3

    def start_test(self, data, result):
        run(f"starting {data.name}")

    def end_test(self, data, result):
        run(f"ending {data.name}")

    def start_keyword(self, data, result):
        if data.name == "With Fixtures":
            run("entering")
        if data.args and str(data.args[0]).startswith(LOOK_WHILE):
            capture = [o for o in gc.get_objects() if type(o).__name__ == "rf_log_listener"]
            capture[0].tick()  # the ticker's look, now: while this keyword runs

    def end_keyword(self, data, result):
        if data.name == "With Fixtures":
            run("leaving")

    def start_while(self, data, result):
        run("loop starts")

    def end_while(self, data, result):
        run("loop ended")
'''

SUITE = """*** Test Cases ***
Fixtures
    [Setup]    Log    test setup
    With Fixtures
    [Teardown]    Log    test teardown

Loops
    ${n} =    Set Variable    ${0}
    WHILE    $n < 2
        ${n} =    Evaluate    $n + 1
    END
    WHILE    True    limit=1    on_limit=pass
        Log    once
    END

*** Keywords ***
With Fixtures
    [Setup]    Log    keyword setup
    Log    body
    [Teardown]    Log    keyword teardown
"""


@pytest.mark.parametrize("version", ["", "7.2.2"])  # RF 7.2+: live capture reads RF's model
def test_looks_where_a_listeners_keywords_ran_lose_nothing(tmp_path: Path, version: str) -> None:
    (tmp_path / "looking.py").write_text(LOOKING)
    (tmp_path / "order.robot").write_text(SUITE)
    db = tmp_path / "live.sqlite3"
    done = robot("--pythonpath", str(tmp_path), "--listener", "looking",
                 "--listener", f"rf_log_listener;db={db}", "order.robot", cwd=tmp_path,
                 version=version)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rf_log_listener" not in done.stderr, done.stderr
    expected = dump_execution_result(str(tmp_path / "output.xml"))
    assert dump_store(open_store(db), 1) == expected
    assert dump_import(tmp_path / "import.sqlite3", tmp_path / "output.xml") == expected
    steps = {n["id"]: (n["type"], (n.get("args") or [""])[0]) for n in expected["nodes"]}
    assert [steps[f"s1-t1-k{i}"] for i in range(1, 6)] == [
        ("SETUP", "test setup"), ("KEYWORD", "starting Fixtures"), ("KEYWORD", ""),
        ("KEYWORD", "ending Fixtures"), ("TEARDOWN", "test teardown")]
    assert [steps[f"s1-t1-k3-k{i}"] for i in range(1, 6)] == [
        ("SETUP", "keyword setup"), ("KEYWORD", "entering"), ("KEYWORD", "body"),
        ("KEYWORD", "leaving"), ("TEARDOWN", "keyword teardown")]
    assert [steps[f"s1-t2-k3-k{i}"] for i in (1, 2, 3, 4)] == [
        ("KEYWORD", "loop starts"), ("ITERATION", ""), ("ITERATION", ""),
        ("KEYWORD", "loop ended")]
    # one iteration: the keyword of its start before it, of its end after it
    assert [steps[f"s1-t2-k4-k{i}"] for i in (1, 2, 3)] == [
        ("KEYWORD", "loop starts"), ("ITERATION", ""), ("KEYWORD", "loop ended")]
    assert steps["s1-t2-k4-k2-k1"] == ("KEYWORD", "once")


def test_a_keyword_begun_after_a_teardown_the_look_had_not_seen_ends_when_it_ends() -> None:
    """A look reads whether a keyword has a teardown before it reads the body's length; with
    a listener's ``end_keyword`` keyword, robot's thread can run the whole teardown and start
    that keyword in between. The look then opens the keyword as a body item, and the next
    look, which sees the teardown, must not take it for ended (it closed it as NOT SET: seen
    once in 240 runs of the live race on RF 7.4.2). Real RF result objects, the look's two
    reads' outcomes set up in turn."""
    from datetime import datetime, timedelta

    from robot.result import TestCase

    from rf_log_listener.event_pipe import CLOSE, OPEN
    from rf_log_listener.result_events import OpenNodes, follows_the_model

    assert follows_the_model()
    events: list[tuple] = []
    nodes = OpenNodes(events.append)
    at = datetime(2026, 12, 7, 5, 0)
    test = TestCase(name="T", start_time=at)
    user = test.body.create_keyword(name="With Teardown", status="NOT SET", start_time=at)
    nodes.open_root(test, "TEST", (OPEN, "TEST", "test", "T", None, None, None, None))
    user.body.create_keyword(name="Log", args=("body",), status="PASS", start_time=at,
                             elapsed_time=timedelta(milliseconds=1))
    leaving = user.body.create_keyword(name="Log", args=("leaving",), status="NOT SET",
                                       start_time=at + timedelta(milliseconds=5))
    nodes.follow(ended=False)  # the teardown not seen yet, the body read with `leaving` in it
    user.teardown.config(name="Log", args=("teardown",), status="PASS",
                         start_time=at + timedelta(milliseconds=2),
                         elapsed_time=timedelta(milliseconds=1))
    nodes.follow(ended=False)  # the teardown seen: `leaving` still runs
    closes = [event for event in events if event[0] == CLOSE]
    assert [event[1] for event in closes] == ["PASS"]  # the body's first Log only
    leaving.status, leaving.elapsed_time = "PASS", timedelta(milliseconds=1)
    user.status, user.elapsed_time = "PASS", timedelta(milliseconds=7)
    nodes.follow(ended=True)
    opened = [event[5] for event in events if event[0] == OPEN]
    statuses = [event[1] for event in events if event[0] == CLOSE]
    assert opened[-3:] == [("body",), ("leaving",), ("teardown",)]
    assert statuses == ["PASS", "PASS", "PASS", "PASS"]  # body, leaving, teardown, the keyword


def test_a_while_s_first_iteration_ending_during_a_look_keeps_its_place() -> None:
    """A look reads whether a WHILE's first iteration has ended or begun, then the loop's
    body. In between, robot's thread can end that iteration (RF sets its status before its
    elapsed time) and append the next: the look left the first out as not begun and opened
    the second in its place, and both iterations in the store were the second, its messages
    under the first's id (once in 160 runs of the PostgreSQL live race beside CI). Real RF
    result objects; the iteration's status read is where robot's thread moves on."""
    from datetime import datetime, timedelta

    from robot.result import Message, TestCase, WhileIteration

    from rf_log_listener.event_pipe import CLOSE, MESSAGE, OPEN
    from rf_log_listener.result_events import OpenNodes, follows_the_model

    assert follows_the_model()
    at = datetime(2026, 12, 8, 0, 0)
    ms = timedelta(milliseconds=1)
    test = TestCase(name="T", start_time=at)
    loop = test.body.create_while(condition="$n < 2", status="NOT SET", start_time=at)

    def evaluate(iteration: WhileIteration, n: int, ended: bool) -> None:
        step = iteration.body.create_keyword(name="Evaluate", args=("$n + 1",),
                                             status="PASS" if ended else "NOT SET",
                                             start_time=at + n * 10 * ms + 3 * ms)
        step.body.append(Message(f"Arguments: [ '{n} + 1' ]", "TRACE", timestamp=step.start_time))
        if ended:
            step.elapsed_time = ms

    class MovesOn(WhileIteration):
        """The first iteration: reading its status, once armed, is where robot's thread ends
        it (status set, elapsed time not yet) and runs on into the next."""
        __slots__ = ("armed",)

        @property
        def status(self) -> str:
            value = WhileIteration.status.__get__(self)
            if getattr(self, "armed", False):
                self.armed = False
                self.elapsed_time = 8 * ms
                evaluate(loop.body.create_iteration(status="NOT SET", start_time=at + 9 * ms), 1,
                         ended=False)
            return value

        @status.setter
        def status(self, value: str) -> None:
            WhileIteration.status.__set__(self, value)

    first = loop.body.append(MovesOn(status="FAIL", start_time=at))  # made before start_while
    starts = loop.body.create_keyword(name="Log", args=("loop starts",), status="NOT SET",
                                      start_time=at + ms)
    events: list[tuple] = []
    nodes = OpenNodes(events.append)
    nodes.open_root(test, "TEST", (OPEN, "TEST", "test", "T", None, None, None, None))
    nodes.follow(ended=False)  # the listener's keyword runs, the iteration not begun
    starts.status, starts.elapsed_time = "PASS", ms
    evaluate(first, 0, ended=True)  # the first iteration ran, no look meanwhile
    first.status, first.armed = "PASS", True
    nodes.follow(ended=False)
    second = loop.body[2]
    second.body[0].status, second.body[0].elapsed_time = "PASS", ms
    second.status, second.elapsed_time = "PASS", 8 * ms
    loop.status, loop.elapsed_time = "PASS", 20 * ms
    test.status, test.elapsed_time = "PASS", 20 * ms
    nodes.follow(ended=True)
    opened_and_logged = [(event[1], event[5]) if event[0] == OPEN else event[2]
                         for event in events if event[0] in (OPEN, MESSAGE)]
    assert opened_and_logged == [
        ("TEST", None), ("WHILE", None), ("KEYWORD", ("loop starts",)),
        ("ITERATION", None), ("KEYWORD", ("$n + 1",)), "Arguments: [ '0 + 1' ]",
        ("ITERATION", None), ("KEYWORD", ("$n + 1",)), "Arguments: [ '1 + 1' ]"]
    assert [event[1] for event in events if event[0] == CLOSE] == ["PASS"] * 6
