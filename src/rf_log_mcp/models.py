"""Pydantic models at the boundary: what tools and ``--json`` commands return.

The MCP output schemas and the README tables are generated from these, never written twice.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable error code, e.g. INCOMPLETE_RESULT or FILE_NOT_FOUND.")
    message: str = Field(description="What went wrong, naming the file or value involved.")
    hint: str | None = Field(default=None, description="What to do about it.")


class Envelope(BaseModel):
    """Fields every tool response carries."""

    ok: bool = True
    run_id: int | None = None
    estimated_tokens: int = Field(0, description="Estimated tokens of this response.")
    truncated: bool = Field(False, description="Any of the three truncations below happened.")
    message_truncated: bool = Field(False, description="Some long text was shortened (head+tail kept).")
    budget_truncated: bool = Field(
        False, description="Items were left out to stay within the budget; continue with next_cursor.",
    )
    page_truncated: bool = Field(False, description="More items follow; pass next_cursor.")
    next_cursor: str | None = Field(None, description="Opaque; valid only with the same arguments.")
    masked_values: int = Field(
        0, description="Secret values (passwords, tokens, keys, cookies, ...) replaced by *** in "
                       "this response. The store keeps them; no response shows them.")
    error: ErrorInfo | None = None


class Totals(BaseModel):
    total: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None


class FailedTest(BaseModel):
    id: str
    name: str
    message: str


class RunErrorItem(BaseModel):
    id: str
    level: str
    text: str


class SummaryView(BaseModel):
    name: str | None = None
    status: str = Field(description="Run status: complete, running, interrupted.")
    result_status: str | None = Field(None, description="Root suite status: PASS, FAIL, SKIP.")
    origin: str
    source_path: str | None = None
    generator: str | None = None
    start_time: str | None = None
    elapsed: float | None = Field(None, description="Seconds.")
    totals: Totals
    failed_tests: list[FailedTest] = Field(description="One page of failed tests, in run order.")
    errors: list[RunErrorItem] = Field(description="Run-level errors and warnings (first ones).")
    error_count: int = 0
    unfinished: list[dict[str, str]] | None = Field(
        None, description="Running or interrupted runs: the open suite/test/keyword chain, "
                          "outermost first (what is running now, or was when the run stopped).")


class LogMessage(BaseModel):
    id: str
    level: str
    text: str


class PathStep(BaseModel):
    id: str
    type: str
    name: str
    status: str
    message: str | None = Field(None, description="Status message, when it adds to the messages.")
    args: list[str] | None = None
    messages: list[LogMessage] = Field(description="WARN and worse messages of this step.")


class FailurePathView(BaseModel):
    start_id: str = Field(description="The failed test (or suite setup/teardown) the path starts at.")
    path: list[PathStep] = Field(description="From the start down the most severe failing branch.")
    failed_tests_total: int = Field(description="Failed tests in the run.")
    failed_suite_fixtures_total: int = Field(
        description="Failed suite setups and teardowns in the run; their paths are paged with "
                    "the tests' (next_cursor), in run order.")


class TreeView(BaseModel):
    projection: str
    node: dict[str, Any] = Field(
        description="The expanded node (or the run): id, type, name, status, aggregates, "
                    "type-specific fields, and a summary of its own messages.")
    children: list[dict[str, Any]] = Field(
        description="One page of direct children in execution order. Each is a node (id, type, "
                    "name, status, child_count, failed_descendant_count, max_level, args, "
                    "assign, condition, ...) or an ITERATION_GROUP of >= 25 clean PASS "
                    "iterations (expand with its expand_selector) or RUN_ERRORS.")


class StepWindowView(BaseModel):
    scope_id: str = Field(description="The test (or suite setup/teardown) the steps belong to.")
    scope_type: str
    center_id: str
    first_pre: int
    steps_total: int = Field(description="Steps in the scope.")
    position: int = Field(description="Index of the first step of this page in the scope.")
    steps: list[dict[str, Any]] = Field(
        description="Nodes in execution order: id, depth below the scope, type, name, status, "
                    "args, assign, message; the selected node has center=true.")
    prev_cursor: str | None = Field(None, description="Cursor of the page before this one.")


class GetViewResponse(Envelope):
    view: str | None = None
    summary: SummaryView | None = None
    failure_path: FailurePathView | None = None
    step_window: StepWindowView | None = None
    tree: TreeView | None = None


class HitIteration(BaseModel):
    id: str
    values: dict[str, Any] | None = Field(None, description="Loop variable values (masked).")


class HitBranch(BaseModel):
    id: str
    type: str = Field(description="IF, ELSE IF, ELSE, TRY, EXCEPT or FINALLY.")
    condition: str | None = Field(None, description="IF condition or EXCEPT patterns.")


class SearchHit(BaseModel):
    id: str = Field(description="Message id (<node>-mN) or run error id (errors-mN).")
    seq: int | None = Field(None, description="Position of the message in the run (execution order).")
    level: str
    time: str | None = None
    text: str = Field(description="The message, masked; a long one is cut around the first match.")
    node_id: str | None = Field(None, description="The node that logged it (None for run errors).")
    node_type: str | None = None
    node_name: str | None = None
    node_status: str | None = None
    iteration: HitIteration | None = Field(None, description="The innermost loop iteration it ran in.")
    branch: HitBranch | None = Field(None, description="The innermost IF/TRY branch it ran in.")
    call_path: str | None = Field(
        None, description="Test (or suite) > keyword > ... > node; long paths keep the first two "
                          "and the last three names.")


class SearchResponse(Envelope):
    query: str | None = None
    selector: str | None = None
    scope: str | None = Field(None, description="node, subtree or test (with a selector).")
    levels: list[str] | None = Field(None, description="The levels searched, when filtered.")
    hits: list[SearchHit] = Field(default_factory=list, description="In execution order; run "
                                  "errors (run-wide searches only) after the messages.")


class RunItem(BaseModel):
    run_id: int
    status: str
    origin: str
    name: str | None = None
    result_status: str | None = None
    total: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    source_path: str | None = None
    start_time: str | None = None


class RunListResponse(Envelope):
    runs: list[RunItem] = Field(default_factory=list)


class ParseResultResponse(Envelope):
    """Result of importing one output.xml / output.json (or finding it already imported)."""

    source_format: Literal["xml", "json"] | None = None
    status: Literal["complete", "interrupted"] | None = Field(
        default=None, description="'interrupted': a cut file imported with allow_incomplete.",
    )
    deduplicated: bool | None = Field(
        default=None, description="True when the same bytes were imported before: same run_id.",
    )
    source_path: str | None = None
    generator: str | None = None
    rf_version: str | None = None
    name: str | None = Field(default=None, description="Root suite name.")
    result_status: str | None = Field(default=None, description="Root suite status.")
    total: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    node_count: int | None = None
    message_count: int | None = None
    error_count: int | None = None
    seconds: float | None = Field(default=None, description="Wall time of this call.")
