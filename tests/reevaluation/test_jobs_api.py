"""The jobs API: who may follow a job, and what starting one on many answers costs."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.jobs.api import JobStartView
from reviewqueue.reviews.models import Answer
from tests.reevaluation.builders import copy_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def job_url(publish_doc: Any, ingest: Any, token_client: Any, reviewer: Any) -> str:
    publish_doc("pricing", "r1")
    ingest("t-1")
    response = token_client(reviewer).post("/api/v1/jobs", {"trace_ids": ["t-1"]},
                                           format="json")
    assert response.status_code == 202, response.content
    return f"/api/v1/jobs/{response.json()['id']}"


@pytest.fixture
def bob(make_user: Any) -> Any:
    return make_user("bob", "reviewer")


@pytest.mark.parametrize("scopes", [[], ["submit"], ["publish"], ["review"]])
def test_a_token_without_the_read_scope_may_not_follow_a_job(
    job_url: str, token_client: Any, reviewer: Any, scopes: list[str]
) -> None:
    # The same tokens are refused on GET /api/v1/answers/...
    assert token_client(reviewer, scopes=scopes).get("/api/v1/answers/t-1").status_code == 403
    assert token_client(reviewer, scopes=scopes).get(job_url).status_code == 403


def test_a_read_token_follows_its_own_job(job_url: str, token_client: Any,
                                          reviewer: Any) -> None:
    response = token_client(reviewer, scopes=["read"]).get(job_url)
    assert response.status_code == 200
    assert response.json()["total"] == 1


def test_services_and_owners_may_not_follow_jobs_and_others_jobs_stay_hidden(
    job_url: str, token_client: Any, service_api: Any, owner: Any, bob: Any,
    admin_user: Any
) -> None:
    assert service_api.get(job_url).status_code == 403
    assert token_client(owner).get(job_url).status_code == 403
    assert token_client(bob).get(job_url).status_code == 404
    assert token_client(admin_user).get(job_url).status_code == 200


def test_checking_who_may_read_the_answers_of_a_job_costs_the_same_for_1_or_500(
    publish_doc: Any, ingest: Any, reviewer: Any
) -> None:
    publish_doc("pricing", "r1")
    copy_answers(ingest("t-0"), 499, "t-c")
    trace_ids = list(Answer.objects.values_list("trace_id", flat=True))
    assert len(trace_ids) == 500
    request = SimpleNamespace(user=get_user_model().objects.get(pk=reviewer.pk))
    readable = JobStartView()._readable_answer_ids
    readable(request, ["t-0"])  # the principals of the user are read once, then cached
    with CaptureQueriesContext(connection) as one:
        assert len(readable(request, ["t-0"])) == 1
    with CaptureQueriesContext(connection) as all_of_them:
        assert len(readable(request, trace_ids)) == 500
    assert len(all_of_them.captured_queries) == len(one.captured_queries) <= 3


def test_one_unreadable_answer_among_many_is_not_found(
    publish_doc: Any, ingest: Any, token_client: Any, reviewer: Any
) -> None:
    publish_doc("pricing", "r1")
    publish_doc("hr-handbook", "r1", principals=["group:hr"])
    copy_answers(ingest("t-0"), 59, "t-c")
    ingest("hr-1", cites=[("d1", "hr-handbook", "r1")], asked_by=("group:hr",))
    trace_ids = [*Answer.objects.exclude(trace_id="hr-1").values_list("trace_id", flat=True)]
    api = token_client(reviewer)
    for extra in ("hr-1", "no-such"):
        response = api.post("/api/v1/jobs", {"trace_ids": [*trace_ids, extra]}, format="json")
        assert response.status_code == 404
        assert extra in response.json()["detail"]
