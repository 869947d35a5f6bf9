"""The answers about one run: its summary, nodes, failure path, tree, step window, message
parts, attachments, and the import of one result file (its message search: ``search``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr

from .base import BaseModel, Envelope

DRY_RUN = ("True: robot --dryrun. Keywords were checked, not run: a test's PASS says its "
           "data is valid, FAIL names what is not (a missing keyword, wrong arguments). "
           "Left out of history, flaky tests, compare_runs' base and signature counts.")
COPY_OF = ("A rebot output of runs of the store (rebot --merge of a run and its re-run, "
           "pabot's merged output): the first of them. Left out across runs, as a dry run.")


class Totals(BaseModel):
    total: int | None = None
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None


class SignatureSeen(BaseModel):
    """Where a failure signature appeared before this run (any test, any earlier run)."""

    earlier_runs: int = Field(description="Earlier runs with a test failing with it.")
    first_run_id: int | None = Field(None, description="The first of them.")
    first_seen: str | None = Field(None, description="That run's start time.")


class FailedTest(BaseModel):
    run_id: int | None = Field(None, description="A pabot group's summary: the process's run.")
    node_id: str
    name: str
    message: str
    signature_seen: SignatureSeen | None = Field(
        None, description="Its failure signature failed tests in earlier runs too.")
    cause: FailureCause | None = Field(
        None, description="Why it failed from outside its steps, as failure_path's cause (a "
                          "library that did not import, a parent suite setup, a fatal stop).")


class RunErrorItem(BaseModel):
    id: str = Field(description="errors-mN: the Nth run-level error or warning (the first of "
                                "identical ones).")
    level: str
    text: str
    count: int | None = Field(None, description="How many identical ones the run has (> 1).")


class NodeRef(BaseModel):
    """A node named, not shown: what identifies it."""

    node_id: str
    type: str
    name: str


class OpenNode(NodeRef):
    """An open node of a running (or interrupted) run."""

    failed_descendant_count: int | None = Field(
        None, description="Nodes below it that failed so far (a test failing before it ends: "
                          "failure_path with its id shows them).")


class SkipReason(BaseModel):
    """Why tests were skipped: Skip's message, --skip's, a skip-on-failure tag's (with the
    failure it hid)."""

    message: str
    count: int
    test_ids: list[str] = Field(description="The first tests (up to 5).")
    test_runs: list[int] | None = Field(None, description="A pabot group's summary: the run "
                                                          "of each of test_ids.")


class SummaryView(BaseModel):
    name: str | None = None
    status: str = Field(description="Run status: complete, running, interrupted.")
    result_status: str | None = Field(None, description="Root suite status: PASS, FAIL, SKIP.")
    origin: str
    source_path: str | None = None
    generator: str | None = None
    source_root: str | None = Field(None, description="The root suite's folder: nodes' source "
                                                      "paths below it are relative to it.")
    start_time: str | None = None
    elapsed: float | None = Field(None, description="Seconds.")
    totals: Totals
    label: str | None = Field(None, description="The listener's or import's label.")
    dry_run: bool | None = Field(None, description=DRY_RUN)
    copy_of: int | None = Field(None, description=COPY_OF)
    rpa: bool | None = Field(None, description="True: robot --rpa (tasks).")
    ci: dict[str, str] | None = Field(None, description="The CI build: provider, commit, branch, "
                                                        "build, build_url, job.")
    metadata: dict[str, Any] | None = Field(
        None, description="First page only: the root suite's metadata (--metadata, the "
                          "Metadata setting: build, environment), masked by name.")
    run_group: str | None = Field(None, description="The pabot execution this process belongs "
                                                    "to (selector run_group summarizes it).")
    runs: list[int] | None = Field(None, description="selector run_group: the group's runs.")
    failed_tests: list[FailedTest] = Field(
        description="One page of failed tests, in run order: those whose failure signature no "
                    "other failed test shares (the others are in failure_groups), or with "
                    "selector group:<id> that group's tests.")
    failure_group_count: int | None = Field(None, description="Failure signatures shared by "
                                                              "two or more failed tests.")
    failure_groups: list[FailureGroup] | None = Field(
        None, description="First page only: failed tests grouped by failure signature, "
                          "largest first (first 10).")
    errors: list[RunErrorItem] | None = Field(
        None, description="First page only: the run's errors and warnings, identical ones "
                          "once with their count (first 20 distinct).")
    skip_reasons: list[SkipReason] | None = Field(
        None, description="First page only: skipped tests grouped by skip message, most first "
                          "(first 10; their counts sum to totals.skipped when all are shown).")
    error_count: int = Field(0, description="Run errors and warnings in all.")
    error_kinds: int | None = Field(None, description="Distinct ones (first page); the rest: "
                                                      "search_messages with min_level=WARN.")
    unfinished: list[OpenNode] | None = Field(
        None, description="Running or interrupted runs: the open suite/test/keyword chain, "
                          "outermost first (what is running now, or was when the run stopped).")
    follow_cursor: str | None = Field(
        None, description="A running run: pass as cursor later to get only what is new since "
                          "(failed tests, run errors), with the current totals and status.")


class Attachment(BaseModel):
    """What an HTML message refers to: a screenshot, a link, a video. Open it with
    get_attachment(message_id, index)."""

    message_id: str = Field(description="The HTML message that refers to it.")
    index: int = Field(description="Its place among the message's references (from 0).")
    kind: Literal["image", "link", "video", "other"]
    reference: str = Field(description="As written (a path relative to the run's output "
                                        "folder, a URL); a data URI by its header only.")
    embedded: bool = Field(description="A data URI: the bytes are in the message itself.")
    media_type: str | None = None
    size_bytes: int | None = Field(None, description="A file's size, a data URI's decoded size.")
    exists: bool | None = Field(None, description="Whether the file exists below the run's "
                                                  "output folder (left out for URLs).")


class LogMessage(BaseModel):
    id: str = Field(description="<node id>-mN: the node's Nth message (RF's own numbering).")
    level: str
    text: str = Field(description="Masked, long ones shortened; an HTML message: its visible "
                                  "text (searched with its images' alt text and references; "
                                  "its markup is neither searched nor shown).")
    html: bool | None = Field(None, description="An HTML message (its attachments follow).")
    attachments: list[Attachment] | None = None


class Node(BaseModel):
    """A suite, test, keyword or control structure of a run: the roadmap's published node
    fields. Published names are never removed or renamed; new fields are optional. A field
    without a value (None, an empty list) is left out of the answer."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    node_id: str = Field(description="RF's id (s1-s2-t3-k4), a selector for every view; it "
                                     "starts with its parent's. IF/TRY roots (RF gives them no "
                                     "id) are the parent's id + -rN; their branches keep RF's "
                                     "ids (as log.html links them), nesting under the root's "
                                     "parent: follow parent_id for the structure.")
    parent_id: str | None = Field(None, description="The parent's node_id (not for the root suite).")
    owner_test_id: str | None = Field(
        None, description="The test the node runs in (a test: itself); not for suites and "
                          "suite setup/teardown steps.")
    sequence: int = Field(description="Execution order in the run: the node's pre-order number "
                                      "(root suite 0); sorts any nodes of a run as they started.")
    type: str = Field(description="Normalized type: SUITE, TEST, SETUP, TEARDOWN, KEYWORD, FOR, "
                                  "ITERATION, WHILE, IF/ELSE ROOT, IF, ELSE IF, ELSE, "
                                  "TRY/EXCEPT ROOT, TRY, EXCEPT, FINALLY, VAR, RETURN, BREAK, "
                                  "CONTINUE, GROUP, ERROR (RF 7's names for every input).")
    keyword_type: str = Field(description="The type RF's own model gives the item (output.json "
                                          "`type`, output.xml's element or `<kw type>`); the "
                                          "same names as `type` for RF 4.0-7.x inputs.")
    name: str = Field(description="Keyword, test or suite name; GROUP and VAR names; empty for "
                                  "other control structures.")
    status: str = Field(description="PASS, FAIL, SKIP, NOT RUN; RUNNING in a live run; NOT "
                                    "FINISHED when the run ended before the node did.")
    elapsed_ms: int | None = Field(None, description="Elapsed time in milliseconds.")
    libname: str | None = Field(None, description="A keyword's library or resource file "
                                                  "(RF's owner; libname before RF 7).")
    child_count: int = Field(description="Direct children (steps, branches, iterations).")
    failed_descendant_count: int = Field(description="Failed nodes anywhere below this one.")
    max_descendant_level: str | None = Field(
        None, description="The most severe message level in the subtree (TRACE ... FAIL); "
                          "left out when the subtree logged nothing.")
    has_children: bool = Field(description="Whether it has children (to expand with tree).")
    message: str | None = Field(None, description="Status message (failure or skip reason).")
    message_count: int | None = Field(None, description="Messages the node logged itself.")
    args: list[str] | None = Field(None, description="Keyword arguments as written (masked).")
    assign: list[str] | dict[str, Any] | str | None = Field(
        None, description="Variables a keyword or FOR assigns, an EXCEPT's AS variable, or an "
                          "ITERATION's loop values ({name: value}, masked).")
    doc: str | None = Field(None, description="Documentation of a suite or test; a keyword's "
                                              "short doc (its definition's first line).")
    tags: list[str] | None = Field(None, description="Test tags; a keyword's own tags.")
    timeout: str | None = Field(None, description="Test or keyword timeout.")
    source: str | None = Field(None, description="The file the node is written in (a suite: its "
                                                 "file or folder), relative to the run's "
                                                 "source_root when below it.")
    lineno: int | None = Field(None, description="The line the node is written on (a keyword: "
                                                 "its call site).")
    source_origin: Literal["node", "suite", "source_files", "sources_changed", "sources_missing",
                           "unsupported"] | None = Field(
        None, description="How source and lineno are known: node (the input gives them), "
                          "suite (a test's file, from its suite), source_files (resolved with "
                          "RF's parser from the suite files, unchanged since the run), "
                          "sources_changed / sources_missing (the files changed since the run "
                          "or are gone: nothing resolved), unsupported (the input has none).")
    definition_source: str | None = Field(None, description="A user keyword's definition: its "
                                                            "file (resolved from the sources).")
    definition_lineno: int | None = Field(None, description="The definition's line.")
    metadata: dict[str, Any] | None = Field(None, description="Suite metadata; a test's (RF 7.5+).")
    source_name: str | None = Field(None, description="An embedded-arguments keyword's "
                                                      "name as defined.")
    template: str | None = Field(None, description="A templated test's template keyword.")
    error: str | None = Field(None, description="An invalid item's error (RF's ERROR items).")
    flavor: str | None = Field(None, description="FOR: IN, IN RANGE, IN ENUMERATE, IN ZIP.")
    values: list[str] | None = Field(None, description="FOR loop values, RETURN values.")
    start: str | None = Field(None, description="FOR IN ENUMERATE start.")
    mode: str | None = Field(None, description="FOR IN ZIP mode.")
    fill: str | None = Field(None, description="FOR IN ZIP fill value.")
    condition: str | None = Field(None, description="IF, ELSE IF and WHILE condition.")
    limit: str | None = Field(None, description="WHILE limit.")
    on_limit: str | None = Field(None, description="WHILE: PASS or FAIL when the limit is hit.")
    on_limit_message: str | None = Field(None, description="WHILE: message when the limit is hit.")
    patterns: list[str] | None = Field(None, description="EXCEPT patterns.")
    pattern_type: str | None = Field(None, description="EXCEPT: GLOB, REGEXP, START, LITERAL.")
    scope: str | None = Field(None, description="VAR scope.")
    separator: str | None = Field(None, description="VAR separator of a joined value.")
    value: list[str] | None = Field(None, description="VAR value (masked).")


