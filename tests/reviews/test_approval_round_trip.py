"""An approved answer whose sources change and then come back to exactly what the reviewer
approved (a document withdrawn, then restored) is approved again: the gate gives back the very
verdict the approval was made on, so there is nothing new for a reviewer to look at."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import Answer, ReviewItem
from tests.reviews.test_decisions import decide

pytestmark = pytest.mark.django_db


def state(trace: str) -> tuple[str, int, bool]:
    answer = Answer.objects.get(trace_id=trace)
    return (answer.status, answer.current_verdict_id,
            ReviewItem.objects.filter(answer=answer).exists())


@pytest.fixture
def approved(hold: Any, reviewer: Any, token_client: Any) -> tuple[str, int]:
    """t-1, held over pricing (cited) against pricing-eu (retrieved), approved by alice."""
    trace = hold()
    verdict = Answer.objects.get(trace_id=trace).current_verdict_id
    assert decide(token_client(reviewer), trace, action="approve").status_code == 201
    return trace, verdict


def round_trip(service_api: Any, document: str, capture: Any) -> tuple[str, int, bool]:
    """Withdraw `document`, say what the answer became, restore it."""
    with capture(execute=True):
        service_api.delete(f"/api/v1/documents/{document}")
    meanwhile = state("t-1")
    with capture(execute=True):
        assert service_api.post(f"/api/v1/documents/{document}/restore").status_code == 200
    return meanwhile


def test_the_approval_stands_when_the_verdict_it_was_made_on_comes_back(
    approved: tuple[str, int], service_api: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    trace, verdict = approved
    # Without the other document nothing disagrees: the gate lets the answer through.
    meanwhile = round_trip(service_api, "pricing-eu", django_capture_on_commit_callbacks)
    assert meanwhile[0] == "approved" and meanwhile[1] != verdict
    assert state(trace) == ("approved", verdict, False)
    event = AuditEvent.objects.filter(action="verdict.created", trace_id=trace).latest("seq")
    assert (event.before["status"], event.after["status"]) == ("approved", "approved")


def test_an_approval_sent_back_to_the_queue_is_restored_with_its_verdict(
    approved: tuple[str, int], service_api: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    trace, verdict = approved
    # The cited document withdrawn: the answer goes back to reviewers, showing the approval.
    meanwhile = round_trip(service_api, "pricing", django_capture_on_commit_callbacks)
    assert meanwhile[0] == "held" and meanwhile[2]
    assert state(trace) == ("approved", verdict, False)


def test_a_new_verdict_still_sends_an_approved_answer_back(
    approved: tuple[str, int], publish: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    """Only the verdict approved counts: a new revision is something new to look at."""
    from tests.reviews.conftest import fact

    trace, verdict = approved
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 45)],
                passages=[{"span": "p1", "text": "In the EU the free trial lasts 45 days."}])
    status, now, queued = state(trace)
    assert (status, queued) == ("held", True) and now != verdict


def test_an_approval_back_in_the_queue_stays_there_when_the_gate_then_abstains(
    approved: tuple[str, int], publish: Any, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """A third document sends the approved answer back to the queue; then its cited document
    is withdrawn, and the gate abstains. The answer stays with the reviewers, approval shown,
    as it does when the withdrawal comes first; when both changes are undone, the verdict
    approved comes back, and so does the approval."""
    from tests.reviews.conftest import fact

    trace, verdict = approved
    with django_capture_on_commit_callbacks(execute=True):
        publish("extra", facts=[fact("trial_days", 60)])
    meanwhile = round_trip(service_api, "pricing", django_capture_on_commit_callbacks)
    assert meanwhile[0] == "held" and meanwhile[2]
    assert Answer.objects.get(trace_id=trace).current_verdict.decision == "review"
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing")
    abstained = Answer.objects.select_related("current_verdict").get(trace_id=trace)
    assert (abstained.status, abstained.current_verdict.decision) == ("held", "abstain")
    assert ReviewItem.objects.get(answer=abstained).earlier_approval is not None
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/extra")
        assert service_api.post("/api/v1/documents/pricing/restore").status_code == 200
    assert state(trace) == ("approved", verdict, False)


def test_an_approval_back_in_the_queue_stands_again_when_its_verdict_comes_back(
    approved: tuple[str, int], publish: Any, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Back in the queue over a third document; then nothing disagrees any more and the gate
    lets it through by itself (candidate, the approval its history). When the sources come
    back to the verdict approved, the approval stands again."""
    from tests.reviews.conftest import fact

    trace, verdict = approved
    with django_capture_on_commit_callbacks(execute=True):
        publish("extra", facts=[fact("trial_days", 60)])
    assert state(trace)[0] == "held"
    with django_capture_on_commit_callbacks(execute=True):
        service_api.delete("/api/v1/documents/pricing-eu")
        service_api.delete("/api/v1/documents/extra")
    assert state(trace)[0] == "candidate" and not state(trace)[2]
    with django_capture_on_commit_callbacks(execute=True):
        assert service_api.post("/api/v1/documents/pricing-eu/restore").status_code == 200
    assert state(trace) == ("approved", verdict, False)
