"""A chunk run more than once (its message delivered again after the worker died, or two
copies at once) stores one dead letter per answer it fails on, with the latest error; an
answer a later run re-evaluated after all has its letter resolved, not counted twice."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError
from django.utils import timezone

from reviewqueue.jobs import services
from reviewqueue.jobs.models import DeadLetter, Job
from reviewqueue.reviews import tasks
from reviewqueue.reviews.services import reevaluation
from tests.reevaluation.builders import job_with_one_chunk

pytestmark = pytest.mark.django_db

ANSWERS = [1, 2, 3]


@pytest.fixture
def job() -> Job:
    """A running job with one chunk of three answers, sent a while ago."""
    return job_with_one_chunk(ANSWERS, sent_ago=timedelta(minutes=5))


def run_chunk(job: Job) -> None:
    chunk = job.chunks.get()
    tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk), chunk_id=chunk.pk)


@pytest.fixture
def gate() -> Iterator[list[str]]:
    """Answer 3 fails while the list holds an error for it (the first is used up each run);
    the other answers are re-evaluated unchanged."""
    errors: list[str] = []

    def reevaluate(*, answer_id: int, **kwargs: Any) -> Any:
        if answer_id == 3 and errors:
            raise ValueError(errors.pop(0))
        return None

    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=reevaluate):
        yield errors


def dies_before_counting() -> Any:
    """The first run stops before its chunk is counted into the job, as a worker killed
    there would; its message comes back."""
    real = services.chunk_finish
    calls: list[int] = []

    def finish(**kwargs: Any) -> bool:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("the worker was killed")
        return real(**kwargs)

    return mock.patch.object(services, "chunk_finish", side_effect=finish)


def test_a_chunk_delivered_again_stores_one_dead_letter_with_the_latest_error(
    job: Job, gate: list[str], admin_client: Any
) -> None:
    gate.extend(["first attempt", "second attempt"])

    with dies_before_counting():
        with pytest.raises(OperationalError):
            run_chunk(job)
        run_chunk(job)  # delivered again

    [letter] = DeadLetter.objects.all()
    assert (letter.job_id, letter.answer_id, letter.error_message) == (
        job.pk, 3, "second attempt")
    page = admin_client.get("/admin/jobs/deadletter/").content.decode()
    assert "second attempt" in page and "first attempt" not in page
    # When it failed, with its zone, as the pages write times.
    failed_at = timezone.localtime(letter.failed_at)
    assert f"{failed_at:%Y-%m-%d %H:%M:%S} UTC" in page
    ja = admin_client.get("/admin/jobs/deadletter/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert f"{failed_at:%Y-%m-%d %H:%M:%S} UTC" in ja
    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == ("finished", 2, 1)


def test_two_copies_of_a_chunk_at_once_store_one_dead_letter(
    job: Job, gate: list[str]
) -> None:
    gate.extend(["from one copy", "from the other copy"])

    with mock.patch("reviewqueue.jobs.selectors.chunk_is_finished", return_value=False):
        run_chunk(job)
        run_chunk(job)

    assert list(DeadLetter.objects.values_list("answer_id", "error_message")) == [
        (3, "from the other copy")]
    job.refresh_from_db()
    assert (job.done, job.failed) == (2, 1)


def test_an_answer_a_later_run_re_evaluated_has_its_letter_resolved_and_counted_once(
    job: Job, gate: list[str], admin_client: Any, on_commit: Any
) -> None:
    gate.append("only the first time")

    with dies_before_counting():
        with pytest.raises(OperationalError):
            run_chunk(job)
        run_chunk(job)  # delivered again: answer 3 goes through this time

    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == ("finished", 3, 0)
    letter = DeadLetter.objects.get()
    assert letter.resolved_at is not None
    # Nothing waits in the dead letters any more: the jobs page does not say one does.
    page = admin_client.get("/jobs/").content.decode()
    assert "waits in the dead letters" not in page
    # Sending the old letter again does not count the answer a second time.
    with on_commit():
        response = admin_client.post(
            "/admin/jobs/deadletter/",
            {"action": "retry_selected", "_selected_action": [letter.pk]}, follow=True)
    job.refresh_from_db()
    assert (job.done, job.failed) == (3, 0)
    # Nor is it sent, or said to be: its answer was re-evaluated.
    said = [str(m) for m in response.context["messages"]]
    assert said == ["1 task was not sent again: its answer was re-evaluated since "
                    "(resolved), or the letter is gone."]
    letter.refresh_from_db()
    assert (letter.retry_count, letter.retried_at) == (0, None)


def test_a_letter_is_resolved_when_another_job_re_evaluates_its_answer(
    job: Job, gate: list[str], admin_client: Any
) -> None:
    """An answer one job could not re-evaluate, which a later job (another document's change,
    a validity sweep) re-evaluates after all, waits on nothing: the jobs page no longer says
    it does. The first job keeps its figures: it did fail on it."""
    gate.append("the first job's failure")
    run_chunk(job)
    [letter] = DeadLetter.objects.all()
    assert "waits in the dead letters" in admin_client.get("/jobs/").content.decode()

    later = job_with_one_chunk([3, 4], sent_ago=timedelta(minutes=1))
    run_chunk(later)

    letter.refresh_from_db()
    assert letter.resolved_at is not None
    assert "waits in the dead letters" not in admin_client.get("/jobs/").content.decode()
    job.refresh_from_db()
    assert (job.done, job.failed) == (2, 1)


def test_a_letter_stays_when_another_job_fails_on_its_answer_too(
    job: Job, gate: list[str]
) -> None:
    gate.extend(["the first job's failure", "the later job's failure"])
    run_chunk(job)
    later = job_with_one_chunk([3], sent_ago=timedelta(minutes=1))
    run_chunk(later)

    assert sorted(DeadLetter.objects.values_list("error_message", "resolved_at")) == [
        ("the first job's failure", None), ("the later job's failure", None)]


def test_a_run_does_not_resolve_the_letter_of_its_own_failure(job: Job,
                                                              gate: list[str]) -> None:
    """A second copy of the chunk's message starts while the first is finishing: the first
    still counts, and keeps waiting, the answer it failed on."""
    gate.append("the first copy's failure")
    real = services.chunk_finish

    def second_copy_starts_first(**kwargs: Any) -> bool:
        services.chunk_mark_started(chunk_id=kwargs["chunk_id"])
        return real(**kwargs)

    with mock.patch.object(services, "chunk_finish", side_effect=second_copy_starts_first):
        run_chunk(job)

    job.refresh_from_db()
    [letter] = DeadLetter.objects.all()
    assert job.failed == 1
    assert letter.resolved_at is None
