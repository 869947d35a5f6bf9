"""The command line as a newcomer meets it: every failure watched, arguments it cannot take,
where --db goes and what it does not create, Ctrl-C during an import."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_RESULTS, cli

XML = FIXTURE_RESULTS / "7.5" / "output.xml"


def test_watch_reports_every_failure_of_a_run_however_many(tmp_path: Path) -> None:
    suite = tmp_path / "many.robot"
    suite.write_text("*** Test Cases ***\n" + "".join(
        f"Case {i}\n    Fail    failure {i}\n" for i in range(250)))
    subprocess.run([sys.executable, "-m", "robot", "--output", str(tmp_path / "out.xml"),
                    "--log", "NONE", "--report", "NONE", "--console", "none", str(suite)],
                   check=False, capture_output=True)
    db = tmp_path / "s.db"
    assert cli("import", str(tmp_path / "out.xml"), db=db).returncode == 0
    watched = cli("watch", "1", db=db)
    assert watched.returncode == 0, watched.stderr
    failures = [line for line in watched.stdout.splitlines() if line.startswith("FAIL s1-t")]
    assert failures == [f"FAIL s1-t{i + 1} Case {i}: failure {i}" for i in range(250)]


@pytest.mark.parametrize("arguments", [
    ("tree", "1", "--page-size", "0"), ("tree", "1", "--page-size", "500"),
    ("search", "1", "x", "--page-size", "-1"), ("failures", "1", "--limit", "0"),
    ("failures", "1", "--limit", "-3"), ("runs", "--limit", "0"), ("runs", "--limit", "x"),
    ("watch", "1", "--interval", "0"), ("prune", "--keep", "-1"), ("prune",),
    ("summary", "1", "--colour"), ("summary", "one"), ("message",), ("window",),
    ("tree", "s1-s1-t2", "s1-s1-t3"), ("failures", "s1-s1-t2", "--test", "s1-s1-t3"),
    ("failures", "1", "s1-s1-t2", "--test", "s1-s1-t3"),
])
def test_arguments_a_command_cannot_take_are_invalid_argument(tmp_path: Path,
                                                              arguments: tuple[str, ...]) -> None:
    db = tmp_path / "s.db"
    assert cli("import", str(XML), db=db).returncode == 0
    text = cli(*arguments, db=db)
    assert text.returncode == 2 and text.stderr.startswith("error [INVALID_ARGUMENT]: "), text.stderr
    assert "Traceback" not in text.stderr and text.stdout == ""
    as_json = cli(*arguments, "--json", db=db)
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["error"]["code"] == "INVALID_ARGUMENT", as_json.stdout


def test_a_node_where_the_run_goes_reads_the_newest_run(tmp_path: Path) -> None:
    """What a person types after a summary names a test: ``tree s1-s1-t2``, ``failures
    s1-s1-t2``, ``search text``; the run left out is the newest, as for ``summary``."""
    db = tmp_path / "s.db"
    older = FIXTURE_RESULTS / "6.0.2" / "output.xml"
    assert cli("import", str(older), str(XML), db=db).returncode == 0
    for command, newest, first in [
        (("tree", "s1-s1-t2"), ("tree", "2", "s1-s1-t2"), ("tree", "1", "s1-s1-t2")),
        (("window", "s1-s1-t2-k1"), ("window", "2", "s1-s1-t2-k1"), None),
        (("message", "s1-s1-t2"), ("message", "latest", "s1-s1-t2"), None),
        (("search", "differ"), ("search", "2", "differ"), None),
        (("failures", "s1-s1-t2"), ("failures", "--test", "s1-s1-t2"), ("failures", "1", "--test",
                                                                         "s1-s1-t2")),
        (("failures", "2", "Failing Assertion"), ("failures", "--test", "s1-s1-t2"), None),
    ]:
        shown = cli(*command, "--json", db=db)
        assert shown.returncode == 0, (command, shown.stderr)
        assert json.loads(shown.stdout) == json.loads(cli(*newest, "--json", db=db).stdout)
        assert '"run_id": 2' in shown.stdout, command
        if first:
            assert json.loads(shown.stdout) != json.loads(cli(*first, "--json", db=db).stdout)
    assert "values differ: expected-value != actual-value" in cli("failures", "s1-s1-t2", db=db).stdout


def test_failures_print_a_failures_diff_as_log_html_shows_it(tmp_path: Path) -> None:
    """``Should Be Equal`` of multi-line strings and ``Lists Should Be Equal`` say what differs
    on the lines after their first: the evidence, which the failure path printed as "… (7 more
    lines)". A diff longer than a screen ends with the command that prints it whole."""
    suite = tmp_path / "diffs.robot"
    long_text = "\\n".join(f"line {i}" for i in range(40))
    suite.write_text(
        "*** Settings ***\nLibrary    Collections\n\n*** Test Cases ***\n"
        "Texts\n    Should Be Equal    abc\\ndef\\nghi    abc\\nxyz\\nghi\n"
        "Lists\n    ${a} =    Create List    1    2    3\n    ${b} =    Create List    1    5    3\n"
        "    Lists Should Be Equal    ${a}    ${b}\n"
        f"Long\n    Should Be Equal    {long_text}    {long_text.replace('line', 'LINE')}\n"
        "Driver\n    Fail    SessionNotCreatedException: Message: session not created\\n"
        "Stacktrace:\\n" + "".join(f"#{i} 0x560e3385{i:04x} <unknown>\\n" for i in range(18))
        + "\\nGetHandleVerifier [0x00CB8893+48451]\\n(No symbol) [0x00C4B8A1]\\ndone\n")
    subprocess.run([sys.executable, "-m", "robot", "--output", str(tmp_path / "out.xml"),
                    "--log", "NONE", "--report", "NONE", "--console", "none", str(suite)],
                   check=False, capture_output=True)
    db = tmp_path / "s.db"
    assert cli("import", str(tmp_path / "out.xml"), db=db).returncode == 0
    shown = cli("failures", db=db)
    assert shown.returncode == 0, shown.stderr
    lines = [line.strip() for line in shown.stdout.splitlines()]
    at = lines.index("FAIL: Multiline strings are different:")
    assert lines[at + 1:at + 8] == ["--- first", "+++ second", "@@ -1,3 +1,3 @@", "abc", "-def",
                                    "+xyz", "ghi"]
    at = lines.index("FAIL: Lists are different:")
    assert lines[at + 1] == "Index 1: 2 != 5"
    at = lines.index("Failure path of s1-t3:")
    ends = [line for line in lines[at:] if line.startswith("… (")]
    message = json.loads(cli("failures", "s1-t3", "--json", db=db).stdout)
    shown, failed = message["failures"][0]["path"][-1]["messages"]  # RF's INFO: both values
    assert (shown["level"], failed["level"]) == ("INFO", "FAIL")
    def seen(text: str) -> int:  # blank lines are shown, not counted
        return sum(bool(line.strip()) for line in text.splitlines())

    assert ends == [f"… ({seen(shown['text']) - 4} more lines:"
                    f" rf-log-mcp message 1 {shown['id']})",
                    f"… ({seen(failed['text']) - 24} more lines:"
                    f" rf-log-mcp message 1 {failed['id']})"]
    assert "+LINE 39" in cli("message", "1", failed["id"], db=db).stdout
    # a browser driver's native stack: folded, the lines around it kept
    at = lines.index("FAIL: SessionNotCreatedException: Message: session not created")
    assert lines[at + 1:at + 6] == ["Stacktrace:", "… 18 native frames", "",
                                    "… 2 native frames", "done"]
    summary = [line.strip() for line in cli("summary", db=db).stdout.splitlines()]
    at = summary.index("SessionNotCreatedException: Message: session not created")
    assert summary[at + 1:at + 4] == ["Stacktrace:", "… 18 native frames", "… (2 more lines)"]


