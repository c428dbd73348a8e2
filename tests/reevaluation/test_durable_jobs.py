"""A change to the sources commits its re-evaluation job with it, or not at all.

The job row is written in the transaction of the publish, withdrawal or conflict dismissal that
needs it; only the fan-out message is sent after the commit. A message that never gets through
leaves the job pending for `jobs_resume_stalled`; a change that rolls back leaves no job.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.services import jobs_resume_stalled
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from reviewqueue.sources.conflicts import conflict_dismiss
from reviewqueue.sources.models import Conflict, Document, Revision
from reviewqueue.sources.services import document_withdraw
from tests.reevaluation.conftest import fact


def later() -> Any:
    return timezone.now() + timedelta(hours=1)


@contextmanager
def lost_after_commit() -> Iterator[mock.Mock]:
    """Once the change has committed, nothing gets through: the database is gone and the
    fan-out message is lost, as when the process dies right after the commit. Yields the
    message send, to count what was attempted."""
    from reviewqueue.jobs import services

    real = services.job_start_for_document

    def only_in_a_transaction(**kwargs: Any) -> Any:
        if not connection.in_atomic_block:
            raise OperationalError("the database went away")
        return real(**kwargs)

    with mock.patch.object(services, "job_start_for_document", only_in_a_transaction), \
            mock.patch("reviewqueue.jobs.tasks.fan_out_job.delay") as send:
        yield send


def publish_r2(publish: Any) -> Any:
    return lambda: publish("pricing", "r2", facts=[fact(21)])


def withdraw(publish: Any) -> Any:
    return lambda: document_withdraw(document_key="pricing", actor=SYSTEM)


def dismiss(publish: Any) -> Any:
    publish("faq", "r1", facts=[fact(30)])  # disagrees with pricing: a conflict opens
    conflict = Conflict.objects.get(status=Conflict.Status.OPEN)
    return lambda: conflict_dismiss(conflict_id=conflict.pk, reason="both valid", user=None,
                                    actor=SYSTEM)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("prepare", [publish_r2, withdraw, dismiss],
                         ids=["publish", "withdraw", "dismiss"])
def test_a_fan_out_lost_after_commit_leaves_a_pending_job_that_is_resumed(
    publish: Any, ingest: Any, prepare: Any
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    answer = ingest("t-1")
    change = prepare(publish)
    earlier = set(Job.objects.values_list("pk", flat=True))
    with lost_after_commit() as send:
        change()
    jobs = Job.objects.exclude(pk__in=earlier)
    assert "pricing" in set(jobs.values_list("document_key", flat=True))
    assert set(jobs.values_list("state", flat=True)) == {Job.State.PENDING}
    assert send.call_count == jobs.count()  # one message per job, sent after the commit
    answer.refresh_from_db()
    assert not verdict_is_fresh(answer, answer.current_verdict)

    assert jobs_resume_stalled(now=later()) == jobs.count()
    assert set(jobs.values_list("state", flat=True)) == {Job.State.FINISHED}
    assert jobs.get(document_key="pricing").done == 1
    answer.refresh_from_db()
    assert verdict_is_fresh(answer, answer.current_verdict)


@pytest.mark.django_db
def test_the_job_is_written_before_the_commit_and_only_the_message_waits_for_it(
    publish: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with mock.patch("reviewqueue.jobs.tasks.fan_out_job.delay") as send:
        with django_capture_on_commit_callbacks(execute=False) as waiting:
            publish("pricing", "r1", facts=[fact(14)])
            job = Job.objects.get(document_key="pricing")
            assert job.state == Job.State.PENDING
            assert send.call_count == 0
        for callback in waiting:  # the commit
            callback()
    send.assert_called_once_with(str(job.pk))


@pytest.mark.django_db(transaction=True)
def test_a_publish_that_rolls_back_leaves_no_job(publish: Any) -> None:
    from reviewqueue.sources.services import (
        FactInput,
        PassageInput,
        RevisionInput,
        revision_publish,
    )

    publish("pricing", "r1", facts=[fact(14)])
    jobs = Job.objects.count()
    data = RevisionInput(
        title="Pricing and plans", owner="olivia", updated_at=timezone.now(),
        allowed_principals=("*",),
        passages=(PassageInput("p1", "The free trial lasts 21 days."),),
        facts=(FactInput(key="trial_days", value=21, valid_from=timezone.localdate(),
                         valid_until=None, span="p1"),),
    )
    with pytest.raises(RuntimeError), transaction.atomic():
        revision_publish(document_key="pricing", revision="r2", data=data, actor=SYSTEM)
        raise RuntimeError("the caller's transaction fails after the publish")
    assert Job.objects.count() == jobs
    assert not Revision.objects.filter(revision="r2").exists()


@pytest.mark.django_db(transaction=True)
def test_a_job_that_cannot_be_recorded_fails_the_change_with_it(
    publish: Any, ingest: Any
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    ingest("t-1")
    jobs = Job.objects.count()
    with mock.patch("reviewqueue.jobs.services.job_start_for_document",
                    side_effect=OperationalError("the database went away")), \
            pytest.raises(OperationalError):
        document_withdraw(document_key="pricing", actor=SYSTEM)
    assert Job.objects.count() == jobs
    assert Document.objects.get(key="pricing").withdrawn_at is None
    assert Answer.objects.get(trace_id="t-1").current_verdict.trigger == "ingest"
