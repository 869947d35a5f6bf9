"""The operations behind every MCP tool and CLI command: arguments in, answer out.

Both the server and the command line call these, so humans and agents get the same answers.
An answer is plain JSON data in the shape of the tool's response model (answer.py); nothing
here loads pydantic, so a command answers without paying for it. Failures never raise out
of here: they become ``ok: false`` answers with a stable code.
"""

from __future__ import annotations

import functools
import itertools
import json
import sqlite3
from collections.abc import Callable, Iterator

from rf_log_listener.errors import (
    ATTACHMENT_NOT_FOUND,
    FILE_NOT_FOUND,
    INVALID_ARGUMENT,
    STORE_CORRUPT,
    STORE_READ_ONLY,
    STORE_UNAVAILABLE,
    ResultError,
)
from rf_log_listener.schema import with_stored_text
from rf_log_listener.store import (
    ENV_DB,
    VISIBLE_RUNS,
    find_reusable_run,
    is_corruption,
    is_read_only,
    mark_dead_live_runs,
    run_base,
)

from .answer import Answer, as_answer
from .limits import DEFAULT_BUDGET, DEFAULT_PAGE, MAX_BUDGET, MAX_PAGE, MIN_BUDGET
from .shaping import Shaper, estimate_tokens, make_cursor, mask_strings, read_cursor
from .usage import current as current_call
from .usage import recorded
from .views.common import (
    NODE_NOT_FOUND,
    RUN_NOT_FOUND,
    NodeContext,
    known_values,
    mask_runs,
    node_by_id,
    run_metadata,
    shown_attachments,
)

# Each operation imports the views it runs when it runs: a command pays for its own view
# only (issue #19, tests/test_cli_imports.py), and the server's start for none of them.
TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from typing import Any, Literal, TypeVar

    from rf_log_listener.importers import Progress

    from .paths import PathPolicy
    from .views.search import Detail, Scope
    from .views.tree import Projection

    ViewName = Literal["summary", "failure_path", "step_window", "tree", "tree_snapshot", "message"]
    F = TypeVar("F", bound=Callable[..., Answer])

INTERNAL_ERROR = "INTERNAL_ERROR"  # a bug: the server's log has the traceback

# What a tool's answer holds even when it failed: its model's list fields default to [].
_EMPTY: dict[str, dict[str, list[Any]]] = {
    "search_messages": {"hits": []}, "list_runs": {"runs": []}, "compare_runs": {"changes": []},
    "test_history": {"runs": []}, "flaky_tests": {"tests": []},
}


