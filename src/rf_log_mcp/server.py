"""The MCP stdio server: tools and resources over the shared store.

Never print to stdout here: stdout is the protocol channel.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from rf_log_listener import __version__
from rf_log_listener.store import open_store

from . import service
from .models import Envelope, GetViewResponse, ParseResultResponse, RunListResponse, SearchResponse
from .paths import PathPolicy
from .shaping import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET

log = logging.getLogger("rf_log_mcp")

INSTRUCTIONS = """\
Robot Framework results, small and exact. Typical flow:
1. parse_result(path) imports an output.xml/output.json (or finds it) and returns run_id;
   list_runs shows runs already in the store, including live ones.
2. get_view(run_id, view="summary"): status, totals, failed tests with messages, run errors.
3. get_view(run_id, view="failure_path", selector=<test id>): the failing branch of a test
   down to its decisive messages (without selector: the first failure; next_cursor: the next).
4. get_view(run_id, view="tree", selector=<node id>, projection="failures"): expand any node;
   long runs of passing iterations come folded (expand_selector opens them).
search_messages(run_id, query?, selector?, scope?, level?/min_level?) finds messages by
   text and/or severity, run-wide or inside one test/keyword/iteration, with call paths.
Secret values (passwords, tokens, keys, cookies) always come back as ***.
Responses carry ok, estimated_tokens and truncation flags; pass next_cursor to continue a page.
Errors come back as ok=false with error.code, error.message and error.hint.
"""


@dataclass
class AppState:
    conn: sqlite3.Connection
    lock: threading.Lock
    policy: PathPolicy  # the files tools may read (paths.py)


@asynccontextmanager
async def lifespan(_server: MCPServer) -> AsyncIterator[AppState]:
    conn = open_store(on_corrupt=lambda moved: log.warning(
        "the store was damaged and was moved to %s; a new store was started "
        "(rf-log-mcp doctor --repair imports its result files again)", moved))
    try:
        yield AppState(conn=conn, lock=threading.Lock(), policy=PathPolicy.from_environment())
    finally:
        conn.close()


mcp = MCPServer(name="rf-log-mcp", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan)

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _state(ctx: Context) -> AppState:
    return ctx.request_context.lifespan_context  # type: ignore[no-any-return]


_ENVELOPE_FIELDS = tuple(Envelope.model_fields)


def _respond(response: Envelope) -> CallToolResult:
    """The response as structured content and as one compact JSON text. Empty optional
    fields are left out (the SDK's default text copy is indented and spells out every
    null: tokens an agent pays for), except the envelope's, which every response carries.
    ``ok: false`` responses are flagged as tool errors; their payload still matches the
    declared output schema, so strict clients accept it."""
    data = response.model_dump(mode="json", exclude_none=True)
    data = {**{name: getattr(response, name) for name in _ENVELOPE_FIELDS if name != "error"}, **data}
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data,
                          is_error=not response.ok)


@mcp.tool(
    title="Import a Robot Framework result",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False),
)
def parse_result(
    ctx: Context,
    path: Annotated[str, Field(description="Path of an output.xml (RF 4.0+) or output.json (RF 7.2+).")],
    allow_incomplete: Annotated[bool, Field(
        description="Import the readable part of a cut file as an 'interrupted' run.")] = False,
) -> Annotated[CallToolResult, ParseResultResponse]:
    """Import a result file into the store (streamed, any size) and return its run_id.

    The same bytes give the same run_id without parsing again. A file still being written or
    cut gives INCOMPLETE_RESULT unless allow_incomplete is true.
    """
    state = _state(ctx)
    with state.lock:
        return _respond(service.parse_result(state.conn, path, allow_incomplete, state.policy))


@mcp.tool(title="View a run", annotations=_READ_ONLY)
def get_view(
    ctx: Context,
    view: Annotated[Literal["summary", "failure_path", "step_window", "tree"], Field(
        description="summary: status, totals, failed tests, run errors. failure_path: a failed "
                    "test's most severe failing branch down to its messages. step_window: the "
                    "steps around selector in execution order (prev_cursor/next_cursor page). "
                    "tree: the direct children of selector (default: the run), by projection.")],
    run_id: Annotated[int | None, Field(description="From parse_result or list_runs.")] = None,
    path: Annotated[str | None, Field(
        description="Instead of run_id: a result file already imported.")] = None,
    selector: Annotated[str | None, Field(
        description="failure_path/step_window: a test id (s1-s2-t3) or any node inside it "
                    "(step_window: required; suite setup/teardown nodes work too). tree: the "
                    "node to expand (a node id or an ITERATION_GROUP's expand_selector).")] = None,
    projection: Annotated[Literal["all", "failures", "warnings"], Field(
        description="tree: all children, only failing branches, or branches with WARN or "
                    "worse.")] = "all",
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page.")] = None,
    page_size: Annotated[int | None, Field(ge=1, le=200, description="Items per page (25).")] = None,
    budget: Annotated[int | None, Field(
        ge=MIN_BUDGET, le=MAX_BUDGET, description=f"Token budget of the response ({DEFAULT_BUDGET}).",
    )] = None,
) -> Annotated[CallToolResult, GetViewResponse]:
    """One view of a run, paged and within a token budget."""
    state = _state(ctx)
    with state.lock:
        return _respond(service.get_view(state.conn, view, run_id, path, selector, cursor,
                                         page_size, budget, projection, state.policy))


@mcp.tool(title="Search messages", annotations=_READ_ONLY)
def search_messages(
    ctx: Context,
    query: Annotated[str | None, Field(
        description="Plain text, case-insensitive; % _ \\ are literal. Optional with level or "
                    "min_level.")] = None,
    run_id: Annotated[int | None, Field(description="From parse_result or list_runs.")] = None,
    path: Annotated[str | None, Field(description="Instead of run_id: a result file.")] = None,
    selector: Annotated[str | None, Field(
        description="Limit the search to this node (a node id, or an ITERATION_GROUP's "
                    "expand_selector); default: the whole run, run errors included.")] = None,
    scope: Annotated[Literal["node", "subtree", "test"] | None, Field(
        description="With selector: node = its own messages, subtree = it and everything "
                    "below (default), test = the whole test (or suite setup/teardown) around it.",
    )] = None,
    level: Annotated[Literal["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL", "SKIP"] | None, Field(
        description="Only messages of exactly this level.")] = None,
    min_level: Annotated[Literal["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FAIL", "SKIP"] | None,
                         Field(description="Only messages of this level or worse: TRACE < DEBUG "
                                           "< INFO < WARN (= SKIP) < ERROR < FAIL.")] = None,
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page.")] = None,
    page_size: Annotated[int | None, Field(ge=1, le=200, description="Hits per page (25).")] = None,
    budget: Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET,
                                        description=f"Token budget ({DEFAULT_BUDGET}).")] = None,
) -> Annotated[CallToolResult, SearchResponse]:
    """Messages (and run errors) by text and/or level, in execution order, each with the node
    that logged it, the loop iteration or IF/TRY branch it ran in, and a short call path.
    Secrets come back masked; a query cannot find a masked value."""
    state = _state(ctx)
    with state.lock:
        return _respond(service.search_messages(state.conn, query, run_id, path, selector, scope,
                                                level, min_level, cursor, page_size, budget,
                                                state.policy))


@mcp.tool(title="List runs", annotations=_READ_ONLY)
def list_runs(
    ctx: Context,
    status: Annotated[Literal["complete", "running", "interrupted"] | None, Field(
        description="Only runs with this status.")] = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page.")] = None,
) -> Annotated[CallToolResult, RunListResponse]:
    """Runs in the store, newest first: imported files and live captures alike."""
    state = _state(ctx)
    with state.lock:
        return _respond(service.list_runs(state.conn, status, limit, cursor))


@mcp.resource("rf://runs/{run_id}/summary", mime_type="application/json")
def run_summary(run_id: int, ctx: Context) -> str:
    """The summary view of a run."""
    state = _state(ctx)
    with state.lock:
        response = service.get_view(state.conn, "summary", run_id=run_id)
    return response.model_dump_json(exclude_none=True)


@mcp.resource("rf://runs/{run_id}/tests/{test_id}", mime_type="application/json")
def run_test(run_id: int, test_id: str, ctx: Context) -> str:
    """The failure path of one test (its status and message when it passed)."""
    state = _state(ctx)
    with state.lock:
        response = service.get_view(state.conn, "failure_path", run_id=run_id, selector=test_id)
    return json.dumps(response.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def serve() -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    mcp.run("stdio")
    return 0
