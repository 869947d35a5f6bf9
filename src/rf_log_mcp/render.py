"""Plain-text rendering of answers for the command line (read side, last stage).

The command line calls the same service operations as the MCP tools; this module only turns
their answers (answer.py: JSON read by attribute, like the response models) into text a
person reads in a terminal. How a text itself reaches the terminal (colour only on a terminal
without ``NO_COLOR``, control characters escaped, cut to its first lines) is
``render_text``'s.
"""

from __future__ import annotations

import sys

from .answer import Answer
from .render_text import (
    INFO_LINES,
    Style,
    counted,
    evidence,
    first_lines,
    folded,
    matching_lines,
    with_difference,
)

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any


def runs(response: Answer, style: Style) -> None:
    for run in response.runs:
        status = style(f"{run.status:<11}", run.status)
        result = style(f"{run.result_status or '-':<5}", run.result_status)
        where = style(f"({run.source_path or run.origin})", "dim")
        ref = run.run_group or str(run.run_id)
        extra = context_text(run.label, run.branch)
        extra = f"{style('dry run', 'dim')} {extra}".strip() if run.dry_run else extra
        if run.copy_of is not None:
            extra = f"{style(f'copy of run {run.copy_of}', 'dim')} {extra}".strip()
        print(f"{ref:>5}  {status} {result} {run.passed or 0:>5} passed"
              f" {run.failed or 0:>5} failed  {run.name}  {where}{' ' + extra if extra else ''}")
    if not response.runs:
        print("no runs yet: import an output.xml with `rf-log-mcp import PATH`, or run robot with"
              " --listener rf_log_listener")


def summary(response: Answer, style: Style) -> None:
    data = response.summary
    assert data is not None
    totals = data.totals
    runs = data.runs  # a pabot group's processes: test ids are their runs' (3:s1-t2)
    which = f"Run group {data.run_group} (runs {', '.join(map(str, runs))})" if runs \
        else f"Run {response.run_id}"
    print(f"{which}: {style(data.name, 'bold')}  "
          f"{style(data.result_status or '-', data.result_status)}  ({style(data.status, data.status)})")
    unit = "task" if data.rpa else "test"  # robot --rpa: RF's log and console say tasks
    print(f"  {counted(totals.total, unit)}: {totals.passed} passed, {totals.failed} failed,"
          f" {totals.skipped} skipped")
    if data.dry_run:
        print("  a dry run (robot --dryrun): keywords were checked, not run")
    if data.copy_of is not None:
        print(f"  a rebot output of runs of this store from run {data.copy_of} on: left out"
              " across runs (history, flaky, diff's base)")
    if data.elapsed is not None:
        started = f"started {data.start_time}, " if data.start_time else ""  # rebot --merge: none
        print(f"  {started}took {data.elapsed:.2f} s")
    if data.metadata:  # each value's first line: the whole is in --json and tree's root suite
        print("  metadata: " + ", ".join(f"{name}={(str(value).splitlines() or [''])[0]}"
                                         for name, value in data.metadata.items()))
    if data.unfinished:
        chain = " > ".join(f"{n.name or n.type}" for n in data.unfinished)
        print(f"  {'running now' if data.status == 'running' else 'stopped in'}: {chain}")
        failing_test(data.unfinished, response.run_id, style, data.status == "running")
    if data.failed_tests:
        print(f"Failed {unit}s:")
        for test in data.failed_tests:
            seen = f"  ({seen_text(test.signature_seen)})" if test.signature_seen else ""
            test_id = f"{test.run_id}:{test.node_id}" if runs else test.node_id
            print(f"  {style(f'{test_id:<14}', 'FAIL')} {test.name}{style(seen, 'dim')}")
            for line in with_difference(first_lines(folded(test.message)), test.message):
                print(f"  {'':<14}   {line}")
            if test.cause:
                _cause(test.cause, f"  {'':<14}   ", style)
        if response.next_cursor:
            print(style(f"  … more failed {unit}s: --cursor {response.next_cursor}", "dim"))
    if data.failure_groups:
        print(f"Failure groups ({data.failure_group_count}, by failure signature):")
    for group in data.failure_groups or []:
        more = "" if group.count <= len(group.test_ids) else \
            f", … ({group.count - len(group.test_ids)} more)" if runs else \
            f", … ({group.count - len(group.test_ids)} more: --group {group.tests_selector[6:]})"
        shown = first_lines(group.message, 1)[0]
        print(f"  {style(counted(group.count, unit), 'FAIL')}: {shown}")
        if group.signature != shown:  # no step failed (a stop, a parent's setup): the message
            print(f"    {style(group.signature, 'dim')}")
        print(f"    {unit}s {_in_runs(group.test_ids, group.test_runs)}{more};"
              f" {seen_text(group.seen_before)}")
        if group.cause:
            _cause(group.cause, "    ", style)
    if data.skip_reasons:
        print(f"Skipped {unit}s, by reason:")
    for reason in data.skip_reasons or []:
        more = "" if reason.count <= len(reason.test_ids) else \
            f", … ({reason.count - len(reason.test_ids)} more)"
        # on one line: a skip-on-failure message's original failure is on its fourth
        print(f"  {style(counted(reason.count, unit), 'SKIP')}:"
              f" {first_lines(' '.join(reason.message.split()), 1)[0]}")
        print(f"    {_in_runs(reason.test_ids, reason.test_runs)}{more}")
    if data.skip_reasons and sum(r.count for r in data.skip_reasons) < totals.skipped:
        print(style(f"  … more reasons: rf-log-mcp search {response.run_id} --level SKIP", "dim"))
    if data.errors:
        print("Run errors:")
        for error in data.errors:
            times = f" (x{error.count})" if error.count else ""
            print(f"  {style(f'{error.level:<5}', error.level)} {first_lines(error.text, 1)[0]}{times}")
    _masked(response, style)


