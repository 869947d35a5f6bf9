"""Capture side of rf-log-mcp: everything that *writes* the store.

This package must stay importable inside a ``robot`` process without importing ``mcp``:
the event vocabulary (:mod:`.events`), the store (:mod:`.store`), the one writer
(:mod:`.writer`, :mod:`.rows`), the offline importers (:mod:`.importers`) and the live
listener (:mod:`.listener`): ``robot --listener rf_log_listener`` finds the class of the
module's own name here.
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> type:
    # Loaded on first use, so the read side does not import the listener (and robot) eagerly.
    if name == "rf_log_listener":
        from .listener import rf_log_listener

        return rf_log_listener
    raise AttributeError(name)
