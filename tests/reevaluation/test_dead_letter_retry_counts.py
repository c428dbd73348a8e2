"""An answer a job could not re-evaluate is dead-lettered; an admin sends the letter again
once the cause is fixed. When it goes through, the job counts the answer as re-evaluated
instead of failed, once however often the letter is sent again."""

from __future__ import annotations

import re
from typing import Any
from unittest import mock

import pytest

from reviewqueue.insight.selectors import task_failures
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.jobs.services import job_start_for_answers
from reviewqueue.reviews import tasks
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import reevaluation
from tests.reevaluation.conftest import fact
from tests.reevaluation.test_chunk_runs import dying_at

pytestmark = pytest.mark.django_db


def retry_from_the_admin(client: Any, letter: DeadLetter) -> str:
    response = client.post("/admin/jobs/deadletter/",
                           {"action": "retry_selected", "_selected_action": [letter.pk]},
                           follow=True)
    assert response.status_code == 200
    return response.content.decode()


def failing_on(answer: Answer, message: str = "cannot gate this one") -> Any:
    """answer_reevaluate, except that it fails on `answer`."""
    original = reevaluation.answer_reevaluate

    def reevaluate(*, answer_id: int, **kwargs: Any) -> Any:
        if answer_id == answer.pk:
            raise ValueError(message)
        return original(answer_id=answer_id, **kwargs)

    return mock.patch.object(reevaluation, "answer_reevaluate", side_effect=reevaluate)


@pytest.fixture
def failed_job(publish: Any, publish_doc: Any, ingest: Any, on_commit: Any,
               django_capture_on_commit_callbacks: Any) -> tuple[Job, Answer]:
    """A finished job of two answers due a new verdict: one re-evaluated, one failed."""
    publish_doc("pricing", "r1", facts=[fact(14)])
    first, second = ingest("t-1"), ingest("t-2")
    with django_capture_on_commit_callbacks(execute=False):  # the publish's own job is not run
        publish("pricing", "r2", facts=[fact(21)])
    with failing_on(second), on_commit():
        job = job_start_for_answers([first.pk, second.pk], "manual", None)
    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 1, 1, 1)
    return job, second


def figures(client: Any, job: Job) -> tuple[Any, ...]:
    """The job as an API caller reads it."""
    body = client.get(f"/api/v1/jobs/{job.pk}").json()
    return body["state"], body["total"], body["done"], body["failed"], body["changed"]


def test_a_dead_letter_sent_again_that_goes_through_counts_the_answer_as_done(
    failed_job: tuple[Job, Answer], admin_client: Any, admin_user: Any, token_client: Any,
    on_commit: Any,
) -> None:
    job, _ = failed_job
    letter = DeadLetter.objects.get()

    with on_commit():
        page = retry_from_the_admin(admin_client, letter)

    assert "1 task sent again." in page
    assert figures(token_client(admin_user), job) == ("finished", 2, 2, 0, 2)
    job.refresh_from_db()
    assert job.summary == "2 of 2 re-evaluated, 2 with a new verdict, 0 failed"


def test_a_dead_letter_sent_again_twice_counts_the_answer_once(
    failed_job: tuple[Job, Answer], admin_client: Any, admin_user: Any, token_client: Any,
    on_commit: Any,
) -> None:
    job, _ = failed_job
    letter = DeadLetter.objects.get()

    for _ in range(2):
        with on_commit():
            retry_from_the_admin(admin_client, letter)

    assert figures(token_client(admin_user), job) == ("finished", 2, 2, 0, 2)
    letter.refresh_from_db()
    # The first send resolved it: the second sends nothing.
    assert letter.retry_count == 1 and letter.resolved_at is not None


def test_a_dead_letter_sent_again_that_fails_again_leaves_the_answer_failed(
    failed_job: tuple[Job, Answer], admin_client: Any, admin_user: Any, token_client: Any,
    on_commit: Any,
) -> None:
    job, answer = failed_job
    letter = DeadLetter.objects.get()

    with failing_on(answer, "still broken"), on_commit():
        retry_from_the_admin(admin_client, letter)

    assert figures(token_client(admin_user), job) == ("finished", 2, 1, 1, 1)
    [again] = DeadLetter.objects.all()  # the same letter, with the latest error
    assert (again.pk, again.error_message, again.resolved_at) == (letter.pk, "still broken", None)


def admin_row(page: str) -> dict[str, str]:
    """The cells of the only row of the admin's list of dead letters, by field."""
    return dict(re.findall(r'class="field-(\w+)[^"]*">(?:<a [^>]*>)?([^<]*)<', page))


def test_a_dead_letter_sent_again_that_fails_again_waits_for_an_admin_again(
    failed_job: tuple[Job, Answer], admin_client: Any, on_commit: Any,
) -> None:
    """Nothing was fixed: the jobs page and the metrics go on saying that a task waits in the
    dead letters, and the admin's list shows it sent once, failed since, not sent again."""
    _, answer = failed_job
    letter = DeadLetter.objects.get()

    with failing_on(answer, "still broken"), on_commit():
        retry_from_the_admin(admin_client, letter)

    jobs_page = admin_client.get("/jobs/").content.decode()
    assert "1 task failed for good and waits in the dead letters." in jobs_page
    assert task_failures() == (1, 1)  # /metrics: reviewqueue_task_failures_waiting 1
    row = admin_row(admin_client.get("/admin/jobs/deadletter/").content.decode())
    assert (row["error_message"], row["retry_count"], row["retried_at"], row["retried_by"],
            row["resolved_at"]) == ("still broken", "1", "-", "-", "-")


def test_an_answer_a_run_changed_and_a_later_run_failed_on_counts_once_it_goes_through(
    publish: Any, publish_doc: Any, ingest: Any, admin_client: Any, admin_user: Any,
    token_client: Any, on_commit: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    """The first run gives the first answer its new verdict and dies. Run again, it fails on
    that answer: the job counts it failed, not changed, until its dead letter goes through."""
    publish_doc("pricing", "r1", facts=[fact(14)])
    first, second = ingest("t-1"), ingest("t-2")
    with django_capture_on_commit_callbacks(execute=False):  # no job's message is run yet
        publish("pricing", "r2", facts=[fact(21)])
        job = job_start_for_answers([first.pk, second.pk], "manual", None)
    chunk = JobChunk.objects.get(job=job)
    with dying_at(second.pk):
        tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk),
                                 chunk_id=chunk.pk)
    with failing_on(first):  # the message comes back
        tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk),
                                 chunk_id=chunk.pk)
    assert figures(token_client(admin_user), job) == ("finished", 2, 1, 1, 1)

    with on_commit():
        retry_from_the_admin(admin_client, DeadLetter.objects.get())

    assert figures(token_client(admin_user), job) == ("finished", 2, 2, 0, 2)
