"""Where a failing step's arguments came from (read side, failure_path's deepest step): the
steps before it that assigned the variables its arguments use.

An API test fails on ``Should Be Equal As Integers  ${resp.status_code}  200`` with "500 !=
200"; the evidence, the response's body, is what ``${resp} = GET On Session`` logged a step
above, which log.html shows when that step is opened. The failure path names that step and
what it logged last, so an agent does not need a window and a tree call to read them.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator

from rf_log_listener.events import keyword_key as _name_key  # RF matches variables' names so too
from rf_log_listener.store import run_base

from .common import NODE_COLUMNS, NodeRow, first_child, node_by_key

SOURCES_SHOWN = 3  # steps named, nearest first
# Nodes looked back through for them (the siblings' subtrees in between): one bounded scan of
# the primary key, however long the test
_REACH = 5000
# A keyword's body sees its arguments, other variables even when named alike: past a call
# on the path, what is looked for is what the call was given (``Check Order  ${resp}``)
_CALLS = ("KEYWORD", "SETUP", "TEARDOWN")
_LEVELS = 12  # path levels looked through, from the deepest up: bounded however deep
# A path's IF branches: the failing step ran because their condition held
_BRANCHES = ("IF", "ELSE IF")
# and an ELSE (or ELSE IF) branch because the conditions of the branches before it did not
_AFTER_BRANCHES = ("ELSE IF", "ELSE")
_REFERENCE = re.compile(r"[$@&]\{(\{)?([^{}]*)")
_INLINE_NAME = re.compile(r"\$([A-Za-z_]\w*)")
_NAME_END = re.compile(r"[.\[(:]")
# An assigned variable (``${x} =``, ``${x: int}``, RF 7's item assignment ``${d}[key] =``)
_ASSIGNED = re.compile(r"[$@&]\{([^{}]+)\}")


def _base_name(written: str) -> str:
    """A variable's name before its attribute, item or type (``resp`` of ``resp.json()``,
    ``x`` of ``x: int``), as RF matches names."""
    return _name_key(_NAME_END.split(written, 1)[0])


def referenced(args: list[str]) -> set[str]:
    """The variables arguments use, by their base name as RF matches it
    (``${resp.status_code}``, ``${resp.json()}[id]``, ``@{items}``, ``${{ $resp.ok }}``: resp,
    items); not environment variables."""
    names = set()
    for arg in args:
        for inline, body in _REFERENCE.findall(arg):
            written = _INLINE_NAME.findall(body) if inline else [body]
            names.update(_base_name(name) for name in written)
    names.discard("")
    return names


def assigned(step: NodeRow) -> set[str]:
    """The variables a keyword call assigns (``${a}  ${b: int} =``), a VAR sets or a FOR
    loops over, by their base name."""
    names = [step.name] if step.type == "VAR" else json.loads(step.assign) if step.assign else []
    return {_base_name(found[1]) for name in names
            if isinstance(name, str) and (found := _ASSIGNED.match(name))}


_Found = dict[int, tuple[int, NodeRow, set[str], NodeRow]]  # source key: (when, source, names, line's node)


def argument_sources(conn: sqlite3.Connection, run_id: int,
                     path: list[NodeRow]) -> list[tuple[NodeRow, list[tuple[int, int, str, str, int]]]]:
    """The steps that assigned the variables the deepest step of ``path`` uses (and the
    conditions of the IF branches it ran in), nearest first, each with what it logged last
    (``_last_info``): its siblings before it, then those of the control structures around
    it (for a loop variable, the loop's values'); past a
    keyword call on the path, those that assigned what the call was given, up to the test.
    A variable a body uses and did not assign (a keyword's, the test's) may be the test's or
    the suite's: a step before it in the test that set it so (``Set Test Variable`` in a
    keyword the test called), then a suite setup's (``Set Suite Variable  ${TOKEN}``).
    Steps that passed without a failure inside only: the others are the path's
    ``other_failures`` and ``handled_failures``."""
    wanted = _uses(path[-1])
    base = run_base(run_id)
    found: _Found = {}
    if path[-1].type == "WHILE" and wanted:  # a loop its limit stopped: its condition's last values
        wanted = _take_assigning(found, base, _assigning_inside(conn, base, path[-1], _assigning(wanted)),
                                 wanted)
    beyond: set[str] = set()  # used where not assigned: perhaps the test's or the suite's
    for level in range(len(path) - 1, max(0, len(path) - 1 - _LEVELS), -1):
        node, parent = path[level], path[level - 1]
        if node.type in _BRANCHES and level < len(path) - 1:
            wanted |= _uses(node)  # the branch ran for its condition (``IF  ${count} < 3``)
        if node.type in _AFTER_BRANCHES and level < len(path) - 1:
            wanted |= _earlier_conditions(conn, base, node, parent)  # ELSE: theirs did not hold
        looped = assigned(node) & wanted if node.type == "FOR" else set()
        if looped:  # a loop variable came from the loop's values (``FOR  ${item}  IN  @{items}``)
            wanted = wanted - looped | referenced(
                [str(value) for value in node.field_values.get("values") or ()])
        if wanted and node.parent_pre is not None:
            lowest = max(base + node.parent_pre, node.key - _REACH)
            wanted = _take_assigning(found, base, _assigning_before(conn, run_id, node, lowest, wanted),
                                     wanted)
        if parent.type in _CALLS and parent.owner == "BuiltIn":
            # a run-keyword variant runs its keyword in the caller's scope: what it was
            # given (``Run Keyword If  ${count} < 3  Fail  ...``) is the caller's too
            wanted |= _uses(parent)
        elif parent.type in _CALLS and wanted:
            beyond |= wanted
            wanted = _uses(parent)
        elif parent.type == "TEST":  # (a call's body that used none: conditions above may)
            break
    beyond = (beyond | wanted) - {name for _, _, names, _ in found.values() for name in names}
    if beyond and len(found) < SOURCES_SHOWN:  # the nearest are found (a setter is seldom nearer)
        _set_beyond_before(conn, base, path, beyond, found)
    nearest = sorted(found.values(), key=lambda item: item[0], reverse=True)[:SOURCES_SHOWN]
    return [(source, _last_info(conn, run_id, source, names, line))
            for _, source, names, line in nearest]


def _take_assigning(found: _Found, base: int, steps: list[NodeRow], wanted: set[str]) -> set[str]:
    """Takes the nearest of ``steps`` that assigned each wanted variable; what is still
    wanted after them (a variable found is not looked for further, shown or not)."""
    for step in steps:
        if names := assigned(step) & wanted:
            wanted = wanted - names
            if len(found) < SOURCES_SHOWN:
                _take(found, base + step.last, step, names, step)
    return wanted


def _earlier_conditions(conn: sqlite3.Connection, base: int, branch: NodeRow,
                        root: NodeRow) -> set[str]:
    """The variables of the conditions of the branches before ``branch`` in its IF (``IF
    ${status} == 200 ... ELSE  Fail  Unexpected status``: status)."""
    rows = conn.execute(
        "SELECT fields FROM nodes WHERE key > ? AND key < ? AND parent_pre = ? AND type IN ('IF', 'ELSE IF')",
        (root.key, branch.key, root.pre))
    return {name for (fields,) in rows if fields
            for name in _condition_names(str(json.loads(fields).get("condition") or ""))}


def _take(found: _Found, when: int, source: NodeRow, names: set[str], line: NodeRow) -> None:
    """A source of ``names`` (its assignment at key ``when``, its line on ``line``), once a
    step: a keyword that set two variables the failing step uses is one source."""
    if source.key in found:
        found[source.key][2].update(names)
    else:
        found[source.key] = (when, source, set(names), line)


# BuiltIn's keywords that set a variable beyond the body they run in (``Set Test Variable
# \${RESP}  ${r}`` in a keyword the test called; ``Set Suite Variable`` in a suite setup),
# the name as written (RF does not resolve it: ``${x}``, ``\${x}``, ``$x``); RF 7's VAR with
# a scope likewise. How far: the test; the suite (its tests); the suite and its child suites
# (``children=True``, VAR's SUITES); the run.
_SETTERS = {_name_key(name): reach for name, reach in (
    ("Set Test Variable", "TEST"), ("Set Task Variable", "TEST"),
    ("Set Suite Variable", "SUITE"), ("Set Global Variable", "GLOBAL"))}
_VAR_SCOPES = {"TEST": "TEST", "TASK": "TEST", "SUITE": "SUITE", "SUITES": "SUITES", "GLOBAL": "GLOBAL"}
_SUITE_REACH = ("SUITE", "SUITES", "GLOBAL")  # seen by the tests of the suite it ran in
_CHILD_REACH = ("SUITES", "GLOBAL")  # and by those of its child suites
_CHILDREN = "children="  # Set Suite Variable's argument that sets it in child suites too
_NOT_TRUE = ("", "false", "no", "none", "off", "0", "${false}", "${none}", "${empty}")
_SET_NAME = re.compile(r"\\?[$@&]\{([^{}]+)\}$|\$(\w+)$")
_SETTING = ("(type = 'KEYWORD' AND owner = 'BuiltIn' AND name IN ('Set Test Variable',"
            " 'Set Task Variable', 'Set Suite Variable', 'Set Global Variable')"
            " OR type = 'VAR' AND fields LIKE '%\"scope\"%')")
_SETTERS_READ = 50  # the nearest setting steps looked at
_SET_REACH = 10000  # nodes before the failing step looked back through for them (~1 ms)


def set_beyond(step: NodeRow) -> tuple[str, str] | None:
    """The variable a step sets beyond its body, by its base name, and how far: "TEST"
    (``Set Test Variable``, ``VAR ... scope=TEST``), "SUITE" (``Set Suite Variable``, VAR's
    SUITE), "SUITES" (the suite's child suites too: ``children=True``, VAR's SUITES) or
    "GLOBAL" (``Set Global Variable``, VAR's GLOBAL)."""
    if step.type == "VAR":
        reach, written = _VAR_SCOPES.get(str(step.field_values.get("scope", "")).upper()), step.name
    elif step.type == "KEYWORD" and step.owner == "BuiltIn" and step.args:
        args = json.loads(step.args)
        reach, written = _SETTERS.get(_name_key(step.name)), args[0]
        if reach == "SUITE" and any(str(arg).lower().startswith(_CHILDREN) and str(arg)[len(_CHILDREN):]
                                    .strip().lower() not in _NOT_TRUE for arg in args[1:]):
            reach = "SUITES"
    else:
        return None
    found = _SET_NAME.match(str(written)) if reach else None
    return (_base_name(found[1] or found[2]), reach) if found else None  # type: ignore[return-value]


def _set_beyond_before(conn: sqlite3.Connection, base: int, path: list[NodeRow], names: set[str],
                       found: _Found) -> None:
    """Sources of ``names`` that set them for the test before its failing step (the step
    the path's levels called it in: ``Get Order Via Api`` that ran ``Set Test Variable``),
    then for the suite: in its setup or a test before this one (``Set Suite Variable
    ${ORDER_ID}`` in the test that created the order: the setup or that test), in the
    setups of the suites around it."""
    pres = {node.pre for node in path}
    for setter in _setters(conn, max(path[0].key, path[-1].key - _SET_REACH), path[-1].key):
        name = (set_beyond(setter) or ("", ""))[0]
        source = _below(conn, base, setter, pres) if name in names else None
        if source is not None and source.status == "PASS":
            names.discard(name)
            _take(found, setter.key, source, {name}, setter)
    parent_pre, levels = path[0].parent_pre if path[0].type == "TEST" else None, 0
    while names and parent_pre is not None and levels < _LEVELS:
        suite = node_by_key(conn, base + parent_pre)
        if levels == 0:  # the test's suite: its setup and the tests before this one
            after, before = max(suite.key, path[0].key - _SET_REACH), path[0].key
        else:  # a suite around it: its setup, what it set for its child suites or the run
            setup = first_child(conn, suite)  # a suite's setup is its first child
            after, before = (max(setup.key, base + setup.last - _SET_REACH), base + setup.last + 1) \
                if setup is not None and setup.type == "SETUP" else (0, 0)
        for setter in _setters(conn, after, before) if before else ():
            name, reach = set_beyond(setter) or ("", "")
            seen = reach in (_SUITE_REACH if levels == 0 else _CHILD_REACH) and name in names
            source = _below(conn, base, setter, {suite.pre}) if seen else None
            if source is not None:
                names.discard(name)
                _take(found, setter.key, source, {name}, setter)
        parent_pre, levels = suite.parent_pre, levels + 1


def _setters(conn: sqlite3.Connection, after: int, before: int) -> list[NodeRow]:
    """The steps between the keys that may set a variable beyond their body, nearest first."""
    return list(map(NodeRow._make, conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE key > ? AND key < ? AND status = 'PASS'"
        f" AND {_SETTING} ORDER BY key DESC LIMIT {_SETTERS_READ}", (after, before))))


