"""The store's schema: tables, indexes, the partial-index conditions queries share, and the
migrations from every earlier version (capture side; the store opens through ``store.py``).

Layout (see DESIGN.md "Store"):

* ``runs``: one row per run, whatever its origin (``listener`` or ``import``).
* ``nodes``: one flat row per suite/test/keyword/control item. ``key`` is
  ``run_id << 32 | pre``, so a subtree is the key range ``[key, base + last]`` and every
  lookup by position is a primary-key seek. Type-specific fields live in ``fields`` (a JSON
  object holding only non-empty values), never a nested body.
* ``messages``: one row per log message, ``key = run_id << 32 | seq`` in execution order,
  so the messages of any subtree are the contiguous range ``[msg_lo, msg_hi)`` stored on
  its root node. ``messages_fts`` indexes the text (trigram: substrings and CJK match),
  without the payloads of base64 data URIs (:data:`INDEXED_TEXT`).
* ``errors``: the run-level ``<errors>`` messages.
* ``run_tests``, ``test_names``, ``signatures``: each run's tests by full name, with their
  failure signatures (``history.py``): what questions across runs read.
* ``usage_calls``, ``usage_imports``: how the store is used (``usage.py``): the shape of
  every answer and import, never its content; read only by ``rf-log-mcp usage``.

Rows of a run whose status is ``importing`` are invisible to readers; an import flips the
status in its final transaction, so a failed or killed import never looks complete.
"""

from __future__ import annotations

import functools
import re
import sqlite3

from . import store_kind

TYPE_CHECKING = False  # typing's own constant: loading typing is 4-5 ms (issue #19)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SCHEMA_VERSION = 13

# What the full-text index holds of a message: its text without the payloads of base64 data
# URIs in HTML messages. Libraries embed screenshots that way (``<img src="data:image/png;
# base64,...">``: SeleniumLibrary's and Browser's EMBED): megabytes of random characters
# nobody searches, whose trigrams cost the index about a second a megabyte, which robot's
# process waited for at the run's end. The markup around them stays searchable, and the
# message is stored whole. FTS5 forgets a message only when given the text it indexed, so
# indexing and deleting both select this; ``instr`` keeps the Python function off the
# messages without a payload; 'base64,' has no ';' because scripts are split at semicolons.
INDEXED_TEXT = ("CASE WHEN html = 1 AND instr(text, 'base64,') > 0"
                " THEN rf_indexed_text(text) ELSE text END")
# A payload, as Python's re and PostgreSQL's regexp_replace both read it (postgres.py's
# rf_indexed_text): both stores must index the same text.
PAYLOAD = r";base64,[A-Za-z0-9+/=_\r\n-]+"


def indexed_text(text: str) -> str:
    """``text`` without its base64 payloads (``;base64,`` kept)."""
    return _payload().sub(";base64,", text)


@functools.cache
def _payload() -> re.Pattern[str]:  # compiled at first use: 0.2 ms of robot's start otherwise
    return re.compile(PAYLOAD)


def register_functions(conn: sqlite3.Connection) -> None:
    """What the schema's SQL calls: on every SQLite connection that writes the store."""
    conn.create_function("rf_indexed_text", 1, indexed_text, deterministic=True)


def stored_text(text: str) -> str:
    """``text`` as the store can hold it. SQLite and PostgreSQL take valid UTF-8 only, and a
    Python string may hold lone surrogates: how Python keeps bytes that were not UTF-8 (a
    file or folder name, a program's output decoded with ``surrogateescape``), or an
    output.json's ``\\udcff``. Each lone one is U+FFFD, as a decoder replaces a byte it
    cannot read; a pair is the character it spells."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def stored_values(value: Any) -> Any:
    """``value`` (text, or rows, lists and dicts of it) with every text as :func:`stored_text`."""
    if isinstance(value, str):
        return stored_text(value)
    if isinstance(value, (list, tuple)):
        values = [stored_values(item) for item in value]
        return values if isinstance(value, list) else tuple(values)
    if isinstance(value, dict):
        return {key: stored_values(item) for key, item in value.items()}
    return value


def with_stored_text(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``; called again with every text of its arguments as
    :func:`stored_text` when a driver (sqlite3, psycopg) refused one for its lone
    surrogates. Both refuse before sending anything, so nothing is half-done by the first
    call but what the caller's transaction rolls back. Nothing is checked on the way of
    texts the store takes: checking every string up front would cost every run."""
    try:
        return call(*args, **kwargs)
    except UnicodeEncodeError as exc:
        if exc.reason != "surrogates not allowed":
            raise
    return call(*stored_values(args), **stored_values(kwargs))

