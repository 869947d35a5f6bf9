"""The answers across a store's runs: the run list, two runs compared, one test's history,
the flaky tests."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import BaseModel, Envelope
from .single_run import COPY_OF, DRY_RUN, SignatureSeen


class RunItem(BaseModel):
    run_id: int = Field(description="A pabot group: its first run.")
    status: str
    origin: str
    label: str | None = Field(None, description="The listener's or import's label.")
    dry_run: bool | None = Field(None, description=DRY_RUN)
    copy_of: int | None = Field(None, description=COPY_OF)
    run_group: str | None = Field(None, description="A pabot execution listed as one run "
                                                    "(g<first run id>); its runs: run_ids.")
    run_ids: list[int] | None = Field(None, description="A pabot group's runs (processes).")
    branch: str | None = Field(None, description="From the CI system's variables.")
    commit: str | None = None
    build: str | None = None
    metadata: dict[str, str] | None = Field(None, description="The root suite's --metadata.")
    name: str | None = Field(None, description="Root suite name (a running run's too).")
    result_status: str | None = None
    total: int | None = Field(None, description="Tests; a running run: those ended so far.")
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    source_path: str | None = None
    start_time: str | None = None


class RunListResponse(Envelope):
    runs: list[RunItem] = Field(default_factory=list)


class RunRef(BaseModel):
    """A run, or a pabot group of runs, as the tools across runs name it."""

    run: str = Field(description="The run id, or g<first run id> for a pabot group.")
    run_ids: list[int]
    name: str | None = Field(None, description="Root suite name.")
    status: str
    label: str | None = None
    start_time: str | None = None
    branch: str | None = None
    commit: str | None = None
    build: str | None = None


class RunSide(BaseModel):
    run_id: int
    node_id: str = Field(description="The test in that run (failure_path selector).")
    status: str
    elapsed: float | None = Field(None, description="Seconds.")
    signature: str | None = Field(None, description="Failure signature (failed tests).")


class ChangedTest(BaseModel):
    change: Literal["new_failure", "still_failing_changed", "still_failing", "newly_skipped",
                    "fixed", "no_longer_skipped", "added", "removed", "slower", "faster"]
    test: str = Field(description="Full name: Suite.Sub Suite.Test.")
    head: RunSide | None = None
    base: RunSide | None = None
    signature_seen: SignatureSeen | None = Field(
        None, description="New or changed failures: the head's signature in runs before it.")


class CompareRunsResponse(Envelope):
    head: RunRef | None = None
    base: RunRef | None = None
    base_reason: str | None = Field(None, description="Why this base: 'given', or how it was "
                                                      "chosen.")
    counts: dict[str, int] | None = Field(
        None, description="Tests per change, all pages (and 'unchanged').")
    changes: list[ChangedTest] = Field(default_factory=list, description="One page, by change "
                                      "then run order.")


class HistoryRun(BaseModel):
    run_id: int
    start_time: str | None = None


class Streak(BaseModel):
    status: str
    runs: int = Field(description="Consecutive newest runs with this status.")
    since: HistoryRun = Field(description="The streak's first run (a failing streak: the "
                                          "first failure).")


class Flakiness(BaseModel):
    window: int
    runs: int = Field(description="Runs in the window where the test passed or failed.")
    flips: int
    flip_rate: float | None = Field(None, description="flips / (runs - 1); None below 2 runs.")
    definition: str


class HistoryEntry(BaseModel):
    run: str = Field(description="Run id, or g<first run id> when part of a pabot group.")
    run_id: int
    node_id: str
    status: str
    elapsed: float | None = None
    start_time: str | None = None
    label: str | None = None
    branch: str | None = None
    commit: str | None = None
    build: str | None = None
    signature: str | None = None


class HistoryResponse(Envelope):
    test: str | None = Field(None, description="Full name.")
    runs_total: int | None = Field(None, description="Finished runs that ran it.")
    streak: Streak | None = None
    last_pass: HistoryRun | None = None
    flakiness: Flakiness | None = None
    runs: list[HistoryEntry] = Field(default_factory=list, description="Newest first.")


class FlakyTest(BaseModel):
    test: str
    flip_rate: float
    flips: int
    runs: int = Field(description="Runs in the window where it passed or failed.")
    passed: int
    failed: int
    last_status: str
    last_run_id: int


class FlakyTestsResponse(Envelope):
    suite: str | None = None
    window: int | None = None
    runs_in_window: int | None = None
    oldest_run: str | None = None
    newest_run: str | None = None
    tests_seen: int | None = None
    flaky_count: int | None = Field(None, description="Tests that flipped at least once.")
    definition: str | None = None
    tests: list[FlakyTest] = Field(default_factory=list, description="Highest flip rate first.")
