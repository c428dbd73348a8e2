"""A decision and what happens to the item's lease and queue entry at the same moment."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, Decision, ReviewItem
from reviewqueue.reviews.services import decisions
from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
from reviewqueue.reviews.services.leases import NotHeld, lease_claim, lease_release
from tests.reviews.conftest import current_verdict_id, fact


def _waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


@pytest.mark.django_db(transaction=True)
def test_a_colleague_claiming_the_item_while_it_is_being_decided_is_told_it_was_decided(
    hold: Any, reviewer: Any, bob: Any, admin_user: Any, monkeypatch: Any
) -> None:
    trace = hold()
    answer = Answer.objects.get(trace_id=trace)
    lease_claim(answer=answer, user=reviewer, actor=Actor.of_user(reviewer))
    verdict_id = current_verdict_id(trace)

    lease_read = threading.Event()
    colleague_went = threading.Event()
    fresh = decisions.verdict_is_fresh

    def slow_freshness_check(*args: Any, **kwargs: Any) -> bool:
        # Alice's decision has read her lease and checks the verdict; meanwhile an admin
        # breaks the lease and Bob claims the item.
        result = fresh(*args, **kwargs)
        lease_read.set()
        assert colleague_went.wait(timeout=30)
        return result

    monkeypatch.setattr(decisions, "verdict_is_fresh", slow_freshness_check)
    results: dict[str, Any] = {}

    def alice_decides() -> None:
        try:
            results["alice"] = answer_decide(
                trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                data=DecisionInput(action="approve", verdict_id=verdict_id))
        except Exception as exc:  # reported below
            results["alice"] = exc
        finally:
            lease_read.set()
            connection.close()

    def admin_breaks_and_bob_claims() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                results["pid"] = cursor.fetchone()[0]
            item = Answer.objects.get(trace_id=trace)
            results["broken"] = lease_release(answer=item, user=admin_user,
                                              actor=Actor.of_user(admin_user), force=True)
            try:
                results["bob"] = lease_claim(answer=item, user=bob, actor=Actor.of_user(bob))
            except NotHeld as exc:
                results["bob"] = exc
        finally:
            colleague_went.set()
            connection.close()

    deciding = threading.Thread(target=alice_decides)
    deciding.start()
    assert lease_read.wait(timeout=30)
    colleague = threading.Thread(target=admin_breaks_and_bob_claims)
    colleague.start()
    # The colleague either gets through at once, or waits for the decision's lock on the item.
    while colleague.is_alive() and not ("pid" in results and _waiting_for_a_lock(results["pid"])):
        colleague.join(timeout=0.05)
    colleague_went.set()
    deciding.join(timeout=30)
    colleague.join(timeout=30)

    assert not isinstance(results["alice"], Exception), results["alice"]
    assert results["alice"].status == "approved"
    # Bob is never told that an answer decided from under him is his.
    assert isinstance(results["bob"], NotHeld), results["bob"]
    assert results["broken"] is False
    assert Decision.objects.get().reviewer == reviewer
    assert not ReviewItem.objects.filter(answer__trace_id=trace).exists()
    assert not AuditEvent.objects.filter(action="lease.broken").exists()
    assert [e.after["holder"] for e in AuditEvent.objects.filter(action="lease.claimed")] == [
        "alice"]


@pytest.mark.django_db
def test_a_decision_refused_because_the_answer_now_passes_says_it_left_the_queue(
    hold: Any, reviewer: Any, token_client: Any, publish: Any
) -> None:
    # Held only because another document of the knowledge base said 30 days.
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    seen = current_verdict_id(trace)
    # That document now agrees. (Its re-evaluation would run after commit; inside this test
    # transaction it never does, so the reviewer still sees the old verdict.)
    publish("pricing-eu", revision="r2", title="Pricing in the EU",
            facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 14 days."}])

    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions",
                                           {"action": "approve", "verdict": seen},
                                           format="json")

    assert response.status_code == 409, response.content
    body = response.json()
    assert (body["error"], body["status"], body["verdict"]["decision"]) == (
        "stale_verdict", "candidate", "candidate")
    assert not ReviewItem.objects.filter(answer__trace_id=trace).exists()
    cleared = AuditEvent.objects.get(action="review_item.cleared", trace_id=trace)
    assert cleared.before == {"status": "held"}
    assert cleared.after["status"] == "candidate"
    assert cleared.after["trigger"] == "decision"
    assert cleared.after["verdict"] == body["verdict"]["id"]
    assert not Decision.objects.exists()
