"""The MCP stdio server: tools and resources over the shared store.

Never print to stdout here: stdout is the protocol channel.

No ``from __future__ import annotations`` here: the SDK reads every tool's, prompt's and
resource's signature with ``typing.get_type_hints`` (twice), and string annotations are
evaluated each time: 8 ms of the server's start (issue #19).
"""

import asyncio
import base64
import functools
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import (
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    SubscribeRequestParams,
    TextContent,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from pydantic import Field, ValidationError

from rf_log_listener import __version__
from rf_log_listener.errors import ResultError
from rf_log_listener.store import open_store

from . import prompts, service, tool_schemas, usage
from .answer import Answer
from .limits import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from .paths import PathPolicy
from .schema_outline import compact_input, envelope_fields, outline
from .server_state import AppState, ImportJob, import_key, progress_until, with_progress
from .service import INTERNAL_ERROR
from .subscriptions import RunEventsBus, RunWatcher
from .views.common import RUN_NOT_FOUND
from .warm_up import WarmUp

log = logging.getLogger("rf_log_mcp")
# The views get_view shows (service.get_view): the tool's argument and the resources' templates.
ViewName = Literal["summary", "failure_path", "step_window", "tree", "tree_snapshot", "message"]

INSTRUCTIONS = """\
Robot Framework results. Flow:
1. parse_result(path) imports an output.xml/output.json (or finds it): run_id. list_runs
   lists stored runs, live ones too.
2. get_view(run_id, view="summary"): status, totals, failed tests grouped by failure
   signature (each: how often seen before), run errors, skip reasons.
3. get_view(view="failure_path", selector=<test id>): a test's failing branch down to its
   decisive messages (no selector: the first failure; next_cursor: the next).
4. get_view(view="tree", selector=<node id>, projection="failures"): a node's children;
   passing iterations come folded (expand_selector opens them). view="tree_snapshot": a
   small subtree at once (max_depth). view="message": a long message whole, in parts.
search_messages(run_id, query?, selector?, scope?, level?/min_level?, group_by?) finds
   messages by text and/or severity, run-wide or under one node; repeats fold.
get_attachment(run_id, message_id, index) opens a screenshot or file of attachments.
Across runs: compare_runs(head) says what changed since the previous run of the suite;
   test_history(test) one test run by run (streak, flip rate); flaky_tests ranks flaky tests.
Secrets come back as ***.
Responses carry ok, estimated_tokens, masked_values, truncated (message_truncated,
budget_truncated or page_truncated); next_cursor continues. Errors: ok=false, error.code,
.message, .hint. Every field is explained in resource rf://docs/fields.
"""


@asynccontextmanager
async def lifespan(_server: MCPServer) -> AsyncIterator[AppState]:
    conn, problem, readonly = _open_store()
    state = AppState(conn=conn, policy=PathPolicy.from_environment(), store_error=problem,
                     readonly=readonly)
    flusher = None
    if conn is not None:  # (state.db_path is read here first, in the lifespan's thread)
        state.watcher = RunWatcher(str(state.db_path), readonly, EVENTS, asyncio.get_running_loop())
        state.watcher.start()
        if not readonly:
            flusher = usage.Flusher(lambda: open_store(state.db_path))
            flusher.start()
    _STATES.append(state)
    try:
        yield state
    finally:
        _STATES.remove(state)
        if state.watcher is not None:
            state.watcher.stop()
        if flusher is not None:
            flusher.stop()
        state.close()


def _open_store() -> tuple[sqlite3.Connection | None, ResultError | None, bool]:
    """The store, read-write; else read-only (a store on a read-only disk or owned by another
    user still answers every reading tool); else nothing, and every tool answers why. The
    server starts in every case: a host that sees it die sees only "Connection closed"."""
    try:
        return open_store(on_corrupt=lambda moved: log.warning(
            "the store was damaged and was moved to %s; a new store was started "
            "(rf-log-mcp doctor --repair imports its result files again)", moved)), None, False
    except ResultError as err:
        problem = err
    try:
        conn = open_store(readonly=True)
    except ResultError:
        log.warning("%s", problem.message)
        return None, problem, False
    log.warning("serving the store read-only: %s", problem.message)
    return conn, None, True


class _Server(MCPServer):
    """MCPServer whose tools answer every bad call in their own output schema: arguments the
    schema rejects and unknown arguments are INVALID_ARGUMENT, a failure of this code is
    INTERNAL_ERROR; the SDK would answer with prose (pydantic's, with a link) or nothing."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context | None = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if name not in RESPONSE_MODELS or tool is None:
            return await super().call_tool(name, arguments, context)
        await WARM_UP.finished()
        _attach_output_models()
        known = tool.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            return _respond(service.invalid(name, f"{name} has no argument {', '.join(unknown)}.",
                                            f"Its arguments: {', '.join(known)}."))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return _respond(service.invalid(name, "; ".join(
                    f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.__cause__.errors(
                        include_url=False))))
            if not isinstance(exc, UnexpectedToolError):
                raise
            log.error("tool %s failed", name, exc_info=exc.__cause__)
            return _respond(service.failed(name, ResultError(
                INTERNAL_ERROR, f"{name} failed inside rf-log-mcp: {type(exc.__cause__).__name__}.",
                "This is a bug in rf-log-mcp: the server's log (stderr) has the details; please"
                " report it.")))


    async def list_tools(self) -> list[Any]:
        """The tools, their output schemas as outlines (``_outline``): hosts that pass output
        schemas to the model pay for every token of them in every conversation, so the
        listing stays within LISTING_TOKENS; every field's meaning is in the field guide
        resource (``field_guide.py``), generated from the same models."""
        tools = await super().list_tools()
        for tool in tools:
            tool.description = " ".join((tool.description or "").split())  # docstring indents
            tool.input_schema = compact_input(tool.input_schema)
            if tool.output_schema:
                tool.output_schema = outline(tool.output_schema, tool.output_schema.get("$defs", {}))
        WARM_UP.start()
        return tools


EVENTS = RunEventsBus()  # subscriptions/listen streams (2026-07-28)
mcp = _Server(name="rf-log-mcp", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
              subscriptions=EVENTS)


async def _subscribe(ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
    """resources/subscribe (2025-11-25): a run's summary, or the run list."""
    watcher = ctx.lifespan_context.watcher
    if watcher is not None:
        watcher.subscribe(str(params.uri), ctx.session)
    return EmptyResult()


async def _unsubscribe(ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
    watcher = ctx.lifespan_context.watcher
    if watcher is not None:
        watcher.unsubscribe(str(params.uri), ctx.session)
    return EmptyResult()


# The SDK's own decorators register handlers the same way (MCPServer.completion).
mcp._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, _subscribe)
mcp._lowlevel_server.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams,
                                         _unsubscribe)