def seen_text(seen: Any) -> str:
    if not seen.earlier_runs:
        return "new: in no earlier run"
    return (f"seen in {seen.earlier_runs} earlier run(s), first in run {seen.first_run_id}"
            f" ({seen.first_seen or 'no start time'})")


def context_text(label: str | None, branch: str | None, commit: str | None = None) -> str:
    """``label=nightly branch=main commit=0123abcd45``: what a run's line says of its origin."""
    return " ".join(f"{k}={v}" for k, v in (("label", label), ("branch", branch),
                                            ("commit", (commit or "")[:10] or None)) if v)


def failing_test(unfinished: list[Any], run_id: int | None, style: Style, running: bool) -> None:
    """The open test that has failed steps already, if one has: it fails, before it ends (or
    had when its run stopped)."""
    test = next((n for n in unfinished if n.type == "TEST" and n.failed_descendant_count), None)
    if test is not None:
        count = test.failed_descendant_count
        print(style(f"  {'failing so far' if running else 'failing when it stopped'}: TEST"
                    f" {test.node_id} {test.name}: {counted(count, 'failed step')}"
                    f" (rf-log-mcp failures {run_id} {test.node_id})", "FAIL"))


def more_failures(shown: int, total: int, run: int | str | None, style: Style) -> None:
    """Where the failure paths a ``--limit`` left out are (a run's 21 failed tests are not
    10 because 10 were printed)."""
    if total > shown:
        unit = "" if run is None else f" {run}"
        print(style(f"… {counted(total - shown, 'more failure path')}"
                    f" ({total} in all): rf-log-mcp failures{unit} --limit {total}", "dim"))


def _source_call(source: dict[str, Any]) -> str:
    """How a step a variable came from reads: ``VAR ${x}``, ``${resp} = GET On Session``, or
    a keyword, suite setup or test that set it (``SETUP Open Session``)."""
    if source["type"] == "VAR":
        return f"VAR {source['name']}"
    if source.get("assign"):
        return f"{' '.join(source['assign'])} = {source['name']}"
    return source["name"] if source["type"] == "KEYWORD" else f"{source['type']} {source['name']}"


