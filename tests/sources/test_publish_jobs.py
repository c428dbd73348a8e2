"""A service follows the re-evaluations its publications, withdrawals and restorations start.

The reply of each names the jobs it started, and the service's token follows them at their
`url`; a job it did not start is answered as missing."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.jobs.models import Job
from tests.conftest import revision_body
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def test_a_publication_names_its_jobs_and_the_service_follows_them(
    publish: Any, submit: Any, service_api: Any, django_capture_on_commit_callbacks: Any
) -> None:
    publish("pricing", "r1")
    assert submit("t-1").status_code == 201

    with django_capture_on_commit_callbacks(execute=True):
        reply = publish("pricing", "r2", facts=[fact("trial_days", 30)]).json()

    [started] = reply["jobs"]
    job = Job.objects.get(pk=started["id"])
    assert started == {"id": str(job.pk), "document_id": "pricing",
                       "url": f"/api/v1/jobs/{job.pk}"}
    progress = service_api.get(started["url"])
    assert progress.status_code == 200, progress.content
    # The test's Celery runs each task as it is sent, on commit: the job has re-evaluated t-1.
    assert progress.json() | {"total": 1, "done": 1, "finished": True} == progress.json()
    assert progress.json()["document_id"] == "pricing"


def test_the_jobs_of_the_documents_a_new_conflict_names_come_after_the_documents_own(
    make_user: Any, publish: Any
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])

    reply = publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)]).json()

    assert [j["document_id"] for j in reply["jobs"]] == ["trial-promo", "pricing"]


def test_the_same_body_again_starts_nothing_and_names_the_jobs_the_first_started(
    make_user: Any, publish: Any, token_client: Any
) -> None:
    """A service whose first reply was lost sends the body again: it learns the jobs to
    follow. Another service sending the same body learns none of them (it may not follow
    them)."""
    make_user("oscar", "owner")
    publish("pricing", "r1", facts=[fact("trial_days", 14)])
    first = publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)]).json()
    jobs = Job.objects.count()

    again = publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    other = token_client(make_user("other-service", "service")).put(
        "/api/v1/documents/trial-promo/revisions/r1",
        revision_body(owner="oscar", facts=[fact("trial_days", 30)]), format="json")

    assert again.status_code == 200
    assert [j["document_id"] for j in first["jobs"]] == ["trial-promo", "pricing"]
    assert again.json()["jobs"] == first["jobs"]
    assert Job.objects.count() == jobs
    assert other.status_code == 200, other.content
    assert other.json()["jobs"] == []


def test_a_late_revision_names_the_job_it_started(publish: Any) -> None:
    publish("pricing", "r2", updated_at="2026-10-02T09:00:00Z")

    late = publish("pricing", "r1", updated_at="2026-10-01T09:00:00Z").json()

    assert late["current"] is False
    assert [j["document_id"] for j in late["jobs"]] == ["pricing"]


def test_withdrawal_and_restoration_name_their_jobs_a_repeated_withdrawal_the_same(
    publish: Any, service_api: Any, django_capture_on_commit_callbacks: Any
) -> None:
    publish("pricing", "r1")

    with django_capture_on_commit_callbacks(execute=True):
        withdrawn = service_api.delete("/api/v1/documents/pricing").json()
        again = service_api.delete("/api/v1/documents/pricing").json()
        restored = service_api.post("/api/v1/documents/pricing/restore").json()
        restored_again = service_api.post("/api/v1/documents/pricing/restore").json()

    assert withdrawn["withdrawn"] is True
    assert [j["document_id"] for j in withdrawn["jobs"]] == ["pricing"]
    assert again["jobs"] == withdrawn["jobs"]
    assert restored["current_revision"] == "r1"
    assert [j["document_id"] for j in restored["jobs"]] == ["pricing"]
    assert restored_again["jobs"] == restored["jobs"]  # a retry: what the first one started
    for job in (withdrawn["jobs"][0], restored["jobs"][0]):
        assert service_api.get(job["url"]).json()["finished"] is True
    assert AuditEvent.objects.filter(action="document.restored").count() == 1


def test_a_restore_after_a_publication_started_nothing_and_says_so(
    publish: Any, service_api: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Restored, then republished: a restore now restores nothing (the publication was the
    last change) and names no jobs; nor does one of a document never withdrawn."""
    publish("pricing", "r1")
    publish("faq", "r1")
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing")
        service_api.post("/api/v1/documents/pricing/restore")
        publish("pricing", "r2")
        after_publication = service_api.post("/api/v1/documents/pricing/restore").json()
        never_withdrawn = service_api.post("/api/v1/documents/faq/restore").json()

    assert after_publication["current_revision"] == "r2"
    assert after_publication["jobs"] == []
    assert never_withdrawn["jobs"] == []


def test_a_restricted_document_s_job_is_the_publishing_service_s(
    publish: Any, service_api: Any
) -> None:
    """A service publishes documents its own principals may not read: the job is still its
    own to follow."""
    reply = publish("hr-handbook", principals=["group:hr"]).json()

    [started] = reply["jobs"]
    assert service_api.get(started["url"]).status_code == 200
    assert Job.objects.get(pk=started["id"]).requested_by.username == "rag-service"


def test_a_job_another_caller_started_is_missing_to_a_service(
    make_user: Any, publish: Any, submit: Any, service_api: Any, token_client: Any,
    reviewer: Any
) -> None:
    publish("pricing", "r1")
    assert submit("t-1").status_code == 201
    other_service = make_user("other-service", "service")
    theirs = token_client(other_service).put("/api/v1/documents/pricing/revisions/r2",
                                             revision_body(), format="json").json()["jobs"][0]
    by_reviewer = token_client(reviewer).post("/api/v1/jobs", {"trace_ids": ["t-1"]},
                                              format="json").json()

    for url in (theirs["url"], by_reviewer["url"]):
        response = service_api.get(url)
        assert response.status_code == 404, url
        assert response.json()["detail"] == "no such job"


def test_a_publish_only_token_follows_its_jobs_but_no_one_else_s(
    make_user: Any, publish: Any, submit: Any, token_client: Any, service: Any,
    reviewer: Any
) -> None:
    publish("pricing", "r1")
    assert submit("t-1").status_code == 201
    publisher = token_client(service, ["publish"])
    mine = publisher.put("/api/v1/documents/pricing/revisions/r2",
                         revision_body(facts=[fact("trial_days", 30)]),
                         format="json").json()["jobs"][0]
    by_reviewer = token_client(reviewer).post("/api/v1/jobs", {"trace_ids": ["t-1"]},
                                              format="json").json()

    assert publisher.get(mine["url"]).status_code == 200
    assert publisher.get(by_reviewer["url"]).status_code == 404
    # A token with only `submit` starts no job and follows none.
    assert token_client(service, ["submit"]).get(mine["url"]).status_code == 403
