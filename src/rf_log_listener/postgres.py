"""The PostgreSQL store (shared store stage): every difference from SQLite, in one place.

The writer, the importers and the views speak one dialect, SQLite's, through a DB-API
connection. :func:`connect` returns a :class:`PgConnection` that speaks the same API over
psycopg 3 and turns each statement into PostgreSQL once (cached by its text):

* placeholders ``?`` and ``:name`` become ``%s`` and ``%(name)s``; a literal ``%`` is doubled;
* ``INSERT OR IGNORE`` / ``INSERT OR REPLACE`` become ``ON CONFLICT`` clauses;
* ``a IS ?`` becomes ``a IS NOT DISTINCT FROM %s`` (and ``IS NOT ?`` its opposite);
* ``IN ()`` (SQLite takes an empty list) becomes ``= ANY('{}')``, ``NOT IN ()`` ``<> ALL('{}')``;
* ``LIKE`` becomes ``ILIKE``: SQLite's LIKE ignores ASCII case, and the read side only ever
  gives LIKE pieces whose case folds alike (``views/search.py``);
* SQLite's index hints (``INDEXED BY``) are dropped;
* ``json_extract(x, '$.k')`` becomes ``x::jsonb ->> 'k'``;
* an INSERT into a table with a generated id returns it (``cursor.lastrowid``);
* the PRAGMAs the store code asks are answered from PostgreSQL's own facts or are no-ops;
* PostgreSQL's text cannot hold the NUL character (SQLite's can; output.json keeps it, RF's
  XML writer drops it): a NUL in a written value is stored as ``NUL_SIGN`` (U+2400 ␀),
  so a library logging one never stops a capture or an import.

The schema is SQLite's, translated (:func:`schema_statements`): the full-text index is a
trigram GIN index (``pg_trgm``) on the text as SQLite's index holds it (``rf_indexed_text``)
behind a ``messages_fts`` view with SQLite's column names, so search runs the same SQL.
Errors come out as ``sqlite3``'s exception classes, so the code above handles one set; their
text never holds a password.

psycopg is an optional extra (``pip install 'rf-log-mcp[postgres]'``), imported only here.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from .errors import STORE_UNAVAILABLE, ResultError
from .schema import PAYLOAD
from .store_kind import redacted

NUL_SIGN = "\u2400"  # what a NUL character is stored as (PostgreSQL's text cannot hold it)
EXTRA = "pip install 'rf-log-mcp[postgres]'"
# Tables whose id PostgreSQL generates (SQLite's rowid): an INSERT returns it.
_GENERATED_IDS = {"runs": "run_id", "usage_calls": "id", "usage_imports": "id"}
# What INSERT OR REPLACE replaces on: each table's primary key.
_PRIMARY_KEYS = {"nodes": "key", "meta": "key"}


def _scrubbed(text: str, url: str) -> str:
    """An error text with the URL's password removed wherever a driver may have echoed it."""
    password = urlsplit(url).password
    text = text.replace(url, redacted(url))
    return text.replace(password, "***") if password else text


# -- statements ------------------------------------------------------------------------------

class _Statements:
    """The patterns that translate a statement, compiled at the first translation: a robot
    process writing into SQLite imports this module and never needs them."""

    def __init__(self) -> None:
        self.literal_or_mark = re.compile(r"""
            (?P<literal> '(?:[^']|'')*' | "(?:[^"]|"")*" )
            | \b IS \s+ (?P<isnot> NOT \s+ )? \? | (?P<mark> \? )
            | \b (?P<notin> NOT \s+ )? IN \s* \( \s* \) (?P<empty>)
            | (?<![:\w]) : (?P<name> [A-Za-z_]\w* ) | (?P<percent> % ) | \b (?P<like> LIKE ) \b
            """, re.IGNORECASE | re.VERBOSE)
        self.insert_or = re.compile(
            r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)
        self.json_extract = re.compile(r"json_extract\(\s*([\w.]+)\s*,\s*'\$\.(\w+)'\s*\)",
                                       re.IGNORECASE)
        self.index_hint = re.compile(r"\s+(?:INDEXED\s+BY\s+\w+|NOT\s+INDEXED)\b", re.IGNORECASE)
        self.insert_into = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
        self.fts_write = re.compile(r"^\s*INSERT\s+INTO\s+messages_fts\b", re.IGNORECASE)