# Arguments several tools take, described once.
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page.")]
PageSize = Annotated[int | None, Field(ge=1, le=200, description="Items per page (25).")]
Budget = Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET,
                                     description=f"Token budget ({DEFAULT_BUDGET}).")]

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

def _tool(**options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``mcp.tool`` with the output schema left for ``tool_schemas.attach_output_schemas``."""
    return mcp.tool(structured_output=False, **options)


def _state(ctx: Context) -> AppState:
    return ctx.request_context.lifespan_context  # type: ignore[no-any-return]


def _respond(answer: Answer) -> CallToolResult:
    """The answer as structured content and as one compact JSON text. Empty optional
    fields are left out (the SDK's default text copy is indented and spells out every
    null: tokens an agent pays for), except the envelope's, which every response carries.
    ``ok: false`` answers are flagged as tool errors; their payload still matches the
    declared output schema, so strict clients accept it. The SDK validates the others
    against the tool's response model (its output schema) before sending them."""
    data = {name: answer.get(name) for name in envelope_fields() if name != "error"} | answer
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data,
                          is_error=not answer.ok)


@_tool(
    title="Import a Robot Framework result",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False),
)
async def parse_result(
    ctx: Context,
    path: Annotated[str, Field(description="Path of an output.xml (RF 4.0+) or output.json (RF 7.2+).")],
    allow_incomplete: Annotated[bool, Field(
        description="Import the readable part of a cut file as an 'interrupted' run.")] = False,
) -> Annotated[CallToolResult, "ParseResultResponse"]:
    """Import a result file into the store (streamed, any size) and return its run_id.

    The same bytes give the same run_id without parsing again. A file still being written or
    cut gives INCOMPLETE_RESULT unless allow_incomplete is true. Progress is reported while
    it runs (bytes read, nodes); cancelling stops it and keeps nothing.
    """
    state = _state(ctx)
    if state.conn is None:
        assert state.store_error is not None
        return _respond(service.failed("parse_result", state.store_error))
    key = import_key(path)
    while True:  # a second import of a file being imported joins the first
        with state.imports_lock:
            running = state.imports.get(key)
            if running is None:
                job = state.imports[key] = ImportJob()
                break
        await progress_until(ctx, running, lambda done=running: done.finished.is_set())
    session = usage.mcp_session(_session_id(ctx))
    try:
        response = await with_progress(ctx, job, lambda: _in_session(session, lambda: state.import_file(
            path, allow_incomplete, job)))
    finally:
        with state.imports_lock:
            del state.imports[key]
        job.finished.set()
    return _respond(response)