def _below(conn: sqlite3.Connection, base: int, step: NodeRow, path_pres: set[int]) -> NodeRow | None:
    """The step's ancestor (or itself) whose parent is on the path: the step before the
    path's own that ran it."""
    for parent in _parents(conn, base, step):
        if parent.pre in path_pres:
            return step
        step = parent
    return None


def _parents(conn: sqlite3.Connection, base: int, step: NodeRow) -> Iterator[NodeRow]:
    """``step``'s parent, its parent's, and so on up to the root suite (a seek each)."""
    while step.parent_pre is not None:
        step = node_by_key(conn, base + step.parent_pre)
        yield step


# Messages of a source's subtree looked back through for its last INFO ones (a keyword that
# logs thousands of DEBUG lines after its response: a bounded scan)
_INFO_REACH = 2000
_INFO_READ = 20  # of them, the last INFO ones read for the two shown
# RF's line of what a step assigned (``${resp} = <Response [500]>``)
_ASSIGNMENT_LINE = re.compile(r"[$@&]\{([^{}]+)\}(?:\[[^\]]*\])* = ")


def _last_info(conn: sqlite3.Connection, run_id: int, step: NodeRow, names: set[str],
               line: NodeRow) -> list[tuple[int, int, str, str, int]]:
    """What ``step`` logged last (INFO, not HTML) up to ``line``'s end, as (node pre, message
    number, level, text, html), in log order: the last message of it or a step inside it
    that is not RF's line of an assignment (a keyword wrapping the request, ``${resp} = Call
    Orders Api``, logs the response in a child, then its own steps' ``${r} = ...`` lines),
    and ``line``'s assignment line of a variable of ``names`` (the value it gave it; ``${a}
    ${b} =`` is two lines; ``Set Test Variable``'s in a keyword), which RF logs last."""
    base = run_base(run_id)
    end = min(step.msg_hi, line.msg_hi)
    rows = conn.execute(  # a run's messages are numbered in order: the reach is a key range
        "SELECT node_pre, msg_no, level, text, html FROM messages WHERE key >= ? AND key < ?"
        " AND level = 'INFO' AND html = 0 ORDER BY key DESC LIMIT ?",
        (base + max(step.msg_lo, end - _INFO_REACH), base + end, _INFO_READ)).fetchall()
    said = next((row for row in rows if not _ASSIGNMENT_LINE.match(row[3])), None)
    value = next((row for row in rows if row[0] == line.pre and (found := _ASSIGNMENT_LINE.match(row[3]))
                  and _base_name(found[1]) in names), None)
    return [row for row in (said, value) if row is not None]


