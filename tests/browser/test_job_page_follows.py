"""One job's page follows it while it runs: the sentence under the bar that counts the answers
with a new verdict says what the bar's own text says, without a reload (the page reloads only
once the job has ended)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_new_verdict_count_follows_a_running_job(admin_user: Any, sign_in: Any,
                                                     live_server: Any) -> None:
    from playwright.sync_api import expect

    from reviewqueue.jobs.models import Job

    job = Job.objects.create(scope=Job.Scope.DOCUMENT, document_key="pricing", trigger="manual",
                             actor_type="user", actor="user:ada", requested_by=admin_user,
                             state=Job.State.RUNNING, total=500, done=100, changed=100)
    page = sign_in("ada")
    page.goto(f"{live_server.url}/jobs/{job.pk}/")
    changed = page.locator("p[data-changed]")
    assert changed.inner_text() == "100 answers got a new verdict so far."

    # A chunk more is done; the job still runs.
    Job.objects.filter(pk=job.pk).update(done=350, changed=340)

    expect(page.locator(".job-progress-text")).to_contain_text(
        "350 of 500 re-evaluated, 340 with a new verdict", timeout=10_000)
    assert changed.inner_text() == "340 answers got a new verdict so far."
