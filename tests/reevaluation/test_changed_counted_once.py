"""An answer two jobs reach is counted as changed by the job that changed it, not by both:
the second finds it as the first left it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest import mock

import pytest

from reviewqueue.jobs import services
from reviewqueue.jobs.models import Job
from reviewqueue.reviews import tasks
from tests.reevaluation.builders import job_with_one_chunk
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db


def run_chunk(job: Job) -> None:
    chunk = job.chunks.get()
    tasks.reevaluate_answers(chunk.answer_ids, "manual", job_id=str(job.pk), chunk_id=chunk.pk)
    job.refresh_from_db()


def test_two_jobs_reaching_one_answer_count_its_change_once(
    publish_doc: Any, publish: Any, ingest: Any
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    answer = ingest("t-1", cites=[("d1", "pricing", "r1")])
    first, second = (job_with_one_chunk([answer.pk], sent_ago=timedelta(seconds=1))
                     for _ in range(2))
    # The second job's worker takes its chunk up first, and is slow to get to the answer;
    # meanwhile the source changes (its own job is not run here) and the first job runs.
    services.chunk_mark_started(chunk_id=second.chunks.get().pk)
    publish("pricing", "r2", facts=[fact(21)])
    run_chunk(first)
    with mock.patch.object(services, "chunk_mark_started", return_value=1):  # taken up above
        run_chunk(second)

    assert (first.state, first.done, first.changed) == ("finished", 1, 1)
    assert (second.state, second.done, second.changed) == ("finished", 1, 0)
