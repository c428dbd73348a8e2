"""Database connections after an exception raised from outside the code (Celery's soft time
limit): they may be left inside a command, or marked as inside a transaction no code is in."""

from __future__ import annotations

from django.db import connections
from psycopg import pq


def _unsound(connection: object) -> bool:
    """In a transaction no atomic block is in, or not idle between commands. Outside atomic
    blocks Django runs in autocommit: a connection there is idle between statements."""
    if getattr(connection, "in_atomic_block", False):
        return True
    raw = getattr(connection, "connection", None)
    return raw is not None and raw.pgconn.transaction_status != pq.TransactionStatus.IDLE


def drop_connection(connection: object) -> None:
    """Forget the transaction state and close: the next query opens a fresh connection."""
    connection.in_atomic_block = False  # type: ignore[attr-defined]
    connection.savepoint_ids = []  # type: ignore[attr-defined]
    connection.needs_rollback = False  # type: ignore[attr-defined]
    connection.closed_in_transaction = False  # type: ignore[attr-defined]
    connection.run_on_commit = []  # type: ignore[attr-defined]
    try:
        connection.close()  # type: ignore[attr-defined]
    except Exception:  # a socket already broken: nothing left to close
        connection.connection = None  # type: ignore[attr-defined]


def drop_unsound_connections() -> int:
    """Drop every connection of this thread that is not sound; how many were dropped."""
    dropped = 0
    for connection in connections.all(initialized_only=True):
        if _unsound(connection):
            drop_connection(connection)
            dropped += 1
    return dropped