# BuiltIn's keywords that evaluate an argument as Python, where ``$resp`` is the variable
# (``Should Be True  $resp.status_code == 200``)
_EVALUATING = frozenset(map(_name_key, (
    "Should Be True", "Should Not Be True", "Evaluate", "Set Variable If", "Run Keyword If",
    "Run Keyword Unless", "Skip If", "Pass Execution If", "Return From Keyword If",
    "Run Keyword And Return If", "Continue For Loop If", "Exit For Loop If")))


def _uses(node: NodeRow) -> set[str]:
    """The variables a step uses: its arguments' (``$resp`` too where BuiltIn evaluates
    them), a keyword's name's (embedded arguments: ``User "${user}" Should Be Admin``), an
    IF's or WHILE's condition's (``$resp`` as well as ``${resp}``), a FOR's values'."""
    args = [str(arg) for arg in json.loads(node.args)] if node.args else []
    used = referenced(args)
    if node.type in _CALLS:
        used |= referenced([node.name])
        if node.owner == "BuiltIn" and _name_key(node.name) in _EVALUATING:
            used |= {_name_key(name) for arg in args for name in _INLINE_NAME.findall(arg)}
    fields = node.field_values
    if fields.get("condition"):
        used |= _condition_names(str(fields["condition"]))
    if node.type == "FOR":
        used |= referenced([str(value) for value in fields.get("values") or ()])
    return used