# The roadmap's common fields: every node object carries them (those without a value, such as
# a root suite's parent_id, are left out like every empty field).
COMMON_NODE_FIELDS = ("node_id", "parent_id", "owner_test_id", "sequence", "type",
                      "keyword_type", "name", "status", "elapsed_ms", "libname", "child_count",
                      "failed_descendant_count", "max_descendant_level", "has_children")


class MessageSummary(BaseModel):
    by_level: dict[str, int] = Field(description="The node's own messages, counted by level.")
    important: list[LogMessage] | None = Field(
        None, description="Its WARN-or-worse messages (first 10); search for the others.")


class TreeNode(Node):
    messages: MessageSummary | None = Field(
        None, description="The expanded node only: a summary of its own messages.")


class FailureRef(NodeRef):
    """A failing node named with what tells it apart from its siblings."""

    assign: dict[str, Any] | None = Field(None, description="An iteration's loop values.")
    args: list[str] | None = None
    message: str | None = None


class HandledFailure(FailureRef):
    """A step that passed with a failure inside it handled, and that failure."""

    assign: list[str] | dict[str, Any] | None = Field(  # type: ignore[assignment]
        None, description="The variables the step assigns (`${ok}`: what a later step checks), "
                          "or an iteration's loop values.")
    failing_step_id: str | None = Field(None, description="The handled failure's deepest step.")