def test_a_text_cut_for_the_terminal_shows_a_last_line_rather_than_saying_it_is_left() -> None:
    """A skip-on-failure test's message is three lines and the failure it hid: "… (1 more
    line)" took the line the failure would have taken."""
    from rf_log_mcp.render_text import first_lines, matching_lines

    hidden = "Failed test skipped using 'robot:skip-on-failure' tag.\n\nOriginal failure:\nflaky"
    assert first_lines(hidden) == hidden.splitlines()
    assert first_lines(hidden + "\nmore") == [*hidden.splitlines(), "more"]  # blank: not counted
    assert first_lines(hidden + "\nmore\nand more") == [*hidden.splitlines(), "… (2 more lines)"]
    # RF's status of a failed setup and teardown: its blank line is shown, not counted
    both = "Setup failed:\nrefused\n\nAlso teardown failed:\ntable locked"
    assert first_lines(both) == both.splitlines()
    assert first_lines(both + "\nx\ny") == [*both.splitlines()[:4], "… (3 more lines)"]
    assert first_lines(both, 2) == [*both.splitlines()[:2], "… (2 more lines)"]
    # RF's continued failures (a template's rows): a blank line between each, none counted
    # (three lines of a count showed one failure and said "… (3 more lines)" of two)
    several = "Several failures occurred:\n\n1) a\n\n2) b\n\n3) c\n\n4) d"
    assert first_lines(several) == [*several.splitlines()[:5], "… (2 more lines)"]
    assert first_lines("one\ntwo", 1) == ["one", "two"]
    assert first_lines("one\ntwo\nthree", 1, rest=": see x") == ["one", "… (2 more lines: see x)"]
    # RequestsLibrary's response: each line ends with " ", the last is " ": not counted
    response = "GET Response : url=x \n status=404 \n headers={} \n body={} \n "
    seen = ["GET Response : url=x", " status=404", " headers={}", " body={}"]
    assert first_lines(response, 4) == seen
    assert matching_lines(response, "body", 2) == ["… (2 lines before)", *seen[2:]]


