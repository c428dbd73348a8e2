"""A chunk whose runs keep dying with their worker's main process is dead-lettered.

Celery counts the deaths of a pool process as retries. When the main process dies (killed, out
of memory, or running the task itself, as a solo pool does), nothing is acknowledged and
nothing is counted: Redis hands the same message out again after the visibility timeout, for
ever. The chunk counts its own runs instead, and a run past REEVALUATION_CHUNK_MAX_RUNS leaves
a dead letter an admin can send again rather than running once more.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest

from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.jobs.services import chunk_mark_started, dead_letter_retry
from reviewqueue.reviews import tasks
from reviewqueue.reviews.services import reevaluation
from tests.reevaluation.test_chunk_redelivery import running_job

pytestmark = pytest.mark.django_db


class ProcessDied(BaseException):
    """Stands for the worker's process dying mid-run: nothing after it runs in the task."""


@contextmanager
def dying_at(answer_id: int) -> Iterator[None]:
    """The worker's process dies as its run comes to `answer_id`: those before it are done."""
    original = reevaluation.answer_reevaluate

    def reevaluate(*, answer_id: int, **kwargs: Any) -> Any:
        if answer_id == dies_at:
            raise ProcessDied()
        return original(answer_id=answer_id, **kwargs)

    dies_at = answer_id
    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=reevaluate), \
            pytest.raises(ProcessDied):
        yield


def deliver(chunk: JobChunk) -> int:
    """The chunk's message, as Redis hands it out (again)."""
    return int(tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(chunk.job_id),
                                        chunk_id=chunk.pk))


def die_while_running(chunk: JobChunk) -> None:
    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=ProcessDied), \
            pytest.raises(ProcessDied):
        deliver(chunk)


def test_a_chunk_whose_worker_died_under_every_run_is_dead_lettered_at_its_next_delivery(
    settings: Any, reevaluated: list[int]
) -> None:
    settings.REEVALUATION_CHUNK_MAX_RUNS = 3
    job = running_job(chunks=1, sent_ago=timedelta(minutes=1))
    chunk = job.chunks.get()
    for _ in range(3):
        die_while_running(chunk)

    deliver(chunk)

    assert reevaluated == []  # not run a fourth time
    letter = DeadLetter.objects.get()
    assert letter.task_name == "reviews.reevaluate_answers"
    assert letter.error_type.endswith("ChunkNeverFinished")
    assert letter.error_message == "never finished: its worker died under each of its 3 runs"
    assert letter.attempts == 3
    assert (letter.args, letter.kwargs) == ([chunk.answer_ids, "manual"],
                                            {"job_id": str(job.pk), "chunk_id": chunk.pk})
    chunk.refresh_from_db()
    assert chunk.state == JobChunk.State.DEAD
    job.refresh_from_db()
    # Its answers count as failed, and the job ends: its page stops saying it is running.
    assert (job.done, job.failed) == (0, 2)
    assert job.ended


def test_a_chunk_within_its_runs_is_run(settings: Any, reevaluated: list[int]) -> None:
    settings.REEVALUATION_CHUNK_MAX_RUNS = 3
    job = running_job(chunks=1, sent_ago=timedelta(minutes=1))
    chunk = job.chunks.get()
    for _ in range(2):
        die_while_running(chunk)

    deliver(chunk)

    assert reevaluated == chunk.answer_ids
    assert not DeadLetter.objects.exists()
    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == (Job.State.FINISHED, 2, 0)


def test_sent_again_from_its_dead_letter_it_runs(
    settings: Any, reevaluated: list[int], admin_user: Any, on_commit: Any
) -> None:
    settings.REEVALUATION_CHUNK_MAX_RUNS = 1
    job = running_job(chunks=1, sent_ago=timedelta(minutes=1))
    chunk = job.chunks.get()
    die_while_running(chunk)
    deliver(chunk)
    letter = DeadLetter.objects.get()

    with on_commit():
        assert dead_letter_retry(dead_letter_id=letter.pk, user=admin_user, actor=SYSTEM)

    assert reevaluated == chunk.answer_ids  # the admin's resend is a first run again
    job.refresh_from_db()
    assert (job.done, job.failed) == (2, 0)


def test_taking_a_chunk_up_counts_its_runs_and_keeps_the_first_start() -> None:
    chunk = running_job(chunks=1, sent_ago=timedelta(minutes=1)).chunks.get()

    assert chunk_mark_started(chunk_id=chunk.pk) == 1
    chunk.refresh_from_db()
    first = chunk.started_at
    assert chunk_mark_started(chunk_id=chunk.pk) == 2

    chunk.refresh_from_db()
    assert chunk.started_at == first is not None
    assert chunk.last_started_at is not None and chunk.last_started_at > first
    assert chunk_mark_started(chunk_id=chunk.pk + 1000) == 0  # no such chunk
