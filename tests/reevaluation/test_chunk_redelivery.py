"""Chunks sent more than once: a queued chunk is not taken for a lost one, a chunk the queue
has moved past is sent again, and a duplicate of a finished chunk re-evaluates nothing and
counts nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.jobs.services import chunk_mark_started, jobs_resume_stalled
from reviewqueue.reviews import tasks
from reviewqueue.reviews.services import reevaluation

pytestmark = pytest.mark.django_db


def running_job(*, chunks: int, sent_ago: timedelta) -> Job:
    """A running job whose chunks were sent in one batch `sent_ago`, none taken up yet."""
    job = Job.objects.create(scope=Job.Scope.ALL, trigger="manual", state=Job.State.RUNNING,
                             total=chunks * 2, actor_type="system", actor="system")
    sent_at = timezone.now() - sent_ago  # one batch: one stamp, as _enqueue_pending_chunks
    for number in range(chunks):
        JobChunk.objects.create(job=job, number=number,
                                answer_ids=[number * 2 + 1, number * 2 + 2],
                                enqueued_at=sent_at)
    return job


def take_up(job: Job, number: int, *, ago: timedelta, finished: bool = False) -> None:
    """A worker took chunk `number` up `ago` (and finished it)."""
    at = timezone.now() - ago
    JobChunk.objects.filter(job=job, number=number).update(
        started_at=at,
        **({"state": JobChunk.State.FINISHED, "finished_at": at} if finished else {}),
    )


def chunk_ids(job: Job, *numbers: int) -> list[int]:
    return list(job.chunks.filter(number__in=numbers).order_by("number")
                .values_list("pk", flat=True))


@pytest.fixture
def sent() -> Iterator[list[int]]:
    """The chunk ids sent to the queue."""
    ids: list[int] = []
    with mock.patch.object(tasks.reevaluate_answers, "delay",
                           side_effect=lambda *args, **kwargs: ids.append(kwargs["chunk_id"])):
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


# --- Chunks the queue has moved past ------------------------------------------------------------
# The queue is first in, first out and each worker process holds one message, so once a chunk
# sent after another has been taken up for a while, the other one's message is gone.


@pytest.fixture(autouse=True)
def _lost_and_overtaken_periods(settings: Any) -> None:
    settings.REEVALUATION_CHUNK_LOST_SECONDS = 30 * 60
    settings.REEVALUATION_CHUNK_OVERTAKEN_SECONDS = 2 * 60


def test_a_chunk_never_taken_up_while_a_later_one_was_is_sent_again_once(
    sent: list[int], on_commit: Any
) -> None:
    job = running_job(chunks=4, sent_ago=timedelta(minutes=10))
    take_up(job, 0, ago=timedelta(minutes=9), finished=True)
    take_up(job, 2, ago=timedelta(minutes=8), finished=True)
    take_up(job, 3, ago=timedelta(minutes=7))

    for tick in range(2):  # this beat tick and the next
        with on_commit():
            jobs_resume_stalled(now=timezone.now() + timedelta(minutes=5 * tick))

    assert sent == chunk_ids(job, 1)


def test_a_chunk_taken_up_but_not_finished_is_not_sent_again(
    sent: list[int], on_commit: Any
) -> None:
    # Still running, or its worker died after recording the message: Redis brings it back.
    job = running_job(chunks=3, sent_ago=timedelta(minutes=10))
    take_up(job, 0, ago=timedelta(minutes=9), finished=True)
    take_up(job, 1, ago=timedelta(minutes=8))
    take_up(job, 2, ago=timedelta(minutes=7), finished=True)

    with on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == []


def test_chunks_nothing_overtook_are_left_waiting_in_the_queue(
    sent: list[int], on_commit: Any
) -> None:
    job = running_job(chunks=3, sent_ago=timedelta(minutes=10))
    take_up(job, 0, ago=timedelta(minutes=9), finished=True)

    with on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == []


def test_a_chunk_overtaken_less_than_the_grace_period_ago_is_left_alone(
    sent: list[int], on_commit: Any
) -> None:
    # Chunks 1 and 2 were handed to two processes at once; 2 simply started first.
    job = running_job(chunks=3, sent_ago=timedelta(minutes=10))
    take_up(job, 0, ago=timedelta(minutes=9), finished=True)
    take_up(job, 2, ago=timedelta(seconds=90))

    with on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == []


@pytest.mark.parametrize(("sent_ago", "resent"), [(29, False), (31, True)])
def test_the_last_chunk_which_nothing_can_overtake_is_sent_again_after_the_lost_period(
    sent: list[int], on_commit: Any, sent_ago: int, resent: bool
) -> None:
    job = running_job(chunks=3, sent_ago=timedelta(minutes=sent_ago))
    take_up(job, 0, ago=timedelta(minutes=sent_ago - 1), finished=True)
    take_up(job, 1, ago=timedelta(minutes=sent_ago - 2), finished=True)

    with on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == (chunk_ids(job, 2) if resent else [])


def test_a_restored_message_that_jumped_the_queue_does_not_make_the_batch_behind_it_look_lost(
    sent: list[int], on_commit: Any
) -> None:
    # Chunk 3 was sent again on its own as lost; then Redis restored its first message, after
    # the visibility timeout, at the head of the queue, ahead of chunks 1 and 2.
    job = running_job(chunks=4, sent_ago=timedelta(minutes=15))
    take_up(job, 0, ago=timedelta(minutes=14), finished=True)
    JobChunk.objects.filter(job=job, number=3).update(
        enqueued_at=timezone.now() - timedelta(minutes=8))
    take_up(job, 3, ago=timedelta(minutes=7), finished=True)

    with on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == []


def test_a_chunk_taken_up_before_it_was_sent_again_does_not_overtake_its_new_batch(
    sent: list[int], on_commit: Any
) -> None:
    # The job's fan-out ran again and sent chunks 2 and 3 anew; chunk 3 was already running.
    job = running_job(chunks=4, sent_ago=timedelta(minutes=20))
    take_up(job, 0, ago=timedelta(minutes=19), finished=True)
    take_up(job, 1, ago=timedelta(minutes=18), finished=True)
    take_up(job, 3, ago=timedelta(minutes=10))
    job.chunks.filter(state=JobChunk.State.PENDING).update(
        enqueued_at=timezone.now() - timedelta(minutes=5))

    with on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == []


def test_finding_lost_chunks_costs_the_same_queries_for_one_job_or_many(
    sent: list[int], on_commit: Any
) -> None:
    def lose_chunk_1_of_a_job() -> None:
        job = running_job(chunks=3, sent_ago=timedelta(minutes=10))
        take_up(job, 0, ago=timedelta(minutes=9), finished=True)
        take_up(job, 2, ago=timedelta(minutes=8), finished=True)

    lose_chunk_1_of_a_job()
    with CaptureQueriesContext(connection) as one, on_commit():
        jobs_resume_stalled(now=timezone.now())
    for _ in range(5):
        lose_chunk_1_of_a_job()
    with CaptureQueriesContext(connection) as five, on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert len(sent) == 6
    assert len(five.captured_queries) == len(one.captured_queries)


# --- A chunk run more than once ------------------------------------------------------------------


def test_a_worker_taking_a_chunk_up_records_when_only_the_first_time(
    reevaluated: list[int]
) -> None:
    job = running_job(chunks=1, sent_ago=timedelta(minutes=10))
    chunk = job.chunks.get()

    tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk), chunk_id=chunk.pk)
    chunk.refresh_from_db()
    first = chunk.started_at

    assert first is not None
    assert chunk_mark_started(chunk_id=chunk.pk) == 2  # its second run
    chunk.refresh_from_db()
    assert chunk.started_at == first


@pytest.mark.parametrize("at_once", [False, True], ids=["one-after-the-other", "at-once"])
def test_a_chunk_run_twice_is_counted_into_its_job_once(at_once: bool) -> None:
    # Answer 1 gets a new verdict, 2 is unchanged, 3 fails. "At once": both runs got past the
    # cheap finished check before either finished, as two workers holding copies would.
    job = running_job(chunks=1, sent_ago=timedelta(minutes=10))
    Job.objects.filter(pk=job.pk).update(total=3)
    chunk = job.chunks.get()
    JobChunk.objects.filter(pk=chunk.pk).update(answer_ids=[1, 2, 3])

    def reevaluate(*, answer_id: int, **kwargs: Any) -> Any:
        if answer_id == 3:
            raise ValueError("no gate for this answer")
        return object() if answer_id == 1 else None

    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=reevaluate), \
            mock.patch("reviewqueue.jobs.selectors.chunk_is_finished",
                       return_value=False) if at_once else nullcontext():
        for _ in range(2):
            tasks.reevaluate_answers([1, 2, 3], "manual", job_id=str(job.pk), chunk_id=chunk.pk)

    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 2, 1, 1)
