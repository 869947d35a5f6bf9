"""The SQLite store: where it lives, opening it safely from many processes, and each run's
lifecycle in it (publishing, marking dead live runs, pruning, compaction). The schema and its
migrations are in ``schema.py``."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from . import store_kind
from .copies import release_copies
from .errors import STORE_CORRUPT, STORE_NOT_FOUND, STORE_UNAVAILABLE, ResultError
from .schema import FAILED_STARTS as FAILED_STARTS  # re-exported: where readers look
from .schema import INDEXED_TEXT, SCHEMA_VERSION, migrate, register_functions, schema_version
from .schema import NOTABLE_MESSAGES as NOTABLE_MESSAGES
from .schema import NOTABLE_NODES as NOTABLE_NODES
from .schema import VISIBLE_RUNS as VISIBLE_RUNS
from .schema import stored_text as stored_text  # re-exported: a path as the store holds it

ENV_DB = "RF_LOG_MCP_DB"
RUN_SHIFT = 32  # node/message keys are run_id << RUN_SHIFT | position
BUSY_TIMEOUT_MS = 30_000


# Store paths are strings (os.path), not pathlib's: every command opens the store, and
# pathlib with the urllib.parse it imports is 5-7 ms of a reading command (issue #19).

def default_store_path() -> str:
    """The per-user store shared by listener and server; ``RF_LOG_MCP_DB`` overrides it (a
    PostgreSQL URL there is :func:`store_setting`'s; this is then the file it replaces)."""
    override = os.environ.get(ENV_DB)
    if override and not store_kind.is_url(override):
        return os.path.expanduser(override)
    return os.path.join(_user_data_dir(), "rf-log-mcp", "store.sqlite3")


def store_setting(spec: str | os.PathLike[str] | None = None) -> str:
    """The store to open: ``spec`` (--db, the listener's db=), else ``RF_LOG_MCP_DB``, else
    the per-user file: a PostgreSQL URL (``store_kind.is_url``) or a file's path."""
    chosen = os.fspath(spec) if spec else os.environ.get(ENV_DB)
    if chosen and store_kind.is_url(chosen):
        return chosen
    return os.path.expanduser(chosen) if chosen else default_store_path()


def shown(spec: str | os.PathLike[str]) -> str:
    """A store as output may name it: a URL's password masked."""
    text = os.fspath(spec)
    return store_kind.redacted(text) if store_kind.is_url(text) else text


def _user_data_dir() -> str:
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        return os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support")
    return os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")


def run_base(run_id: int) -> int:
    return run_id << RUN_SHIFT


def open_store(path: str | os.PathLike[str] | None = None, *, readonly: bool = False,
               create: bool = True,
               on_corrupt: Callable[[str], None] | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the store; a clear ResultError names the path.

    A damaged store (not a database, truncated, malformed pages) is STORE_CORRUPT; with
    ``on_corrupt`` (the server, the listener) it is moved aside instead, ``on_corrupt`` is told
    where, and a new store is started, so capture and answers go on. ``create=False`` (commands
    that only read): a store that does not exist is STORE_NOT_FOUND, and nothing is created.
    """
    db_path = store_setting(path)
    if store_kind.is_url(db_path):
        from . import postgres

        return postgres.open_store(db_path, readonly=readonly)
    if not create and not os.path.isfile(db_path):
        raise ResultError(
            STORE_NOT_FOUND, f"No store at {db_path}.",
            f"Check --db and {ENV_DB}. A store is created by `rf-log-mcp import PATH` or by a"
            " robot run with --listener rf_log_listener.")
    try:
        return _open(db_path, readonly)
    except ResultError as err:
        if err.code != STORE_CORRUPT or on_corrupt is None or readonly:
            raise
        on_corrupt(set_aside(db_path))
        return _open(db_path, readonly)


def is_corruption(exc: BaseException) -> bool:
    """SQLite's ways of saying the file is damaged (as opposed to locked or unwritable)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and any(
        phrase in text for phrase in ("not a database", "malformed", "file is encrypted",
                                      "database corrupt", "vtable constructor failed"))


def set_aside(db_path: str) -> str:
    """Move a damaged store (and its -wal/-shm) to ``<name>.corrupt-<timestamp>``; the files
    are kept for salvage (``rf-log-mcp doctor --repair``)."""
    target = f"{db_path}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db_path + suffix):
            os.replace(db_path + suffix, target + suffix)
    return target


def _open(db_path: str, readonly: bool) -> sqlite3.Connection:
    conn: sqlite3.Connection | None = None
    folder = os.path.dirname(os.path.abspath(db_path))
    try:
        if readonly:
            conn = _open_readonly(db_path)
        else:
            os.makedirs(folder, exist_ok=True)
            conn = sqlite3.connect(
                db_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        register_functions(conn)
        if not readonly:
            _retry_when_locked(lambda: _prepare(conn))
            conn.execute("PRAGMA cache_size = -32768")  # 32 MiB: index inserts stay in memory
            conn.execute("PRAGMA wal_autocheckpoint = 10000")
        conn.execute("PRAGMA foreign_keys = ON")
    except (sqlite3.Error, OSError) as exc:
        if conn is not None:
            conn.close()
        if is_corruption(exc):
            raise ResultError(
                STORE_CORRUPT, f"The store at {db_path} is damaged: {exc}",
                "Run `rf-log-mcp doctor --repair`: it moves the file aside, starts a new store "
                "and imports again the result files the old one came from.") from exc
        raise ResultError(
            STORE_UNAVAILABLE,
            f"Cannot open the store at {db_path}: {exc}",
            f"Check that {folder} is writable, or point {ENV_DB} at a writable file.",
        ) from exc
    return conn


def _open_readonly(db_path: str) -> sqlite3.Connection:
    """A connection that never writes. A WAL store in a folder this user cannot write (or on a
    read-only mount: a CI artifact, a container's ``:ro`` volume) has no shared-memory file it
    could open: SQLite then refuses every read ("readonly", "unable to open"), and the store
    is read as it stands on disk instead (immutable: what another process commits later is
    not seen; no writer runs where none could create that file)."""
    from pathlib import Path  # here: only servers open the store read-only

    uri = Path(db_path).resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                           check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if "readonly" not in str(exc) and "unable to open" not in str(exc):
            raise
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def is_read_only(exc: BaseException) -> bool:
    """The store's way of saying this connection may not write: SQLite's for a read-only file
    or folder, PostgreSQL's for a role without the privilege."""
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and (
        "readonly" in text or "permission denied" in text)


def can_write(conn: sqlite3.Connection) -> bool:
    """Whether this connection may write the store (nothing is written to find out)."""
    if store_kind.is_connection(conn):
        return bool(conn.execute("SELECT has_table_privilege('runs', 'INSERT')").fetchone()[0])
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        if is_read_only(exc):
            return False
        raise


def quick_check(conn: sqlite3.Connection) -> str | None:
    """SQLite's page check ("ok", or what is damaged); None on PostgreSQL, whose server looks
    after its own pages."""
    if store_kind.is_connection(conn):
        return None
    return str(conn.execute("PRAGMA quick_check").fetchone()[0])


def store_file(conn: sqlite3.Connection) -> str:
    """The file of the store ``conn`` has open (a PostgreSQL connection answers its URL)."""
    return conn.execute("PRAGMA database_list").fetchone()[2]


def store_bytes(conn: sqlite3.Connection) -> int:
    """The store's size on disk: the SQLite file with its -wal and -shm, the PostgreSQL
    database."""
    if store_kind.is_connection(conn):
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    path = store_file(conn)
    return sum(os.stat(path + suffix).st_size for suffix in ("", "-wal", "-shm")
               if os.path.exists(path + suffix))


@contextmanager
def transaction(conn: sqlite3.Connection, *, immediate: bool = False) -> Iterator[None]:
    """One explicit transaction on an autocommit connection: committed when the block ends,
    rolled back on any exception (Ctrl-C and kills included: BaseException)."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a failed COMMIT (disk full) may have ended it already
            conn.execute("ROLLBACK")
        raise


def _retry_when_locked(step: Callable[[], None]) -> None:
    """Run ``step``, again while SQLite says the database is locked without waiting for it.

    SQLite skips the busy handler where waiting could deadlock: two processes that both read
    a new store and then both switch it to WAL (robot processes started together). One of
    them gets "database is locked" at once; after a short pause the switch is done or free.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            import random  # here: a store is rarely locked at opening

            time.sleep(0.02 + random.random() * 0.08)


def _prepare(conn: sqlite3.Connection) -> None:
    # A new file: freed pages will go back to the file system a few at a time (prune), never
    # in one long VACUUM. Settable only before the first table and the switch to WAL.
    if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    # The mode is stored in the file: switch it only once (the switch needs an exclusive lock).
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    if schema_version(conn) == SCHEMA_VERSION:
        return
    with transaction(conn, immediate=True):
        migrate(conn)  # reads the version again: another process may have created it meanwhile


# -- run lifecycle helpers shared by the importers (and later the listener) ---------------

STALE_HEARTBEAT_S = 120.0


def delete_run(conn: sqlite3.Connection, run_id: int) -> None:
    """Remove a run and everything it owns, full-text entries included, in one transaction."""
    with transaction(conn, immediate=True):
        _delete_run(conn, run_id)


def _delete_run(conn: sqlite3.Connection, run_id: int) -> None:
    lo, hi = run_base(run_id), run_base(run_id + 1)
    indexed_upto = _indexed_upto(conn, run_id)
    _delete_keys(conn, "messages", lo, hi, indexed_upto)
    _delete_keys(conn, "nodes", lo, hi, indexed_upto)
    _delete_run_row(conn, run_id)
    release_copies(conn, run_id)  # (prune_run releases them when it marks the run)


def _indexed_upto(conn: sqlite3.Connection, run_id: int) -> int:
    """Message keys below this are in the full-text index (runs.fts_upto)."""
    row = conn.execute("SELECT fts_upto FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return row[0] if row and row[0] is not None else run_base(run_id)


def _delete_keys(conn: sqlite3.Connection, table: str, lo: int, end: int, indexed_upto: int) -> None:
    """Delete ``table``'s rows with keys in [lo, end). External-content FTS5 needs the old
    text to forget a message, and only messages that were indexed may be forgotten."""
    if table == "messages":
        conn.execute("INSERT INTO messages_fts (messages_fts, rowid, text) SELECT 'delete',"
                     f" key, {INDEXED_TEXT} FROM messages WHERE key >= ? AND key < ?",
                     (lo, min(end, indexed_upto)))
    conn.execute(f"DELETE FROM {table} WHERE key >= ? AND key < ?", (lo, end))


def _delete_run_row(conn: sqlite3.Connection, run_id: int) -> None:
    conn.execute("DELETE FROM errors WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM secrets WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM definitions WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM run_tests WHERE run_id = ?", (run_id,))
    conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))


# Rows deleted per transaction: a live writer waits for one chunk at most. Full-text entries
# are removed with the messages (each text is tokenized again), about 20 ms per 1,000 rows.
PRUNE_CHUNK = 2_000


def prune_run(conn: sqlite3.Connection, run_id: int, chunk: int = PRUNE_CHUNK) -> bool:
    """Delete a finished run in short transactions, so live writers wait a moment at most.

    The run is first marked ``deleting`` (invisible to readers, and finished by the next
    prune if this one is killed), then its rows go chunk by chunk. Returns False when the run
    is running (never deleted) or gone.
    """
    with transaction(conn, immediate=True):
        marked = conn.execute(
            "UPDATE runs SET status = 'deleting' WHERE run_id = ? AND status IN"
            " ('complete', 'interrupted', 'failed', 'deleting')", (run_id,)).rowcount
        if marked:  # readers stop counting its tests now: a copy of it counts them instead
            release_copies(conn, run_id)
    if not marked:
        return False
    lo, hi = run_base(run_id), run_base(run_id + 1)
    indexed_upto = _indexed_upto(conn, run_id)
    for table in ("messages", "nodes"):
        while True:
            _yield_to_writers()
            with transaction(conn, immediate=True):
                upper = conn.execute(f"SELECT key FROM {table} WHERE key >= ? AND key < ?"
                                     f" ORDER BY key LIMIT 1 OFFSET ?", (lo, hi, chunk)).fetchone()
                _delete_keys(conn, table, lo, upper[0] if upper else hi, indexed_upto)
            if upper is None:
                break
    with transaction(conn, immediate=True):
        _delete_run_row(conn, run_id)
    return True


def forget_unused_names(conn: sqlite3.Connection) -> int:
    """Delete the test names and failure signatures no run refers to any more (after prune);
    returns how many."""
    with transaction(conn, immediate=True):
        names = conn.execute("DELETE FROM test_names WHERE NOT EXISTS (SELECT 1 FROM run_tests r"
                             " INDEXED BY run_tests_by_name WHERE r.name_id = test_names.name_id)"
                             ).rowcount
        texts = conn.execute("DELETE FROM signatures WHERE NOT EXISTS (SELECT 1 FROM run_tests r"
                             " WHERE r.signature_id = signatures.signature_id)").rowcount
    return names + texts


def _yield_to_writers() -> None:
    """A pause between prune's transactions. Without it the next chunk takes the write lock
    the moment the previous one commits, and a live writer, sleeping in SQLite's busy
    handler, keeps finding it taken: it would wait for the whole prune, not for one chunk."""
    time.sleep(0.05)


def release_free_pages(conn: sqlite3.Connection, step: int = 2_000) -> int:
    """Give freed pages back to the file system, ``step`` pages per transaction (stores made
    with incremental auto-vacuum). Returns the pages released."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
        return 0
    start = conn.execute("PRAGMA freelist_count").fetchone()[0]
    while (free := conn.execute("PRAGMA freelist_count").fetchone()[0]) > 0:
        # sqlite3's execute() steps a statement once, and this pragma frees one page per
        # step; executescript() runs it to the end.
        _yield_to_writers()
        conn.executescript(f"PRAGMA incremental_vacuum({step});")
        if conn.execute("PRAGMA freelist_count").fetchone()[0] >= free:
            break  # nothing more to give back (another connection holds a read snapshot)
    # Copy the log into the file without blocking anyone, then cut the log file itself (the
    # space the user wanted back); the second step has next to nothing left to copy.
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    _yield_to_writers()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return start - conn.execute("PRAGMA freelist_count").fetchone()[0]


def compact(conn: sqlite3.Connection) -> None:
    """Rewrite the whole store at its smallest: the full-text index without what deleted runs
    left in it (FTS5 drops deleted entries only when it merges its segments), then the file
    (VACUUM, which blocks writers while it runs)."""
    conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def wal_frames(db_path: str) -> int:
    """How many pages a checkpoint of the store at ``db_path`` would copy: its WAL's frames
    not yet in the store, read from the WAL index (the -shm file) without a connection: the
    last valid frame (mxFrame) less those checkpointed (nBackfill), native 32-bit integers at
    offsets 16 and 96 (https://www.sqlite.org/walformat.html); 0 when there is no WAL index.
    The WAL file's size would not do: it keeps its largest size while another connection
    has the store open."""
    try:
        with open(db_path + "-shm", "rb") as index:
            header = index.read(100)
    except OSError:
        return 0
    if len(header) < 100:
        return 0
    last, copied = (int.from_bytes(header[at:at + 4], sys.byteorder) for at in (16, 96))
    return max(0, last - copied)


# A command about to end leaves its store open (see close_at_exit) while the WAL holds at
# most this many frames: the next connection's recovery of them costs about 0.5 ms.
EXIT_OPEN_FRAMES = 64


def close_at_exit(conn: sqlite3.Connection) -> None:
    """Close ``conn`` as a process that ends with ``os._exit`` should, cheaply.

    The last connection to close a store checkpoints it (two fsyncs) and deletes its WAL, so
    the next write creates the WAL again (two more: its header, its folder): four syncs for
    a command that only wrote its usage record: 1 ms on an idle disk, 20-30 ms here beside a
    process syncing its own writes, half of such a command. So a store whose WAL holds at most
    EXIT_OPEN_FRAMES frames not yet in the store is left open: the process's end drops the
    connection and its locks (as after a crash, which WAL is made for), the frames stay
    committed in the WAL, and the next connection rebuilds the WAL's index from them. A
    bigger WAL, or a PostgreSQL connection, is closed as usual, so the WAL never grows past
    that between checkpoints. (Python 3.12's ``SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`` asks the
    same of a close; 3.10 and 3.11 cannot.)"""
    if isinstance(conn, sqlite3.Connection):
        try:
            path = store_file(conn)
        except sqlite3.Error:
            path = ""
        if path and wal_frames(path) <= EXIT_OPEN_FRAMES:
            return
    conn.close()


def find_reusable_run(
    conn: sqlite3.Connection, path: str, size: int, mtime_ns: int, digest: str | None,
    *, allow_interrupted: bool = False,
) -> int | None:
    """The run that already holds these bytes: by path+size+mtime first, else by hash."""
    statuses = ("complete", "interrupted") if allow_interrupted else ("complete", "complete")
    if digest is None:
        row = conn.execute(
            "SELECT run_id FROM runs WHERE source_path = ? AND source_size = ?"
            " AND source_mtime_ns = ? AND status IN (?, ?) AND source_hash IS NOT NULL"
            " ORDER BY status = 'complete' DESC, run_id DESC LIMIT 1",
            (stored_text(path), size, mtime_ns, *statuses),
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT run_id FROM runs WHERE source_hash = ? AND status IN (?, ?)"
            " ORDER BY status = 'complete' DESC, run_id DESC LIMIT 1",
            (digest, *statuses),
        ).fetchone()
    return int(row[0]) if row else None


def reap_stale_runs(conn: sqlite3.Connection) -> list[int]:
    """Delete imports that died half-way (their process is gone or silent); the runs this
    call deleted. Each is deleted only if its row is as it was judged: an import that
    published or beat since (it was only slow) is left, and of two imports reaping the same
    run at once one deletes it and records it in the usage record."""
    now = time.time()
    dead = [(run_id, heartbeat) for run_id, pid, run_host, heartbeat in conn.execute(
        "SELECT run_id, pid, host, heartbeat FROM runs WHERE status = 'importing'").fetchall()
        if import_dead(pid, run_host, heartbeat, now)]
    if not dead:
        return []
    from .usage import record_recovery, recovery_facts

    facts = recovery_facts(conn, [run_id for run_id, _ in dead])  # read before the rows go
    reaped = [run_id for run_id, heartbeat in dead if _reap(conn, run_id, heartbeat)]
    record_recovery(conn, [facts[run_id] for run_id in reaped if run_id in facts],
                    "import", "reaped")
    return reaped


def import_dead(pid: int | None, host: str | None, heartbeat: float | None, now: float) -> bool:
    """Whether the process writing an ``importing`` run (an import, a push) is gone: on this
    host its pid says so; any writer that has not beaten for STALE_HEARTBEAT_S is taken for
    gone (an import beats at every batch it commits)."""
    silent = heartbeat is None or now - heartbeat > STALE_HEARTBEAT_S
    return silent or (host == this_host() and pid is not None and not pid_alive(pid))


def _reap(conn: sqlite3.Connection, run_id: int, heartbeat: float | None) -> bool:
    beat = ("heartbeat IS NULL", ()) if heartbeat is None else ("heartbeat = ?", (heartbeat,))
    with transaction(conn, immediate=True):
        if conn.execute(f"SELECT 1 FROM runs WHERE run_id = ? AND status = 'importing'"
                        f" AND {beat[0]}", (run_id, *beat[1])).fetchone() is None:
            return False
        _delete_run(conn, run_id)
    return True


def this_host() -> str:
    """This host's name, as a run's ``host`` holds it: written with every run begun here
    (``rows.py``, ``push.py``) and compared to tell this host's processes from others'
    (socket is imported when a run needs it: a command that reads no live run does
    without)."""
    import socket

    return socket.gethostname()


STALE_LIVE_S = 60.0  # a live run's heartbeat is refreshed every few seconds


def live_run_dead(pid: int | None, host: str | None, heartbeat: float | None,
                  now: float | None = None) -> bool:
    """Whether the robot process writing a ``running`` run is gone. On this host the process
    itself answers; elsewhere only the heartbeat can (pids mean nothing across hosts)."""
    if host == this_host() and pid is not None:
        return not pid_alive(pid)
    return heartbeat is None or (now or time.time()) - heartbeat > STALE_LIVE_S


def mark_dead_live_runs(conn: sqlite3.Connection) -> list[int]:
    """Live runs whose robot process died (SIGKILL, power loss) become ``interrupted``, and
    their open nodes ``NOT FINISHED``; everything up to the last flush stays. Returns the runs
    this call marked: readers that find the same dead run at once (every view looks) mark,
    index and record it once, whoever is first."""
    now = time.time()
    dead = [
        run_id for run_id, pid, run_host, heartbeat in conn.execute(
            "SELECT run_id, pid, host, heartbeat FROM runs WHERE status = 'running'").fetchall()
        if live_run_dead(pid, run_host, heartbeat, now)
    ]
    marked = []
    for run_id in dead:
        try:
            with transaction(conn, immediate=True):
                # The run's row before its nodes, as a live writer's commit takes it
                # (rows.StoreRowSink.write): on PostgreSQL the later of the two waits for
                # the earlier instead of deadlocking on its rows, and sees them.
                if conn.execute("UPDATE runs SET status = 'interrupted', finished_at = ?"
                                " WHERE run_id = ? AND status = 'running'", (now, run_id)).rowcount:
                    mark_not_finished(conn, run_id)
                    marked.append(run_id)
        except sqlite3.OperationalError as exc:
            if not is_read_only(exc):
                raise
            return []  # a read-only reader shows the run as it stands; a writer marks it
    if marked:
        from .history import index_run  # history reads through this module
        from .usage import record_recovery, recovery_facts

        for run_id in marked:
            index_run(conn, run_id)
        record_recovery(conn, list(recovery_facts(conn, marked).values()), "listener",
                        "marked_interrupted")
    return marked


def mark_not_finished(conn: sqlite3.Connection, run_id: int) -> None:
    conn.execute("UPDATE nodes SET status = 'NOT FINISHED' WHERE key >= ? AND key < ?"
                 " AND status = 'RUNNING'", (run_base(run_id), run_base(run_id + 1)))


def settle_late_rows(conn: sqlite3.Connection, run_id: int) -> None:
    """A writer process saw robot go (the pipe closed before the run ended) once it had
    committed the last events robot sent. A reader that found robot's pid gone before that
    has marked the run ``interrupted`` and indexed its tests; the rows committed since were
    settled in their own commit (``rows.StoreRowSink.write``), and may hold more tests: the
    run's tests are indexed again."""
    marked = conn.execute("SELECT 1 FROM runs WHERE run_id = ? AND status = 'interrupted'",
                          (run_id,)).fetchone() is not None
    if marked:
        from .history import index_run  # history reads through this module

        index_run(conn, run_id)


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
