"""A fan-out message delivered again (acks_late: its worker died before acknowledging it) sends
no second copy of the chunks still queued or running; it sends those never sent, and those
the queue has lost. What it leaves alone, the resumer still recovers once it looks lost."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from unittest import mock

import kombu.exceptions
import pytest
from django.utils import timezone

from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.jobs.services import (
    chunk_mark_started,
    job_start_for_document,
    jobs_resume_stalled,
)
from reviewqueue.jobs.tasks import fan_out_job
from reviewqueue.reviews import tasks

pytestmark = pytest.mark.django_db


@contextmanager
def sending(*, refuse_after: int | None = None) -> Iterator[list[int]]:
    """Yields the ids of the chunks sent to the queue (nothing runs). With `refuse_after`,
    the broker goes down after that many messages."""
    ids: list[int] = []

    def send(*args: Any, **kwargs: Any) -> None:
        if refuse_after is not None and len(ids) >= refuse_after:
            raise kombu.exceptions.OperationalError("Error 111 connecting. Connection refused.")
        ids.append(kwargs["chunk_id"])

    with mock.patch.object(tasks.reevaluate_answers, "delay", side_effect=send):
        yield ids


def chunk_ids(job: Job, *numbers: int) -> list[int]:
    return list(job.chunks.filter(number__in=numbers).order_by("number")
                .values_list("pk", flat=True))


@pytest.fixture
def job(publish_doc: Any, ingest: Any, settings: Any) -> Job:
    """A document job over five answers, in chunks of 2, 2 and 1; its fan-out not run yet."""
    settings.REEVALUATION_CHUNK_SIZE = 2
    publish_doc("pricing", "r1")
    for n in range(5):
        ingest(f"t-{n}")
    # Outside on_commit(): its fan-out message is not sent; the tests deliver it.
    return job_start_for_document(document_key="pricing", trigger="revision")


def deliver_fan_out(job: Job, on_commit: Any, **sending_kwargs: Any) -> list[int]:
    """One delivery of the job's fan-out message; returns the chunk ids it sent."""
    with sending(**sending_kwargs) as sent, on_commit():
        fan_out_job.delay(str(job.pk))
    return sent


def sent_ago(job: Job, ago: timedelta) -> None:
    """Move the job's last batch `ago` into the past, as if the messages were sent then."""
    job.chunks.update(enqueued_at=timezone.now() - ago)


def test_a_fan_out_delivered_again_sends_no_second_copy_of_the_queued_chunks(
    job: Job, on_commit: Any
) -> None:
    assert deliver_fan_out(job, on_commit) == chunk_ids(job, 0, 1, 2)
    stamps = list(job.chunks.order_by("number").values_list("enqueued_at", flat=True))

    assert deliver_fan_out(job, on_commit) == []
    assert list(job.chunks.order_by("number").values_list("enqueued_at", flat=True)) == stamps


def test_a_fan_out_delivered_again_leaves_a_running_chunk_alone(
    job: Job, on_commit: Any
) -> None:
    deliver_fan_out(job, on_commit)
    chunk_mark_started(chunk_id=chunk_ids(job, 0)[0])

    assert deliver_fan_out(job, on_commit) == []


def test_a_fan_out_delivered_again_sends_the_chunks_the_broker_refused(
    job: Job, on_commit: Any
) -> None:
    # The first delivery got chunk 0 out; then the broker went down.
    assert deliver_fan_out(job, on_commit, refuse_after=1) == chunk_ids(job, 0)

    assert deliver_fan_out(job, on_commit) == chunk_ids(job, 1, 2)


def test_a_fan_out_delivered_again_sends_a_chunk_the_queue_has_moved_past(
    job: Job, on_commit: Any
) -> None:
    deliver_fan_out(job, on_commit)
    sent_ago(job, timedelta(minutes=10))
    # Chunk 1 was taken up five minutes ago; chunk 0, ahead of it in the queue, never was.
    job.chunks.filter(number=1).update(started_at=timezone.now() - timedelta(minutes=5))

    assert deliver_fan_out(job, on_commit) == chunk_ids(job, 0)


def test_a_fan_out_delivered_again_sends_chunks_pending_long_after_they_were_sent(
    job: Job, on_commit: Any
) -> None:
    deliver_fan_out(job, on_commit)
    sent_ago(job, timedelta(hours=3))
    chunk_mark_started(chunk_id=chunk_ids(job, 2)[0])  # running for hours: stuck as well

    assert deliver_fan_out(job, on_commit) == chunk_ids(job, 0, 1, 2)


def test_chunks_a_fan_out_delivered_again_left_alone_are_still_recovered_when_lost(
    job: Job, on_commit: Any
) -> None:
    deliver_fan_out(job, on_commit)
    assert deliver_fan_out(job, on_commit) == []

    with sending() as sent, on_commit():
        jobs_resume_stalled(now=timezone.now() + timedelta(hours=1))

    assert sent == chunk_ids(job, 0, 1, 2)


def test_chunks_the_broker_refused_are_sent_by_the_next_resumer_run(
    job: Job, on_commit: Any
) -> None:
    deliver_fan_out(job, on_commit, refuse_after=1)

    with sending() as sent, on_commit():
        jobs_resume_stalled(now=timezone.now())

    assert sent == chunk_ids(job, 1, 2)


def test_a_fan_out_delivered_again_counts_each_answer_once(job: Job, on_commit: Any) -> None:
    # Both deliveries' messages run here, one after the other.
    with on_commit():
        fan_out_job.delay(str(job.pk))
        fan_out_job.delay(str(job.pk))

    job.refresh_from_db()
    assert (job.state, job.total, job.done, job.failed) == (Job.State.FINISHED, 5, 5, 0)
    assert set(job.chunks.values_list("state", flat=True)) == {JobChunk.State.FINISHED}
