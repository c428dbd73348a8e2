"""Everyday activity through the API (decisions of each kind, late revisions, withdrawals and
restorations, owner corrections, re-evaluations), and through the services (questions to the
owners and their replies, conflicts dismissed and reopened, tokens, accounts), leaves the
sources and records checks OK."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.accounts.services import (
    token_issue,
    token_rotate,
    user_deactivate,
    user_reactivate,
)
from reviewqueue.audit.services import SYSTEM, Actor, audit_verify
from reviewqueue.reviews.integrity import records_check
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import handoff
from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
from reviewqueue.sources.conflicts import conflict_dismiss, conflict_reopen
from reviewqueue.sources.integrity import sources_check
from reviewqueue.sources.models import Conflict
from reviewqueue.sources.services import document_restore, document_withdraw
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


def test_questions_to_the_owners_conflicts_tokens_and_accounts_verify(
    hold: Any, reviewer: Any, bob: Any, owner: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    for user, note, reply in ((reviewer, "Which is right?", "EU one."), (bob, "Still?", None),
                              (reviewer, "Again?", "Yes.")):
        handoff.review_item_send_to_owner(trace_id=trace, user=user, note=note,
                                          actor=Actor.of_user(user))
        if reply is not None:
            handoff.review_item_owner_reply(trace_id=trace, user=owner, reply=reply,
                                            actor=Actor.of_user(owner))
    with django_capture_on_commit_callbacks(execute=True):
        document_withdraw(document_key="pricing-eu", actor=Actor.of_user(owner))
    with django_capture_on_commit_callbacks(execute=True):
        document_restore(document_key="pricing-eu", actor=Actor.of_user(owner))
    conflict = Conflict.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        conflict_dismiss(conflict_id=conflict.pk, reason="two plans", user=owner,
                         actor=Actor.of_user(owner))
    with django_capture_on_commit_callbacks(execute=True):
        conflict_reopen(conflict_id=conflict.pk, actor=Actor.of_user(owner))
    answer = Answer.objects.get(trace_id=trace)
    if answer.status == "held":
        answer_decide(trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                      data=DecisionInput(action="edit", verdict_id=answer.current_verdict_id,
                                         text="In the US the trial lasts 14 days [d1].",
                                         claims=[{"key": "trial_days", "value": 14,
                                                  "cite": "d1"}]))
    token_issue(user=bob, actor=SYSTEM, name="ci")
    token_rotate(user=bob, actor=SYSTEM)
    user_deactivate(user=bob, actor=SYSTEM)
    user_reactivate(user=bob, actor=SYSTEM)

    run = audit_verify(trigger="command", requested_by="test", record=False)

    assert run.ok, run.detail
    assert run.sources_ok, [p["detail"] for p in run.sources_problems]
    assert run.records_ok, [p["detail"] for p in run.records_problems]