def failures(paths: list[dict[str, Any]], style: Style, run_id: int, of_group: bool = False,
             unit: str = "test") -> None:
    """Each failure path, its steps a line each; ``unit`` is "task" for ``robot --rpa``."""
    if not paths:
        print(f"No failed {unit}s.")
    for path in paths:
        print(f"Failure path of {style(path['start_id'], 'bold')}"
              + (f" (run {run_id}):" if of_group else ":"))
        if path.get("cause"):
            _cause(path["cause"], "  ", style)
        for depth, step in enumerate(path["path"]):
            indent = "  " * (depth + 1)
            if step.get("kind") == "REPEATED_CALLS":
                levels = f"… {step['count']} levels of " + " > ".join(step["names"])
                print(f"{indent}{style(levels, 'dim')}  {style(step['first_node_id'], 'dim')}")
                continue
            detail = "" if step.get("args") else node_detail(step)  # args: a line of their own
            print(f"{indent}{step['type']} {step['node_id']}{_named(step)}"
                  f"  [{style(step['status'], step['status'])}]"
                  + _shown_detail(detail, style) + _written_at(step, style))
            if step.get("args"):
                print(f"{indent}  {style('args: ' + '  '.join(step['args']), 'dim')}")
            _messages(step.get("messages", []), f"{indent}  ", style, run_id)
            for other in step.get("other_failures", []):
                # a teardown that failed too is named as such (its id alone read as a step)
                values = ", ".join(f"{k}={v}" for k, v in (other.get("assign") or {}).items())
                named = " ".join(filter(None, (other["type"], other["node_id"], other.get("name"),
                                               values)))
                print(f"{indent}  {style('also failed:', 'FAIL')} {named}"
                      f"  {first_lines(other.get('message') or '', 1)[0]}")
            _handled(step, f"{indent}  ", style)
            for source in step.get("arguments_from", []):
                # the step a variable the failing one uses came from, and what it logged (the
                # response a status check failed on)
                print(f"{indent}  {style('from:', 'dim')} {source['node_id']} {_source_call(source)}"
                      + _shown_detail("  ".join(source.get("args") or []), style))
                _messages(source.get("messages", []), f"{indent}    ", style, run_id)
            _attachments(step.get("attachments"), f"{indent}  ", style, run_id)
        last = path["path"][-1]
        # a step without a text of its own (a control structure an older file gave none):
        # the failure as its test says it
        said = last if last.get("message") else path["path"][0]
        if said.get("message") and not last.get("messages"):
            indent = "  " * len(path["path"])
            more = f": rf-log-mcp message {run_id} {said['node_id']}"
            # a cause printed above says the rest ("Parent suite setup failed:" and its failure)
            lines = first_lines(said["message"], 1)[:1] if path.get("cause") \
                else evidence(said["message"], more)
            print(f"  {indent}→ {lines[0]}")
            for line in lines[1:]:
                print(f"  {indent}  {style(line, 'dim')}")
        if path.get("tests_failed_for_it"):
            count = path["tests_failed_for_it"]
            # the first test an error stopped stands for the others (no node holds the error)
            which = f"{counted(count, f'more {unit}')} the same error stopped" if (
                path.get("cause") or {}).get("reason") == "exit_on_error" \
                else f"{counted(count, f'failed {unit}')} failed only for it"
            print(style(f"  {which}, the same path"
                        f" (rf-log-mcp summary {run_id} groups them)", "dim"))


def _messages(messages: list[dict[str, Any]], indent: str, style: Style, run_id: int) -> None:
    """A step's messages, each as its first lines: a failure's own lines (a diff: "Lists are
    different:") and a library's traceback (its frames say where in its code it failed) as
    evidence, shown as log.html shows them; what a keyword logged before (a response): its
    head."""
    for message in messages:
        more = f": rf-log-mcp message {run_id} {message['id']}"
        lines = evidence(message["text"], more) if message["level"] in ("FAIL", "DEBUG") \
            else first_lines(message["text"], INFO_LINES if message["level"] == "INFO" else 1,
                             rest=more)
        print(f"{indent}{style(message['level'], message['level'])}: {lines[0]}")
        for line in lines[1:]:
            print(f"{indent}  {style(line, 'dim')}")