@_tool(title="View a run", annotations=_READ_ONLY)
def get_view(
    ctx: Context,
    view: Annotated[ViewName, Field(
        description="step_window: the steps around selector in execution order "
                    "(paged both ways). tree: selector's children (default: the "
                    "run). tree_snapshot: selector's subtree to max_depth. message: a message "
                    "(selector: its id, or a node's for its status message) in parts.")],
    run_id: Annotated[int | None, Field(description="From parse_result or list_runs.")] = None,
    path: Annotated[str | None, Field(
        description="Instead of run_id: a result file already imported.")] = None,
    selector: Annotated[str | None, Field(
        description="A node id (s1-s2-t3-k4), a test's name (full or its own, as robot "
                    "--test) or an ITERATION_GROUP's expand_selector. "
                    "failure_path: a test or a node in it. summary: group:<id> (a failure "
                    "group's tests), failed (every failed test), run_group (the pabot "
                    "execution).")] = None,
    projection: Annotated[Literal["all", "failures", "warnings"], Field(
        description="tree: all, failing branches, or those with WARN or worse.")] = "all",
    cursor: Cursor = None,
    page_size: PageSize = None,
    budget: Annotated[int | None, Field(
        ge=MIN_BUDGET, le=MAX_BUDGET, description=f"Token budget of the response ({DEFAULT_BUDGET}).",
    )] = None,
    max_depth: Annotated[int | None, Field(ge=1, le=6, description="tree_snapshot: levels "
                                                                   "(3).")] = None,
) -> Annotated[CallToolResult, "GetViewResponse"]:
    """One view of a run, paged and within a token budget."""
    return _respond(_answer(ctx, "get_view", lambda conn, policy: service.get_view(
        conn, view, run_id, path, selector, cursor, page_size, budget, projection, policy,
        max_depth)))


@_tool(title="Search messages", annotations=_READ_ONLY)
def search_messages(
    ctx: Context,
    query: Annotated[str | None, Field(
        description="Plain text, case-insensitive; % _ \\ are literal. Optional with level or "
                    "min_level.")] = None,
    run_id: Annotated[int | None, Field(description="From parse_result or list_runs.")] = None,
    path: Annotated[str | None, Field(description="Instead of run_id: a result file.")] = None,
    selector: Annotated[str | None, Field(
        description="Search only in this node (node id, test name or expand_selector); "
                    "default: the whole run and its run errors.")] = None,
    scope: Annotated[Literal["node", "subtree", "test"] | None, Field(
        description="With selector: node (its own messages), subtree (default), test (the "
                    "test or suite setup/teardown around it).")] = None,
    level: Annotated[Literal["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL", "SKIP"] | None, Field(
        description="Exactly this level.")] = None,
    min_level: Annotated[Literal["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL", "SKIP"] | None,
                         Field(description="This level or worse: TRACE < DEBUG "
                                           "< INFO < WARN (= SKIP) < ERROR < FAIL.")] = None,
    cursor: Cursor = None,
    page_size: Annotated[int | None, Field(ge=1, le=200, description="Hits per page (25).")] = None,
    budget: Budget = None,
    detail: Annotated[Literal["compact", "full"], Field(
        description="compact: id, level, text, call path. full: also time, position, "
                    "iteration, branch and the hits' nodes.")] = "compact",
    group_by: Annotated[Literal["iteration", "node"] | None, Field(
        description="Hits grouped by loop iteration or node: count, levels, first hit.")] = None,
) -> Annotated[CallToolResult, "SearchResponse"]:
    """Messages (and run errors) by text and/or level, in execution order, each with the node
    that logged it, the loop iteration or IF/TRY branch it ran in, and a short call path;
    repeats of a message come folded (count, last, unfold_cursor). Secrets come back masked;
    a query cannot find a masked value."""
    return _respond(_answer(ctx, "search_messages", lambda conn, policy: service.search_messages(
        conn, query, run_id, path, selector, scope, level, min_level, cursor, page_size, budget,
        policy, detail, group_by)))


