"""A cursor whose statements PostgreSQL parses and plans once per connection.

Django's PostgreSQL backend binds parameters on the client, so the server parses and plans each
statement afresh. For the fixed statements every API write runs (the token lookup, the gate's
source reads, the row inserts, the audit chain's tail) planning cost PostgreSQL about as much CPU
as running them. On this cursor psycopg binds on the server and keeps each statement prepared on
the connection (psycopg keeps the last 100).

Use it only for statements whose text does not vary with the values (they are parameters). It
goes through Django's cursor wrappers, so query counts and logs see its statements as any other.
Prepared statements live on the server connection: a pooler in front of PostgreSQL must keep
them per client (PgBouncer 1.21 or later with max_prepared_statements set, in transaction mode).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorWrapper
from psycopg.pq import Format

_TIMESTAMPTZ_OID = 1184


class _Preparing(psycopg.Cursor[Any]):
    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,
                binary: bool | None = None) -> Any:
        return super().execute(query, params, prepare=True, binary=binary)


@contextmanager
def prepared_cursor() -> Iterator[CursorWrapper]:
    """`connection.cursor()`, with each statement prepared the first time it runs."""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    pg = connection.connection
    if pg.prepare_threshold is None:
        # Django turns psycopg's statement cache off; it is on again here, and only this
        # cursor's statements reach it (the ORM's cursors bind on the client and never prepare).
        pg.prepare_threshold = 5
    raw = _Preparing(pg)
    # As Django's own cursors: timestamps load in the connection's time zone.
    loader = pg.adapters.get_loader(_TIMESTAMPTZ_OID, Format.TEXT)
    if connection.timezone != getattr(loader, "timezone", None):
        register_tzloader(connection.timezone, raw)
    connection.validate_thread_sharing()
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(raw) as cursor:  # type: ignore[arg-type]
        yield cursor
