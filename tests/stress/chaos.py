"""A listener that makes the live listener's looks into RF's model land anywhere (tests only).

``robot --listener tests/stress/chaos.py --listener rf_log_listener:db=...`` runs the live
listener with an adversary beside it, seeded by ``RF_LOG_MCP_CHAOS_SEED``:

* the live listener's ticker looks every ``RF_LOG_MCP_CHAOS_TICK`` seconds (default 0.3 ms)
  instead of every half second, and robot's thread hands the GIL over after 5 µs instead of
  5 ms, so the ticker's looks interrupt robot's own code at arbitrary bytecodes: between an
  item's creation and its configuration, inside RF's StatusReporter, between a fixture's
  creation and its name being set;
* inside the ticker's looks, at random lines of ``result_events`` (a trace function on the
  ticker's thread), it sleeps a few microseconds, so robot's thread moves on between any two
  reads of one look: a setup configured, a step appended, a teardown begun halfway through;
* at RF's own hooks (every start and end of a step, every message, through this listener's
  methods, which RF calls at those points of its reporting path) it makes one look of the
  ticker from robot's thread at random, which reproduces every point where RF hands control
  to listeners, and sleeps a few microseconds at random, which lets the real ticker in there.

Nothing here changes what robot runs or writes: only when the live listener looks.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import threading
import time
from types import FrameType
from typing import Any

import rf_log_listener.listener as live

_random = random.Random(int(os.environ.get("RF_LOG_MCP_CHAOS_SEED", "0")))
_LOOK = float(os.environ.get("RF_LOG_MCP_CHAOS_LOOK", "0.3"))  # chance of a look per hook
_SLEEP = float(os.environ.get("RF_LOG_MCP_CHAOS_SLEEP", "0.2"))  # chance of a tiny sleep per hook
_PAUSE = float(os.environ.get("RF_LOG_MCP_CHAOS_PAUSE", "0.05"))  # chance per line of a look
live.FLUSH_EVERY_S = float(os.environ.get("RF_LOG_MCP_CHAOS_TICK", "0.0003"))
sys.setswitchinterval(5e-6)
_LOOK_CODE = sys.modules["rf_log_listener.result_events"].__file__
_pauses = random.Random(_random.random())  # the ticker's own: robot's thread draws from _random


def _pause_in_looks(frame: FrameType, event: str, _: Any) -> Any:
    """Trace function of threads started from here on (the live listener's ticker): lines of
    the look code only; elsewhere nothing is traced, so the ticker runs at its speed."""
    if frame.f_code.co_filename != _LOOK_CODE:
        return None
    if event == "line" and _pauses.random() < _PAUSE:
        time.sleep(_pauses.random() * 1e-4)
    return _pause_in_looks


threading.settrace(_pause_in_looks)


class chaos:  # RF finds the class named like its module
    ROBOT_LISTENER_API_VERSION = 3
    ROBOT_LISTENER_PRIORITY = 1_000  # before the live listener, at starts and at ends

    def __init__(self) -> None:
        self.live: Any = None
        self.looks = 0

    def _hook(self, *_: Any) -> None:
        if self.live is None:
            found = [o for o in gc.get_objects() if type(o).__name__ == "rf_log_listener"]
            if not found:
                return
            self.live = found[0]
        draw = _random.random()
        if draw < _LOOK:
            # What the ticker does, from robot's thread at this hook; SIGALRM held as the live
            # listener holds it in its own methods (an RF 7.3+ timeout must not cut a look).
            held = live._hold_alarm()
            try:
                self.live.tick()
            finally:
                if held:
                    live._release_alarm()
            self.looks += 1
        elif draw < _LOOK + _SLEEP:
            time.sleep(_random.random() * 5e-5)

    start_suite = end_suite = start_test = end_test = _hook
    start_keyword = end_keyword = start_body_item = end_body_item = _hook
    log_message = _hook

    def close(self) -> None:
        sys.__stderr__.write(f"chaos: {self.looks} looks from robot's thread\n")