@_tool(title="List runs", annotations=_READ_ONLY)
def list_runs(
    ctx: Context,
    status: Annotated[Literal["complete", "running", "interrupted"] | None, Field(
        description="Only runs with this status.")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    cursor: Cursor = None,
    label: Annotated[str | None, Field(description="Only runs with this label.")] = None,
    suite: Annotated[str | None, Field(description="Only runs of this root suite.")] = None,
    branch: Annotated[str | None, Field(description="Only runs of this CI branch.")] = None,
    since: Annotated[str | None, Field(description="Started at or after (ISO date/time).")] = None,
    until: Annotated[str | None, Field(description="Started before (ISO date/time).")] = None,
) -> Annotated[CallToolResult, "RunListResponse"]:
    """Runs in the store, newest first: imported files and live captures alike; the
    processes of one pabot execution as one run group (g<id>)."""
    return _respond(_answer(ctx, "list_runs", lambda conn, _: service.list_runs(
        conn, status, limit, cursor, label, suite, branch, since, until)))


_RUN_REF = "A run id (17) or a pabot run group (g17)."


@_tool(title="Compare two runs", annotations=_READ_ONLY)
def compare_runs(
    ctx: Context,
    head: Annotated[str, Field(description=_RUN_REF)],
    base: Annotated[str | None, Field(description=_RUN_REF + " Default: the previous complete "
                                      "run of the same suite (and label/branch).")] = None,
    changes: Annotated[list[Literal[
        "new_failure", "still_failing_changed", "still_failing", "newly_skipped", "fixed",
        "no_longer_skipped", "added", "removed", "slower", "faster"]] | None, Field(
        description="Only these kinds of change (default: all).")] = None,
    cursor: Cursor = None,
    page_size: PageSize = None,
    budget: Budget = None,
) -> Annotated[CallToolResult, "CompareRunsResponse"]:
    """What changed between two runs of a suite, test by test (by full name): one kind of
    change each (`changes` lists them); counts, then one page."""
    return _respond(_answer(ctx, "compare_runs", lambda conn, _: service.compare_runs(
        conn, head, base, changes, cursor, page_size, budget)))


@_tool(title="A test's history", annotations=_READ_ONLY)
def test_history(
    ctx: Context,
    test: Annotated[str | None, Field(description="The test's full name (Suite.Test), or its "
                                                  "name when unique.")] = None,
    run_id: Annotated[int | None, Field(description="Instead of test: a run ...")] = None,
    node_id: Annotated[str | None, Field(description="... and the test's id in it.")] = None,
    limit: Annotated[int | None, Field(ge=1, le=200, description="Runs per page and the "
                                                                 "flakiness window (20).")] = None,
    cursor: Cursor = None,
    budget: Budget = None,
) -> Annotated[CallToolResult, "HistoryResponse"]:
    """One test in every finished run, newest first: status, failure signature, time, CI
    branch/commit; its current streak and when it began, its last pass, its flip rate."""
    return _respond(_answer(ctx, "test_history", lambda conn, _: service.test_history(
        conn, test, run_id, node_id, limit, cursor, budget)))


@_tool(title="Flaky tests", annotations=_READ_ONLY)
def flaky_tests(
    ctx: Context,
    suite: Annotated[str | None, Field(description="Root suite name (default: the newest "
                                                   "run's).")] = None,
    window: Annotated[int | None, Field(ge=2, le=1000, description="Newest runs looked at "
                                                                   "(30).")] = None,
    cursor: Cursor = None,
    page_size: Annotated[int | None, Field(ge=1, le=200, description="Tests per page (25).")] = None,
    budget: Budget = None,
) -> Annotated[CallToolResult, "FlakyTestsResponse"]:
    """A suite's tests that passed and failed by turns over its newest runs, highest flip
    rate first (flips / (runs - 1))."""
    return _respond(_answer(ctx, "flaky_tests", lambda conn, _: service.flaky_tests(
        conn, suite, window, cursor, page_size, budget)))


@_tool(title="Open an attachment", annotations=_READ_ONLY)
def get_attachment(
    ctx: Context,
    message_id: Annotated[str, Field(description="message_id of an attachment (failure_path "
                                                 "steps, tree, search hits list them).")],
    index: Annotated[int, Field(ge=0, description="Its index in that message.")] = 0,
    run_id: Annotated[int | None, Field(description="From parse_result or list_runs.")] = None,
    path: Annotated[str | None, Field(description="Instead of run_id: a result file.")] = None,
    budget: Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET,
                                        description=f"Token budget of a text ({DEFAULT_BUDGET}).")] = None,
) -> Annotated[CallToolResult, "AttachmentResponse"]:
    """Open a screenshot or file an HTML message refers to: an image comes back as an image
    (downscaled above 1568 px on the long side, 1.15 megapixels or 3 MB), a text file as
    text (masked). Reads only the run's output folder and allowed folders; never writes."""
    response = _answer(ctx, "get_attachment", lambda conn, policy: service.get_attachment(
        conn, message_id, index, run_id, path, budget, policy))
    result = _respond(response)
    if response._image is not None:
        image = ImageContent(type="image", data=base64.b64encode(response._image).decode(),
                             mime_type=response.media_type or "image/png")
        result.content = [*result.content, image]
    return result


