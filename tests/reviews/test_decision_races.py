"""A decision and what happens at the same moment: to the item's lease and queue entry, or to
the sources its verdict rests on."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, Decision, ReviewItem
from reviewqueue.reviews.services import decisions
from reviewqueue.reviews.services.decisions import DecisionInput, StaleVerdict, answer_decide
from reviewqueue.reviews.services.leases import NotHeld, lease_claim, lease_release
from reviewqueue.sources.models import Revision
from tests.conftest import revision_body
from tests.reviews.conftest import current_verdict_id, fact


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid: int = cursor.fetchone()[0]
    return pid


def _waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def _paused_after_freshness(monkeypatch: Any) -> tuple[threading.Event, threading.Event]:
    """Decisions wait once they have checked their verdict's freshness: set the first event
    when one gets there, and go on when the second is set."""
    checked, go_on = threading.Event(), threading.Event()
    fresh = decisions.verdict_is_fresh

    def check_then_wait(*args: Any, **kwargs: Any) -> bool:
        result = fresh(*args, **kwargs)
        checked.set()
        assert go_on.wait(timeout=30)
        return result

    monkeypatch.setattr(decisions, "verdict_is_fresh", check_then_wait)
    return checked, go_on


def _approving(results: dict[str, Any], checked: threading.Event, trace: str, reviewer: Any,
               verdict_id: int) -> threading.Thread:
    """A thread in which the reviewer approves `verdict_id`: its outcome, or what it raised,
    in results["alice"]."""
    def approve() -> None:
        try:
            results["alice"] = answer_decide(
                trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                data=DecisionInput(action="approve", verdict_id=verdict_id))
        except Exception as exc:  # reported by the test
            results["alice"] = exc
        finally:
            checked.set()
            connection.close()

    return threading.Thread(target=approve)


def _approving_then(results: dict[str, Any], paused: threading.Event, trace: str,
                    reviewer: Any, verdict_id: int, meanwhile: Callable[[], None]
                    ) -> tuple[threading.Thread, threading.Thread]:
    """The reviewer approves `verdict_id` in a thread (`_approving`); once that has paused
    (`paused` is set), `meanwhile` runs in a second thread. Both threads, started."""
    deciding = _approving(results, paused, trace, reviewer, verdict_id)
    deciding.start()
    assert paused.wait(timeout=30)
    other = threading.Thread(target=meanwhile)
    other.start()
    return deciding, other


@pytest.mark.django_db(transaction=True)
def test_a_colleague_claiming_the_item_while_it_is_being_decided_is_told_it_was_decided(
    hold: Any, reviewer: Any, bob: Any, admin_user: Any, monkeypatch: Any
) -> None:
    trace = hold()
    answer = Answer.objects.get(trace_id=trace)
    lease_claim(answer=answer, user=reviewer, actor=Actor.of_user(reviewer))
    verdict_id = current_verdict_id(trace)

    # Alice's decision reads her lease and checks the verdict; meanwhile an admin breaks the
    # lease and Bob claims the item.
    lease_read, colleague_went = _paused_after_freshness(monkeypatch)
    results: dict[str, Any] = {}

    def admin_breaks_and_bob_claims() -> None:
        try:
            results["pid"] = _backend_pid()
            item = Answer.objects.get(trace_id=trace)
            try:
                results["broken"] = lease_release(answer=item, user=admin_user,
                                                  actor=Actor.of_user(admin_user), force=True)
            except NotHeld as exc:  # it waited for the decision's lock on the item
                results["broken"] = exc
            try:
                results["bob"] = lease_claim(answer=item, user=bob, actor=Actor.of_user(bob))
            except NotHeld as exc:
                results["bob"] = exc
        finally:
            colleague_went.set()
            connection.close()

    deciding, colleague = _approving_then(results, lease_read, trace, reviewer, verdict_id,
                                          admin_breaks_and_bob_claims)
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
    # The break finds nothing to end, or (having waited for the decision) no item at all.
    assert results["broken"] is False or isinstance(results["broken"], NotHeld)
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


@pytest.mark.django_db(transaction=True)
def test_an_approval_never_commits_after_a_revision_that_makes_its_verdict_stale(
    hold: Any, reviewer: Any, service_api: Any, monkeypatch: Any
) -> None:
    """Alice's decision has checked its verdict (fresh: r1 is current) when a publication of
    r2 starts. Before the check took the chain's lock, r2 committed in between and the
    approval landed on the r1 verdict (the service was told `approved`)."""
    trace = hold()  # cites pricing r1 (14 days) and pricing-eu r1 (30 days): held
    seen = current_verdict_id(trace)
    # Alice opened the item page, which claimed it (the usual way to decide).
    lease_claim(answer=Answer.objects.get(trace_id=trace), user=reviewer,
                actor=Actor.of_user(reviewer))

    checked, go_on = _paused_after_freshness(monkeypatch)
    results: dict[str, Any] = {}

    def service_publishes() -> None:
        try:
            results["publisher_pid"] = _backend_pid()
            results["publish"] = _publish_thirty_days(service_api)
        finally:
            connection.close()

    deciding, publishing = _approving_then(results, checked, trace, reviewer, seen,
                                           service_publishes)
    # Wait until r2 is committed (its fan-out then waits for the answer's lock), or until the
    # publish waits for a lock the decision holds (then it cannot commit before the decision).
    deadline = time.monotonic() + 30
    while not Revision.objects.filter(document__key="pricing", revision="r2").exists():
        if "publisher_pid" in results and _waiting_for_a_lock(results["publisher_pid"]):
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    go_on.set()
    deciding.join(timeout=60)
    publishing.join(timeout=60)

    published = AuditEvent.objects.get(action="revision.published", document_id="pricing",
                                       after__current_revision="r2")
    approvals = list(AuditEvent.objects.filter(action="decision.approve", trace_id=trace))
    # Either the approval came first (and the publish then sent the answer back to the queue)
    # or it was refused as stale: never an approval recorded after r2 became current.
    assert not [e for e in approvals if e.seq > published.seq], results["alice"]
    if not approvals:
        assert isinstance(results["alice"], StaleVerdict), results["alice"]


def _publish_thirty_days(service_api: Any) -> int:
    """pricing r2 says 30 days: an answer's claim of 14 no longer holds."""
    return service_api.put(
        "/api/v1/documents/pricing/revisions/r2",
        revision_body(facts=[fact("trial_days", 30)],
                      passages=[{"span": "p1", "text": "The free trial lasts 30 days."}],
                      updated_at="2026-11-01T09:00:00Z"),
        format="json").status_code