class ArgumentSource(NodeRef):
    """A step before the failing one that assigned a variable the failing step's arguments
    use, or set it for the test or suite (a keyword that ran ``Set Test Variable``; a
    suite setup's ``Set Suite Variable``: its line is among the messages)."""

    assign: list[str] | None = Field(None, description="The variables it assigns.")
    args: list[str] | None = Field(None, description="Its first 6 arguments.")
    args_total: int | None = Field(None, description="How many it has, when more than 6.")
    messages: list[LogMessage] | None = Field(
        None, description="What it or a step inside it logged last (a response), and RF's "
                          "`${resp} = ...` line of what it assigned.")


class PathStep(Node):
    messages: list[LogMessage] | None = Field(
        None, description="WARN and worse messages of this step, and a library's traceback "
                          "(DEBUG; robot --loglevel DEBUG); the deepest step's also its last 3 "
                          "INFO messages before it failed (a request and its response).")
    other_failures: list[FailureRef] | None = Field(
        None, description="Failing children the path does not follow (continuable failures, "
                          "other failing iterations), first 10; tree with projection=failures "
                          "pages through all of them.")
    other_failures_total: int | None = None
    handled_failures: list[HandledFailure] | None = Field(
        None, description="Children before the failing one that passed with a failure handled "
                          "inside (Run Keyword And Return Status or Ignore Error, TRY/EXCEPT, "
                          "a retry): often the cause ('False' should be true), nearest first, "
                          "3 at most; message is the handled failure's.")
    handled_failures_total: int | None = None
    arguments_from: list[ArgumentSource] | None = Field(
        None, description="The deepest step: the steps before it that assigned variables its "
                          "arguments use (`${resp} = GET On Session` before `Should Be Equal "
                          "As Integers  ${resp.status_code}  200`), nearest first, 3 at most.")
    attachments: list[Attachment] | None = Field(
        None, description="Of the HTML messages (any level) the step logged; the last step "
                          "also those below it (a screenshot taken when it failed); the test "
                          "those elsewhere in it.")


