"""A chunk retried after a transient error (autoretry) runs its answers again. The answers the
first attempt already gave a new verdict are unchanged the second time; the job still reports
every answer that got a new verdict, counted from the store."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError

from reviewqueue.jobs.models import Job
from reviewqueue.jobs.services import job_start_for_answers
from reviewqueue.reviews.models import Verdict
from reviewqueue.reviews.services import reevaluation
from tests.reevaluation.conftest import fact

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
