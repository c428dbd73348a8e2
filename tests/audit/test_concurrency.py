"""Two writers appending at the same moment keep one chain."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record
from tests.audit.conftest import verify

PER_WRITER = 25


def _writer(name: str, start: threading.Barrier, errors: list[BaseException]) -> None:
    actor = Actor("worker", name)
    try:
        start.wait(timeout=10)
        for i in range(PER_WRITER):
            with transaction.atomic():
                audit_record(actor=actor, action="verdict.created", object_type="answer",
                             object_id=f"{name}-{i}", after={"n": i})
                # Hold the transaction open a moment so the other writer is surely waiting
                # on the same tail.
                time.sleep(0.002)
    except BaseException as exc:
        errors.append(exc)
    finally:
        connection.close()  # each thread has its own connection


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_writers_keep_one_chain() -> None:
    # Without the advisory lock both writers could read the same tail and both claim the next
    # seq: one would fail on the unique seq, or, were seq not unique, the chain would fork.
    start = threading.Barrier(2)
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_writer, args=(name, start, errors))
               for name in ("writer-a", "writer-b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    seqs = list(AuditEvent.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, 2 * PER_WRITER + 1))
    actors = set(AuditEvent.objects.values_list("actor", flat=True))
    assert actors == {"writer-a", "writer-b"}
    run = verify()
    assert run.ok, run.detail
    assert run.events_checked == 2 * PER_WRITER


@pytest.mark.django_db(transaction=True)
def test_a_writer_that_rolls_back_leaves_no_gap() -> None:
    def appended_then_failed() -> None:
        with transaction.atomic():
            audit_record(actor=Actor("worker", "w"), action="x.y", object_type="answer",
                         object_id="gone")
            raise RuntimeError("the change failed")

    with pytest.raises(RuntimeError):
        appended_then_failed()
    with transaction.atomic():
        event = audit_record(actor=Actor("worker", "w"), action="x.y", object_type="answer",
                             object_id="kept")
    assert event.seq == 1
    assert verify().ok
