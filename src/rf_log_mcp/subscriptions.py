"""Live runs pushed to subscribers (read side, MCP): a client that subscribed to a run's
summary (``rf://runs/{run_id}/summary``) or to the run list (``rf://runs``) is told when a
live run records a new failure, changes status or ends, and when a run starts; both ways
clients subscribe: ``resources/subscribe`` (protocol 2025-11-25) and ``subscriptions/listen``
(2026-07-28).

The writer is another process (robot with the listener), so the store is watched: one
thread looks every POLL_S at the runs someone listens to, from a signature of each (status,
failed tests), and sends an update only when the signature moved. The writer changes them
only when it flushes, so a run sends at most one update per flush. Nobody subscribed: the
thread looks at nothing.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import threading
from collections.abc import Coroutine
from typing import Any

from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from rf_log_listener.store import VISIBLE_RUNS, mark_dead_live_runs, open_store

log = logging.getLogger("rf_log_mcp")

RUNS_URI = "rf://runs"
POLL_S = 0.5
_SUMMARY = re.compile(r"^rf://runs/(\d+)/summary$")


def summary_uri(run_id: int) -> str:
    return f"rf://runs/{run_id}/summary"


class RunEventsBus(InMemorySubscriptionBus):
    """The SDK's in-process bus for ``subscriptions/listen``, telling whether anyone listens
    (the watcher looks at the store only then)."""

    @property
    def listening(self) -> bool:
        return bool(self._listeners)


class RunWatcher:
    """Watches the runs subscribers care about and sends their resource updates."""

    def __init__(self, db_path: str, readonly: bool, bus: RunEventsBus,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.db_path, self.readonly, self.bus, self.loop = db_path, readonly, bus, loop
        self.subscribed: dict[str, set[ServerSession]] = {}  # resources/subscribe, by URI
        self.lock = threading.Lock()
        self.seen: dict[int, tuple[str, int]] = {}  # run -> (status, failed) last looked at
        self.newest: tuple[int, int] | None = None  # (newest run id, runs running)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="rf-log-mcp-watcher", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)

    def subscribe(self, uri: str, session: ServerSession) -> None:
        with self.lock:
            self.subscribed.setdefault(uri, set()).add(session)

    def unsubscribe(self, uri: str, session: ServerSession) -> None:
        with self.lock:
            sessions = self.subscribed.get(uri)
            if sessions is not None:
                sessions.discard(session)
                if not sessions:
                    del self.subscribed[uri]

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        while not self.stopping.wait(POLL_S):
            try:
                with self.lock:
                    legacy = {uri: set(sessions) for uri, sessions in self.subscribed.items()}
                if not legacy and not self.bus.listening:
                    self.seen.clear()
                    self.newest = None
                    continue
                conn = conn or open_store(self.db_path, readonly=self.readonly)
                for uri in self._changed(conn, legacy):
                    for session in legacy.get(uri, ()):
                        self._send(session.send_resource_updated(uri), uri, session)
                    if self.bus.listening:
                        self._send(self.bus.publish(ResourceUpdated(uri=uri)), uri)
            except Exception:  # the watcher must outlive a bad look (a store being replaced)
                log.exception("watching live runs failed; trying again")
                conn = None

    def _changed(self, conn: sqlite3.Connection,
                 legacy: dict[str, set[ServerSession]]) -> list[str]:
        """The URIs whose run moved since the last look (a first look only notes where
        they are)."""
        if not self.readonly:
            mark_dead_live_runs(conn)  # a killed robot: its run turns interrupted, and says so
        wanted = {int(m.group(1)) for m in map(_SUMMARY.match, legacy) if m}
        if self.bus.listening:  # listen filters are the SDK's: every live run may be wanted
            wanted |= {row[0] for row in conn.execute(
                f"SELECT run_id FROM runs WHERE status = 'running' AND {VISIBLE_RUNS}")}
            wanted |= set(self.seen)  # ... and the ones that just ended
        changed = []
        marks = ",".join("?" * len(wanted))
        for run_id, status, failed in conn.execute(
                f"SELECT run_id, status, coalesce(failed, 0) FROM runs WHERE run_id IN ({marks})",
                list(wanted)).fetchall() if wanted else []:
            if run_id in self.seen and self.seen[run_id] != (status, failed):
                changed.append(summary_uri(run_id))
            self.seen[run_id] = (status, failed)
        if RUNS_URI in legacy or self.bus.listening:
            newest = conn.execute(
                f"SELECT coalesce(max(run_id), 0), count(*) FILTER (WHERE status = 'running')"
                f" FROM runs WHERE {VISIBLE_RUNS}").fetchone()
            if self.newest is not None and tuple(newest) != self.newest:
                changed.append(RUNS_URI)
            self.newest = tuple(newest)
        return changed

    def _send(self, notification: Coroutine[Any, Any, None], uri: str,
              session: ServerSession | None = None) -> None:
        """Send on the server's event loop; a client that went away is forgotten."""
        future = asyncio.run_coroutine_threadsafe(notification, self.loop)
        try:
            future.result(timeout=5)
        except Exception:
            if session is not None:
                self.unsubscribe(uri, session)