def test_db_goes_before_or_after_the_command(tmp_path: Path) -> None:
    """Also: a command closes its store before the process ends (Python 3.13 warns of a
    connection left to the collector: the import, prune and doctor did)."""
    db, shown = tmp_path / "s.db", {"PYTHONWARNINGS": "default"}
    imported = cli("--db", str(db), "import", str(XML), env=shown)
    assert imported.returncode == 0 and imported.stderr == "", imported.stderr
    before = cli("--db", str(db), "runs", env=shown)
    after = cli("runs", "--db", str(db))
    assert before.returncode == after.returncode == 0 and before.stderr == ""
    assert before.stdout == after.stdout and "Fixture" in before.stdout
    for command in (("prune", "--keep", "1"), ("doctor",)):
        done = cli("--db", str(db), *command, env=shown)
        assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["before", "after"])
async def test_the_server_serves_the_store_db_names_before_or_after_serve(tmp_path: Path,
                                                                         where: str) -> None:
    """An MCP host's configuration `rf-log-mcp serve --db PATH` (or `--db PATH serve`): the
    server answers from that store, not from $RF_LOG_MCP_DB's (it used to ignore --db, and
    refused it after `serve`), and so do the imports it starts."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    db, other = tmp_path / "named.sqlite3", tmp_path / "other.sqlite3"
    assert cli("import", str(XML), db=db).returncode == 0
    option = ("--db", str(db))
    arguments = [*option, "serve"] if where == "before" else ["serve", *option]
    params = StdioServerParameters(command=sys.executable, args=["-m", "rf_log_mcp", *arguments],
                                   env={"RF_LOG_MCP_DB": str(other)})
    async with Client(params) as client:
        listed = (await client.call_tool("list_runs", {})).structured_content
        imported = (await client.call_tool("parse_result", {"path": str(XML)})).structured_content
    assert listed is not None and imported is not None
    assert [(run["run_id"], run["name"]) for run in listed["runs"]] == [(1, "Fixture")]
    assert imported["ok"] and imported["run_id"] == 1  # the same file: found in that store
    assert not other.exists()


@pytest.mark.parametrize("command", [("runs",), ("summary", "latest"), ("failures", "1"),
                                     ("tree", "1"), ("window", "1", "s1-t1"), ("search", "1", "x"),
                                     ("prune", "--keep", "1"), ("doctor",)])
def test_reading_a_store_that_is_not_there_creates_nothing(tmp_path: Path,
                                                           command: tuple[str, ...]) -> None:
    mistyped = tmp_path / "no-such-folder" / "stroe.db"
    done = cli("--db", str(mistyped), *command)
    assert done.returncode == 1, done.stdout + done.stderr
    assert str(mistyped) in done.stdout + done.stderr
    assert not mistyped.parent.exists()
    if command != ("doctor",):
        assert done.stderr.startswith("error [STORE_NOT_FOUND]")


@pytest.mark.slow
def test_ctrl_c_twice_during_an_import_leaves_no_run_and_gives_the_space_back(tmp_path: Path) -> None:
    from gen_output import generate  # benchmarks/: the project's own output.xml generator

    source = generate(tmp_path / "big.xml", 40)
    db = tmp_path / "s.db"
    importing = subprocess.Popen([sys.executable, "-m", "rf_log_mcp", "import", str(source),
                                  "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # until rows of the import are committed
        time.sleep(0.05)
        try:
            with sqlite3.connect(db, timeout=10) as reader:
                if reader.execute("SELECT count(*) FROM nodes").fetchone()[0] > 10_000:
                    break
        except sqlite3.OperationalError:
            continue
    importing.send_signal(signal.SIGINT)
    time.sleep(0.05)
    importing.send_signal(signal.SIGINT)  # while it cleans up
    _, err = importing.communicate(timeout=300)
    assert importing.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    with sqlite3.connect(db) as reader:
        left = reader.execute("SELECT run_id, status FROM runs").fetchall()
        assert left == [], (left, err)  # hidden ones too
        assert reader.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0
    doctor = cli("doctor", db=db)
    assert doctor.stdout.strip().endswith(f"OK: ready; 0 runs in {db}"), doctor.stdout
    assert "runs            {}" in doctor.stdout
    assert cli("runs", db=db).stdout.startswith("no runs yet")
    # the rows' pages went back to the file system; what the full-text index keeps of them
    # until prune --vacuum is a fraction of the file
    assert db.stat().st_size < source.stat().st_size / 2
    assert cli("prune", "--keep", "0", "--vacuum", db=db).returncode == 0
    assert db.stat().st_size < 1_000_000


_CONTROLS = """*** Test Cases ***
Controls
    VAR    ${name}    alice
    TRY
        Fail    boom 42
    EXCEPT    boom*    type=glob    AS    ${err}
        Log    ${err}
    END
    ${n} =    Set Variable    ${2}
    WHILE    ${n} > 0    limit=10
        ${n} =    Evaluate    ${n} - 1
    END
    FOR    ${i}    IN RANGE    5
        IF    ${i} == 3    Fail    item ${i} is corrupt
    END
