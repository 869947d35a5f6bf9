"""The answer of search_messages (and ``rf-log-mcp search --json``): one run's messages found
by text, level and scope, their repeats folded, or grouped by iteration or node."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import BaseModel, Envelope
from .single_run import Attachment, Node


class HitIteration(BaseModel):
    node_id: str
    values: dict[str, Any] | None = Field(None, description="Loop variable values (masked).")


class HitBranch(BaseModel):
    node_id: str
    type: str = Field(description="IF, ELSE IF, ELSE, TRY, EXCEPT or FINALLY.")
    condition: str | None = Field(None, description="IF condition or EXCEPT patterns.")


class RepeatSample(BaseModel):
    id: str
    time: str | None = None
    text: str


class SearchHit(BaseModel):
    id: str = Field(description="Message id (<node>-mN), run error id (errors-mN), or for a "
                                "status message the node's id.")
    kind: Literal["status"] | None = Field(
        None, description="status: the status message of a test, keyword or control structure "
                          "(level FAIL or SKIP by its status); left out for logged messages.")
    seq: int | None = Field(None, description="Position of the message in the run (execution order).")
    level: str
    time: str | None = None
    text: str = Field(description="The message, masked; a long one is cut around the first match; "
                                  "an HTML one: its visible text.")
    html: bool | None = None
    attachments: list[Attachment] | None = None
    node_id: str | None = Field(None, description="The node that logged it (in `nodes`); left "
                                                   "out for run errors.")
    iteration: HitIteration | None = Field(None, description="The innermost loop iteration it ran in.")
    branch: HitBranch | None = Field(None, description="The innermost IF/TRY branch it ran in.")
    call_path: str | None = Field(
        None, description="Test (or suite) > keyword > ... > node; long paths keep the first two "
                          "and the last three names.")
    count: int | None = Field(None, description="Repeated messages folded into this hit: the "
                                                "next ones, or later ones of the same node, "
                                                "equal once times, ids and numbers are set "
                                                "aside; this hit is the first of them.")
    last: RepeatSample | None = Field(None, description="The last of the folded repeats.")
    unfold_cursor: str | None = Field(None, description="Pass as cursor to list the folded "
                                                        "messages one by one.")


class SearchGroup(BaseModel):
    """The hits of one loop iteration or one node (group_by), counted."""

    node_id: str = Field(description="The iteration (group_by=iteration) or node that logged "
                                     "them; hits outside any iteration group by node.")
    type: str
    name: str | None = None
    values: dict[str, Any] | None = Field(None, description="An iteration's loop values.")
    count: int = Field(description="Hits in the group on this page's stretch of the run.")
    levels: dict[str, int] = Field(description="Those hits by level.")
    first: SearchHit = Field(description="The group's first hit.")


class SearchResponse(Envelope):
    query: str | None = None
    selector: str | None = None
    scope: str | None = Field(None, description="node, subtree or test (with a selector).")
    levels: list[str] | None = Field(None, description="The levels searched, when filtered.")
    hits: list[SearchHit] = Field(default_factory=list, description="In execution order; run "
                                  "errors (run-wide searches only) after the messages.")
    group_by: str | None = None
    groups: list[SearchGroup] | None = Field(None, description="group_by: logged messages' "
                                             "hits by iteration or node, in execution order.")
    nodes: list[Node] | None = Field(None, description="detail=full: the nodes that logged "
                                     "this page's hits, each once, in the order of their first "
                                     "hit.")
