"""The field guide (read side, documentation): every field of every answer, generated from
the pydantic models (``models/``), so the tools' listing can stay an outline and nothing is
written twice. Served as the MCP resource ``rf://docs/fields``; the README's node field
tables come from the same rows (scripts/readme_examples.py)."""

from __future__ import annotations

import types
import typing

from pydantic import BaseModel

from . import models

# (heading, model, what it is): in the order an agent meets them.
SECTIONS: tuple[tuple[str, type[BaseModel], str], ...] = (
    ("Every response", models.Envelope, "Fields every tool's answer carries."),
    ("Errors", models.ErrorInfo, "`error` of an `ok: false` answer."),
    ("summary", models.SummaryView, "get_view(view=\"summary\")."),
    ("failure groups", models.FailureGroup, "summary `failure_groups` items."),
    ("failed tests", models.FailedTest, "summary `failed_tests` items."),
    ("run errors", models.RunErrorItem, "summary `errors` items."),
    ("open nodes", models.OpenNode, "summary `unfinished` items."),
    ("failure_path", models.FailurePathView, "get_view(view=\"failure_path\")."),
    ("cause", models.FailureCause, "failure_path and failure group `cause`."),
    ("path step", models.PathStep, "failure_path `path` items: a node (below) and these."),
    ("other failures", models.FailureRef, "path step `other_failures` items."),
    ("argument sources", models.ArgumentSource, "path step `arguments_from` items."),
    ("repeated calls", models.RepeatedCalls, "failure_path `path` items with kind "
                                             "REPEATED_CALLS."),
    ("step_window", models.StepWindowView, "get_view(view=\"step_window\")."),
    ("window step", models.WindowStep, "step_window `steps` items: a node and these."),
    ("tree", models.TreeView, "get_view(view=\"tree\")."),
    ("tree node", models.TreeNode, "tree `node` and `children` items: a node and these."),
    ("iteration group", models.IterationGroup, "tree `children` items with kind "
                                               "ITERATION_GROUP."),
    ("run errors item", models.RunErrors, "tree `children` item with kind RUN_ERRORS."),
    ("node", models.Node, "Every node object (tree, failure_path, step_window, search "
                          "`nodes`)."),
    ("message", models.LogMessage, "Messages of steps and tree nodes."),
    ("attachment", models.Attachment, "`attachments` items."),
    ("search_messages", models.SearchResponse, "search_messages."),
    ("search hit", models.SearchHit, "search `hits` items (detail=compact keeps id, kind, "
                                     "level, text, html, attachments, call_path)."),
    ("list_runs", models.RunItem, "list_runs `runs` items."),
    ("signature seen", models.SignatureSeen, "`seen_before` and `signature_seen`: a failure "
                                             "signature in earlier runs."),
    ("compare_runs", models.CompareRunsResponse, "compare_runs."),
    ("run reference", models.RunRef, "compare_runs `head` and `base`."),
    ("changed test", models.ChangedTest, "compare_runs `changes` items."),
    ("test side", models.RunSide, "changed test `head` and `base`."),
    ("test_history", models.HistoryResponse, "test_history."),
    ("history run", models.HistoryEntry, "test_history `runs` items."),
    ("streak", models.Streak, "test_history `streak`."),
    ("flakiness", models.Flakiness, "test_history `flakiness`."),
    ("flaky_tests", models.FlakyTestsResponse, "flaky_tests."),
    ("flaky test", models.FlakyTest, "flaky_tests `tests` items."),
    ("parse_result", models.ParseResultResponse, "parse_result."),
    ("get_attachment", models.AttachmentResponse, "get_attachment."),
)


def rows(model: type[BaseModel], names: list[str] | None = None) -> list[str]:
    """Markdown table rows (field, type, meaning) of ``model``'s fields (all, or ``names``)."""
    out = []
    for name in names or list(model.model_fields):
        info = model.model_fields[name]
        meaning = (info.description or "").replace("|", "/").replace("\n", " ")
        out.append(f"| `{name}` | {type_name(info.annotation)} | {meaning} |")
    return out


def type_name(annotation: object) -> str:
    """A field's type as a table cell: `str`, `list[str]`, `Node`, `A or B`."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        shown = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(shown)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(type_name(a) for a in args)}]"
    if isinstance(annotation, type):
        return "any" if annotation is typing.Any else annotation.__name__
    return "any" if annotation is typing.Any else str(annotation).replace("typing.", "")


def own_fields(model: type[BaseModel]) -> list[str]:
    """``model``'s fields but those of the envelope or the node it extends (their own
    sections list them)."""
    for base in (models.Envelope, models.Node):
        if issubclass(model, base) and model is not base:
            return [n for n in model.model_fields if n not in base.model_fields]
    return list(model.model_fields)


def guide() -> str:
    """The whole field guide, as markdown."""
    parts = ["# rf-log-mcp answers: every field", "",
             "Fields without a value are left out of answers (the envelope's are always "
             "there).", ""]
    for heading, model, what in SECTIONS:
        names = own_fields(model)
        parts += [f"## {heading}", "", what, "", "| field | type | meaning |", "|---|---|---|",
                  *rows(model, names), ""]
    return "\n".join(parts)
