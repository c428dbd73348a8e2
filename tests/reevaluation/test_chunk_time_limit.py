"""A chunk stopped by its soft time limit: the answers it re-evaluated before the limit count
as done, the answers it did not get to are sent on as a new chunk, and none of them is
counted as failed or dead-lettered. Only an answer that took the whole time alone fails."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from reviewqueue.jobs.models import DeadLetter, Job
from reviewqueue.reviews import tasks
from reviewqueue.reviews.services import reevaluation
from tests.reevaluation.builders import job_with_one_chunk
from tests.reevaluation.test_chunk_runs import ProcessDied

pytestmark = pytest.mark.django_db

ANSWERS = [1, 2, 3, 4]


@pytest.fixture
def job() -> Job:
    return job_with_one_chunk(ANSWERS, sent_ago=timedelta(minutes=1))


def run_chunk_on_a_worker(job: Job, on_commit: Any) -> None:
    """As a worker runs the message (with its failure handling), and what it sends on."""
    chunk = job.chunks.get(number=0)
    with on_commit():
        tasks.reevaluate_answers.apply(args=[chunk.answer_ids, "manual"],
                                       kwargs={"job_id": str(job.pk), "chunk_id": chunk.pk})


def limit_on(answer: int, *, times: int, seen: list[int]) -> Any:
    """answer_reevaluate, except that the time limit hits while `answer` is being
    re-evaluated, its first `times` times. Answer 1 gets a new verdict; `seen` collects the
    answers re-evaluated, in order."""
    hits: list[int] = []

    def reevaluate(*, answer_id: int, **kwargs: Any) -> Any:
        seen.append(answer_id)
        if answer_id == answer and len(hits) < times:
            hits.append(answer_id)
            raise SoftTimeLimitExceeded()
        return object() if answer_id == 1 else None

    return mock.patch.object(reevaluation, "answer_reevaluate", side_effect=reevaluate)


def test_the_answers_done_before_the_limit_count_and_the_rest_are_sent_on(
    job: Job, on_commit: Any
) -> None:
    seen: list[int] = []

    with limit_on(3, times=1, seen=seen):
        run_chunk_on_a_worker(job, on_commit)

    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 4, 0, 1)
    assert job.summary == "4 of 4 re-evaluated, 1 with a new verdict, 0 failed"
    assert not DeadLetter.objects.exists()
    assert seen == [1, 2, 3, 3, 4]
    assert list(job.chunks.order_by("number").values_list("answer_ids", "state")) == [
        ([1, 2], "finished"), ([3, 4], "finished")]


def test_an_answer_that_takes_the_whole_time_alone_is_the_only_one_failed(
    job: Job, on_commit: Any, admin_client: Any
) -> None:
    seen: list[int] = []

    with limit_on(2, times=99, seen=seen):
        run_chunk_on_a_worker(job, on_commit)  # 1 is done, the limit hits 2 on its own

    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 3, 1, 1)
    [letter] = DeadLetter.objects.all()
    assert letter.answer_id == 2
    assert letter.error_type.endswith(".SoftTimeLimitExceeded")
    page = admin_client.get("/admin/jobs/deadletter/").content.decode()
    assert "SoftTimeLimitExceeded" in page
    assert seen == [1, 2, 2, 3, 4]


def test_a_chunk_stops_between_two_answers_before_its_time_limit_strikes(
    job: Job, on_commit: Any
) -> None:
    """Past three quarters of its soft limit a chunk stops after the answer in hand, and the
    rest goes on as a new chunk, as when the limit itself strikes, but with no exception raised
    in the middle of a query."""
    import time

    seen: list[int] = []
    ticks: list[int] = []

    class Clock:
        """Time runs out once two answers are done: every later reading is far ahead."""

        @staticmethod
        def monotonic() -> float:
            ticks.append(1)
            return time.monotonic() + (10_000 if len(ticks) >= 2 else 0)

    with limit_on(0, times=0, seen=seen), mock.patch.object(reevaluation, "time", Clock):
        run_chunk_on_a_worker(job, on_commit)

    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == ("finished", 4, 0)
    assert seen == [1, 2, 3, 4]
    assert not DeadLetter.objects.exists()
    assert list(job.chunks.order_by("number").values_list("answer_ids", flat=True)) == [
        [1, 2], [3], [4]]


def test_the_new_verdicts_of_an_earlier_run_go_on_with_the_answers_sent_on(
    job: Job, on_commit: Any
) -> None:
    """The first run gives 1 and 3 their new verdicts, then its worker dies. Run again, it
    finds them unchanged and the limit strikes on 3: 3 and 4 go on as a new chunk, which
    counts the verdict of 3."""
    runs: list[int] = []

    def reevaluate(*, answer_id: int, on_change: Any = None, **kwargs: Any) -> Any:
        if answer_id == 1:
            runs.append(1)
        if len(runs) == 1:  # the first run
            if answer_id == 4:
                raise ProcessDied()
            if answer_id in (1, 3):
                on_change(answer_id)  # committed with the new verdict
                return object()
        elif answer_id == 3 and len(runs) == 2:
            runs.append(3)
            raise SoftTimeLimitExceeded()
        return None

    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=reevaluate):
        chunk = job.chunks.get(number=0)
        with pytest.raises(ProcessDied):
            tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk),
                                     chunk_id=chunk.pk)
        run_chunk_on_a_worker(job, on_commit)  # the message comes back

    job.refresh_from_db()
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 4, 0, 2)
    assert list(job.chunks.order_by("number").values_list("answer_ids", "changed")) == [
        ([1, 2], 1), ([3, 4], 1)]
