"""Everyday activity through the API (decisions of each kind, late revisions, withdrawals and
restorations, owner corrections, re-evaluations) leaves the sources and records checks OK."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.integrity import records_check
from reviewqueue.sources.integrity import sources_check
from tests.conftest import revision_body
from tests.reviews.conftest import fact, owner_corrects
from tests.reviews.test_decisions import decide

pytestmark = pytest.mark.django_db


def test_everyday_activity_verifies(
    hold: Any, reviewer: Any, owner: Any, token_client: Any, service_api: Any, publish: Any,
    make_user: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("oscar", "owner")
    api = token_client(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        for t in ("t-1", "t-2", "t-3", "t-4"):
            hold(t)
    with django_capture_on_commit_callbacks(execute=True):
        assert decide(api, "t-1", action="approve").status_code == 201
        assert decide(api, "t-2", action="reject", reason="incorrect").status_code == 201
        version = __import__("reviewqueue.reviews.models", fromlist=["Answer"]).Answer.objects.get(
            trace_id="t-3").current_version
        r = decide(api, "t-3", action="edit", answer=version.text + " More.", claims=version.claims)
        assert r.status_code == 201, r.content
    # a late revision, a withdrawal (twice), a restoration, a new owner, a replay
    with django_capture_on_commit_callbacks(execute=True):
        assert service_api.put("/api/v1/documents/pricing/revisions/r0", revision_body(
            updated_at="2026-09-01T09:00:00Z"), format="json").status_code == 201
        assert service_api.delete("/api/v1/documents/pricing-eu").status_code == 200
        assert service_api.delete("/api/v1/documents/pricing-eu").status_code == 200
        # a late revision of a withdrawn document
        assert service_api.put("/api/v1/documents/pricing-eu/revisions/r0", revision_body(
            title="Pricing in the EU", updated_at="2026-09-01T09:00:00Z"),
            format="json").status_code == 201
        assert service_api.post("/api/v1/documents/pricing-eu/restore", {},
                                format="json").status_code == 200
        assert service_api.put("/api/v1/documents/pricing/revisions/r2", revision_body(
            owner="oscar", principals=["group:sales", "*"], facts=[fact("trial_days", 30)],
            updated_at="2026-11-01T09:00:00Z"), format="json").status_code == 201
        assert service_api.put("/api/v1/documents/pricing/revisions/r2", revision_body(
            owner="oscar", principals=["*", "group:sales"], facts=[fact("trial_days", 30)],
            updated_at="2026-11-01T09:00:00Z"), format="json").status_code == 200
        # withdraw then republish (ends the withdrawal)
        assert service_api.delete("/api/v1/documents/pricing").status_code == 200
        assert service_api.put("/api/v1/documents/pricing/revisions/r3", revision_body(
            owner="olivia", facts=[fact("trial_days", 14)],
            updated_at="2026-11-02T09:00:00Z"), format="json").status_code == 201
        owner_corrects("pricing", owner, 21, "The free trial lasts 21 days.", note="21")
    with django_capture_on_commit_callbacks(execute=True):
        for t in ("t-1", "t-3", "t-4"):
            r = decide(api, t, action="approve", despite=True)
            assert r.status_code in (201, 409), r.content
    sources = sources_check()
    assert sources.problems == [], [p.detail for p in sources.problems]
    records = records_check()
    assert records.problems == [], [p.detail for p in records.problems]