# Runs readers see: not an import in progress, not a run being deleted by prune.
VISIBLE_RUNS = "status NOT IN ('importing', 'deleting')"

# The failures a reader starts from: failed tests, and failed suite setups/teardowns (no test
# owns those). The partial index below and every query that uses it share this text: SQLite
# uses a partial index only for a WHERE that implies the index's own.
FAILED_STARTS = ("status = 'FAIL' AND (type = 'TEST'"
                 " OR (type IN ('SETUP', 'TEARDOWN') AND owner_test IS NULL))")

# Messages of WARN or worse: few in any run, and what level-filtered searches ask for. The
# partial index over them and the queries that use it share this text (as FAILED_STARTS).
NOTABLE_MESSAGES = "level IN ('WARN', 'SKIP', 'ERROR', 'FAIL')"

# Nodes a tree page stops at among any number of siblings: failed, above a failure, logged
# WARN or worse below, or an iteration that did not pass (what ends a fold of clean ones).
# Few in any run; the partial index over them (by parent) makes a page of children cost
# O(page) whatever the number of passing siblings in between.
NOTABLE_NODES = ("(status = 'FAIL' OR failed_descendant_count > 0 OR max_descendant_level >= 4"
                 " OR (type = 'ITERATION' AND status <> 'PASS'))")

# Where a live run's library keywords are defined (RF's implementation: file and line), per
# (library, normalized keyword name); output files do not say it.
_DEFINITIONS = """
CREATE TABLE IF NOT EXISTS definitions (
    run_id   INTEGER NOT NULL,
    owner    TEXT NOT NULL,                        -- the library's name, as nodes' owner
    name_key TEXT NOT NULL,                        -- keyword name, lower case, no spaces or _
    source   TEXT,
    lineno   INTEGER,
    PRIMARY KEY (run_id, owner, name_key)
) WITHOUT ROWID;
"""

# Each run's tests by full name (history.py): test_history and flaky_tests seek by name,
# compare_runs and summaries by run, failure groups by signature.
_HISTORY = """
CREATE TABLE IF NOT EXISTS test_names (
    name_id  INTEGER PRIMARY KEY,                  -- history.name_id(longname)
    longname TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS signatures (
    signature_id INTEGER PRIMARY KEY,              -- history.name_id(text)
    text         TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_tests (
    run_id       INTEGER NOT NULL,
    name_id      INTEGER NOT NULL,
    pre          INTEGER NOT NULL,                 -- the test's node: key = run_id << 32 | pre
    status       TEXT NOT NULL,
    elapsed      REAL,
    signature_id INTEGER,                          -- failed tests
    PRIMARY KEY (run_id, name_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_tests_by_name ON run_tests(name_id, run_id);
CREATE INDEX IF NOT EXISTS run_tests_by_signature ON run_tests(signature_id, run_id)
    WHERE signature_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_by_name ON runs(name, run_id);
CREATE INDEX IF NOT EXISTS runs_by_group ON runs(run_group) WHERE run_group IS NOT NULL;
"""