class WindowStep(Node):
    depth: int = Field(description="Levels below the scope (the test is 0).")
    center: bool | None = Field(None, description="The selected node.")


class IterationGroup(BaseModel):
    """Consecutive clean PASS iterations folded into one item."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["ITERATION_GROUP"] = Field(description="What the item is.")
    group_id: str = Field(description="ig:LOOP:FIRST-LAST: the loop's node_id and the first and "
                                      "last iteration numbers, counted from 1.")
    status: str = Field(description="PASS (only clean passing iterations fold).")
    count: int = Field(description="Iterations in the group.")
    first_node_id: str = Field(description="The first iteration's node_id.")
    last_node_id: str = Field(description="The last iteration's node_id.")
    first_assign: dict[str, Any] | None = Field(None, description="Loop values of the first.")
    last_assign: dict[str, Any] | None = Field(None, description="Loop values of the last.")
    expand_selector: str = Field(description="Pass as selector to page through the iterations.")


class RunErrors(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["RUN_ERRORS"]
    count: int = Field(description="Run errors and warnings in all.")
    distinct: int = Field(description="Distinct ones; the first 10 are listed, the rest: "
                                      "search_messages with min_level=WARN.")
    messages: list[RunErrorItem]


class RunRoot(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["RUN"]
    run_id: int
    status: str
    name: str | None = None


class RepeatedCalls(BaseModel):
    """Levels of a path that repeat one cycle of calls (recursion), folded: the first and
    the last cycle are shown as steps around it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["REPEATED_CALLS"]
    names: list[str] = Field(description="The cycle: the keywords that call each other.")
    count: int = Field(description="Levels folded.")
    cycles: int = Field(description="Times the cycle repeats in them.")
    first_node_id: str = Field(description="The first folded level: a selector for tree or "
                                           "step_window to open them.")
    last_node_id: str


