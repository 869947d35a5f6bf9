"""The live listener reads RF's model while robot changes it: under an adversary that makes
those reads land anywhere (tests/stress/chaos.py), with both cores busy, every live store
equals its output file, on either store. ``.ci/run`` runs hundreds of seeds
(tests/stress/live_race.py)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from fixtures.generate import venv_python
from live_race import stress


@pytest.mark.slow
@pytest.mark.parametrize(("version", "runs"), [("", 10), ("7.2.2", 4), ("7.4.2", 4)])
def test_every_live_store_equals_its_file_under_an_adversary(version: str, runs: int) -> None:
    python = sys.executable
    if version:
        found = venv_python(version)
        if found is None:
            pytest.skip(f"no venv for RF {version}: python tests/fixtures/generate.py --venvs-only {version}")
        python = str(found)
    problems = stress(runs, first_seed=1000, parallel=2, hogs=1, python=python)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_every_live_store_on_postgresql_equals_its_file_under_an_adversary(pg_server: Any) -> None:
    problems = stress(4, first_seed=2000, parallel=2, hogs=1, server=pg_server)
    assert not problems, "\n".join(problems)