# The usage record (usage.py): shapes only. No argument text, query, selector name or
# content is ever stored; ``target`` is a digest salted per session, so it tells only
# whether two calls of one session asked about the same thing.
_USAGE = """
CREATE TABLE IF NOT EXISTS usage_calls (
    id               INTEGER PRIMARY KEY,
    at               REAL NOT NULL,                -- unix time the call ended
    session          TEXT NOT NULL,                -- random per MCP session / agent shell
    source           TEXT NOT NULL,                -- mcp | cli | api
    tool             TEXT NOT NULL,                -- get_view, search_messages, ...
    view             TEXT,                         -- get_view's view
    projection       TEXT,
    page             INTEGER NOT NULL,             -- 1, or the page a followed cursor led to
    selector_kind    TEXT,                         -- none, node, iteration_group, group, ...
    selector_depth   INTEGER,                      -- levels of a node id (s1-t2-k3: 3)
    target           TEXT,                         -- salted digest of run + selector
    page_size        INTEGER,
    budget           INTEGER,
    tokens           INTEGER,                      -- estimated_tokens of the answer
    message_truncated INTEGER NOT NULL DEFAULT 0,
    budget_truncated INTEGER NOT NULL DEFAULT 0,
    page_truncated   INTEGER NOT NULL DEFAULT 0,
    masked           INTEGER NOT NULL DEFAULT 0,
    error            TEXT,                         -- the error code of a failed call
    duration_ms      REAL,
    run_nodes        INTEGER,
    run_messages     INTEGER,
    run_bytes        INTEGER,                      -- the run's input file size
    shape            TEXT                          -- JSON: items, volume by kind, folds, fields
);
CREATE INDEX IF NOT EXISTS usage_calls_by_time ON usage_calls(at);
CREATE TABLE IF NOT EXISTS usage_imports (
    id           INTEGER PRIMARY KEY,
    at           REAL NOT NULL,
    origin       TEXT NOT NULL,                    -- import | listener
    outcome      TEXT NOT NULL,                    -- complete, deduplicated, interrupted, an
                                                   -- error code, reaped, marked_interrupted
    format       TEXT,
    input_bytes  INTEGER,
    parse_s      REAL,                             -- wall time of the import call
    cpu_s        REAL,                             -- CPU of this process and its parser child
    peak_rss_kb  INTEGER,                          -- the largest resident set of either
    store_growth INTEGER,                          -- bytes of used pages added to the store
    nodes        INTEGER,
    messages     INTEGER
);
CREATE INDEX IF NOT EXISTS usage_imports_by_time ON usage_imports(at);
"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    run_id          INTEGER PRIMARY KEY,
    origin          TEXT NOT NULL,            -- 'import' | 'listener'
    status          TEXT NOT NULL,            -- importing | running | complete | interrupted | failed
    source_path     TEXT,
    source_format   TEXT,                     -- 'xml' | 'json'
    source_hash     TEXT,                     -- sha256 of the bytes imported
    source_size     INTEGER,
    source_mtime_ns INTEGER,
    generator       TEXT,
    rf_version      TEXT,
    schema_version  INTEGER,
    generated       TEXT,
    rpa             INTEGER,
    dry_run         INTEGER,                  -- 1: robot --dryrun (keywords checked, not run)
    copy_of         INTEGER,                  -- a rebot output of runs of the store (copies.py)
    label           TEXT,
    output_dir      TEXT,                     -- folder of the run's outputs: attachments' base
    name            TEXT,                     -- root suite name
    result_status   TEXT,                     -- root suite status (PASS/FAIL/SKIP)
    start_time      TEXT,
    elapsed         REAL,
    total           INTEGER,
    passed          INTEGER,
    failed          INTEGER,
    skipped         INTEGER,
    node_count      INTEGER,
    message_count   INTEGER,
    error_count     INTEGER,
    pid             INTEGER,
    host            TEXT,
    heartbeat       REAL,
    fts_upto        INTEGER,                  -- message keys below this are in messages_fts
    ci              TEXT,                     -- JSON: commit, branch, build, build_url, job, provider
    run_group       TEXT,                     -- the runs of one pabot execution share it
    tests_indexed   INTEGER,                  -- run_tests written with these signature RULES
    content_hash    TEXT,                     -- a pushed run's rows' digest (push.py): its identity
    created_at      REAL NOT NULL,
    finished_at     REAL
);
CREATE INDEX IF NOT EXISTS runs_by_hash ON runs(source_hash);
CREATE INDEX IF NOT EXISTS runs_by_content ON runs(content_hash) WHERE content_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_by_path ON runs(source_path);

CREATE TABLE IF NOT EXISTS nodes (
    key                     INTEGER PRIMARY KEY,   -- run_id << 32 | pre
    last                    INTEGER NOT NULL,      -- pre of the last node in the subtree
    parent_pre              INTEGER,               -- NULL for the root suite
    seq                     INTEGER NOT NULL,      -- position among the parent's child nodes
    depth                   INTEGER NOT NULL,
    node_id                 TEXT NOT NULL,         -- RF's id (s1-t2-k3); IF/TRY roots: <base>-rN
    type                    TEXT NOT NULL,         -- normalized (RF 7 result type names)
    raw_type                TEXT,                  -- what the source called it
    name                    TEXT,
    owner                   TEXT,                  -- keyword library / resource
    status                  TEXT NOT NULL,
    start_time              TEXT,
    elapsed                 REAL,                  -- seconds
    message                 TEXT,                  -- status message (failure text)
    owner_test              INTEGER,               -- pre of the enclosing test, if any
    child_count             INTEGER NOT NULL,
    failed_descendant_count INTEGER NOT NULL,
    max_descendant_level    INTEGER NOT NULL,      -- highest message level in the subtree
    message_count           INTEGER NOT NULL,      -- own messages
    msg_lo                  INTEGER NOT NULL,      -- subtree messages: seq in [msg_lo, msg_hi)
    msg_hi                  INTEGER NOT NULL,
    args                    TEXT,                  -- JSON list, only when non-empty
    assign                  TEXT,                  -- JSON, only when non-empty
    fields                  TEXT,                  -- JSON object of non-empty type-specific fields
    -- Derived from the key, never bound: an import binds ~20 values per node, not 22.
    run_id                  INTEGER GENERATED ALWAYS AS (key >> 32) VIRTUAL,
    pre                     INTEGER GENERATED ALWAYS AS (key & 4294967295) VIRTUAL
);
CREATE UNIQUE INDEX IF NOT EXISTS nodes_by_id ON nodes(run_id, node_id);
-- Failures are few: a partial index finds a run's failed tests and suite-level keywords
-- without scanning the run, and costs almost nothing to keep up on import.
CREATE INDEX IF NOT EXISTS nodes_failed ON nodes(key) WHERE status = 'FAIL'
    AND (type = 'TEST' OR (type IN ('SETUP', 'TEARDOWN') AND owner_test IS NULL));
CREATE INDEX IF NOT EXISTS nodes_notable ON nodes(parent_pre, key) WHERE (status = 'FAIL'
    OR failed_descendant_count > 0 OR max_descendant_level >= 4
    OR (type = 'ITERATION' AND status <> 'PASS'));

CREATE TABLE IF NOT EXISTS messages (
    key      INTEGER PRIMARY KEY,                  -- run_id << 32 | seq
    node_pre INTEGER NOT NULL,                     -- owning node
    msg_no   INTEGER NOT NULL,                     -- RF's per-parent message number (-mN)
    level    TEXT NOT NULL,
    time     TEXT,
    html     INTEGER NOT NULL DEFAULT 0,
    text     TEXT NOT NULL,                        -- whole, never cut in the store
    run_id   INTEGER GENERATED ALWAYS AS (key >> 32) VIRTUAL
);
CREATE INDEX IF NOT EXISTS messages_notable ON messages(key)
    WHERE level IN ('WARN', 'SKIP', 'ERROR', 'FAIL');
-- Nodes with a status message (failures, skips: few): search finds those texts.
CREATE INDEX IF NOT EXISTS nodes_with_message ON nodes(key) WHERE message IS NOT NULL;
-- HTML messages are few (screenshots, links): failure paths list their attachments.
CREATE INDEX IF NOT EXISTS messages_html ON messages(key) WHERE html = 1;
-- Trigram: any substring of 3+ characters, CJK included, case-insensitive. detail=none
-- halves the build time; it answers `text LIKE '%...%'` (not MATCH phrases), which is
-- exactly plain-text search. Rows below runs.fts_upto are indexed.
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    text, content='messages', content_rowid='key', tokenize='trigram case_sensitive 0',
    detail=none
);

-- Values a run proved secret (capture side, registry.py): the read side masks them wherever
-- they occur. The store holds the raw logs they were found in; this adds no exposure.
CREATE TABLE IF NOT EXISTS secrets (
    run_id INTEGER NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, value)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS errors (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,                       -- 1-based: id errors-m<seq>
    level  TEXT NOT NULL,
    time   TEXT,
    html   INTEGER NOT NULL DEFAULT 0,
    text   TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
""" + _DEFINITIONS + _HISTORY + _USAGE