def _condition_names(condition: str) -> set[str]:
    """The variables a condition uses: ``${x}`` and, evaluated, ``$x``."""
    return referenced([condition]) | {_name_key(name) for name in _INLINE_NAME.findall(condition)} \
        if condition else set()


# Blocks before the failing step whose steps' variables it sees (RF's scope is the test's
# or keyword's body), and the nodes between such a block and a step in it (an IF's branch, a
# loop's iteration, a TRY's clause, blocks inside them: ``FOR ... IF ... ${found} = ...``);
# a keyword call's steps are its body's, another scope
_BLOCKS = ("IF/ELSE ROOT", "TRY/EXCEPT ROOT", "FOR", "WHILE", "GROUP")
_BLOCK_TYPES = ", ".join(f"'{kind}'" for kind in _BLOCKS)
_INSIDE_BLOCKS = frozenset((*_BLOCKS, "IF", "ELSE IF", "ELSE", "TRY", "EXCEPT", "FINALLY",
                            "ITERATION"))
_BLOCKS_READ = 20  # of them, the nearest looked into (a query each)
_IN_BLOCK_READ = 40  # of a block's assigning steps, the last looked at


def _assigning_before(conn: sqlite3.Connection, run_id: int, node: NodeRow, lowest: int,
                      wanted: set[str]) -> list[NodeRow]:
    """The siblings of ``node`` before it, down to key ``lowest``, that may assign one of the
    ``wanted`` variables (a keyword call's ``${x} =``, RF 7's ``VAR``; in a block before it,
    its steps at any depth outside keyword calls: the branch of an IF that ran, ``${x} =  IF
    cond  Set Variable  a  ELSE ...``, a TRY's, a loop's last assignment, a GROUP's) and
    passed without a failure inside, nearest first. SQL keeps the steps whose assignment
    holds a wanted name's letters in order between its braces (LIKE ``%{o%r%d%e%r%i%d}%``:
    ``${Order_Id}``, ``${order id}``; case is LIKE's to ignore), ``assigned`` checks them
    exactly: a test of 6,000 assignments before its failing step made 6,000 rows, and
    normalizing each row's names in SQL cost 8 ms, this 2."""
    filter_ = assigning, patterns = _assigning(wanted)
    base = run_base(run_id)
    rows = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE key < ? AND key > ? AND parent_pre = ?"
        f" AND status = 'PASS' AND failed_descendant_count = 0 AND ({assigning}"
        f" OR type IN ({_BLOCK_TYPES})) ORDER BY key DESC LIMIT 200",
        (node.key, lowest, node.parent_pre, *patterns))
    found, looked_into = [], 0
    for row in map(NodeRow._make, rows):
        if row.type not in _BLOCKS:
            found.append(row)
            continue
        looked_into += 1
        if looked_into <= _BLOCKS_READ:
            found += _assigning_inside(conn, base, row, filter_)
    return found


