"""Answers are built as plain JSON (answer.py) so the command line runs without pydantic;
the response models stay the contract. Every answer here, of every tool, view, page and
error, must be exactly what its model gives back from it: nothing the model would add
(a default), drop (a null) or change (a type) — and the light commands import no pydantic."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from conftest import FIXTURE_RESULTS

from rf_log_listener.importers import import_result
from rf_log_listener.store import open_store
from rf_log_mcp import models, service
from rf_log_mcp.answer import DICT_NAMED_FIELDS, Answer

MODELS = {"parse_result": models.ParseResultResponse, "list_runs": models.RunListResponse,
          "get_view": models.GetViewResponse, "search_messages": models.SearchResponse,
          "compare_runs": models.CompareRunsResponse, "test_history": models.HistoryResponse,
          "flaky_tests": models.FlakyTestsResponse, "get_attachment": models.AttachmentResponse}


def fill(conn: sqlite3.Connection) -> None:
    """The same suite imported three times (RF 7.0.1, 7.2.2, 7.5): history answers."""
    for version in ("7.0.1", "7.2.2", "7.5"):
        import_result(conn, FIXTURE_RESULTS / version / "output.xml", stable_window=0)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    conn = open_store(tmp_path_factory.mktemp("answers") / "store.sqlite3")
    fill(conn)
    yield conn
    conn.close()


def _pages(first: Answer, more: callable) -> Iterator[Answer]:  # type: ignore[valid-type]
    answer = first
    while True:
        yield answer
        if not answer.next_cursor:
            return
        answer = more(answer.next_cursor)


def _answers(conn: sqlite3.Connection) -> Iterator[tuple[str, Answer]]:
    run = 3
    yield "parse_result", service.parse_result(conn, str(FIXTURE_RESULTS / "7.5" / "output.xml"))
    yield "parse_result", service.parse_result(conn, "/no/such/output.xml")
    yield from (("list_runs", a) for a in _pages(
        service.list_runs(conn, limit=1), lambda c: service.list_runs(conn, limit=1, cursor=c)))
    yield "list_runs", service.list_runs(conn, cursor="garbage")
    failed_ids: list[str] = []
    for selector in (None, "failed"):
        for answer in _pages(service.get_view(conn, "summary", run_id=run, selector=selector, page_size=3),
                             lambda c, s=selector: service.get_view(conn, "summary", run_id=run, selector=s,
                                                                    cursor=c, page_size=3)):
            failed_ids += [test.node_id for test in answer.summary.failed_tests or []]
            for group in answer.summary.failure_groups or []:
                yield "get_view", service.get_view(conn, "summary", run_id=run, selector=group.tests_selector)
            yield "get_view", answer
    assert failed_ids
    nodes: set[str] = set()
    for answer in _pages(service.get_view(conn, "failure_path", run_id=run),
                         lambda c: service.get_view(conn, "failure_path", run_id=run, cursor=c)):
        nodes |= {step.node_id for step in answer.failure_path.path if step.node_id}
        yield "get_view", answer
    for node in sorted(nodes):
        yield "get_view", service.get_view(conn, "step_window", run_id=run, selector=node, page_size=4)
        for projection in ("all", "failures", "structure"):
            yield "get_view", service.get_view(conn, "tree", run_id=run, selector=node,
                                               projection=projection)  # type: ignore[arg-type]
        yield "get_view", service.get_view(conn, "message", run_id=run, selector=node, budget=500)
    yield "get_view", service.get_view(conn, "tree", run_id=run)
    yield "get_view", service.get_view(conn, "tree_snapshot", run_id=run, max_depth=3, budget=500)
    yield "get_view", service.get_view(conn, "tree", run_id=run, selector="s9-t9")
    yield "get_view", service.get_view(conn, "summary", run_id=99)
    for query, options in (("fail", {}), (None, {"min_level": "WARN"}), ("e", {"detail": "full"}),
                           ("e", {"group_by": "node"}), ("e", {"group_by": "iteration"}),
                           ("x", {"level": "LOUD"}), ("e", {"group_by": "bogus"})):
        for answer in _pages(service.search_messages(conn, query, run_id=run, page_size=5, **options),
                             lambda c, q=query, o=options: service.search_messages(
                                 conn, q, run_id=run, page_size=5, cursor=c, **o)):
            yield "search_messages", answer
            for hit in answer.hits:
                if hit.unfold_cursor:
                    yield "search_messages", service.search_messages(conn, query, run_id=run,
                                                                     cursor=hit.unfold_cursor, **options)
    yield from (("compare_runs", a) for a in _pages(
        service.compare_runs(conn, str(run), page_size=2),
        lambda c: service.compare_runs(conn, str(run), page_size=2, cursor=c)))
    yield "compare_runs", service.compare_runs(conn, "1")
    yield "test_history", service.test_history(conn, run_id=run, node_id=failed_ids[0])
    yield "test_history", service.test_history(conn, "No.Such.Test")
    yield "flaky_tests", service.flaky_tests(conn)
    yield "flaky_tests", service.flaky_tests(conn, window=1)
    yield "get_attachment", service.get_attachment(conn, f"{failed_ids[0]}-m1", run_id=run)


def test_every_answer_is_what_its_model_gives(store: sqlite3.Connection) -> None:
    seen: set[str] = set()
    for tool, answer in _answers(store):
        assert isinstance(answer, Answer)
        dumped = MODELS[tool].model_validate(answer).model_dump(mode="json", exclude_none=True)
        assert dumped == answer, (tool, answer)
        assert _types(dumped) == _types(answer), tool
        seen.add(f"{tool} {'ok' if answer.ok else answer.error.code}")
    assert {"parse_result ok", "parse_result FILE_NOT_FOUND", "list_runs ok",
            "list_runs INVALID_CURSOR", "get_view ok", "get_view NODE_NOT_FOUND",
            "get_view RUN_NOT_FOUND", "search_messages ok", "search_messages INVALID_ARGUMENT",
            "search_messages INVALID_QUERY", "compare_runs ok", "compare_runs NO_BASE_RUN",
            "test_history ok",
            "test_history TEST_NOT_FOUND", "flaky_tests ok", "flaky_tests INVALID_ARGUMENT",
            "get_attachment ATTACHMENT_NOT_FOUND"} <= set(seen), sorted(seen)


def _types(data: object, path: str = "") -> dict[str, type]:
    """The type of every value in ``data`` by its path (a float the model makes of an int,
    which == does not tell apart, shows here)."""
    if isinstance(data, dict):
        return {k: v for key, value in data.items() for k, v in _types(value, f"{path}.{key}").items()}
    if isinstance(data, list):
        return {k: v for i, value in enumerate(data) for k, v in _types(value, f"{path}[{i}]").items()}
    return {path: type(data)}


def test_fields_a_dict_method_hides_are_known() -> None:
    """``answer.values`` is the dict's method, not the field: the fields so named are read by
    key, and a new one is noticed here before it reads as a method somewhere."""
    fields = {name for model in vars(models).values()
              if isinstance(model, type) and issubclass(model, models.BaseModel)
              for name in model.model_fields}
    assert fields & set(dir(dict)) == DICT_NAMED_FIELDS