_INDEXED_PAYLOADS = ("SELECT m.key, m.html, m.text FROM runs AS r JOIN messages AS m"
                     " ON m.key >= r.run_id << 32 AND m.key < r.fts_upto"
                     " WHERE m.html = 1 AND instr(m.text, 'base64,') > 0")

# Each entry upgrades the store from version N to N+1; applied in order on open.
_MIGRATIONS: dict[int, str] = {
    1: f"CREATE INDEX IF NOT EXISTS nodes_failed ON nodes(key) WHERE {FAILED_STARTS};",
    2: f"CREATE INDEX IF NOT EXISTS messages_notable ON messages(key) WHERE {NOTABLE_MESSAGES};",
    3: f"CREATE INDEX IF NOT EXISTS nodes_notable ON nodes(parent_pre, key) WHERE {NOTABLE_NODES};",
    4: "CREATE TABLE IF NOT EXISTS secrets (run_id INTEGER NOT NULL, value TEXT NOT NULL,"
       " PRIMARY KEY (run_id, value)) WITHOUT ROWID;",
    5: "ALTER TABLE runs ADD COLUMN output_dir TEXT;"
       "CREATE INDEX IF NOT EXISTS messages_html ON messages(key) WHERE html = 1;"
       + _DEFINITIONS,
    6: "CREATE INDEX IF NOT EXISTS nodes_with_message ON nodes(key) WHERE message IS NOT NULL;",
    7: "ALTER TABLE runs ADD COLUMN ci TEXT; ALTER TABLE runs ADD COLUMN run_group TEXT;"
       "ALTER TABLE runs ADD COLUMN tests_indexed INTEGER;" + _HISTORY,
    8: _USAGE,
    9: "ALTER TABLE runs ADD COLUMN content_hash TEXT;"
       "CREATE INDEX IF NOT EXISTS runs_by_content ON runs(content_hash)"
       " WHERE content_hash IS NOT NULL;",
    # the indexed messages with data URIs: forgotten as indexed, indexed as INDEXED_TEXT
    10: f"INSERT INTO messages_fts (messages_fts, rowid, text) SELECT 'delete', key, text"
        f" FROM ({_INDEXED_PAYLOADS});"
        f"INSERT INTO messages_fts (rowid, text) SELECT key, {INDEXED_TEXT}"
        f" FROM ({_INDEXED_PAYLOADS});",
    11: "ALTER TABLE runs ADD COLUMN dry_run INTEGER;",
    12: "ALTER TABLE runs ADD COLUMN copy_of INTEGER;",
}