class FailureCause(BaseModel):
    """Why a test failed from outside its own steps, and that failure's root, so an agent
    needs no second call."""

    reason: Literal["parent_suite_setup", "parent_suite_teardown", "fatal_error",
                    "exit_on_failure", "exit_on_error", "import_failed"]
    node_id: str = Field(description="What failed: the suite setup/teardown, the test (or "
                                     "suite fixture) whose failure stopped the run, or for "
                                     "exit_on_error the run's first error (errors-mN); for "
                                     "import_failed (a keyword or variable not found) the "
                                     "run's error importing its library, resource or "
                                     "variable file.")
    type: str
    name: str
    failing_step_id: str | None = Field(None, description="Its deepest failing step (for "
                                        "exit_on_error the step that logged the error).")
    failing_step_name: str | None = None
    message: str = Field(description="That step's failure message.")
    in_addition: bool | None = Field(None, description="True when the test had failed in its "
                                     "own steps already and this came on top (RF's 'Also "
                                     "parent suite teardown failed'): the test's own failure "
                                     "is the path's.")


class FailureGroup(BaseModel):
    signature: str = Field(description="The failure message with volatile parts (numbers, ids, "
                                       "times, quoted values) replaced, [in the failed keyword].")
    count: int = Field(description="Failed tests with this signature.")
    message: str = Field(description="The first test's failure message.")
    test_ids: list[str] = Field(description="The first tests (up to 5).")
    test_runs: list[int] | None = Field(None, description="A pabot group's summary: the run "
                                                          "of each of test_ids.")
    tests_selector: str = Field(description="get_view summary selector listing all its tests.")
    seen_before: SignatureSeen
    cause: FailureCause | None = Field(None, description="When they failed for something "
                                                         "outside them.")


class FailurePathView(BaseModel):
    start_id: str = Field(description="The failed test (or suite setup/teardown) the path starts at.")
    cause: FailureCause | None = None
    path: list[PathStep | RepeatedCalls] = Field(
        description="From the start down the most telling failing branch (a retry's last "
                    "attempt). Over the budget, the deepest step stays and next_cursor "
                    "continues with the steps left out.")
    failed_tests_total: int = Field(description="Failed tests in the run.")
    failed_suite_fixtures_total: int = Field(
        description="Failed suite setups and teardowns in the run; their paths are paged with "
                    "the tests' (next_cursor), in run order.")
    tests_failed_for_others_total: int | None = Field(
        None, description="Tests failed only for another start (a suite setup/teardown, the "
                          "failure that stopped the run, the first test an error stopped): "
                          "next_cursor passes them.")
    tests_failed_for_it: int | None = Field(None, description="Those tests of this start.")


class TreeView(BaseModel):
    projection: str
    node: TreeNode | RunRoot = Field(
        description="The expanded node with a summary of its own messages, or the run.")
    children: list[TreeNode | IterationGroup | RunErrors] = Field(
        description="One page of direct children in execution order: nodes, ITERATION_GROUPs "
                    "of >= 25 clean PASS iterations (expand with expand_selector), and under "
                    "the run, RUN_ERRORS.")