_statements = functools.cache(_Statements)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str, str | None]:
    """A SQLite statement as PostgreSQL runs it, and the generated id it returns (if any)."""
    patterns = _statements()
    text = sql.strip().rstrip(";")
    if re.match(r"(?i)BEGIN\s+IMMEDIATE\b", text):
        return "BEGIN", None
    if patterns.fts_write.match(text):
        return "", None  # the trigram index keeps itself up to date
    conflict = ""
    found = patterns.insert_or.match(text)
    if found:
        kind, table, columns = found[1].upper(), found[2], found[3]
        text = f"INSERT INTO {table} ({columns})" + text[found.end():]
        if kind == "IGNORE":
            conflict = " ON CONFLICT DO NOTHING"
        else:
            key = _PRIMARY_KEYS[table]
            names = [c.strip() for c in columns.split(",") if c.strip() != key]
            updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in names)
            conflict = f" ON CONFLICT ({key}) DO UPDATE SET {updates}"
    text = patterns.index_hint.sub("", text)  # PostgreSQL's planner takes no hints
    text = patterns.json_extract.sub(r"(\1::jsonb ->> '\2')", text)
    returning = None
    into = patterns.insert_into.match(text)
    if into and into[1] in _GENERATED_IDS and "RETURNING" not in text.upper():
        returning = _GENERATED_IDS[into[1]]
    text = patterns.literal_or_mark.sub(_placeholder, text) + conflict
    return (f"{text} RETURNING {returning}" if returning else text), returning


def _placeholder(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "literal":
        return match[0].replace("%", "%%")
    if kind == "mark":
        return "%s"
    if kind == "name":
        return f"%({match['name']})s"
    if kind == "percent":
        return "%%"
    if kind == "like":
        return "ILIKE"
    if kind == "empty":  # SQLite takes an empty list: nothing is IN it
        return "<> ALL('{}')" if match["notin"] else "= ANY('{}')"
    # SQLite's IS compares anything, NULL included; PostgreSQL's takes only NULL/TRUE/FALSE
    return "IS DISTINCT FROM %s" if match["isnot"] else "IS NOT DISTINCT FROM %s"


# -- schema ----------------------------------------------------------------------------------

_FTS_TABLE = "CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5("
# What the index holds of a message, as SQLite's (schema.INDEXED_TEXT): the text without the
# base64 payloads of data URIs in HTML messages (embedded screenshots). The view's column is
# the same expression, so a search's LIKE on it uses the index.
_INDEXED = (
    "CREATE OR REPLACE FUNCTION rf_indexed_text(message text, html bigint) RETURNS text"
    " LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$SELECT CASE WHEN html = 1 AND"
    f" strpos(message, 'base64,') > 0 THEN regexp_replace(message, '{PAYLOAD}', ';base64,',"
    " 'g') ELSE message END$$",
    "CREATE INDEX IF NOT EXISTS messages_trgm ON messages"
    " USING gin (rf_indexed_text(text, html) gin_trgm_ops)",
    "CREATE OR REPLACE VIEW messages_fts AS"
    " SELECT key AS rowid, rf_indexed_text(text, html) AS text FROM messages",
)
_FULL_TEXT = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    *_INDEXED,
    # The planner must know a live run's rows are there, or a search of its key range reads
    # every message instead of using the trigram index: statistics every 10,000 new rows,
    # not every 10 % of a table that holds every run.
    *(f"ALTER TABLE {table} SET (autovacuum_analyze_scale_factor = 0,"
      " autovacuum_analyze_threshold = 10000)" for table in ("nodes", "messages")),
)


# What a migration of schema.py needs beyond its statements translated: version -> statements.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    10: ("DROP VIEW IF EXISTS messages_fts", "DROP INDEX IF EXISTS messages_trgm", *_INDEXED),
}


def schema_statements(statements: Iterable[str]) -> Iterator[str]:
    """SQLite's DDL statements (``schema.py``) as PostgreSQL's: 64-bit integers, generated
    ids, stored generated columns, the trigram index for the FTS5 table."""
    for statement in statements:
        if statement.lstrip().startswith(_FTS_TABLE):
            yield from _FULL_TEXT
            continue
        text = re.sub(r"\bINTEGER PRIMARY KEY\b", "BIGSERIAL PRIMARY KEY", statement)
        text = re.sub(r"\bINTEGER\b", "BIGINT", text)
        text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
        text = re.sub(r"\)\s*WITHOUT ROWID\s*$", ")", text)
        text = re.sub(r"\)\s*VIRTUAL\b", ") STORED", text)
        yield text


# -- the connection --------------------------------------------------------------------------


