"""Chunks sent more than once: a queued chunk is not taken for a lost one, and a duplicate of a
finished chunk re-evaluates nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.jobs.services import jobs_resume_stalled
from reviewqueue.reviews import tasks
from reviewqueue.reviews.services import reevaluation

pytestmark = pytest.mark.django_db


def running_job(*, chunks: int, sent_ago: timedelta) -> Job:
    job = Job.objects.create(scope=Job.Scope.ALL, trigger="manual", state=Job.State.RUNNING,
                             total=chunks * 2, actor_type="system", actor="system")
    for number in range(chunks):
        JobChunk.objects.create(job=job, number=number,
                                answer_ids=[number * 2 + 1, number * 2 + 2],
                                enqueued_at=timezone.now() - sent_ago)
    return job


@pytest.fixture
def sent() -> Iterator[list[int]]:
    """The chunk ids sent to the queue."""
    ids: list[int] = []
    with mock.patch.object(tasks.reevaluate_answers, "delay",
                           side_effect=lambda *args, **kwargs: ids.append(kwargs["chunk_id"])):
        yield ids


@pytest.fixture
def reevaluated() -> Iterator[list[int]]:
    """The answer ids re-evaluated (the gate itself is not run)."""
    ids: list[int] = []
    with mock.patch.object(reevaluation, "answer_reevaluate",
                           side_effect=lambda **kwargs: ids.append(kwargs["answer_id"])):
        yield ids


def test_chunks_waiting_in_a_backlogged_queue_are_not_sent_again(
    sent: list[int], on_commit: Any
) -> None:
    running_job(chunks=3, sent_ago=timedelta(minutes=10))

    for tick in range(2):  # the next two beat ticks
        with on_commit():
            jobs_resume_stalled(now=timezone.now() + timedelta(minutes=15 * tick))

    assert sent == []


def test_chunks_sent_hours_ago_and_never_finished_are_sent_again_once(
    sent: list[int], on_commit: Any
) -> None:
    job = running_job(chunks=3, sent_ago=timedelta(hours=3))

    for tick in range(2):
        with on_commit():
            jobs_resume_stalled(now=timezone.now() + timedelta(minutes=15 * tick))

    assert sorted(sent) == sorted(job.chunks.values_list("pk", flat=True))


def test_a_duplicate_of_a_finished_chunk_reevaluates_nothing(reevaluated: list[int]) -> None:
    job = running_job(chunks=1, sent_ago=timedelta(minutes=10))
    chunk = job.chunks.get()

    for _ in range(3):  # the message and two duplicates
        tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk),
                                 chunk_id=chunk.pk)

    assert reevaluated == chunk.answer_ids
    job.refresh_from_db()
    assert (job.state, job.done) == ("finished", 2)


def test_a_dead_chunk_sent_again_is_reevaluated(reevaluated: list[int]) -> None:
    job = running_job(chunks=1, sent_ago=timedelta(minutes=10))
    chunk = job.chunks.get()
    JobChunk.objects.filter(pk=chunk.pk).update(state=JobChunk.State.DEAD, failed=2)
    Job.objects.filter(pk=job.pk).update(failed=2)

    tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk), chunk_id=chunk.pk)

    assert reevaluated == chunk.answer_ids
    job.refresh_from_db()
    assert (job.done, job.failed) == (2, 0)
