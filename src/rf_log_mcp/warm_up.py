"""Preparing the MCP server's first calls while the host's model writes them (read side,
the MCP server; issue #19).

The first call of each kind of tool builds its answer model's validator (the models are
``defer_build``), loads its view and compiles the masking: ~50-80 ms on a quiet machine,
several times that on a busy one. A host lists the tools before its model's first call,
then the model writes for seconds: at the first listing a thread prepares them all, once,
the models first, then the rest (the views and the masking's patterns, ``service.prepare``).

What builds or reads the models waits until they are built (pydantic before 2.14 cannot
build one model from two threads at once): a tool call (its answer is validated against its
model) and the field guide (generated from them), so a call that comes in the middle waits
for what it would have done. Resources, prompts and completions answer in plain JSON and
text and do not wait; the views they import beside the thread, Python's import locks keep
safe (the packages have no import cycle at module level).
"""

import logging
import threading
from collections.abc import Callable

import anyio.to_thread

log = logging.getLogger("rf_log_mcp")


class WarmUp:
    """``models``: builds the answer models (what others must wait for); ``rest``: the
    rest of a first call's preparation."""

    def __init__(self, models: Callable[[], None], rest: Callable[[], None]) -> None:
        self._build_models, self._prepare_rest = models, rest
        self._models = threading.Lock()  # held while the models are built
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the warm-up, the first time only (called on the event loop)."""
        if self._thread is not None:
            return
        self._models.acquire()  # before the thread starts: a call coming now already waits
        self._thread = threading.Thread(target=self._run, name="rf-log-mcp warm-up")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._build_models()
        except Exception:  # a call that needs the same part reports the failure itself
            log.debug("warming up the answer models failed", exc_info=True)
        finally:
            self._models.release()
        try:
            self._prepare_rest()
        except Exception:
            log.debug("warming up the views failed", exc_info=True)

    def wait(self) -> None:
        """Return once the models are built (at once when they are, or it never started)."""
        with self._models:
            pass

    async def finished(self) -> None:
        """:meth:`wait` for the event loop: in a worker thread, while the models are built."""
        if self._models.locked():
            await anyio.to_thread.run_sync(self.wait)

    def join(self) -> None:
        """Return once the whole warm-up is over (tests)."""
        if self._thread is not None:
            self._thread.join()