@mcp.resource("rf://docs/fields", mime_type="text/markdown")
def fields() -> str:
    """Every field of every answer: type and meaning (generated from the response models)."""
    from . import field_guide  # generated from the models: loaded when asked for

    WARM_UP.wait()
    return field_guide.guide()


@mcp.resource("rf://runs{?limit}", mime_type="application/json")
def runs_index(ctx: Context, limit: int = 20) -> str:
    """The runs in the store, newest first (list_runs); subscribe to hear of new runs."""
    return _resource_text(_answer(ctx, "list_runs",
                                  lambda conn, _: service.list_runs(conn, limit=limit)))


@mcp.resource("rf://runs/{run_id}/summary", mime_type="application/json")
def run_summary(run_id: str, ctx: Context) -> str:
    """The summary view of a run."""
    return _resource(ctx, run_id, "summary")


@mcp.resource("rf://runs/{run_id}/tests/{test_id}", mime_type="application/json")
def run_test(run_id: str, test_id: str, ctx: Context) -> str:
    """The failure path of one test (its status and message when it passed)."""
    return _resource(ctx, run_id, "failure_path", test_id)


def _resource(ctx: Context, run_id: str, view: ViewName, selector: str | None = None) -> str:
    """A view as a resource's JSON text; a run id that is not a number is RUN_NOT_FOUND too."""
    try:
        number = int(run_id)
    except ValueError:
        response = service.failed("get_view", ResultError(
            RUN_NOT_FOUND, f"No run {run_id!r}: run ids are numbers.",
            "Take run ids from list_runs or parse_result."))
    else:
        response = _answer(ctx, "get_view", lambda conn, _: service.get_view(
            conn, view, run_id=number, selector=selector))
    return _resource_text(response)


def _resource_text(answer: Answer) -> str:
    """A resource's JSON text: the answer without its empty fields."""
    return json.dumps(answer, ensure_ascii=False)