@pytest.mark.django_db(transaction=True)
def test_an_approval_sent_while_a_publish_is_committing_is_not_applied(
    hold: Any, reviewer: Any, service_api: Any, token_client: Any, monkeypatch: Any,
) -> None:
    """No hook in the decision: the publish is merely slow between its audit event and its
    commit (conflicts refreshed, jobs recorded), and the reviewer's approval arrives then."""
    from reviewqueue.sources import services as source_services

    trace = hold()
    seen = current_verdict_id(trace)
    alice = token_client(reviewer)
    assert alice.post(f"/api/v1/answers/{trace}/claim", {}, format="json").status_code == 200

    in_publish = threading.Event()
    finish_publish = threading.Event()
    real = source_services._after_content_change

    def slow_after_content_change(**kwargs: Any) -> Any:
        result = real(**kwargs)
        in_publish.set()  # r2 is written, its audit event appended; not committed yet
        assert finish_publish.wait(timeout=30)
        return result

    monkeypatch.setattr(source_services, "_after_content_change", slow_after_content_change)
    results: dict[str, Any] = {}

    def service_publishes() -> None:
        try:
            results["publish"] = _publish_thirty_days(service_api)
        finally:
            in_publish.set()
            connection.close()

    def alice_approves() -> None:
        try:
            results["pid"] = _backend_pid()
            response = alice.post(f"/api/v1/answers/{trace}/decisions",
                                  {"action": "approve", "verdict": seen, "despite": True},
                                  format="json")
            results["alice"] = (response.status_code, response.json())
        finally:
            connection.close()

    publishing = threading.Thread(target=service_publishes)
    publishing.start()
    assert in_publish.wait(timeout=30)
    deciding = threading.Thread(target=alice_approves)
    deciding.start()
    # Alice's decision has checked its verdict (r1 is still what is committed) and waits.
    deadline = time.monotonic() + 30
    while not ("pid" in results and _waiting_for_a_lock(results["pid"])):
        assert deciding.is_alive() and time.monotonic() < deadline, results
        time.sleep(0.05)
    finish_publish.set()
    publishing.join(timeout=60)
    deciding.join(timeout=60)

    status, body = results["alice"]
    published = AuditEvent.objects.get(action="revision.published", document_id="pricing",
                                       after__current_revision="r2")
    assert not AuditEvent.objects.filter(action="decision.approve", trace_id=trace,
                                         seq__gt=published.seq).exists()
    assert status == 409, body
