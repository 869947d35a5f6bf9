"""Which way a failure went (read side, shared by failure_path and summary): the failing
branch below a node, the failures beside it, and what made a test fail from outside its own
steps (a parent suite's setup or teardown, a fatal error or exit-on-failure stop earlier in
the run)."""

from __future__ import annotations

import itertools
import sqlite3
from collections import namedtuple

from rf_log_listener import events as ev
from rf_log_listener.store import FAILED_STARTS, NOTABLE_MESSAGES, NOTABLE_NODES, run_base

from ..shaping import Shaper
from .common import (
    NODE_COLUMNS,
    NodeRow,
    last_notable_child,
    node_by_key,
    nodes_by_keys,
    notable_children,
    with_failure_text,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any

SIBLINGS_COMPARED = 50  # failing children weighed to choose the branch a path follows
OTHERS_SHOWN = 10  # failures beside a step named on it; the rest: tree with projection failures

EXIT_ON_ERROR = "Error occurred and exit-on-error mode is in use."
# RF's own texts (robot/running/status.py) for tests it failed without running them.
STOP_MESSAGES = {
    "Test execution stopped due to a fatal error.": "fatal_error",
    "Failure occurred and exit-on-failure mode is in use.": "exit_on_failure",
    EXIT_ON_ERROR: "exit_on_error",
}
PARENT_SETUP = "Parent suite setup failed:\n"
PARENT_TEARDOWN = "arent suite teardown failed:\n"  # "Parent ..." or "Also parent ..."


# One step of a failing branch (node, a NodeRow), and the other failing children of the step
# above it that the branch did not follow (others: NodeRows; others_total: how many in all):
# continuable failures, failing iterations.
Level = namedtuple("Level", "node others others_total", defaults=((), 0))


# How RF begins the message of a test or keyword that went on after its failures
# (robot:continue-on-failure, a template's rows, Run Keyword And Continue On Failure): its
# failing children that are the same call are as many failures, not attempts of a retry.
_CONTINUED = "Several failures occurred:"


def failing_branch(conn: sqlite3.Connection, run_id: int, start: NodeRow) -> list[Level]:
    """From ``start`` down its most telling failing branch: at each level the last attempt of
    a retry (failing children that are the same call, under a parent that did not go on
    after each failure), else the shortest failing branch,
    between equally short ones the one with the more severe messages, then the first. A
    TRY branch whose failure an EXCEPT branch handled is no branch of it (nor a failure
    beside it): the failing EXCEPT, ELSE or FINALLY branch after it is. Each node comes with
    its failure's text where the file gave it none (``with_failure_text``: RF 6.x files)."""
    levels = [Level(start)]
    node = start
    while True:
        failing = list(itertools.islice(
            notable_children(conn, run_id, node, "status = 'FAIL'"), SIBLINGS_COMPARED + 1))
        handled = 0
        if node.type == ev.TRY_ROOT and failing and failing[0].type == ev.TRY and _caught(
                conn, run_id, node):
            failing, handled = failing[1:], 1
        if not failing:
            return [Level(with_failure_text(conn, run_id, level.node),
                          [with_failure_text(conn, run_id, other) for other in level.others],
                          level.others_total) for level in levels]
        total = len(failing) if len(failing) + handled <= SIBLINGS_COMPARED else _failed_children(
            conn, run_id, node) - handled
        failing = failing[:SIBLINGS_COMPARED]
        if len(failing) > 1 and failing[0].name and len({(c.name, c.args) for c in failing}) == 1 \
                and not (node.message or "").startswith(_CONTINUED):
            node, others = failing[-1], []  # attempts of one call (a retry): the last decided
        elif len(failing) > 1:
            node = min(failing, key=lambda c: (_failing_depth(conn, run_id, c),
                                               -c.max_descendant_level, c.pre))
            others = [c for c in failing if c is not node]
        else:
            node, others = failing[0], []
        levels.append(Level(node, others[:OTHERS_SHOWN], len(others) + total - len(failing)))


def _caught(conn: sqlite3.Connection, run_id: int, root: NodeRow) -> bool:
    """Whether an EXCEPT branch of the TRY/EXCEPT ``root`` handled its TRY branch's error."""
    from rf_log_listener.branches import error_handled  # loaded when needed

    return error_handled(conn, run_base(run_id), root.pre, root.last)


def _failed_children(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> int:
    """How many children of ``node`` failed: one range count of the notable-nodes index
    (a loop with 100,000 failing iterations is not walked)."""
    return conn.execute(
        f"SELECT count(*) FROM nodes INDEXED BY nodes_notable WHERE parent_pre = ? AND key > ?"
        f" AND key <= ? AND {NOTABLE_NODES} AND status = 'FAIL'",
        (node.pre, node.key, run_base(run_id) + node.last)).fetchone()[0]


def _failing_depth(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> int:
    """How many levels below ``node`` its deepest failed descendant is."""
    deepest = conn.execute(
        "SELECT max(depth) FROM nodes WHERE key > ? AND key <= ? AND status = 'FAIL'",
        (node.key, run_base(run_id) + node.last),
    ).fetchone()[0]
    return (deepest - node.depth) if deepest is not None else 0


HANDLED_SHOWN = 3  # handled failures named before a failing step, the nearest first
# Children that passed with a failure inside, but not one expected to fail (its failure is
# the check passing).
_HANDLED = ("status <> 'FAIL' AND failed_descendant_count > 0 AND NOT (type = 'KEYWORD'"
            " AND name = 'Run Keyword And Expect Error' AND owner = 'BuiltIn')")


def handled_before(conn: sqlite3.Connection, run_id: int, parent: NodeRow,
                   failing: NodeRow) -> tuple[list[NodeRow], int]:
    """The children of ``parent`` before its failing child ``failing`` that passed with a
    failure handled inside them (``${ok} = Run Keyword And Return Status``, Run Keyword And
    Ignore Error, TRY/EXCEPT, a retry that passed): the nearest first, and how many in all.
    What log.html shows under a passing step, and often what the failing step checks."""
    handled = _HANDLED
    if parent.type == ev.TRY_ROOT and failing.type != ev.TRY and _caught(conn, run_id, parent):
        # the TRY branch an EXCEPT caught, before the EXCEPT (ELSE, FINALLY) that failed:
        # what the EXCEPT was handling ("Payment declined for visa", then for mastercard)
        handled = f"({_HANDLED} OR (type = '{ev.TRY}' AND status = 'FAIL'))"
    where = (f"FROM nodes INDEXED BY nodes_notable WHERE parent_pre = ? AND key > ? AND key < ?"
             f" AND {NOTABLE_NODES} AND {handled}")
    bounds = (parent.pre, parent.key, failing.key)
    rows = conn.execute(f"SELECT {NODE_COLUMNS} {where} ORDER BY key DESC LIMIT {HANDLED_SHOWN}",
                        bounds).fetchall()
    if not rows:
        return [], 0
    total = len(rows) if len(rows) < HANDLED_SHOWN else \
        conn.execute(f"SELECT count(*) {where}", bounds).fetchone()[0]
    return [NodeRow(*row) for row in rows], total


def last_failure_inside(conn: sqlite3.Connection, run_id: int, node: NodeRow) -> NodeRow | None:
    """The outermost failed node of the last failure below ``node`` (of a loop's handled
    failures, the one nearest to what came after it), down the notable children (a
    backward seek each)."""
    while node is not None and node.status != "FAIL":
        node = last_notable_child(conn, run_id, node, "status = 'FAIL' OR failed_descendant_count > 0")
    return node


def outside_cause(conn: sqlite3.Connection, run_id: int, test: NodeRow) -> tuple[str, NodeRow] | None:
    """Why ``test`` failed from outside its own steps, and the node it failed for: for a test
    stopped by a fatal error or exit-on-failure the failure that stopped the run (also when a
    parent suite teardown failed after it), else the outermost failed parent suite setup (RF
    names the outermost) or the nearest failed parent suite teardown."""
    message = test.message or ""
    if test.type != "TEST" or not message:
        return None
    stop = _stopped_by(message)
    if stop is not None:
        origin = _stop_origin(conn, run_id, test, stop)
        return (STOP_MESSAGES[stop], origin) if origin else None
    if message.startswith(PARENT_SETUP):
        found = _failed_suite_fixtures(conn, run_id, test, "SETUP")
        return ("parent_suite_setup", found[-1]) if found else None
    if PARENT_TEARDOWN in message:
        found = _failed_suite_fixtures(conn, run_id, test, "TEARDOWN")
        return ("parent_suite_teardown", found[0]) if found else None
    return None


def tests_failed_for_others(conn: sqlite3.Connection, run_id: int,
                            starts: list[tuple[int, str]]) -> dict[int, list[int]]:
    """The failed tests whose failure is only another's among ``starts`` (keys and types,
    ``failure_path.failed_starts``), by that start's key, as ``outside_cause`` names it: RF's
    "Parent suite setup failed:" below a failed setup's suite (only the outermost ran),
    "Parent suite teardown failed:" below a failed teardown's (the nearest), and the tests a
    fatal error or exit-on-failure stopped, the failure that stopped the run; the tests an
    error stopped in exit-on-error mode (no node holds that error: ``error_cause``), the
    first of them, whose path names it. Not a test that also failed on its own ("Also
    parent suite teardown failed:"). Each such test's path is that start's: paging passes
    them."""
    base, found, taken = run_base(run_id), {}, set()

    def failed_tests(lo: int, hi: int, condition: str, *parameters: object) -> list[int]:
        return [key for (key,) in conn.execute(
            "SELECT key FROM nodes INDEXED BY nodes_failed WHERE key > ? AND key <= ?"
            f" AND status = 'FAIL' AND type = 'TEST' AND {condition}", (lo, hi, *parameters))
            if key not in taken]

    fixtures = nodes_by_keys(conn, [key for key, kind in starts if kind != "TEST"])
    for fixture in sorted(fixtures.values(), key=lambda node: -node.depth):  # nearest first
        if fixture.parent_pre is not None:
            suite = node_by_key(conn, base + fixture.parent_pre)
            head = PARENT_SETUP if fixture.type == "SETUP" else "P" + PARENT_TEARDOWN
            if keys := failed_tests(suite.key, base + suite.last, "substr(message, 1, ?) = ?",
                                    len(head), head):
                found[fixture.key] = keys
                taken.update(keys)
    first = _first_stopped(conn, run_id)
    origin = first and _stop_origin(conn, run_id, first[0], first[1])
    if first and origin and origin.key not in taken and any(key == origin.key for key, _ in starts):
        keys = failed_tests(first[0].key - 1, base + 0xFFFFFFFF, _STOPPED_SQL,
                            *_stop_parameters(first[1]))
        if keys:
            found.setdefault(origin.key, []).extend(keys)
    by_error = _first_stopped(conn, run_id, (EXIT_ON_ERROR,))
    if by_error and any(key == by_error[0].key for key, _ in starts) and (keys := failed_tests(
            by_error[0].key, base + 0xFFFFFFFF, _STOPPED_SQL, *_stop_parameters(EXIT_ON_ERROR))):
        found[by_error[0].key] = keys
    return found


# What stops a run at a failure (a node holds it): fatal errors and exit-on-failure.
_FAILURE_STOPS = tuple(stop for stop in STOP_MESSAGES if stop != EXIT_ON_ERROR)


def _first_stopped(conn: sqlite3.Connection, run_id: int,
                   stops: tuple[str, ...] = _FAILURE_STOPS) -> tuple[NodeRow, str] | None:
    """The run's first test one of ``stops`` stopped (by default a fatal error or
    exit-on-failure; ``tests_failed_for_others`` asks for exit-on-error's too), and its stop
    message."""
    row = conn.execute(
        "SELECT min(key) FROM nodes INDEXED BY nodes_failed WHERE key >= ? AND key < ?"
        f" AND status = 'FAIL' AND type = 'TEST' AND ({' OR '.join([_STOPPED_SQL] * len(stops))})",
        (run_base(run_id), run_base(run_id + 1),
         *itertools.chain.from_iterable(_stop_parameters(stop) for stop in stops)),
    ).fetchone()
    if row[0] is None:
        return None
    test = node_by_key(conn, row[0])
    stop = _stopped_by(test.message or "")
    return (test, stop) if stop else None


# A test's message is the stop message, or begins with it and RF's "\n\nAlso parent suite
# teardown failed:" (``_stopped_by`` in SQL): its parameters are ``_stop_parameters``.
_STOPPED_SQL = "(message = ? OR substr(message, 1, ?) = ?)"


def _stop_parameters(stop: str) -> tuple[str, int, str]:
    return stop, len(stop) + 2, stop + "\n\n"


def _stopped_by(message: str) -> str | None:
    """The stop message a test's message is, or begins with (RF adds "\n\nAlso parent suite
    teardown failed:" when the suite's teardown failed after the stop)."""
    for stop in STOP_MESSAGES:
        if message.startswith(stop) and message[len(stop):len(stop) + 2] in ("", "\n\n"):
            return stop
    return None


def _failed_suite_fixtures(conn: sqlite3.Connection, run_id: int, test: NodeRow,
                           kind: str) -> list[NodeRow]:
    """The failed setups (or teardowns) of the suites around ``test``, innermost first."""
    base, found = run_base(run_id), []
    pre = test.parent_pre
    while pre is not None:
        suite = node_by_key(conn, base + pre)
        fixture = next(notable_children(conn, run_id, suite,
                                        f"type = '{kind}' AND status = 'FAIL'"), None)
        if fixture is not None:
            found.append(fixture)
        pre = suite.parent_pre
    return found


# Failures that stop nothing: tests that failed only for a parent suite's setup or teardown.
_NOT_OWN = (PARENT_SETUP, "P" + PARENT_TEARDOWN)
# What only a fatal failure holds: BuiltIn's Fatal Error, robot's answer to SIGINT/SIGTERM.
_FATAL_MARKS = ("(name = 'Fatal Error' AND owner = 'BuiltIn')"
                " OR message = 'Execution terminated by signal'")
FATAL_LOOKBACK = 20  # own failures before the first stopped test weighed for a fatal one


def _stop_origin(conn: sqlite3.Connection, run_id: int, test: NodeRow,
                 stop: str) -> NodeRow | None:
    """The failure that stopped the run ``test`` was stopped in. Keys follow execution, so
    it lies before the run's first test stopped so, among the failures of tests and suite
    fixtures of their own. Exit-on-failure stops at the first of them (a suite setup's does
    not count, as in RF's ``Exit.failure_occurred``). A fatal error is the last of them,
    except that the teardowns of the suites it ended in ran after it and may fail on their
    own: a teardown is the origin only when it holds the fatal mark or nothing else failed.
    Exit-on-error stops at an error message, not a failure: no node (``error_cause``)."""
    if stop == EXIT_ON_ERROR:
        return None
    base = run_base(run_id)
    first_stopped = conn.execute(
        f"SELECT min(key) FROM nodes INDEXED BY nodes_failed WHERE key >= ? AND key <= ?"
        f" AND {FAILED_STARTS} AND type = 'TEST' AND {_STOPPED_SQL}",
        (base, test.key, *_stop_parameters(stop))).fetchone()[0]
    own = (f"SELECT key, type, last FROM nodes INDEXED BY nodes_failed WHERE key >= ?"
           f" AND key < ? AND {FAILED_STARTS}" + " AND substr(coalesce(message, ''), 1, ?) <> ?" * 2)
    bounds = (base, first_stopped or test.key,
              *itertools.chain.from_iterable((len(text), text) for text in _NOT_OWN))
    if STOP_MESSAGES[stop] == "exit_on_failure":
        row = conn.execute(own + " AND type <> 'SETUP' ORDER BY key LIMIT 1", bounds).fetchone()
        return node_by_key(conn, row[0]) if row else None
    rows = conn.execute(own + f" ORDER BY key DESC LIMIT {FATAL_LOOKBACK}", bounds).fetchall()
    for key, kind, last in rows:
        if kind != "TEARDOWN" or conn.execute(
                f"SELECT 1 FROM nodes WHERE key >= ? AND key <= ? AND status = 'FAIL'"
                f" AND ({_FATAL_MARKS}) LIMIT 1", (key, base + last)).fetchone():
            return node_by_key(conn, key)
    return node_by_key(conn, rows[0][0]) if rows else None


def error_cause(conn: sqlite3.Connection, run_id: int, shaper: Shaper) -> dict[str, Any] | None:
    """What stopped a run in exit-on-error mode: its first error (RF stops at any, a library's
    import or a keyword's ERROR message alike), by the id the run's errors have, and the step
    that logged it when a step did (RF's errors hold only the text and time)."""
    row = conn.execute("SELECT seq, text FROM errors WHERE run_id = ? AND level = 'ERROR'"
                       " ORDER BY seq LIMIT 1", (run_id,)).fetchone()
    if row is None:
        return None
    cause = {"reason": "exit_on_error", "node_id": f"errors-m{row[0]}", "type": "ERROR",
             "name": "", "message": shaper.message(row[1], None, 500)}
    base = run_base(run_id)
    logged = conn.execute(
        f"SELECT node_pre FROM messages INDEXED BY messages_notable WHERE key >= ? AND key < ?"
        f" AND {NOTABLE_MESSAGES} AND level = 'ERROR' AND text = ? ORDER BY key LIMIT 1",
        (base, run_base(run_id + 1), row[1])).fetchone()
    if logged is not None:
        step = node_by_key(conn, base + logged[0])
        cause["failing_step_id"], cause["failing_step_name"] = step.node_id, step.name or ""
    return cause


def shown_cause(conn: sqlite3.Connection, run_id: int, test: NodeRow,
                shaper: Shaper) -> dict[str, Any] | None:
    """``outside_cause`` as answers show it (models.FailureCause): the node it failed for and
    that node's deepest failing step with its message, so the root cause is in this answer."""
    found = outside_cause(conn, run_id, test)
    if found is None:
        stop = _stopped_by(test.message or "") if test.type == "TEST" else None
        if stop == EXIT_ON_ERROR:
            return error_cause(conn, run_id, shaper)
        message = test.message or ""
        if "No keyword with name" not in message and "' not found." not in message:
            return None  # RF's words for what an import would have defined: the module unloaded
        from .failed_imports import import_cause  # its patterns: for a test that failed so

        return import_cause(conn, run_id, test, shaper)
    reason, origin = found
    deepest = failing_branch(conn, run_id, origin)[-1].node
    cause = {"reason": reason, "node_id": origin.node_id, "type": origin.type,
             "name": origin.name or "", "failing_step_id": deepest.node_id,
             "failing_step_name": deepest.name or "",
             "message": shaper.status(deepest.message or origin.message or "", 500)}
    if deepest is origin:
        del cause["failing_step_id"], cause["failing_step_name"]
    if reason == "parent_suite_teardown" and not (test.message or "").startswith("P" + PARENT_TEARDOWN):
        cause["in_addition"] = True  # "Also parent suite teardown failed": it failed on its own
    return cause