def _answer(ctx: Context, tool: str, operation: Callable[[sqlite3.Connection, PathPolicy], Answer]) -> Answer:
    """Run one operation on the store through this worker thread's connection (requests run
    side by side: an import blocks no read); without a store, ``tool``'s error saying why."""
    state = _state(ctx)
    if state.conn is None:
        assert state.store_error is not None
        return service.failed(tool, state.store_error)
    try:
        conn = state.connection()
    except ResultError as err:
        return service.failed(tool, err)
    return _in_session(usage.mcp_session(_session_id(ctx)), lambda: operation(conn, state.policy))


def _session_id(ctx: Context) -> str | None:
    """The transport's session id (Streamable HTTP with sessions); None on stdio. The SDK
    keeps it on the request's connection (mcp 2.x ``Connection.session_id``)."""
    try:
        connection = getattr(ctx.request_context.session, "_connection", None)
    except ValueError:  # outside a request
        return None
    return getattr(connection, "session_id", None)


def _in_session(session: usage.Session, work: Callable[[], Answer]) -> Answer:
    """``work`` recorded as a call of the client's session (usage.py)."""
    with usage.in_session(session):
        return work()


@mcp.prompt(title="Triage the latest failed run")
def triage(ctx: Context, run_id: Annotated[str | None, Field(
        description="A run id (default: the newest failed run).")] = None) -> str:
    """The newest failed run's summary and first failure path, and the calls that go on."""
    return _prompt(ctx, lambda conn: prompts.triage(conn, run_id))


@mcp.prompt(title="Explain a failed test")
def explain_test(ctx: Context, run_id: Annotated[str, Field(description="The run.")],
                 test_id: Annotated[str, Field(
                     description="The failed test: its id (s1-s2-t3) or name.")]) -> str:
    """One test's failure path and the steps around its deepest failing step."""
    return _prompt(ctx, lambda conn: prompts.explain_test(conn, run_id, test_id))


@mcp.prompt(title="Show a view of a run")
def view_run(ctx: Context, run_id: Annotated[str, Field(description="The run.")],
             view: Annotated[str, Field(description="summary, failure_path, step_window, tree.")],
             selector: Annotated[str | None, Field(description="A node id or a test's name.")] = None,
             projection: Annotated[str | None, Field(
                 description="tree: all, failures, warnings.")] = None) -> str:
    """get_view's answer, as a message to start from."""
    return _prompt(ctx, lambda conn: prompts.view_run(conn, run_id, view, selector, projection))


def _prompt(ctx: Context, assemble: Callable[[sqlite3.Connection], str]) -> str:
    state = _state(ctx)
    if state.conn is None:
        assert state.store_error is not None
        return f"{state.store_error.message} {state.store_error.hint or ''}".strip()
    return assemble(state.connection())


_STATES: list[AppState] = []  # the running server's state, for handlers the SDK gives no context


@mcp.completion()
async def complete(ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument,
                   context: CompletionContext | None) -> Completion | None:
    """Run ids (with label, status and name in prompts), test and node ids of the run
    already chosen, views and projections."""
    if not _STATES or _STATES[-1].conn is None:
        return None
    state = _STATES[-1]
    labelled = isinstance(ref, PromptReference)
    values, more = await anyio.to_thread.run_sync(lambda: prompts.complete(
        state.connection(), argument.name, argument.value,
        context.arguments if context else None, labelled))
    return Completion(values=values, has_more=more)


# Named by each tool's return type, read from the tools (a new tool cannot be left out); the
# models themselves are loaded at the first tool call, the schemas from a file at start-up.
RESPONSE_MODELS = tool_schemas.response_model_names(mcp._tool_manager.list_tools())
tool_schemas.attach_output_schemas(mcp._tool_manager.list_tools(), RESPONSE_MODELS)


@functools.cache
def _attach_output_models() -> None:
    tool_schemas.attach_output_models(mcp._tool_manager.list_tools(), RESPONSE_MODELS)


def _build_output_models() -> None:
    """Every tool's response model attached, and its validator built (they are defer_build)."""
    _attach_output_models()
    for model in tool_schemas.response_models(RESPONSE_MODELS).values():
        model.model_rebuild()


WARM_UP = WarmUp(models=_build_output_models, rest=service.prepare)


def serve() -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    mcp.run("stdio")
    return 0
