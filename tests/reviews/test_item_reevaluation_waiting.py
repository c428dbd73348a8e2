"""While a re-evaluation waits for a worker, the answer's page and its API say so.

A publication starts a job whose fan-out runs after the commit, on a worker. Until it has
reached the answer, the page shows the sources as they are now beside a verdict computed on
the ones before: the reviewer is told a re-evaluation is on its way, rather than left to
wonder why a claim marked as holding reads differently in the passage below it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.jobs.services import job_fan_out, job_start_for_answers
from reviewqueue.reviews.models import Answer
from tests.reviews.conftest import current_verdict_id, days, fact

pytestmark = pytest.mark.django_db

BANNER = "has not reached this answer yet"


def newest_job(document: str) -> Job:
    """The job the last publication of `document` started (the fixtures' first publications
    started theirs, still pending too, before the answer was held)."""
    return Job.objects.filter(document_key=document).latest("created_at")


def waiting_since(client: Any, trace: str) -> Any:
    response = client.get(f"/api/v1/answers/{trace}")
    assert response.status_code == 200, response.content
    return response.json()["reevaluation_waiting_since"]


def test_a_publication_waiting_for_a_worker_is_said_on_the_page_and_in_the_api(
    hold: Any, publish: Any, reviewer: Any, login: Any, token_client: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    assert BANNER not in client.get(f"/answers/{trace}/").content.decode()
    assert waiting_since(token_client(reviewer), trace) is None
    seen = current_verdict_id(trace)

    publish("pricing", revision="r2", facts=[fact("trial_days", 21)])  # its fan-out waits

    job = newest_job("pricing")
    assert current_verdict_id(trace) == seen
    html = client.get(f"/answers/{trace}/").content.decode()
    assert BANNER in html
    assert "data-reevaluation-waiting" in html
    # The service started the job: the reviewer may not follow its page, and no link is shown.
    assert job.get_absolute_url() not in html
    since = waiting_since(token_client(reviewer), trace)
    assert since is not None and since.startswith(job.created_at.strftime("%Y-%m-%dT%H:%M"))


def test_an_admin_gets_the_link_to_the_job(hold: Any, publish: Any, admin_client: Any) -> None:
    trace = hold()
    publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    job = newest_job("pricing")

    html = admin_client.get(f"/answers/{trace}/").content.decode()

    assert BANNER in html
    assert f'href="{job.get_absolute_url()}"' in html


def test_once_the_worker_has_run_it_the_page_no_longer_says_so(
    hold: Any, publish: Any, reviewer: Any, login: Any, token_client: Any
) -> None:
    trace = hold()
    publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    job = newest_job("pricing")

    job_fan_out(job_id=str(job.pk))  # the worker looks the answers up: one chunk holds it
    job.refresh_from_db()
    assert job.state == Job.State.RUNNING
    assert BANNER in login(reviewer).get(f"/answers/{trace}/").content.decode()

    from reviewqueue.reviews.tasks import reevaluate_answers

    chunk = JobChunk.objects.get(job=job)
    reevaluate_answers.run(chunk.answer_ids, "revision", job_id=str(job.pk),
                           chunk_id=chunk.pk)

    assert BANNER not in login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert waiting_since(token_client(reviewer), trace) is None


def test_a_change_to_a_document_the_answer_neither_cites_nor_claims_is_not_waited_for(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    publish("handbook", facts=[fact("holidays", 25)])  # no citation, no key in common

    assert Job.objects.filter(state=Job.State.PENDING, document_key="handbook").exists()
    assert BANNER not in login(reviewer).get(f"/answers/{trace}/").content.decode()


def test_a_document_it_only_claims_a_key_of_is_waited_for(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()  # claims trial_days, citing pricing and pricing-eu
    publish("pricing-uk", facts=[fact("trial_days", 7)])  # not cited: a knowledge-base fact

    assert BANNER in login(reviewer).get(f"/answers/{trace}/").content.decode()


def test_a_job_on_chosen_answers_is_waited_for_only_by_them(
    hold: Any, reviewer: Any, login: Any
) -> None:
    mine, other = hold("t-1"), hold("t-2")
    job_start_for_answers([Answer.objects.get(trace_id=other).pk], "manual", reviewer)

    client = login(reviewer)
    assert BANNER not in client.get(f"/answers/{mine}/").content.decode()
    assert BANNER in client.get(f"/answers/{other}/").content.decode()


def test_a_validity_date_passed_before_the_nightly_check_is_said_too(
    publish: Any, hold: Any, reviewer: Any, login: Any, settings: Any
) -> None:
    trace = hold()  # pricing's 14 days hold until 60 days from now
    boundary = Answer.objects.get(trace_id=trace).current_verdict.next_boundary
    assert boundary == dt.date.fromisoformat(days(61))
    client = login(reviewer)
    assert "data-boundary-passed" not in client.get(f"/answers/{trace}/").content.decode()

    settings.REEVALUATION_TODAY = boundary  # the fact ended yesterday; no sweep has run
    html = client.get(f"/answers/{trace}/").content.decode()

    assert "data-boundary-passed" in html
    assert f"On {days(61)} a fact this verdict weighed started or stopped holding" in html
    assert BANNER not in html