def _assigning_inside(conn: sqlite3.Connection, base: int, block: NodeRow,
                      filter_: tuple[str, list[str]]) -> list[NodeRow]:
    """The steps in ``block`` (at any depth outside keyword calls) that may assign one of
    the variables ``filter_`` (``_assigning``) looks for and passed, the last run first: a
    loop's last assignment is the value its variable had when the loop ended."""
    assigning, patterns = filter_
    inside = map(NodeRow._make, conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE key > ? AND key <= ? AND status = 'PASS'"
        f" AND {assigning} ORDER BY key DESC LIMIT {_IN_BLOCK_READ}",
        (block.key, base + block.last, *patterns)))
    return [step for step in inside if _in_block_scope(conn, base, step, block)]


def _assigning(wanted: set[str]) -> tuple[str, list[str]]:
    """SQL that keeps the steps that may assign one of ``wanted``, and its parameters."""
    patterns = [f"%{{{'%'.join(_like(char) for char in name)}{end}%"
                for name in sorted(wanted)[:10] for end in ("}", ":")]
    likes = " OR ".join(["coalesce(assign, name) LIKE ? ESCAPE '\\'"] * len(patterns))
    return f"(type = 'KEYWORD' AND assign IS NOT NULL OR type = 'VAR') AND ({likes})", patterns


def _in_block_scope(conn: sqlite3.Connection, base: int, step: NodeRow, block: NodeRow) -> bool:
    """Whether ``step`` in ``block``'s subtree is in the block's scope: only control
    structures' nodes between them, no keyword call's body."""
    for parent in _parents(conn, base, step):
        if parent.pre == block.pre:
            return True
        if parent.type not in _INSIDE_BLOCKS:
            return False
    return False


def _like(char: str) -> str:
    """A character of a name in a LIKE pattern, literal (``%``, ``_`` and ``\\`` escaped);
    any characters for one past ASCII, whose case SQLite's LIKE does not fold (``${Äiti}``
    assigned, ``${äiti}`` used): ``assigned`` checks the name exactly."""
    if not char.isascii():
        return "%"
    return f"\\{char}" if char in "%_\\" else char