def _handled(step: dict[str, Any], indent: str, style: Style) -> None:
    """The failures a step's children handled before its failing one, a line each."""
    handled = step.get("handled_failures", [])
    for item in handled:
        where = f" > {item['failing_step_id']}" if item.get("failing_step_id") else ""
        said = first_lines(item.get("message") or "", 1)[0]
        assigned = item.get("assign")
        assigned = f"{' '.join(assigned)} = " if isinstance(assigned, list) else ""
        print(f"{indent}{style('handled before:', 'dim')} {item['node_id']}"
              f" {assigned}{item['name'] or item['type']}{where}  {said}")
    total = step.get("handled_failures_total", 0)
    if total > len(handled):
        print(f"{indent}{style(f'… {total} handled in all', 'dim')}")


def _attachments(found: list[dict[str, Any]] | None, indent: str, style: Style,
                 run_id: int | None) -> None:
    """A screenshot or file an HTML message refers to, one line each, with the command that
    opens it (log.html shows it inline; a terminal can name it)."""
    for item in found or []:
        size = f", {item['size_bytes']:,} bytes" if item.get("size_bytes") is not None else ""
        gone = style(" (missing)", "FAIL") if item.get("exists") is False else ""
        command = f"rf-log-mcp attachment {run_id} {item['message_id']} {item['index']}"
        print(f"{indent}{item['kind']} {item['reference']}{size}{gone}  {style(command, 'dim')}")


def _in_runs(test_ids: list[str], test_runs: list[int] | None) -> str:
    """Test ids as a pabot group's summary names them (``run:test``), else as they are."""
    if not test_runs:
        return ", ".join(test_ids)
    return ", ".join(f"{run}:{test}" for run, test in zip(test_runs, test_ids, strict=True))


def _cause(cause: dict[str, Any], indent: str, style: Style) -> None:
    """Why tests failed from outside their steps, and that failure's root."""
    where = cause.get("failing_step_id") or cause["node_id"]
    said = "also failed:" if cause.get("in_addition") else "caused by"
    print(f"{indent}{style(said, 'dim')} {cause['reason'].replace('_', ' ')}:"
          f" {cause['type']} {cause['node_id']} {cause['name']}".rstrip())
    print(f"{indent}  {where}: {first_lines(cause['message'], 1)[0]}")


def tree(response: Answer, style: Style) -> None:
    view = response.tree
    assert view is not None
    node = view.node
    if node.get("kind") == "RUN":
        print(f"Run {node['run_id']}: {node.get('name')} ({node['status']})")
    else:
        print(f"{node['type']} {style(node['node_id'], 'bold')}{_named(node)}"
              f"  [{style(node['status'], node['status'])}]  {node.get('child_count', 0)} children")
        messages = node.get("messages") or {}
        for message in messages.get("important") or []:
            print(f"    {style(message['level'], message['level'])}: "
                  f"{first_lines(message['text'], 1)[0]}")
        _unshown_messages(messages, f"{response.run_id} --selector {node['node_id']}", style)
    for child in view.children:
        print("  " + _tree_item(child, style))
    if response.page_truncated:
        print(style(f"  … more: --cursor {response.next_cursor}", "dim"))
    _masked(response, style)


def _unshown_messages(messages: dict[str, Any], where: str, style: Style) -> None:
    """A node's messages the tree counts but does not show (INFO and below: a request and
    its response, what a keyword logged), with the command that reads them: the terminal
    said "0 children" and nothing of them."""
    by_level = messages.get("by_level") or {}
    shown = len(messages.get("important") or [])
    left = sum(by_level.values()) - shown
    if left > 0:
        levels = ", ".join(f"{count} {level}" for level, count in by_level.items())
        more = " more" if shown else ""
        print(style(f"    {counted(left, f'{more} message'.lstrip())} ({levels}):"
                    f" rf-log-mcp search {where} --scope node --min-level TRACE", "dim"))


_CALLS = ("KEYWORD", "SETUP", "TEARDOWN")


def _field(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, dict) else getattr(node, key, None)


def _named(node: Any) -> str:
    """The node's label after its id, two spaces apart; nothing for a node without a name (a
    FOR, an ITERATION), whose detail follows its status."""
    label = node_label(node)
    return f"  {label}" if label else ""