def migrate(conn: sqlite3.Connection) -> None:
    """Create the schema, or bring an older one up to date; inside the caller's transaction."""
    version = schema_version(conn)
    if version is None:
        for statement in _dialect(conn, _split_sql(_SCHEMA)):
            conn.execute(statement)
        version = SCHEMA_VERSION
    elif version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(
            f"store schema version {version} is newer than this rf-log-mcp ({SCHEMA_VERSION})"
        )
    while version < SCHEMA_VERSION:
        for statement in _dialect(conn, _split_sql(_MIGRATIONS[version]), version):
            conn.execute(statement)
        version += 1
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),)
    )


def schema_version(conn: sqlite3.Connection) -> int | None:
    has_meta = conn.execute(
        "SELECT to_regclass('meta') IS NOT NULL" if store_kind.is_connection(conn) else
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta or not has_meta[0]:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def _dialect(conn: object, statements: list[str], migration: int | None = None) -> list[str]:
    """The statements as this store's database takes them (PostgreSQL: ``postgres.py``,
    with what a migration needs there beyond them)."""
    if not store_kind.is_connection(conn):
        return statements
    from . import postgres

    return [*postgres.schema_statements(statements), *postgres.MIGRATIONS.get(migration, ())]


def _split_sql(script: str) -> list[str]:
    """Split a DDL script into statements, so it runs inside our own transaction.

    ``executescript`` would COMMIT first; our DDL has no ';' inside strings or triggers.
    """
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
