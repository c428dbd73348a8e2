"""An admin sends dead letters again while the broker is down: they are told that nothing was
sent, and neither the dead letter, nor the audit log, nor a failed fan-out job claims a retry
that did not happen. With the broker up, a failed fan-out sent again reopens and finishes."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any
from unittest import mock

import kombu.exceptions
import pytest
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import DeadLetter, Job
from reviewqueue.jobs.services import (
    dead_letter_record,
    job_mark_failed,
    job_start_for_document,
)
from reviewqueue.reviews.models import Answer
from tests.reevaluation.conftest import celery_app, celery_sending_to, fact, wait_until

# Nothing listens on port 1: the connection is refused, as by a Redis that is down.
DOWN_BROKER_URL = "redis://127.0.0.1:1/0"
RETRY = {"action": "retry_selected"}


def broker_down() -> AbstractContextManager[None]:
    """Send tasks to a broker that refuses every connection instead of running them here."""
    return celery_sending_to(DOWN_BROKER_URL)


def retry_from_the_admin(client: Any, *letters: DeadLetter) -> str:
    """Run the admin action on `letters`; returns the page it leads back to."""
    response = client.post("/admin/jobs/deadletter/",
                           {**RETRY, "_selected_action": [letter.pk for letter in letters]},
                           follow=True)
    assert response.status_code == 200
    return response.content.decode()


def chunk_letter(answer: Answer) -> DeadLetter:
    """A chunk task that failed for good on one answer."""
    return dead_letter_record(task_name="reviews.reevaluate_answers", task_id="",
                              args=[[answer.pk], "revision"], kwargs={},
                              error=ValueError("cannot gate this one"), attempts=1)


@pytest.fixture
def answer(publish_doc: Any, ingest: Any) -> Answer:
    publish_doc("pricing", "r1")
    return ingest("t-1")


@pytest.fixture
def failed_fan_out(answer: Answer, on_commit: Any) -> tuple[Job, DeadLetter]:
    """A document job whose fan-out failed for good: the job is failed, its task dead-lettered."""
    with mock.patch("reviewqueue.jobs.services._affected_answer_ids",
                    side_effect=ValueError("the index is being rebuilt")), on_commit():
        job = job_start_for_document(document_key="pricing", trigger="revision")
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    return job, DeadLetter.objects.get(task_name="jobs.fan_out_job")


@pytest.mark.django_db
def test_with_the_broker_down_the_admin_is_told_nothing_was_sent_again(
    admin_client: Any, answer: Answer
) -> None:
    letter = chunk_letter(answer)

    with broker_down():
        page = retry_from_the_admin(admin_client, letter)

    assert ("The message broker could not be reached: 1 task was not sent again, and "
            "nothing was recorded for it. Try again once the broker is back.") in page
    assert "sent again." not in page.replace("was not sent again", "")


@pytest.mark.django_db
def test_with_the_broker_down_letters_already_resolved_are_not_counted_as_unsent(
    admin_client: Any, answer: Answer
) -> None:
    from django.utils import timezone

    waiting = chunk_letter(answer)
    done = [chunk_letter(answer) for _ in range(2)]
    DeadLetter.objects.filter(pk__in=[d.pk for d in done]).update(resolved_at=timezone.now())

    with broker_down():
        page = retry_from_the_admin(admin_client, waiting, *done)

    assert "The message broker could not be reached: 1 task was not sent again" in page
    assert ("2 of the selected were not to be sent: their answer was re-evaluated since "
            "(resolved).") in page


@pytest.mark.django_db
def test_with_the_broker_down_the_dead_letter_and_the_audit_log_do_not_claim_a_retry(
    admin_client: Any, answer: Answer
) -> None:
    letter = chunk_letter(answer)

    with broker_down():
        retry_from_the_admin(admin_client, letter)

    letter.refresh_from_db()
    assert (letter.retry_count, letter.retried_at, letter.retried_by) == (0, None, None)
    assert not AuditEvent.objects.filter(action="dead_letter.retried").exists()


@pytest.mark.django_db
def test_with_the_broker_down_a_failed_fan_out_job_stays_failed(
    admin_client: Any, failed_fan_out: tuple[Job, DeadLetter]
) -> None:
    job, letter = failed_fan_out
    failed_at = job.finished_at

    with broker_down():
        retry_from_the_admin(admin_client, letter)

    job.refresh_from_db()
    letter.refresh_from_db()
    assert (job.state, job.finished_at) == (Job.State.FAILED, failed_at)
    assert letter.retry_count == 0


@pytest.mark.django_db
def test_when_the_broker_goes_down_midway_the_admin_is_told_what_went_out_and_what_did_not(
    admin_client: Any, answer: Answer
) -> None:
    letters = [chunk_letter(answer) for _ in range(3)]
    task = celery_app().tasks["reviews.reevaluate_answers"]
    refused = kombu.exceptions.OperationalError("Error 111 connecting. Connection refused.")

    with broker_down(), mock.patch.object(task, "apply_async",
                                          side_effect=[None, refused]) as send:
        page = retry_from_the_admin(admin_client, *letters)

    # The first refusal ends the action: the third letter was not even tried.
    assert send.call_count == 2
    assert "1 task sent again." in page
    assert "The message broker could not be reached: 2 tasks were not sent again" in page
    assert sorted(DeadLetter.objects.values_list("retry_count", flat=True)) == [0, 0, 1]
    assert AuditEvent.objects.filter(action="dead_letter.retried").count() == 1


@pytest.mark.django_db
def test_a_failed_fan_out_sent_again_reopens_its_job_and_finishes_it(
    admin_client: Any, failed_fan_out: tuple[Job, DeadLetter], on_commit: Any
) -> None:
    job, letter = failed_fan_out

    with on_commit():
        page = retry_from_the_admin(admin_client, letter)

    assert "1 task sent again." in page
    job.refresh_from_db()
    assert (job.state, job.total, job.done, job.failed) == (Job.State.FINISHED, 1, 1, 0)
    letter.refresh_from_db()
    assert letter.retry_count == 1


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_failed_fan_out_sent_again_with_the_broker_up_runs_on_a_worker(
    start_worker: Any, publish: Any, ingest: Any, admin_client: Any
) -> None:
    start_worker()
    publish("pricing", "r1", facts=[fact()])
    ingest("t-1")
    wait_until(lambda: not Job.objects.exclude(state=Job.State.FINISHED).exists(), timeout=60,
               message="the publish's job did not finish")
    # The fan-out failed for good, as FanOutTask leaves it: a failed job and a dead letter.
    with mock.patch("reviewqueue.jobs.tasks.fan_out_job.delay"):
        job = job_start_for_document(document_key="pricing", trigger="manual", actor=SYSTEM)
    job_mark_failed(job_id=str(job.pk))
    letter = dead_letter_record(task_name="jobs.fan_out_job", task_id="lost", args=[str(job.pk)],
                                kwargs={}, error=kombu.exceptions.OperationalError("refused"),
                                attempts=7)

    page = retry_from_the_admin(admin_client, letter)

    assert "1 task sent again." in page
    wait_until(lambda: Job.objects.filter(pk=job.pk, state=Job.State.FINISHED).exists(),
               timeout=60, message="the job sent again did not finish")
    job.refresh_from_db()
    assert (job.total, job.done, job.failed) == (1, 1, 0)
    assert job.finished_at is not None and job.finished_at > timezone.now() - timedelta(minutes=1)