def node_label(node: Any) -> str:
    """A node's name as log.html shows it: a keyword call with the variables it assigns
    (``${status}  ${msg} = Run Keyword And Ignore Error``)."""
    name = _field(node, "name") or ""
    assign = _field(node, "assign")
    if assign and isinstance(assign, list) and _field(node, "type") in _CALLS:
        return f"{'  '.join(str(variable).rstrip('= ') for variable in assign)} = {name}"
    return name


def node_detail(node: Any) -> str:
    """What log.html shows of a node after its name: a keyword's arguments, a FOR's variables,
    flavor and values (``${i}  IN RANGE  100``), an iteration's values (``${i}=57``), an IF's,
    ELSE IF's or WHILE's condition (and limit), an EXCEPT's patterns and AS variable, a VAR's
    or RETURN's values. ``node``: a view's node, as a dict or a model."""
    def get(key: str) -> Any:
        return _field(node, key)

    node_type = get("type")
    parts: list[Any] = []
    if node_type == "FOR":
        parts = [*(get("assign") or []), get("flavor") or "IN", *(get("values") or [])]
    elif node_type == "EXCEPT":
        parts = [*(get("patterns") or []), *([f"type={get('pattern_type')}"] if get("pattern_type")
                                            else []), *([f"AS {get('assign')}"] if get("assign") else [])]
    elif get("condition"):
        parts = [get("condition"), *([f"limit={get('limit')}"] if get("limit") else [])]
    elif get("args"):
        parts = get("args")
    elif isinstance(get("assign"), dict):
        return ", ".join(f"{k}={v}" for k, v in get("assign").items())
    elif node_type in ("VAR", "RETURN"):
        parts = get("value") or get("values") or []
    return "  ".join(str(part) for part in parts)


def _written_at(node: dict[str, Any], style: Style) -> str:
    """Where a step is written, as an editor opens it (``orders.robot:12``): the answer has
    it (the suite files read again), the terminal printed none of it."""
    source, lineno = node.get("source"), node.get("lineno")
    return f"  {style(f'{source}:{lineno}', 'dim')}" if source and lineno else ""


def _shown_detail(detail: str, style: Style) -> str:
    """A node's detail as its line ends with it: its first line, dim (nothing without one)."""
    return f"  {style(first_lines(detail, 1, 100)[0], 'dim')}" if detail else ""


def _tree_item(item: dict[str, Any], style: Style) -> str:
    kind = item.get("kind")
    if kind == "ITERATION_GROUP":
        return (f"{style('ITERATION_GROUP', 'dim')} {item['count']} passing iterations"
                f" {item['first_node_id']} … {item['last_node_id']}  (expand: {item['expand_selector']})")
    if kind == "RUN_ERRORS":
        return f"RUN_ERRORS {item['count']}: " + "; ".join(
            first_lines(m["text"], 1, 80)[0] for m in item["messages"][:3])
    detail = node_detail(item)
    failed = item.get("failed_descendant_count")
    text = (f"{item['type']:<9} {item['node_id']}{_named(item)}"
            f"  [{style(item['status'], item['status'])}]")
    text += _shown_detail(detail, style)
    if failed:
        text += style(f"  ({counted(failed, 'failed node')} below)", "FAIL")
    if item.get("message") and item["status"] != "PASS":
        text += f"\n      {first_lines(item['message'], 1)[0]}"
    return text


def window(response: Answer, style: Style) -> None:
    view = response.step_window
    assert view is not None
    print(f"Steps of {view.scope_type} {style(view.scope_id, 'bold')} around {view.center_id}"
          f" ({view.position + 1}-{view.position + len(view.steps)} of {view.steps_total}):")
    for step in view.steps:
        mark = style("▶", "bold") if step.center else " "
        detail = node_detail(step)
        print(f"{mark} {'  ' * step.depth}{step.type} {step.node_id}{_named(step)}"
              f"  [{style(step.status, step.status)}]"
              + _shown_detail(detail, style))
        if step.message and step.status != "PASS":
            print(f"  {'  ' * step.depth}    {first_lines(step.message, 1)[0]}")
    if view.prev_cursor:
        print(style(f"  … earlier: --cursor {view.prev_cursor}", "dim"))
    if response.next_cursor:
        print(style(f"  … later: --cursor {response.next_cursor}", "dim"))
    _masked(response, style)


