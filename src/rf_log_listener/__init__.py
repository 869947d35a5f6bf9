"""Capture side of rf-log-mcp: everything that *writes* the store.

This package must stay importable inside a ``robot`` process without importing ``mcp``:
the event vocabulary (:mod:`.events`), the store (:mod:`.store`), the one writer
(:mod:`.writer`) and the offline importers (:mod:`.importers`) live here.
"""

__version__ = "0.1.0"