"""


def test_control_structures_read_as_log_html_shows_them(tmp_path: Path) -> None:
    """A FOR's variables, flavor and values, an iteration's values, an IF's and WHILE's
    condition, an EXCEPT's patterns, the variables a keyword call assigns: what tells a step
    apart in log.html, on its line of tree, window and failures (the failure path showed
    "ITERATION ...-k4  [FAIL]" and "IF ...  [FAIL]" and nothing of which iteration or
    condition)."""
    from robot_runs import robot

    (tmp_path / "controls.robot").write_text(_CONTROLS)
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--output", "NONE", "--report",
                 "NONE", "--log", "NONE", str(tmp_path / "controls.robot"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    failures = cli("failures", db=db, cwd=tmp_path)
    assert failures.returncode == 0, failures.stderr
    lines = [line.strip() for line in failures.stdout.splitlines()]
    # each step where it is written (an iteration is its FOR's line: none of its own)
    assert "FOR s1-t1-k6  [FAIL]  ${i}  IN RANGE  5  controls.robot:13" in lines
    assert "ITERATION s1-t1-k6-k4  [FAIL]  ${i}=3" in lines
    assert "IF s1-t1-k6-k4-k1  [FAIL]  ${i} == 3  controls.robot:14" in lines
    assert "args: item ${i} is corrupt" in lines and "FAIL: item 3 is corrupt" in lines
    tree = cli("tree", "latest", "s1-t1", db=db).stdout
    assert "s1-t1-k5  [PASS]  ${n} > 0  limit=10" in tree
    assert "VAR       s1-t1-k1  ${name}  [PASS]  alice" in tree
    assert "KEYWORD   s1-t1-k4  ${n} = Set Variable  [PASS]  ${2}" in tree  # as log.html
    excepts = cli("tree", "latest", "s1-t1-r2", db=db).stdout
    assert "EXCEPT    s1-t1-k3  [PASS]  boom*  type=glob  AS ${err}" in excepts
    window = cli("window", "latest", "s1-t1-k6-k4-k1-k1", db=db).stdout
    assert "ITERATION s1-t1-k6-k4  [FAIL]  ${i}=3" in window
    assert "IF s1-t1-k6-k4-k1  [FAIL]  ${i} == 3" in window


_SKIPS = """*** Test Cases ***
Flag One
    Skip    feature flag off
