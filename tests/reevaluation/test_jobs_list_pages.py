"""The jobs list: every job reachable a page at a time, and a job started by another
document's change says which."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.jobs.models import Job
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def make_jobs(count: int, admin_user: Any) -> list[Job]:
    return [Job.objects.create(scope=Job.Scope.DOCUMENT, document_key=f"doc-{n:03d}",
                               trigger="manual", actor_type="user", actor="user:ada",
                               requested_by=admin_user, state=Job.State.FINISHED)
            for n in range(count)]


def listed(page: str) -> list[str]:
    return re.findall(r"<code>(doc-\d+)</code>", page)


def test_older_jobs_are_a_page_away_and_every_one_is_listed_once(admin_client: Any,
                                                                admin_user: Any) -> None:
    made = make_jobs(230, admin_user)
    seen: list[str] = []
    url, pages, queries = "/jobs/", 0, []
    while url:
        with CaptureQueriesContext(connection) as captured:
            page = admin_client.get(url).content.decode()
        queries.append(len(captured))
        pages += 1
        seen += listed(page)
        older = re.search(r'href="\?before=([0-9a-f-]+)" data-older', page)
        url = f"/jobs/?before={older.group(1)}" if older else ""
    assert pages == 3
    assert seen == [j.document_key for j in reversed(made)]
    # The same queries on every page, and one to find the job a later page starts after.
    assert queries == [queries[0], queries[0] + 1, queries[0] + 1], queries
    assert "No older job." not in page and "← Newest" in page


@pytest.mark.parametrize(("before", "status", "said"), [
    ("not-a-uuid", 400, "not a job id"),
    ("00000000-0000-0000-0000-000000000000", 200, "No older job."),
])
def test_a_page_from_a_job_that_is_not_one_says_so(admin_client: Any, admin_user: Any,
                                                   before: str, status: int, said: str) -> None:
    make_jobs(3, admin_user)
    response = admin_client.get(f"/jobs/?before={before}")
    assert response.status_code == status
    assert said in response.content.decode()


def test_a_job_started_by_another_document_s_change_names_that_document(
    make_user: Any, publish: Any, submit: Any, admin_client: Any,
    django_capture_on_commit_callbacks: Any
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("promo", owner="oscar", facts=[fact("trial_days", 30)], title="Promo")
    with django_capture_on_commit_callbacks(execute=True):
        publish("promo", "r2", owner="oscar", facts=[fact("trial_days", 21)], title="Promo",
                updated_at="2026-10-02T09:00:00Z")

    job = Job.objects.filter(document_key="pricing", cause="promo").latest("created_at")
    own = Job.objects.filter(document_key="promo", cause="promo").latest("created_at")
    detail = admin_client.get(job.get_absolute_url()).content.decode()
    assert ('Revision published <span class="muted" data-cause>(after a change to '
            '<code>promo</code>)') in detail
    assert "data-cause" not in admin_client.get(own.get_absolute_url()).content.decode()
    listing = admin_client.get("/jobs/").content.decode()
    # Both of pricing's jobs: when promo's first revision opened the conflict, and now.
    assert listing.count("after a change to <code>promo</code>") == 2 == Job.objects.filter(
        document_key="pricing", cause="promo").count()


def test_a_later_page_starts_its_scan_where_the_last_page_ended(admin_user: Any) -> None:
    """Not a filter over every newer job: page 151 of 200 reads its 101 rows."""
    from reviewqueue.jobs.selectors import jobs_page

    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO jobs_job (id, scope, document_key, trigger, actor_type, actor, "
            "requested_by_id, state, total, done, failed, changed, created_at, cause) "
            "SELECT gen_random_uuid(), 'document', 'doc-' || n, 'manual', 'user', 'user:ada', "
            "%s, 'finished', 0, 0, 0, 0, now() - make_interval(secs => n), '' "
            "FROM generate_series(1, 20000) n", [admin_user.pk])
        cursor.execute("ANALYZE jobs_job")
    before = Job.objects.order_by("-created_at")[15000]
    with CaptureQueriesContext(connection) as captured:
        assert len(jobs_page(before=before)[0]) == 100
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT TEXT) {captured.captured_queries[-1]['sql']}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    removed = [int(line.split(":")[1]) for line in plan.splitlines()
               if "Rows Removed by Filter" in line]
    assert all(n <= 1 for n in removed), plan