class _Result:
    """A cursor's rows, and the id an INSERT generated (``lastrowid``), as sqlite3 gives them."""

    def __init__(self, rows: list[tuple[Any, ...]], description: Any, rowcount: int,
                 lastrowid: int | None = None) -> None:
        self._rows = iter(rows)
        self.description = description
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> tuple[Any, ...] | None:
        return next(self._rows, None)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def fetchmany(self, size: int = 1) -> list[tuple[Any, ...]]:
        return list(itertools.islice(self._rows, size))

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self._rows


class PgConnection:
    """A psycopg 3 connection that takes the statements and calls the store code gives a
    ``sqlite3.Connection`` (autocommit; explicit BEGIN/COMMIT, as the store opens SQLite)."""

    def __init__(self, raw: Any, url: str) -> None:
        self.raw = raw
        self.url = url

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        if sql.lstrip()[:6].upper() == "PRAGMA":
            return self._pragma(sql)
        text, returning = translate(sql)
        if not text:
            return _Result([], None, 0)
        with self._errors():
            try:
                cur = self.raw.execute(text, params)
            except self._data_error as exc:
                if not _refused_nul(exc):
                    raise
                # refused as the values were converted: nothing was sent
                cur = self.raw.execute(text, _nul_free(params))
            rows = cur.fetchall() if cur.description is not None else []
            if returning:
                return _Result(rows, cur.description, cur.rowcount, rows[0][0] if rows else None)
            return _Result(rows, cur.description, cur.rowcount)

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> _Result:
        text, _ = translate(sql)
        with self._errors(), self.raw.cursor() as cur:
            # Rows are sent as they are converted, so a NUL is replaced before, not retried.
            cur.executemany(text, _nul_free_rows(seq))
            return _Result([], None, cur.rowcount)

    def copy_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Many rows into ``table`` by COPY (the bulk path of an import). A NUL stops the
        COPY as a row is converted; the rows are then copied again, NULs replaced, from a
        savepoint (two statements more per call, none per row)."""
        rows = rows if isinstance(rows, list) else list(rows)
        savepoint = self.in_transaction
        with self._errors():
            if savepoint:
                self.raw.execute("SAVEPOINT copy_rows")
            try:
                self._copy(table, columns, rows)
            except self._data_error as exc:
                if not _refused_nul(exc):
                    raise
                if savepoint:
                    self.raw.execute("ROLLBACK TO SAVEPOINT copy_rows")
                self._copy(table, columns, _nul_free_rows(rows))
            if savepoint:
                self.raw.execute("RELEASE SAVEPOINT copy_rows")

    def _copy(self, table: str, columns: Sequence[str], rows: list[Sequence[Any]]) -> None:
        with self.raw.cursor() as cur, \
                cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    @functools.cached_property
    def _data_error(self) -> type[Exception]:
        import psycopg

        return psycopg.DataError

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> PgConnection:  # ``with conn:`` on an autocommit sqlite3 connection
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def commit(self) -> None:  # autocommit: nothing is pending outside an explicit BEGIN
        pass

    # -- what SQLite answers with PRAGMAs ------------------------------------------------------

    def _pragma(self, sql: str) -> _Result:
        name = re.match(r"(?i)\s*PRAGMA\s+(\w+)", sql)
        pragma = name[1].lower() if name else ""
        if pragma == "database_list":
            return _Result([(0, "main", self.url)], None, 1)
        if pragma == "page_size":
            return _Result([(8192,)], None, 1)
        if pragma == "page_count":
            size = self.execute("SELECT pg_database_size(current_database())").fetchone()
            return _Result([(int(size[0]) // 8192,)], None, 1)
        if pragma in ("freelist_count", "auto_vacuum"):
            return _Result([(0,)], None, 1)
        if pragma == "journal_mode":
            return _Result([("wal",)], None, 1)
        return _Result([], None, 0)  # timeouts, caches, checkpoints: the server's own business

    @functools.cached_property
    def _error_classes(self) -> dict[type, type]:
        import psycopg

        return {psycopg.IntegrityError: sqlite3.IntegrityError,
                psycopg.OperationalError: sqlite3.OperationalError,
                psycopg.ProgrammingError: sqlite3.OperationalError,
                psycopg.Error: sqlite3.DatabaseError}

    def _errors(self) -> _ErrorMapper:
        return _ErrorMapper(self)


def _refused_nul(exc: Exception) -> bool:
    """Whether psycopg refused a value for its NUL character (before sending anything)."""
    return "cannot contain NUL" in str(exc)


def _nul_free_rows(rows: Iterable[Sequence[Any]]) -> list[Sequence[Any]]:
    """``rows`` with each NUL character as ``NUL_SIGN`` (rows without one as they are)."""
    return [_nul_free(row) if any(isinstance(value, str) and "\x00" in value for value in row)
            else row for row in rows]


def _nul_free(params: Any) -> Any:
    """``params`` (a row, or named values) with each NUL character as ``NUL_SIGN``."""
    def free(value: Any) -> Any:
        return value.replace("\x00", NUL_SIGN) if isinstance(value, str) else value

    if isinstance(params, dict):
        return {name: free(value) for name, value in params.items()}
    return tuple(free(value) for value in params)


class _ErrorMapper:
    """Turns psycopg's errors into sqlite3's classes, with the password scrubbed."""

    def __init__(self, conn: PgConnection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, _tb: object) -> bool:
        if exc is None:
            return False
        for source, target in self.conn._error_classes.items():
            if isinstance(exc, source):
                raise target(_scrubbed(str(exc).strip(), self.conn.url)) from None
        return False


def connect(url: str) -> PgConnection:
    """Connect to the store at ``url`` (libpq's URL; PGPASSWORD, PGPASSFILE, service files
    and sslmode work as libpq defines them)."""
    try:
        import psycopg
    except ImportError:
        raise ResultError(
            STORE_UNAVAILABLE, f"The store {redacted(url)} is a PostgreSQL database, and the"
            " PostgreSQL driver (psycopg 3) is not installed.",
            f"Install the extra: {EXTRA}.") from None
    try:
        raw = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise ResultError(
            STORE_UNAVAILABLE, f"Cannot connect to the store {redacted(url)}:"
            f" {_scrubbed(str(exc).strip(), url)}",
            "Check the host, port, database and credentials (PGPASSWORD, PGPASSFILE or a"
            " service file) and that the server accepts this client.") from None
    _load_numbers_as_python(raw)
    # Each execution is planned for its own values. The views' statements repeat with other
    # key ranges and patterns; after a few runs of a prepared statement PostgreSQL may switch
    # to one generic plan, and a generic plan of a range or a trigram search can read every
    # run's rows (a search of 2 ms took 20 ms to 1 s). Statements are still prepared (parsed
    # once); planning them costs well under a millisecond. A server that does not know the
    # setting (a PostgreSQL-compatible one) answers as it plans.
    with contextlib.suppress(psycopg.Error):
        raw.execute("SET plan_cache_mode = force_custom_plan")
    return PgConnection(raw, url)


def refresh_statistics(conn: PgConnection) -> None:
    """Let the planner know a run's rows are there (a sample; autovacuum would do it a
    minute or more later): until then a search plans the run's key range (``run_id << 32``
    and up, beyond the statistics) as a few rows and reads every message of the run instead
    of using the trigram index. Only the keys' statistics (and the tables' row counts),
    which is what a new run changes: a third of the server's work of a whole ANALYZE
    (100 MB run: 127 ms against 350 ms); autovacuum analyzes the other columns."""
    conn.execute("ANALYZE nodes (key)")
    conn.execute("ANALYZE messages (key)")


def _load_numbers_as_python(raw: Any) -> None:
    """sum() and avg() give NUMERIC, which psycopg loads as Decimal; SQLite gives int or
    float, and so does this store (answers are JSON)."""
    from psycopg.types.numeric import NumericLoader

    class IntOrFloat(NumericLoader):
        def load(self, data: Any) -> Any:
            value = super().load(data)
            return int(value) if value == value.to_integral_value() else float(value)

    raw.adapters.register_loader("numeric", IntOrFloat)


_SCHEMA_LOCK = 0x72666C6F  # an advisory lock id: one process creates or migrates the schema


def open_store(url: str, *, readonly: bool = False) -> PgConnection:
    """Connect and, unless only reading, create or migrate the schema (``schema.py``'s, one
    process at a time)."""
    from .schema import SCHEMA_VERSION, migrate, schema_version
    from .store import transaction  # store.py imports this module

    conn = connect(url)
    try:
        if not readonly and schema_version(conn) != SCHEMA_VERSION:
            with transaction(conn):
                conn.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
                migrate(conn)  # reads the version again: another process may have done it
    except sqlite3.Error as exc:
        conn.close()
        raise ResultError(STORE_UNAVAILABLE, f"Cannot prepare the store {redacted(url)}: {exc}",
                          "The role needs CREATE on the database for its first use (a"
                          " read-only role reads a store another role created).") from None
    return conn