class StepWindowView(BaseModel):
    scope_id: str = Field(description="The test (or suite setup/teardown) the steps belong to.")
    scope_type: str
    center_id: str
    first_pre: int
    steps_total: int = Field(description="Steps in the scope.")
    position: int = Field(description="Index of the first step of this page in the scope.")
    steps: list[WindowStep] = Field(description="Nodes in execution order; the selected node "
                                                "has center=true.")
    prev_cursor: str | None = Field(None, description="Cursor of the page before this one.")


class MessagePartView(BaseModel):
    """One part of one message, masked; next_cursor reads the next part."""

    message_id: str = Field(description="The message (<node id>-mN, errors-mN), or a node "
                                        "id for its status message.")
    node_id: str | None = Field(None, description="The node that logged it.")
    kind: Literal["status"] | None = Field(None, description="status: a node's status "
                                                             "message.")
    level: str
    time: str | None = None
    html: bool | None = Field(None, description="An HTML message: its visible text is paged.")
    length: int = Field(description="Characters in the whole message (as stored).")
    offset: int = Field(description="Where this part starts.")
    end: int = Field(description="Where it ends (parts end at a line break or space where "
                                 "one is near, never inside a masked value).")
    text: str = Field(description="The part, masked.")
    attachments: list[Attachment] | None = Field(
        None, description="An HTML message's screenshots and files (with its first part).")


class SnapshotNode(TreeNode):
    depth: int = Field(description="Levels below the snapshot's root (its children: 1).")


class ContinueAt(BaseModel):
    selector: str = Field(description="tree selector: the node whose children go on.")
    cursor: str | None = Field(None, description="tree cursor: its next children page.")
    reason: Literal["page", "budget"] = Field(description="page: more children than "
                                                          "page_size; budget: the budget ended.")


class TreeSnapshotView(BaseModel):
    projection: str
    max_depth: int
    node: TreeNode = Field(description="The snapshot's root.")
    nodes: list[SnapshotNode | IterationGroup] = Field(
        description="The subtree in execution order (pre-order) down to max_depth: nodes "
                    "with depth, folded ITERATION_GROUPs; nodes at max_depth with "
                    "has_children open with tree.")
    continue_at: list[ContinueAt] | None = Field(
        None, description="Where the snapshot stopped before the subtree's end (tree "
                          "selector and cursor).")


class GetViewResponse(Envelope):
    view: str | None = None
    summary: SummaryView | None = Field(
        None, description="Run status and totals, a page of failed tests; first page: failure "
                          "groups (shared messages and their cause) and run errors.")
    failure_path: FailurePathView | None = Field(
        None, description="cause (a parent suite's setup, a fatal stop) and path: steps (node "
                          "fields, messages, other_failures) and folded REPEATED_CALLS.")
    step_window: StepWindowView | None = Field(
        None, description="steps: nodes with depth, the selected one center=true.")
    tree: TreeView | None = Field(
        None, description="node and its children: nodes, ITERATION_GROUPs, RUN_ERRORS.")
    tree_snapshot: TreeSnapshotView | None = Field(
        None, description="A bounded subtree: nodes with depth down to max_depth.")
    message: MessagePartView | None = Field(None, description="One part of one message.")


class AttachmentResponse(Envelope):
    """One attachment opened: an image comes as MCP image content beside this, a text file
    as ``text`` (masked, within the budget)."""

    message_id: str | None = None
    index: int | None = None
    attachment: Attachment | None = None
    media_type: str | None = Field(None, description="Of what is sent (a downscaled image: PNG "
                                                     "or JPEG).")
    width: int | None = Field(None, description="The image sent, in pixels.")
    height: int | None = None
    original_width: int | None = Field(None, description="The image as stored.")
    original_height: int | None = None
    downscaled: bool | None = Field(None, description="Larger than the limits (long side 1568 px,"
                                                      " 1.15 MP, 3 MB) and sent smaller.")
    text: str | None = Field(None, description="A text attachment, masked and shortened.")
    _image: bytes | None = PrivateAttr(default=None)


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
