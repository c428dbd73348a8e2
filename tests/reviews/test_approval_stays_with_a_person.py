"""An approval stays with a person (DESIGN invariant 7), and only an approval is shown as one.

An approved answer the gate has since let through by itself (a candidate, the approval its
history) goes back to the queue when the gate then abstains, with the approval shown, as it
does straight from approved. An edit the gate still held approved nothing: it is never shown as
an earlier approval, nor keeps an abstaining answer in the queue."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, ReviewItem
from tests.reviews.conftest import fact
from tests.reviews.test_approval_round_trip import approved  # noqa: F401
from tests.reviews.test_decisions import decide

pytestmark = pytest.mark.django_db

APPROVED_BEFORE = "alice approved an earlier verdict on"
PRICING_ONLY = [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}]


def seen(trace: str, login: Any, reviewer: Any) -> tuple[str, str | None, bool]:
    """The answer's status and gate decision, and whether its page shows an earlier approval."""
    answer = Answer.objects.select_related("current_verdict").get(trace_id=trace)
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    return answer.status, answer.current_verdict.decision, APPROVED_BEFORE in page


def queued(trace: str) -> bool:
    return ReviewItem.objects.filter(answer__trace_id=trace).exists()


def test_an_approved_answer_let_through_goes_back_to_the_queue_when_the_gate_abstains(
    approved: tuple[str, int], publish: Any, service_api: Any, login: Any,  # noqa: F811
    reviewer: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    trace, _ = approved
    # A third document sends it back to the queue; then nothing disagrees any more.
    with django_capture_on_commit_callbacks(execute=True):
        publish("extra", facts=[fact("trial_days", 60)])
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing-eu")
        service_api.delete("/api/v1/documents/extra")
    assert seen(trace, login, reviewer) == ("candidate", "candidate", True)
    # The cited document is withdrawn: the gate abstains on an answer alice approved.
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing")
    assert seen(trace, login, reviewer) == ("held", "abstain", True)
    assert queued(trace)
    html = login(reviewer).get("/").content.decode()
    assert "Approved before" in html


def test_an_edit_that_approved_goes_back_to_the_queue_when_the_gate_abstains(
    hold: Any, reviewer: Any, token_client: Any, publish: Any, service_api: Any, login: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    # Alice edits the answer to what nobody disputes: the gate lets it through, approved.
    edited = decide(token_client(reviewer), trace, action="edit",
                    answer="Support is available 24/7 [d1].",
                    claims=[{"key": "support_hours", "value": "24/7", "cite": "d1"}])
    assert edited.json()["status"] == "approved", edited.content
    # Another document disagrees, then is withdrawn: back to the queue, then let through.
    with django_capture_on_commit_callbacks(execute=True):
        publish("support", facts=[fact("support_hours", "9-5")])
    assert seen(trace, login, reviewer)[0] == "held"
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/support")
    # Let through by itself, the approving edit is shown as its history.
    assert seen(trace, login, reviewer) == ("candidate", "candidate", True)
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing")
    assert seen(trace, login, reviewer) == ("held", "abstain", True)
    assert queued(trace)


@pytest.fixture
def edited_and_back(hold: Any, reviewer: Any, token_client: Any, service_api: Any,
                    django_capture_on_commit_callbacks: Any) -> str:
    """t-1, held for the knowledge base (pricing-eu, not cited, says 30 days); alice edits
    the wording and the gate still holds it. pricing-eu is withdrawn (the gate lets the answer
    through by itself) and restored (held again)."""
    trace = hold(retrieved=PRICING_ONLY)
    edited = decide(token_client(reviewer), trace, action="edit",
                    answer="The free trial is 14 days long [d1].",
                    claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert edited.json()["status"] == "held", edited.content
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing-eu")
    assert Answer.objects.get(trace_id=trace).status == "candidate"
    with django_capture_on_commit_callbacks(execute=True):
        assert service_api.post("/api/v1/documents/pricing-eu/restore").status_code == 200
    return trace


def test_an_edit_the_gate_still_held_is_not_shown_as_an_approval(
    edited_and_back: str, login: Any, reviewer: Any,
) -> None:
    trace = edited_and_back
    assert seen(trace, login, reviewer) == ("held", "review", False)
    assert queued(trace)
    assert "Approved before" not in login(reviewer).get("/").content.decode()


def test_an_edit_the_gate_still_held_does_not_keep_an_abstaining_answer_queued(
    edited_and_back: str, service_api: Any, login: Any, reviewer: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = edited_and_back
    # The cited document is withdrawn: nobody approved the answer, the gate abstains.
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing")
    assert seen(trace, login, reviewer) == ("abstained", "abstain", False)
    assert not queued(trace)
