"""The jobs API: who may follow a job, and what starting one on many answers costs.

A token follows a job with the `read` scope, or with `review` alone (which may start one) when
its user started the job. Tokens default to the scopes of their user's role; the personas are
alice (reviewer, started the job), bob (another reviewer) and ada (admin)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.jobs.api import JobStartView
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.services import job_start_for_document
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


def test_a_job_for_a_document_that_does_not_exist_is_a_404(admin_user: Any,
                                                           token_client: Any) -> None:
    response = token_client(admin_user).post("/api/v1/jobs", {"document_id": "no-such-doc"},
                                             format="json")
    assert response.status_code == 404
    assert "no document 'no-such-doc'" in response.json()["detail"]
    assert not Job.objects.exists()


def test_a_trace_id_that_is_no_string_is_named(reviewer: Any, token_client: Any) -> None:
    response = token_client(reviewer).post("/api/v1/jobs", {"trace_ids": ["t-1", 5]},
                                           format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["trace_ids[1]"]


@pytest.mark.parametrize(("body", "field"), [
    ({"trace_ids": ["t-1", " t-1 "]}, "trace_ids[1]"), ({"document_id": "pricing "}, "document_id"),
])
def test_an_id_with_spaces_around_it_is_refused_not_trimmed(
    admin_user: Any, token_client: Any, body: dict[str, Any], field: str
) -> None:
    response = token_client(admin_user).post("/api/v1/jobs", body, format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert not Job.objects.exists()


def test_a_form_posted_with_a_session_is_refused_as_not_json(
    publish_doc: Any, ingest: Any, reviewer: Any
) -> None:
    from rest_framework.test import APIClient

    publish_doc("pricing", "r1")
    ingest("t-1")
    jobs = Job.objects.count()  # the publish's own
    client = APIClient()
    client.force_login(reviewer)
    response = client.post("/api/v1/jobs", {"trace_ids": "t-1",
                                            "csrfmiddlewaretoken": "from-the-form"})
    assert response.status_code == 415, response.content
    assert response.json()["error"] == "unsupported_media_type"
    assert Job.objects.count() == jobs


@pytest.fixture
def bob(make_user: Any) -> Any:
    return make_user("bob", "reviewer")


@pytest.mark.parametrize("scopes", [[], ["submit"], ["publish"]])
def test_a_token_with_neither_read_nor_review_may_not_follow_a_job(
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


def test_a_review_only_token_follows_the_job_it_started(
    publish_doc: Any, ingest: Any, token_client: Any, reviewer: Any
) -> None:
    publish_doc("pricing", "r1")
    ingest("t-1")
    api = token_client(reviewer, scopes=["review"])
    started = api.post("/api/v1/jobs", {"trace_ids": ["t-1"]}, format="json")
    assert started.status_code == 202, started.content

    response = api.get(f"/api/v1/jobs/{started.json()['id']}")

    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["total"], body["document_id"]) == (started.json()["id"], 1, None)


def test_a_review_only_token_follows_a_job_its_user_started_another_way(
    job_url: str, token_client: Any, reviewer: Any
) -> None:
    # The job was started with another of alice's tokens: it records alice, not the token.
    assert token_client(reviewer, scopes=["review"]).get(job_url).status_code == 200


def test_a_review_only_token_is_answered_as_missing_on_someone_elses_job(
    job_url: str, token_client: Any, bob: Any
) -> None:
    api = token_client(bob, scopes=["review"])

    others = api.get(job_url)
    missing = api.get(f"/api/v1/jobs/{uuid.uuid4()}")

    assert others.status_code == missing.status_code == 404
    assert others.json() == missing.json()


def test_an_admins_review_only_token_follows_only_the_admins_own_jobs(
    job_url: str, token_client: Any, admin_user: Any
) -> None:
    assert token_client(admin_user, scopes=["review"]).get(job_url).status_code == 404
    assert token_client(admin_user, scopes=["read"]).get(job_url).status_code == 200


def test_a_job_naming_a_document_its_user_may_not_see_is_not_shown(
    publish_doc: Any, token_client: Any, reviewer: Any, admin_user: Any, on_commit: Any
) -> None:
    # Alice's job on the HR handbook (say she could read it once): whatever her token, she
    # does not learn the document id any more; an admin still follows the job.
    publish_doc("hr-handbook", "r1", principals=["group:hr"])
    with on_commit():
        job = job_start_for_document(document_key="hr-handbook", trigger="manual",
                                     user=reviewer)
    url = f"/api/v1/jobs/{job.pk}"

    assert token_client(reviewer, scopes=["review"]).get(url).status_code == 404
    assert token_client(reviewer, scopes=["read"]).get(url).status_code == 404
    assert token_client(admin_user, scopes=["read"]).get(url).json()["document_id"] == (
        "hr-handbook")


def test_a_read_token_follows_its_users_jobs_and_an_admins_every_job_as_before(
    job_url: str, token_client: Any, reviewer: Any, bob: Any, admin_user: Any
) -> None:
    assert token_client(reviewer, scopes=["read"]).get(job_url).status_code == 200
    assert token_client(bob, scopes=["read"]).get(job_url).status_code == 404
    assert token_client(admin_user, scopes=["read"]).get(job_url).status_code == 200


def test_owners_may_not_follow_jobs_and_others_jobs_stay_hidden(
    job_url: str, token_client: Any, service_api: Any, owner: Any, bob: Any,
    admin_user: Any
) -> None:
    # A service follows the jobs its publications started (tests/sources/test_publish_jobs).
    assert service_api.get(job_url).status_code == 404
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