def tree_snapshot(response: Answer, style: Style) -> None:
    """The subtree indented by depth, then where it stopped (tree selectors and cursors)."""
    if response.tree_snapshot is None:
        return
    view, node = response.tree_snapshot, response.tree_snapshot.node
    print(f"{node.type} {style(node.node_id, 'bold')}  {node.name}  [{style(node.status, node.status)}]"
          f"  {view.max_depth} levels")
    for item in view.nodes:
        indent = "  " * item.get("depth", 1)
        print(indent + _tree_item(item, style).replace("\n", "\n" + indent))
    for stop in view.continue_at or []:
        more = f" --cursor {stop.cursor}" if stop.cursor else ""
        print(style(f"  … {stop.reason}: tree {stop.selector}{more}", "dim"))
    _masked(response, style)


def message(response: Answer, style: Style, last: bool = True) -> None:
    """A message's part as it is (the whole message when every part is printed in turn)."""
    part = response.message
    assert part is not None
    _attachments(part.attachments, "", style, response.run_id)  # before a text read in parts
    sys.stdout.write(part.text)
    if last and (part.text or not part.attachments):
        sys.stdout.write("\n")
        if response.next_cursor:
            print(style(f"… characters {part.offset}-{part.end} of {part.length}; next: "
                        f"--cursor {response.next_cursor}", "dim"))
        _masked(response, style)


def search(response: Answer, style: Style) -> None:
    for group in response.groups or []:
        values = ", ".join(f"{k}={v}" for k, v in (group.get("values") or {}).items())
        levels = ", ".join(f"{k} {v}" for k, v in group.levels.items())
        print(f"{group.type} {style(group.node_id, 'bold')}  {group.name or values}"
              f"  {counted(group.count, 'hit')} ({levels})")
        shown = matching_lines(group.first.text, response.query, 1, context=0)
        print(f"      first: {group.first.id}  {shown[1 if shown[0].startswith('… (') else 0]}")
    for hit in response.hits:
        where = hit.call_path or hit.node_id or "run errors"
        repeats = style(f"  {hit.count} times, last {hit.last.id}", "dim") if hit.count and hit.last else ""
        print(f"{style(f'{hit.level:<5}', hit.level)} {hit.id}  {style(where, 'dim')}{repeats}")
        for line in matching_lines(hit.text, response.query) if hit.text or not hit.attachments\
                else []:
            print(f"      {line}")
        _attachments(hit.attachments, "      ", style, response.run_id)
        if hit.last:
            print(f"      … {first_lines(hit.last.text, 1)[0]}")
    if not response.hits and not response.groups:
        print("No matching messages.")
    if response.next_cursor:
        print(style(f"… more: --cursor {response.next_cursor}", "dim"))
    _masked(response, style)


def attachment(response: Answer, conn: Any) -> None:
    """What it is and where to open it (a person's image viewer opens files, not bytes)."""
    found = response.attachment
    assert found is not None
    where = found.reference
    if not found.embedded:
        from .attachments import local_path
        from .views.common import NodeContext

        path = local_path(found.reference, NodeContext(conn, response.run_id or 0).output_dir)
        where = str(path) if path is not None else where
    size = f", {found.size_bytes} bytes" if found.size_bytes is not None else ""
    print(f"{found.kind} {found.media_type or ''}{size}: {where}")
    if response.width:
        shown = (f" (sent as {response.width}x{response.height})" if response.downscaled else "")
        print(f"  {response.original_width}x{response.original_height} pixels{shown}")
    if response.text is not None:
        print(response.text)


def page_ending(response: Any, style: Style, more: str) -> None:
    """Where the next page is, and how many secrets were masked."""
    if response.next_cursor:
        print(style(f"  … {more}: --cursor {response.next_cursor}", "dim"))
    _masked(response, style)


def _masked(response: Any, style: Style) -> None:
    if response.masked_values:
        print(style(f"({response.masked_values} secret value(s) shown as ***)", "dim"))

