"""A listener that runs keywords where robot writes them out of RF's model's order (tests only).

``live_race.py`` runs it beside :mod:`chaos`: ``Log`` at every test's start and end (robot
writes them before the test's setup and after its teardown), at the start and end of the
suite's user keywords with a setup and a teardown (the same, inside them), and at every WHILE
loop's start (RF's model has it after the loop's first iteration, which RF makes before it
calls listeners). The live store must still equal the output files and RF's model.
"""

from __future__ import annotations

from typing import Any

from robot.libraries.BuiltIn import BuiltIn

_WITH_FIXTURES = frozenset({"Outer", "Middle", "Guarded", "Fixture Keyword"})


class runs_keywords:  # RF finds the class named like its module
    ROBOT_LISTENER_API_VERSION = 3

    def start_test(self, data: Any, result: Any) -> None:
        BuiltIn().run_keyword("Log", f"starting {data.name}")

    def end_test(self, data: Any, result: Any) -> None:
        BuiltIn().run_keyword("Log", f"ending {data.name}")

    def start_keyword(self, data: Any, result: Any) -> None:
        if data.name in _WITH_FIXTURES:
            BuiltIn().run_keyword("Log", f"entering {data.name}")

    def end_keyword(self, data: Any, result: Any) -> None:
        if data.name in _WITH_FIXTURES:
            BuiltIn().run_keyword("Log", f"leaving {data.name}")

    def start_while(self, data: Any, result: Any) -> None:
        BuiltIn().run_keyword("Log", f"loop {data.condition}")
