"""A worker's connection after a soft time limit struck inside a query, or inside a
transaction's bookkeeping: the next task drops it and opens a fresh one, instead of failing
on it (and every task after it) with "Cannot open a new connection in an atomic block" or
"another command is already in progress"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections

from reviewqueue.celery import start_on_a_sound_connection
from reviewqueue.dbconnections import drop_unsound_connections

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_connection() -> Iterator[Any]:
    """The connection a worker process holds between tasks."""
    connection = connections["default"]
    connection.ensure_connection()
    yield connection
    connection.close()


class Task:
    """What task_prerun is given of a task run by a worker (not eagerly)."""

    name = "reviews.reevaluate_answers"

    class request:
        is_eager = False


def select_one(connection: Any) -> Any:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone()[0]


def test_a_connection_marked_as_in_a_transaction_nothing_is_in_is_replaced(
    worker_connection: Any,
) -> None:
    # As Atomic.__exit__ leaves it when the limit strikes between its own steps.
    worker_connection.in_atomic_block = True
    worker_connection.close()  # closed "in the transaction": Django refuses to reconnect
    with pytest.raises(Exception, match=r"connection is closed|Cannot open a new connection"):
        select_one(worker_connection)
    start_on_a_sound_connection(task=Task)
    assert select_one(worker_connection) == 1


def test_a_connection_left_inside_a_command_is_replaced(worker_connection: Any) -> None:
    worker_connection.connection.pgconn.send_query(b"SELECT pg_sleep(0.2)")  # never read back
    with pytest.raises(Exception, match="another command is already in progress"):
        select_one(worker_connection)
    assert drop_unsound_connections() == 1
    assert select_one(worker_connection) == 1
    assert drop_unsound_connections() == 0  # a sound one is kept


def test_a_task_run_eagerly_leaves_its_callers_transaction_alone(worker_connection: Any) -> None:
    class Eager(Task):
        class request:
            is_eager = True

    worker_connection.in_atomic_block = True
    start_on_a_sound_connection(task=Eager)
    assert worker_connection.in_atomic_block
    worker_connection.in_atomic_block = False