Slow One
    [Tags]    slow
    No Operation
Flag Two
    Skip    feature flag off
Known Bug
    [Tags]    robot:skip-on-failure
    Fail    known bug 123: token=Sk-9x-secret rejected
Flag Three
    Skip    feature flag off
Passes
    No Operation
"""


def _live_and_imported(tmp_path: Path, suite: str, exit_code: int,
                       *options: str) -> tuple[Path, list[sqlite3.Connection]]:
    """``suite`` run by robot with the listener (its store) and its output.xml imported: the
    store's path and both stores."""
    from robot_runs import robot

    from rf_log_listener.importers import import_result
    from rf_log_listener.store import open_store

    (tmp_path / "suite.robot").write_text(suite)
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", *options, "--output",
                 str(tmp_path / "output.xml"), str(tmp_path / "suite.robot"), cwd=tmp_path)
    assert done.returncode == exit_code, done.stdout + done.stderr
    imported = open_store(tmp_path / "imported.sqlite3")
    import_result(imported, tmp_path / "output.xml", stable_window=0)
    return db, [open_store(db), imported]


def test_the_summary_says_why_tests_were_skipped(tmp_path: Path) -> None:
    """Skipped tests grouped by their skip message, most tests first (the totals said "4
    skipped" and nothing of why; a skip-on-failure test's message holds a real failure),
    masked, the same live and imported, and on the command line."""
    from rf_log_mcp import service

    db, stores = _live_and_imported(tmp_path, _SKIPS, 0, "--skip", "slow")
    for conn in stores:
        view = service.get_view(conn, "summary", run_id=1).summary
        assert view.totals.skipped == 5
        assert [(r.message, r.count, r.test_ids) for r in view.skip_reasons] == [
            ("feature flag off", 3, ["s1-t1", "s1-t3", "s1-t5"]),
            ("Test skipped using 'slow' tag.", 1, ["s1-t2"]),
            ("Failed test skipped using 'robot:skip-on-failure' tag.\n\nOriginal failure:\n"
             "known bug 123: token=*** rejected", 1, ["s1-t4"])]
        # a later page of failed tests does not repeat them
        again = service.get_view(conn, "summary", run_id=1, selector="failed").summary
        assert again.skip_reasons is None
    shown = cli("summary", db=db)
    assert shown.returncode == 0, shown.stderr
    assert "\n".join(line.rstrip() for line in shown.stdout.splitlines()[3:10]) == (
        "Skipped tests, by reason:\n"
        "  3 tests: feature flag off\n"
        "    s1-t1, s1-t3, s1-t5\n"
        "  1 test: Test skipped using 'slow' tag.\n"
        "    s1-t2\n"
        "  1 test: Failed test skipped using 'robot:skip-on-failure' tag. Original failure: "
        "known bug 123: token=*** rejected\n"
        "    s1-t4")


_TASKS = """\
*** Tasks ***
Process Invoices
    Fail    cannot fetch invoice 42
Archive
    Skip    nothing to archive
"""


