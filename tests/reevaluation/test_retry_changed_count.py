"""A chunk retried after a transient error (autoretry) runs its answers again. The answers the
first attempt already gave a new verdict are unchanged the second time; the job still reports
every answer it gave a new verdict, as the chunk noted each one when it committed. A verdict
another job made meanwhile is that job's, not counted again."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError

from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.jobs.services import chunk_mark_started, job_start_for_answers
from reviewqueue.reviews import tasks
from reviewqueue.reviews.models import Verdict
from reviewqueue.reviews.services import reevaluation
from tests.reevaluation.conftest import fact
from tests.reevaluation.test_chunk_runs import dying_at

pytestmark = pytest.mark.django_db


def test_a_chunk_retried_after_a_lost_connection_counts_every_new_verdict(
    publish: Any, publish_doc: Any, ingest: Any, on_commit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    first, second = ingest("t-retry-1"), ingest("t-retry-2")
    # A new revision, whose own job is not run: both answers are due a new verdict.
    with django_capture_on_commit_callbacks(execute=False):
        publish("pricing", "r2", facts=[fact(21)])
    before = Verdict.objects.count()

    original = reevaluation.answer_reevaluate
    calls: list[int] = []

    def flaky(*, answer_id: int, **kwargs: Any) -> Any:
        calls.append(answer_id)
        if answer_id == second.pk and calls.count(second.pk) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return original(answer_id=answer_id, **kwargs)

    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=flaky), on_commit():
        job = job_start_for_answers([first.pk, second.pk], "manual", None)

    job = Job.objects.get(pk=job.pk)
    new_verdicts = Verdict.objects.count() - before
    assert new_verdicts == 2
    assert (job.state, job.done, job.failed) == ("finished", 2, 0)
    assert job.changed == new_verdicts, job.summary
    assert "2 of 2 re-evaluated, 2 with a new verdict" in job.summary


def deliver(job: Job) -> None:
    """The job's one chunk, as a worker runs its message (again)."""
    chunk = JobChunk.objects.get(job=job)
    tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk), chunk_id=chunk.pk)


def test_a_retried_chunk_does_not_count_the_verdicts_another_job_made_meanwhile(
    publish_doc: Any, ingest: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    ids = [ingest(f"t-other-{i}").pk for i in range(3)]
    with django_capture_on_commit_callbacks(execute=False):  # its message is not run yet
        mine = job_start_for_answers(ids, "manual", None)
    # A worker takes the chunk up and loses its connection before re-evaluating anything.
    chunk_mark_started(chunk_id=JobChunk.objects.get(job=mine).pk)
    before = Verdict.objects.count()
    publish_doc("pricing", "r2", facts=[fact(21)])  # the revision's own job runs meanwhile
    assert Verdict.objects.count() - before == 3
    original = reevaluation.answer_reevaluate

    def one_fails(*, answer_id: int, **kwargs: Any) -> Any:
        if answer_id == ids[2]:
            raise ValueError("cannot gate this one")
        return original(answer_id=answer_id, **kwargs)

    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=one_fails):
        deliver(mine)  # the message comes back

    assert Verdict.objects.count() - before == 3  # none of them this job's
    mine.refresh_from_db()
    assert (mine.state, mine.done, mine.failed, mine.changed) == ("finished", 2, 1, 0)
    assert mine.summary == "2 of 3 re-evaluated, 0 with a new verdict, 1 failed"


def test_the_verdicts_of_a_run_that_died_are_counted_once_by_the_job_that_made_them(
    publish: Any, publish_doc: Any, ingest: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    first, second = ingest("t-died-1"), ingest("t-died-2")
    with django_capture_on_commit_callbacks(execute=False):  # no job's message is run yet
        publish("pricing", "r2", facts=[fact(21)])
        mine = job_start_for_answers([first.pk, second.pk], "manual", None)
        other = job_start_for_answers([first.pk, second.pk], "manual", None)
    # The other job's worker took its chunk up first and lost its connection at once.
    chunk_mark_started(chunk_id=JobChunk.objects.get(job=other).pk)
    before = Verdict.objects.count()
    # The first run gives the first answer its new verdict, then its worker dies.
    with dying_at(second.pk):
        deliver(mine)
    assert Verdict.objects.count() - before == 1
    deliver(mine)  # the message comes back: the first answer is unchanged now
    deliver(other)  # and the other job's, which changes neither

    assert Verdict.objects.count() - before == 2
    mine.refresh_from_db()
    other.refresh_from_db()
    assert (mine.state, mine.done, mine.failed, mine.changed) == ("finished", 2, 0, 2)
    assert (other.state, other.done, other.failed, other.changed) == ("finished", 2, 0, 0)
