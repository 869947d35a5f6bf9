"""Which kind of store a setting or a connection names, SQLite or PostgreSQL, without loading
the PostgreSQL module (``postgres.py``: 30 KB of code and ``urllib.parse``, which a robot
process writing into SQLite and a reading command never use; issue #19)."""

from __future__ import annotations

import sys

URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(spec: object) -> bool:
    """Whether a store setting names a PostgreSQL database instead of a SQLite file."""
    return isinstance(spec, str) and spec.startswith(URL_SCHEMES)


def is_connection(conn: object) -> bool:
    """Whether ``conn`` is a PostgreSQL store's connection (else a sqlite3 one). Only
    ``postgres.connect`` makes one, so while that module is not loaded there is none."""
    postgres = sys.modules.get("rf_log_listener.postgres")
    return postgres is not None and isinstance(conn, postgres.PgConnection)


def redacted(url: str) -> str:
    """The URL as it may be shown: its password (and a ``password=`` parameter) masked."""
    import re
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        credentials, _, host = netloc.rpartition("@")
        user, colon, _password = credentials.partition(":")
        netloc = f"{user}{':***' if colon else ''}@{host}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