def test_an_rpa_run_says_tasks_and_one_is_not_plural(tmp_path: Path) -> None:
    """robot --rpa runs tasks (RF's console and log say "2 tasks"); the summary said "2
    tests: ..." and "1 tests" for one. The answer says ``rpa``, live and imported."""
    from robot_runs import robot

    from rf_log_listener.importers import import_result
    from rf_log_listener.store import open_store
    from rf_log_mcp import service

    db, stores = _live_and_imported(tmp_path, _TASKS, 1, "--rpa")
    for conn in stores:
        view = service.get_view(conn, "summary", run_id=1).summary
        assert (view.rpa, view.totals.total, view.totals.failed) == (True, 2, 1)
    shown = cli("summary", db=db)
    assert [line.rstrip() for line in shown.stdout.splitlines()[1:2] + shown.stdout.splitlines()[3:5]] == [
        "  2 tasks: 0 passed, 1 failed, 1 skipped", "Failed tasks:",
        "  s1-t1          Process Invoices"], shown.stdout
    assert "Skipped tasks, by reason:\n  1 task: nothing to archive\n" in shown.stdout
    conn = open_store(tmp_path / "tests.sqlite3")
    (tmp_path / "one.robot").write_text("*** Test Cases ***\nOne\n    Fail    no\n")
    robot("--output", str(tmp_path / "one.xml"), str(tmp_path / "one.robot"), cwd=tmp_path)
    import_result(conn, tmp_path / "one.xml", stable_window=0)
    assert service.get_view(conn, "summary", run_id=1).summary.rpa is None
    assert "  1 test: 0 passed, 1 failed, 0 skipped" in cli(
        "summary", db=tmp_path / "tests.sqlite3").stdout
    # failures of a run of tasks none of which failed said "No failed tests."
    (tmp_path / "ok.robot").write_text("*** Tasks ***\nArchive\n    Log    done\n")
    robot("--rpa", "--listener", f"rf_log_listener;db={tmp_path / 'ok.sqlite3'}", "--output", "NONE",
          str(tmp_path / "ok.robot"), cwd=tmp_path)
    assert cli("failures", db=tmp_path / "ok.sqlite3").stdout == "No failed tasks.\n"
    assert cli("failures", db=db).stdout.startswith("Failure path of s1-t1:\n")


def test_a_limit_says_what_it_left_out_and_a_hit_shows_its_match(tmp_path: Path) -> None:
    """``failures`` printed 10 of a run's 21 failure paths and said nothing of the 11 others;
    ``search`` printed a hit's first three lines, so a match on the ninth line of a message (or
    past the 160th character of a long one) was not on the screen."""
    suite = tmp_path / "many.robot"
    diff = "\\n".join(f"line {i}" for i in range(12)).replace("line 8", "token expired at 8")
    suite.write_text(
        "*** Test Cases ***\n"
        + "".join(f"Fails {i}\n    Fail    failure number {i}\n" for i in range(12))
        + f"Long Text\n    Log    {diff}\n"
        + f"Long Line\n    Log    {'x' * 300} deadline missed {'y' * 300}\n")
    subprocess.run([sys.executable, "-m", "robot", "--output", str(tmp_path / "out.xml"),
                    "--log", "NONE", "--report", "NONE", "--console", "none", str(suite)],
                   check=False, capture_output=True)
    db = tmp_path / "s.db"
    assert cli("import", str(tmp_path / "out.xml"), db=db).returncode == 0
    shown = cli("failures", db=db).stdout.splitlines()
    assert sum(line.startswith("Failure path of") for line in shown) == 10
    assert shown[-1] == "… 2 more failure paths (12 in all): rf-log-mcp failures latest --limit 12"
    for arguments in (("1", "--limit", "12"), ("s1-t3",), ("1", "--limit", "20")):
        assert "more failure path" not in cli("failures", *arguments, db=db).stdout, arguments
    assert cli("failures", "1", "--limit", "11", db=db).stdout.splitlines()[-1] == \
        "… 1 more failure path (12 in all): rf-log-mcp failures 1 --limit 12"
    hits = [line.strip() for line in cli("search", "token expired", db=db).stdout.splitlines()]
    at = hits.index("… (7 lines before)")
    assert hits[at + 1:at + 5] == ["line 7", "token expired at 8", "line 9", "… (2 more lines)"]
    line = next(hit for hit in cli("search", "deadline missed", db=db).stdout.splitlines()
                if "x" * 20 in hit)
    assert "deadline missed" in line and line.strip().startswith("…x") and line.endswith("…")
    grouped = cli("search", "token expired", "--group-by", "node", db=db).stdout.splitlines()
    assert grouped[1].strip().endswith("  token expired at 8"), grouped  # the match, not line 0
    first = [line.strip() for line in cli("search", "line 1", db=db).stdout.splitlines()]
    assert first[1:4] == ["line 0", "line 1", "line 2"]
    # `search 8`: a number with nothing else to look for is the text ("Nothing to search
    # for" in run 8 before); with a level it is still a run
    assert "token expired at 8" in cli("search", "8", db=db).stdout
    assert cli("search", "1", "--min-level", "FAIL", db=db).stdout.startswith("FAIL  s1-t1-k1-m1")


