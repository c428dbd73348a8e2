"""An approved answer whose sources changed comes back to the queue even when the gate now
abstains, so that a person sees it; it can then be rejected or edited, never approved as is.

Before, a reviewer who could read a source that had just been restricted could approve the
answer again for an asker who may not read it (DESIGN step 0)."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, Decision
from tests.reviews.conftest import current_verdict_id, fact
from tests.reviews.test_decisions import decide, page_post

pytestmark = pytest.mark.django_db

PASSAGES = [{"span": "p1", "text": "The free trial lasts 14 days."},
            {"span": "p2", "text": "Support is available 24/7."}]


@pytest.fixture
def restricted_after_approval(hold: Any, reviewer: Any, token_client: Any, publish: Any,
                              django_capture_on_commit_callbacks: Any) -> str:
    trace = hold()
    assert decide(token_client(reviewer), trace, action="approve").status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", "r2", principals=["group:hr"], passages=PASSAGES,
                facts=[fact("trial_days", 14), fact("support_hours", "24/7", span="p2")])
    answer = Answer.objects.select_related("current_verdict").get(trace_id=trace)
    assert answer.status == "held"
    assert (answer.current_verdict.decision, answer.current_verdict.reason) == (
        "abstain", "unauthorized_evidence")
    return trace


def test_the_api_refuses_to_approve_a_verdict_that_abstains(
    restricted_after_approval: str, hr_reviewer: Any, token_client: Any
) -> None:
    trace = restricted_after_approval
    api = token_client(hr_reviewer)

    refused = decide(api, trace, action="approve")

    assert refused.status_code == 409
    body = refused.json()
    assert (body["error"], body["reason"]) == ("approve_refused", "unauthorized_evidence")
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert Decision.objects.filter(answer__trace_id=trace).count() == 1  # the first approval
    rejected = decide(api, trace, action="reject", reason="sensitive")
    assert rejected.status_code == 201, rejected.content
    assert Answer.objects.get(trace_id=trace).status == "rejected"


def test_the_page_offers_no_approval_and_says_why(
    restricted_after_approval: str, hr_reviewer: Any, login: Any
) -> None:
    trace = restricted_after_approval
    client = login(hr_reviewer)

    html = client.get(f"/answers/{trace}/").content.decode()
    posted = page_post(client, trace, "approve")

    assert 'data-action="approve"' not in html
    assert "so it cannot be approved. Reject it, or edit it" in html
    assert posted.status_code == 409
    assert "Nothing was recorded: the gate abstains on this answer" in posted.content.decode()
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert current_verdict_id(trace) == Answer.objects.get(trace_id=trace).current_verdict_id


def test_an_abstaining_verdict_with_a_claim_that_fails_is_refused_not_asked_for_despite(
    hold: Any, reviewer: Any, token_client: Any, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The cited document is withdrawn after the approval: the gate abstains, and the claim
    no longer holds. `despite` could not help, so the API does not ask for it."""
    trace = hold()
    api = token_client(reviewer)
    assert decide(api, trace, action="approve").status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        assert service_api.delete("/api/v1/documents/pricing").status_code in (200, 204)
    assert Answer.objects.get(trace_id=trace).current_verdict.decision == "abstain"

    refused = decide(api, trace, action="approve")
    assert refused.status_code == 409, refused.content
    assert refused.json()["error"] == "approve_refused"
    assert "despite" not in refused.content.decode()
