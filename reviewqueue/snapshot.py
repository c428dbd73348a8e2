"""Reads that must see the store as of one moment: an integrity check, an answer's timeline.

Under READ COMMITTED each statement sees what had committed when it started. A check that
reads the events, then the rows they recorded, would meet a row committed in between (with
its event) as a row no event recorded; a timeline, an answer's row beside newer events."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.db import connection, transaction

P = ParamSpec("P")
R = TypeVar("R")


def in_one_snapshot(function: Callable[P, R]) -> Callable[P, R]:
    """Run `function` in a transaction that reads one snapshot (REPEATABLE READ, READ ONLY)
    when it is the outermost one; inside a caller's transaction, in a savepoint that sees
    what the caller sees. Its cursors stream their rows: outside a transaction Django would
    declare them WITH HOLD, and PostgreSQL would store each whole result first."""

    @functools.wraps(function)
    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        outermost = not connection.in_atomic_block
        with transaction.atomic():
            if outermost:
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            return function(*args, **kwargs)

    return read