def _store_errors(tool: str) -> Callable[[F], F]:
    """An operation whose store fails under it (pages damaged after the store was opened, a
    disk error) answers STORE_CORRUPT / STORE_UNAVAILABLE like any other error. One the
    database driver refuses an argument's text for its lone surrogates (bytes that were not
    UTF-8: a terminal's, a file name's) runs again with the text as the store holds such
    text (``stored_text``): a name written with those bytes finds what was stored of it."""
    def decorate(operation: F) -> F:
        @functools.wraps(operation)
        def guarded(*args: Any, **kwargs: Any) -> Answer:
            try:
                return with_stored_text(operation, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                return failed(tool, store_error(exc))
        return guarded  # type: ignore[return-value]
    return decorate


def store_error(exc: sqlite3.DatabaseError) -> ResultError:
    """The error to answer when the store fails under a query."""
    if is_read_only(exc):
        return ResultError(STORE_READ_ONLY, f"The store is read-only here: {exc}",
                           "Reading works; importing needs a store this user can write: point"
                           f" {ENV_DB} (or --db) at a writable file, or connect as a"
                           " PostgreSQL role that may insert.")
    if is_corruption(exc):
        return ResultError(STORE_CORRUPT, f"The store is damaged: {exc}",
                           "Run `rf-log-mcp doctor --repair` (it keeps the damaged file, starts a"
                           " new store and imports the result files again); restart MCP servers"
                           " that use the store.")
    return ResultError(STORE_UNAVAILABLE, f"The store failed: {exc}",
                       "Check the disk and `rf-log-mcp doctor`.")


@recorded("parse_result")
@_store_errors("parse_result")
def parse_result(conn: sqlite3.Connection, path: str, allow_incomplete: bool = False,
                 policy: PathPolicy | None = None,
                 progress: Progress | None = None) -> Answer:
    """Import ``path``; with a ``policy`` (the MCP server) only a file it allows.
    ``progress``: told as the import goes (importers.Progress); raising ImportCancelled
    from it stops the import, which leaves nothing behind."""
    from rf_log_listener.importers import import_result  # only imports need the parsers

    try:
        if policy is not None:
            policy.check(conn, path)
        outcome = import_result(conn, path, allow_incomplete=allow_incomplete, progress=progress)
    except ResultError as err:
        return failed("parse_result", err)
    return imported(conn, outcome.to_dict())


@recorded("parse_result")
def imported(conn: sqlite3.Connection, response: dict[str, Any]) -> Answer:
    """An import's answer (this process's, or an import process's ``rf-log-mcp import
    --json``) as parse_result gives it: the run's known secret values masked, the
    envelope's flags and token estimate set."""
    shaper = Shaper()
    response = {key: value for key, value in response.items() if key not in _SET_BY_FINISH}
    if response.get("run_id") is not None:
        shaper.redactor = shaper.redactor.for_run(known_values(conn, [response["run_id"]]))
    return _finish(response, shaper)


@recorded("list_runs")
@_store_errors("list_runs")
def list_runs(conn: sqlite3.Connection, status: str | None = None, limit: int = 20,
              cursor: str | None = None, label: str | None = None, suite: str | None = None,
              branch: str | None = None, since: str | None = None,
              until: str | None = None) -> Answer:
    """Runs newest first; the runs of one pabot execution as one item. ``since``/``until``:
    start times (ISO, a date or a prefix), ``since`` included, ``until`` not."""
    binding = {"tool": "list_runs", "status": status, "label": label, "suite": suite,
               "branch": branch, "since": since, "until": until}
    try:
        before = read_cursor(cursor, binding)
        limit = in_range("limit", limit, 1, MAX_PAGE, 20)
    except ResultError as err:
        return failed("list_runs", err)
    mark_dead_live_runs(conn)
    where, params = [VISIBLE_RUNS], []
    for clause, value in (("status = ?", status), ("label = ?", label), ("name = ?", suite),
                          ("json_extract(ci, '$.branch') = ?", branch),
                          ("start_time >= ?", since), ("start_time < ?", until),
                          ("run_id < ?", before)):
        if value is not None:
            where.append(clause)
            params.append(value)
    items = list(itertools.islice(_run_items(conn, " AND ".join(where), params, before), limit + 1))
    shaper = Shaper()
    mask_runs(conn, shaper, [rid for item in items[:limit] for rid in item.get("run_ids", [])]
              + [item["run_id"] for item in items[:limit]])
    for item in items[:limit]:
        if metadata := run_metadata(conn, item["run_id"], shaper):
            item["metadata"] = metadata
    data: dict[str, Any] = {}
    kept = shaper.fit(data, items[:limit], "runs")
    more = kept < min(len(items), limit) or len(items) > limit
    after = items[kept - 1]["newest"] if more else None
    for item in items:
        del item["newest"]  # the cursor's, not the answer's
    shaper.grow(data)  # a long metadata value whole while the budget has room
    return _finish(data, shaper, binding, after)


_RUN_KEYS = ("run_id", "status", "origin", "label", "name", "result_status", "total", "passed",
             "failed", "skipped", "source_path", "start_time", "ci", "run_group", "dry_run",
             "copy_of")


def _run_items(conn: sqlite3.Connection, where: str, params: list[Any],
               before: int | None) -> Iterator[dict[str, Any]]:
    """Run items newest first; a pabot group once, at its newest run, with its runs summed
    (a group whose newest run is at or past ``before`` was listed on an earlier page)."""
    listed: set[str] = set()
    for row in conn.execute(f"SELECT {', '.join(_RUN_KEYS)} FROM runs WHERE {where}"
                            " ORDER BY run_id DESC", params):
        item = dict(zip(_RUN_KEYS, row, strict=True))
        item["newest"] = item["run_id"]
        if item.pop("dry_run"):
            item["dry_run"] = True
        if item["copy_of"] is None:
            del item["copy_of"]
        group = item.pop("run_group")
        if group is not None:
            if group in listed:
                continue
            listed.add(group)
            from .views.across import group_totals  # pabot groups: loaded when one is listed

            members = group_totals(conn, group)
            if before is not None and members["run_ids"][-1] >= before:
                continue
            first = members["run_ids"][0]
            item.update(members["totals"], run_id=first, run_group=f"g{first}",
                        run_ids=members["run_ids"], status=members["status"],
                        result_status=members["result_status"],
                        start_time=members["start_time"], source_path=None)
        ci = json.loads(item.pop("ci") or "{}")
        item.update({key: ci[key] for key in ("branch", "commit", "build") if key in ci})
        yield item


def resolve_run(conn: sqlite3.Connection, run_id: int | None, path: str | None,
                policy: PathPolicy | None = None) -> int:
    """A run id, or the run that already holds the bytes of ``path`` (imported, or written by
    a live run). Read-only: a file nobody imported yet is RUN_NOT_FOUND, not imported here."""
    if run_id is not None:
        return run_id
    if not path:
        raise ResultError(INVALID_ARGUMENT, "Pass run_id or path.",
                          "run_id comes from parse_result or list_runs.")
    if policy is not None:
        policy.check(conn, path)
    from pathlib import Path  # here: a command names its run by number (issue #19)

    try:
        source = Path(path).expanduser().resolve(strict=True)
        stat = source.stat()
    except (OSError, RuntimeError, ValueError):  # missing, a symlink loop, NUL in the path
        raise ResultError(FILE_NOT_FOUND, f"No result file at {path!r}.") from None
    found = find_reusable_run(conn, str(source), stat.st_size, stat.st_mtime_ns, None,
                              allow_interrupted=True)
    if found is None and source.is_file():
        from rf_log_listener.file_identity import file_sha256

        found = find_reusable_run(conn, str(source), stat.st_size, stat.st_mtime_ns,
                                  file_sha256(source), allow_interrupted=True)
    if found is None:
        raise ResultError(RUN_NOT_FOUND, f"{source} has not been imported.",
                          "Call parse_result with this path first; it returns the run_id.")
    return found


@recorded("get_view")
@_store_errors("get_view")
def get_view(conn: sqlite3.Connection, view: ViewName, run_id: int | None = None,
             path: str | None = None, selector: str | None = None, cursor: str | None = None,
             page_size: int | None = None, budget: int | None = None,
             projection: Projection = "all", policy: PathPolicy | None = None,
             max_depth: int | None = None) -> Answer:
    try:
        shaper = Shaper(budget=in_range("budget", budget, MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET))
        size = in_range("page_size", page_size, 1, MAX_PAGE, DEFAULT_PAGE)
        rid = resolve_run(conn, run_id, path, policy)
        shaper.redactor = shaper.redactor.for_run(known_values(conn, [rid]))
        binding = {"run": rid, "view": view, "selector": selector, "projection": projection}
        position = read_cursor(cursor, binding)
        response: dict[str, Any] = {"run_id": rid, "view": view}
        if view == "summary":
            from .views.summary import summary

            data, after = summary(conn, rid, shaper, position, size, selector)
            shaper.grow(data)
            follow = data.pop("follow_position", None)
            if follow is not None:
                data["follow_cursor"] = make_cursor(binding, follow)
            response["summary"] = data
        elif view == "failure_path":
            from .views.failure_path import failure_path

            data, after = failure_path(conn, rid, selector, shaper, position)
            shaper.grow(data)
            if data is None:
                raise ResultError("NO_FAILURES", f"Run {rid} has no failed test or suite setup/teardown.",
                                  "Use the summary view for the run's status.")
            response["failure_path"] = data
        elif view == "step_window":
            from .views.step_window import step_window

            data, after = step_window(conn, rid, selector, shaper, position, size)
            shaper.grow(data)
            prev = data.pop("prev_position", None)
            if prev is not None:
                data["prev_cursor"] = make_cursor(binding, [data["first_pre"] + prev])
            response["step_window"] = data
        elif view == "tree":
            from .views.tree import tree

            data, after = tree(conn, rid, selector, projection, shaper, position, size)
            shaper.grow(data)
            response["tree"] = {"projection": projection, **data}
        elif view == "tree_snapshot":
            from .views.tree_snapshot import DEFAULT_DEPTH, MAX_DEPTH, tree_snapshot

            depth = in_range("max_depth", max_depth, 1, MAX_DEPTH, DEFAULT_DEPTH)
            after, data = None, tree_snapshot(conn, rid, selector, projection, depth, shaper, size)
            shaper.grow(data)
            response["tree_snapshot"] = data
        elif view == "message":
            from .views.message import message_part

            data, after = message_part(conn, rid, selector, shaper, position)
            response["message"] = data
        else:
            raise ResultError(INVALID_ARGUMENT, f"Unknown view {view!r}.")
    except ResultError as err:
        return failed("get_view", err, run_id, view=view)
    return _finish(response, shaper, binding, after)


@recorded("search_messages")
@_store_errors("search_messages")
def search_messages(conn: sqlite3.Connection, query: str | None = None, run_id: int | None = None,
                    path: str | None = None, selector: str | None = None,
                    scope: Scope | None = None, level: str | None = None,
                    min_level: str | None = None, cursor: str | None = None,
                    page_size: int | None = None, budget: int | None = None,
                    policy: PathPolicy | None = None, detail: Detail = "compact",
                    group_by: str | None = None) -> Answer:
    from .views.search import make_filter, search

    try:
        shaper = Shaper(budget=in_range("budget", budget, MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET))
        size = in_range("page_size", page_size, 1, MAX_PAGE, DEFAULT_PAGE)
        rid = resolve_run(conn, run_id, path, policy)
        shaper.redactor = shaper.redactor.for_run(known_values(conn, [rid]))
        flt = make_filter(query, level, min_level)
        if detail not in ("compact", "full"):
            raise ResultError(INVALID_ARGUMENT, f"detail must be compact or full, not {detail!r}.")
        binding = {"run": rid, "tool": "search_messages", "query": query, "selector": selector,
                   "scope": scope, "levels": sorted(flt.levels) if flt.levels else None,
                   "detail": detail, **({"group_by": group_by} if group_by else {})}
        position = read_cursor(cursor, binding)
        if group_by is None:
            data, after = search(conn, rid, flt, selector, scope, shaper, position, size, detail)
            shaper.grow(data)
        elif group_by in ("iteration", "node"):
            from .views.search_groups import grouped_search

            data, after = grouped_search(conn, rid, flt, selector, scope, group_by, shaper,
                                         position, size)
        else:
            raise ResultError(INVALID_ARGUMENT, f"group_by must be iteration or node, not "
                              f"{group_by!r}.")
    except ResultError as err:
        return failed("search_messages", err, run_id)
    for hit in data["hits"]:  # a folded hit lists its repeats from a cursor of this search
        if "unfold_position" in hit:
            hit["unfold_cursor"] = make_cursor(binding, hit.pop("unfold_position"))
    return _finish({"run_id": rid, **data}, shaper, binding, after)


@recorded("get_attachment")
@_store_errors("get_attachment")
def get_attachment(conn: sqlite3.Connection, message_id: str, index: int = 0,
                   run_id: int | None = None, path: str | None = None, budget: int | None = None,
                   policy: PathPolicy | None = None, as_stored: bool = False) -> Answer:
    """Open one attachment of an HTML message: an image (bytes in ``response._image``,
    downscaled past the limits) or a text file (masked, within the budget). Reads only the
    run's output folder or allowed roots; never writes or fetches anything. ``as_stored``
    (the command line's ``attachment --save``): any kind, its bytes as stored in ``_image``."""
    from .attachments import open_attachment, read
    from .attachments import parse as parse_html
    from .paths import attachment_allowed

    try:
        shaper = Shaper(budget=in_range("budget", budget, MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET))
        rid = resolve_run(conn, run_id, path, policy)
        shaper.redactor = shaper.redactor.for_run(known_values(conn, [rid]))
        text = message_text(conn, rid, message_id)
        context = NodeContext(conn, rid)
        _, references = parse_html(text)
        if not 0 <= index < len(references):
            raise ResultError(ATTACHMENT_NOT_FOUND, f"{message_id} has {len(references)} "
                              f"attachment(s); there is no index {index}.",
                              "Take message_id and index from an attachments list.")
        described = shown_attachments(message_id, references, shaper, context) or []
        opening = read if as_stored else open_attachment
        opened = opening(references[index], context.output_dir,
                         lambda target: attachment_allowed(conn, policy, target,
                                                           context.output_dir))
    except ResultError as err:
        return failed("get_attachment", err, run_id)
    response: dict[str, Any] = {"run_id": rid, "message_id": message_id, "index": index,
                                "attachment": described[index]}
    if isinstance(opened, tuple):
        response["media_type"], stored = opened
        answer = _finish(response, shaper)
        answer._image = stored
        return answer
    response["media_type"] = opened.media_type
    if opened.data is None:
        response["text"] = shaper.text(opened.text or "", max(200, shaper.budget * 3))
        return _finish(response, shaper)
    response["original_width"], response["original_height"] = opened.original_size or (None, None)
    response["width"], response["height"] = opened.shown_size or (None, None)
    response["downscaled"] = opened.shown_size != opened.original_size
    answer = _finish(response, shaper)
    answer._image = opened.data
    return answer


def message_text(conn: sqlite3.Connection, run_id: int, message_id: str) -> str:
    """The stored text of the message ``<node id>-mN`` (or run error ``errors-mN``), if it is
    an HTML message; ATTACHMENT_NOT_FOUND otherwise."""
    node_id, _, number = message_id.rpartition("-m")
    if not node_id or not number.isdigit():
        raise ResultError(ATTACHMENT_NOT_FOUND, f"{message_id!r} is not a message id.",
                          "Message ids look like s1-t2-k3-m1; take them from attachments lists.")
    if node_id == "errors":
        row = conn.execute("SELECT text, html FROM errors WHERE run_id = ? AND seq = ?",
                           (run_id, int(number))).fetchone()
    else:
        node = node_by_id(conn, run_id, node_id)
        base = run_base(run_id)
        row = conn.execute(
            "SELECT text, html FROM messages WHERE key >= ? AND key < ? AND node_pre = ?"
            " AND msg_no = ?", (base + node.msg_lo, base + node.msg_hi, node.pre, int(number)),
        ).fetchone()
    if row is None:
        raise ResultError(ATTACHMENT_NOT_FOUND, f"Run {run_id} has no message {message_id}.")
    if not row[1]:
        raise ResultError(ATTACHMENT_NOT_FOUND, f"{message_id} is not an HTML message: it has "
                          "no attachments.")
    return row[0]  # type: ignore[no-any-return]


@recorded("compare_runs")
@_store_errors("compare_runs")
def compare_runs(conn: sqlite3.Connection, head: str | int, base: str | int | None = None,
                 changes: list[str] | None = None, cursor: str | None = None,
                 page_size: int | None = None, budget: int | None = None) -> Answer:
    """What changed from ``base`` (default: the previous complete run of the same suite) to
    ``head``, test by test (views/compare.py)."""
    from .views.across import previous_unit, refuse_dry_run, unit
    from .views.compare import CHANGES, NO_BASE_RUN, compare

    try:
        shaper = Shaper(budget=in_range("budget", budget, MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET))
        size = in_range("page_size", page_size, 1, MAX_PAGE, DEFAULT_PAGE)
        unknown = sorted(set(changes or ()) - set(CHANGES))
        if unknown:
            raise ResultError(INVALID_ARGUMENT, f"Unknown change kinds: {', '.join(unknown)}.",
                              f"Use some of: {', '.join(CHANGES)}.")
        head_unit = unit(conn, head)
        if base is None:
            base_unit, reason = previous_unit(conn, head_unit)
        else:
            base_unit, reason = unit(conn, base), "given"
        if base_unit is None:
            raise ResultError(NO_BASE_RUN, f"Run {head_unit.ref} has no earlier complete run of"
                              f" the suite {head_unit.name!r} to compare with.",
                              "Pass base explicitly (list_runs shows the runs).")
        refuse_dry_run(conn, head_unit)
        refuse_dry_run(conn, base_unit)
        mask_runs(conn, shaper, [*head_unit.run_ids, *base_unit.run_ids])
        binding = {"tool": "compare_runs", "head": head_unit.ref, "base": base_unit.ref,
                   "changes": sorted(changes or ())}
        position = read_cursor(cursor, binding)
        data, after = compare(conn, base_unit, reason, head_unit, changes, shaper, position, size)
    except ResultError as err:
        return failed("compare_runs", err)
    return _finish({"run_id": head_unit.first, **data}, shaper, binding, after)


@recorded("test_history")
@_store_errors("test_history")
def test_history(conn: sqlite3.Connection, test: str | None = None, run_id: int | None = None,
                 node_id: str | None = None, limit: int | None = None,
                 cursor: str | None = None, budget: int | None = None) -> Answer:
    """One test across the finished runs (views/history.py): by full name, or by a run and
    the test's node id in it."""
    from .views.across import longname_of
    from .views.history import history_of

    try:
        shaper = Shaper(budget=in_range("budget", budget, MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET))
        size = in_range("limit", limit, 1, MAX_PAGE, 20)
        if test is None:
            if run_id is None or not node_id:
                raise ResultError(INVALID_ARGUMENT, "Pass test (its full name), or run_id and "
                                  "node_id.", "failure_path and compare_runs give both.")
            node = node_by_id(conn, run_id, node_id)
            if node.type != "TEST":
                raise ResultError(INVALID_ARGUMENT, f"{node_id} is a {node.type}, not a test.")
            test = longname_of(conn, run_id, node.pre)
            if test is None:
                raise ResultError(NODE_NOT_FOUND, f"Run {run_id} has no test {node_id} yet.")
        binding = {"tool": "test_history", "test": test}
        position = read_cursor(cursor, binding)
        data, after = history_of(conn, test, shaper, position, size)
    except ResultError as err:
        return failed("test_history", err, run_id)
    return _finish(data, shaper, binding, after)


@recorded("flaky_tests")
@_store_errors("flaky_tests")
def flaky_tests(conn: sqlite3.Connection, suite: str | None = None, window: int | None = None,
                cursor: str | None = None, page_size: int | None = None,
                budget: int | None = None) -> Answer:
    """A suite's tests ranked by flip rate over its last ``window`` runs (views/flaky.py)."""
    from .views.flaky import flaky_tests as flaky

    try:
        shaper = Shaper(budget=in_range("budget", budget, MIN_BUDGET, MAX_BUDGET, DEFAULT_BUDGET))
        size = in_range("page_size", page_size, 1, MAX_PAGE, DEFAULT_PAGE)
        runs = in_range("window", window, 2, 1000, 30)
        binding = {"tool": "flaky_tests", "suite": suite, "window": runs}
        position = read_cursor(cursor, binding)
        data, after = flaky(conn, suite, runs, shaper, position, size)
    except ResultError as err:
        return failed("flaky_tests", err)
    return _finish(data, shaper, binding, after)


def prepare() -> None:
    """Load every view and compile the masking ahead of the first call that needs them: the
    MCP server does it while the host's model writes its first call (issue #19); a command
    of the command line loads only its own view."""
    import importlib
    import pkgutil

    from rf_log_listener.masking import redactor

    from . import views

    for module in pkgutil.iter_modules(views.__path__):
        importlib.import_module(f"{views.__name__}.{module.name}")
    redactor().prepare()


def in_range(name: str, value: int | None, low: int, high: int, default: int) -> int:
    """``value`` (``default`` when None), or INVALID_ARGUMENT naming the allowed range: a
    number outside it is a mistake to tell, not to bend silently."""
    if value is None:
        return default
    if not low <= value <= high:
        raise ResultError(INVALID_ARGUMENT, f"{name} must be from {low} to {high}, not {value}.",
                          f"Leave {name} out for the default, {default}.")
    return value


def failed(tool: str, err: ResultError, run_id: int | None = None, **fields: Any) -> Answer:
    """``tool``'s answer for a failed call: ok false, the error with its code and hint."""
    return _finish({"ok": False, "run_id": run_id, **_EMPTY.get(tool, {}), **fields,
                    "error": err.to_dict()}, Shaper())


def finished(payload: dict[str, Any]) -> Answer:
    """``payload`` as an answer: the envelope set, its strings passed through the masking."""
    return _finish(payload, Shaper())


def invalid(tool: str, message: str, hint: str | None = None) -> Answer:
    """``tool``'s answer for arguments it cannot take (INVALID_ARGUMENT)."""
    return failed(tool, ResultError(INVALID_ARGUMENT, message, hint or "Check the tool's input schema."))


# The envelope's fields _finish works out; an answer handed over whole (an import process's)
# has them already, worked out there.
_SET_BY_FINISH = frozenset({"estimated_tokens", "truncated", "message_truncated",
                            "budget_truncated", "page_truncated", "next_cursor", "masked_values"})


def _finish(payload: dict[str, Any], shaper: Shaper, binding: dict[str, Any] | None = None,
            after: Any = None) -> Answer:
    """The answer: the envelope every response carries, in its model's order (whether the
    call worked, truncation from the shaper, the cursor to the next page bound to
    ``binding`` when there is one, the count of masked secrets, the token estimate, last;
    the error of a failed call), then ``payload`` in the order the view built it. Every
    string passes the masking once more here, so a text no view masked still cannot carry a
    secret out."""
    masked, count = mask_strings(payload, shaper.redactor)
    follows = after is not None and binding is not None
    answer = as_answer({"ok": masked.pop("ok", True), "run_id": masked.pop("run_id", None),
                        "estimated_tokens": 0, "truncated": False,
                        "message_truncated": shaper.texts_cut,
                        "budget_truncated": shaper.budget_truncated, "page_truncated": follows,
                        "next_cursor": make_cursor(binding, after) if follows else None,
                        "masked_values": shaper.masked + count, "error": masked.pop("error", None),
                        **masked})
    answer["truncated"] = (answer["message_truncated"] or answer["budget_truncated"]
                           or answer["page_truncated"])
    answer["estimated_tokens"] = estimate_tokens(answer)
    call = current_call()
    if call is not None:  # the usage record reads what the answer was made of
        call.answer = answer
    return answer