def test_a_teardown_that_failed_too_is_named_and_rf_s_status_read_whole(tmp_path: Path) -> None:
    """A test whose body (or setup) failed and whose teardown failed too: the failure path's
    "also failed: s1-t1-k2" named the teardown by its id alone, and the summary's "Setup
    failed: ... / Also teardown failed: ..." spent one of its three lines on RF's blank
    line and hid the teardown's failure behind "… (2 more lines)"."""
    suite = tmp_path / "fixtures.robot"
    suite.write_text(
        "*** Settings ***\nTest Teardown    Run Keywords    Log    cleaning    AND    Cleanup\n\n"
        "*** Test Cases ***\nSetup Fails\n    [Setup]    Fail    could not connect\n    Log    never\n"
        "\n*** Keywords ***\nCleanup\n    Fail    cleanup failed: table locked\n")
    db = tmp_path / "s.db"
    subprocess.run([sys.executable, "-m", "robot", "--output", "NONE", "--report", "NONE",
                    "--console", "none", "--listener", f"rf_log_listener:db={db}", str(suite)],
                   check=False, capture_output=True)
    path = cli("failures", db=db).stdout
    assert "also failed: TEARDOWN s1-t1-k2 Run Keywords  cleanup failed: table locked\n" in path
    summary = [line.strip() for line in cli("summary", db=db).stdout.splitlines()]
    at = summary.index("Setup failed:")
    assert summary[at + 1:at + 5] == ["could not connect", "", "Also teardown failed:",
                                      "cleanup failed: table locked"]


def test_a_node_s_messages_the_tree_does_not_show_are_counted_with_their_command(
        tmp_path: Path) -> None:
    """``tree`` of a library keyword showed "0 children" and nothing of the request and
    response it logged (the tree sends INFO text to no one: search reads it): it says how
    many there are and the command that prints them, which does."""
    from robot_runs import robot

    (tmp_path / "logs.robot").write_text(
        "*** Test Cases ***\nLogs\n    Log Many    GET /orders/42    status=404\n"
        "    Log    careful    WARN\n")
    db = tmp_path / "store.sqlite3"
    done = robot("--listener", f"rf_log_listener:db={db}", "--output", "NONE", "--report",
                 "NONE", "--log", "NONE", str(tmp_path / "logs.robot"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.strip() for line in cli("tree", "1", "s1-t1-k1", db=db).stdout.splitlines()]
    assert lines[1] == ("2 messages (2 INFO): rf-log-mcp search 1 --selector s1-t1-k1 --scope"
                        " node --min-level TRACE")
    warned = [line.strip() for line in cli("tree", "1", "s1-t1-k2", db=db).stdout.splitlines()]
    assert warned[1:] == ["WARN: careful"]  # shown: nothing more to read
    found = cli(*lines[1].split(": ", 1)[1].split()[1:], db=db).stdout
    assert "GET /orders/42" in found and "status=404" in found, found
    # with a selector, a lone number is the run (not the text "1" looked for in the node)
    bare = cli("search", "1", "--selector", "s1-t1-k1", db=db)
    assert bare.returncode != 0 and "Nothing to search for" in bare.stderr, bare
    assert "--selector ID --min-level TRACE" in bare.stderr  # the terminal's way, not the tool's
