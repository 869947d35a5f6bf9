"""Live capture, robot's process: when what the listener captured is written. Events are
flushed every half second or FLUSH_ITEMS items (by robot's thread in a listener call, or by
the ticker thread while robot is busy elsewhere), with a heartbeat while nothing happens; a
run that proves busy is handed over to a writer process (``writer_link``), robot holding its
events while that process starts. A failure of the listener's own stops capture with one
warning; robot goes on.

``Flushing`` is the part of ``listener.rf_log_listener`` that does this (a mixin: the state
it reads is the listener's, set in its ``__init__`` and ``_start_run``).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from typing import TYPE_CHECKING

from .event_pipe import LocalEvents

if TYPE_CHECKING:  # the listener's state this part reads and sets
    import threading

    from .event_pipe import EventBatcher
    from .result_events import OpenNodes
    from .rows import StoreRowSink
    from .writer_link import WriterLink

FLUSH_EVERY_S = 0.5
# ... or sooner, after this many pending items (about 2,000 events): small batches keep the
# writer process busy all along (robot's last wait, at the end, is short) and the pending
# events die young, before Python's garbage collector has to look at them twice.
FLUSH_ITEMS = 12_000
HEARTBEAT_EVERY_S = 5.0
# A writer process takes the run over once writing it in robot's process has taken this long:
# a short run is cheaper to write in place than to hand to another process (a one-test
# suite: 1.11x plain robot's wall in-process, 1.16-1.18x with a writer process from the
# start), a big one cheaper to hand over (20,000 keywords at TRACE on two cores: 1.09x
# against 1.22x in-process).
HAND_OVER_AFTER_S = 0.05
# ... or at once when one flush would write this many items (about 700 events, some 40 ms of
# robot's time): a busy run's first half second at TRACE took 0.8 s to write in robot's
# process, so robot holds such a batch while the writer process starts and hands it over.
HAND_OVER_ITEMS = 4_000
HOLD_AT_MOST = FLUSH_ITEMS * 20  # items held while it starts; past this robot writes them
HAND_OVER_POLL_S = 0.02  # how often the ticker looks whether that process is ready
ENV_HAND_OVER = "RF_LOG_MCP_HAND_OVER_AFTER_S"  # another threshold (0: at the first flush)



def hand_over_after() -> float:
    try:
        return max(0.0, float(os.environ.get(ENV_HAND_OVER, HAND_OVER_AFTER_S)))
    except ValueError:
        return HAND_OVER_AFTER_S


class Flushing:
    """The listener's flushing, hand-over and ticker (see the module's docstring)."""

    _events_out: LocalEvents | EventBatcher | None
    _nodes: OpenNodes
    _sink: StoreRowSink | None
    _link: WriterLink | None
    _lock: threading.Lock
    _stop: threading.Event
    _db_path: str
    _hand_over: bool
    _hand_over_after: float
    _inline_seconds: float
    _last_flush: float
    _last_beat: float
    _events: int
    _follows: bool
    _disabled: bool
    _ended: bool

    def _maybe_flush(self) -> None:
        assert self._events_out is not None
        if len(self._events_out) >= FLUSH_ITEMS or time.monotonic() - self._last_flush >= FLUSH_EVERY_S:
            self._flush()

    def _flush(self) -> None:
        out = self._events_out
        assert out is not None
        if self._hand_over and isinstance(out, LocalEvents):
            self._flush_or_hand_over(out)
        else:
            out.flush()
        self._last_flush = time.monotonic()

    def _flush_or_hand_over(self, local: LocalEvents) -> None:
        """Write in robot's process while that is cheap; once the run proves busy (writing
        has cost HAND_OVER_AFTER_S, or one batch is HAND_OVER_ITEMS long), start a writer
        process and hold the events until it is ready (up to HOLD_AT_MOST), then hand it
        the run with them."""
        if self._link is not None or len(local) >= HAND_OVER_ITEMS:
            self._hand_over_to_process(local)  # starts the process, or hands over if it is ready
            if self._events_out is not local:
                self._events_out.flush()  # handed over: the writer process commits what was held
                return
            if self._hand_over and len(local) < HOLD_AT_MOST:
                return  # held until the writer process is ready
        started = time.perf_counter()
        local.flush()
        self._inline_seconds += time.perf_counter() - started
        if self._inline_seconds >= self._hand_over_after:
            self._hand_over_to_process(local)

    def _hand_over_to_process(self, local: LocalEvents) -> None:
        """The run proved busy: start a writer process (once), and when it is ready give it
        the run (at a flush, by whichever thread holds the listener's lock). If the process
        cannot start or dies first, robot writes the run in-process to the end."""
        if self._link is None:
            from .writer_link import spawn_writer

            self._link = spawn_writer(True, warn)
            if self._link is None:
                self._hand_over = False
            return
        if not self._link.ready():
            return  # still starting
        try:
            forwarder = self._link.take_over(local, self._db_path)
        except Exception:  # it died, or a value in the writer's state cannot be pickled:
            # robot keeps writing the run itself, as it did until now (nothing was lost)
            self._hand_over = False
            self._link.drop()
            return
        self._hand_over = False
        self._events_out = forwarder
        self._nodes.extend = forwarder.extend
        self._sink = None  # robot's connection only records the output file from now on

    def _tick(self) -> None:
        """Every half second: on RF 7.2+ read what robot has run since the last look; send
        what waits while robot is busy elsewhere (a long keyword, a sleep); keep the
        heartbeat fresh, so readers can tell a live run from a dead one."""
        self._last_beat = now = time.monotonic()
        seen = -1
        due = now + FLUSH_EVERY_S
        while True:
            # While a writer process is starting, look often whether it is ready: until it
            # takes the run over, robot writes it itself.
            waiting = self._hand_over and self._link is not None
            timeout = max(0.0, due - now)
            if self._stop.wait(min(timeout, HAND_OVER_POLL_S) if waiting else timeout):
                return
            now = time.monotonic()
            if waiting:
                self._hand_over_when_ready()
            if now >= due:
                due = now + FLUSH_EVERY_S
                events, seen = seen, self._events
                # RF 7.0/7.1: only while robot is quiet (no listener call since the previous
                # tick); when it is busy its own events flush, and a flush from here would
                # contend with it for the GIL.
                self.tick(quiet=events == seen or self._follows)

    def _hand_over_when_ready(self) -> None:
        """From the ticker: hand the run over as soon as the writer process is ready."""
        if not self._lock.acquire(blocking=False):
            return  # robot is in a listener method; it looks itself at its next flush
        try:
            link = self._link
            if not self._disabled and not self._ended and self._hand_over and link and link.ready():
                self._flush()  # what waits is written here first, then the run goes over
        except Exception as exc:
            self._disable_for(exc)
        finally:
            self._lock.release()

    def tick(self, quiet: bool = True) -> None:
        """One look of the ticker: it may run at any moment of robot's own thread (see
        ``result_events.OpenNodes.follow`` for why that is safe), never inside a listener
        method of this one."""
        if not self._lock.acquire(blocking=False):
            return  # robot is in a listener method; it flushes itself when due
        try:
            if self._disabled or self._events_out is None or self._ended:
                return
            if self._follows:
                self._nodes.follow(ended=False)
            now = time.monotonic()
            if quiet and len(self._events_out):
                self._flush()
                self._last_beat = now
            elif now - self._last_beat >= HEARTBEAT_EVERY_S:
                self._events_out.heartbeat()
                self._last_beat = now
        except Exception as exc:
            self._disable_for(exc)
        finally:
            self._lock.release()

    def _disable_for(self, exc: Exception) -> None:
        """Stop capturing because of ``exc``; a store that cannot be written is named (it is
        written in robot's process until a writer process takes the run over)."""
        if isinstance(exc, sqlite3.Error):
            from .writer_process import why

            self._disable(f"{why(exc, self._db_path)}. What was committed before is kept.")
        else:
            self._disable(f"{type(exc).__name__}: {exc}")

    def _disable(self, reason: str) -> None:
        if self._disabled:
            return
        self._disabled = True
        if self._link is not None and "Broken pipe" in reason and self._link.warned():
            return  # the writer process ended and said why itself
        warn(f"capture stopped, the run goes on: {reason}")


def warn(text: str) -> None:
    sys.__stderr__.write(f"[ WARN ] rf_log_listener: {text}\n")
    sys.__stderr__.flush()
