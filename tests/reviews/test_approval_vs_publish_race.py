"""An approval never lands on a verdict a publication has made stale, however the two interleave.

A decision checks its verdict's freshness under the audit chain's lock, which every change to
the sources holds from its audit event to its commit: a publication either commits before the
check (the approval is refused as stale) or after the decision (and sends the answer back).
Before, a publication committing between the check and the decision's commit let the approval
through on the old revision's verdict, and the service was told `approved`."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import decisions
from reviewqueue.reviews.services.decisions import DecisionInput, StaleVerdict, answer_decide
from reviewqueue.reviews.services.leases import lease_claim
from reviewqueue.sources.models import Revision
from reviewqueue.webhooks.models import WebhookEndpoint
from tests.conftest import revision_body
from tests.reviews.conftest import current_verdict_id, fact


@pytest.mark.django_db(transaction=True)
def test_an_approval_never_commits_after_a_revision_that_makes_its_verdict_stale(
    hold: Any, reviewer: Any, service_api: Any, monkeypatch: Any, settings: Any
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = ["127.0.0.1"]
    WebhookEndpoint.objects.create(url="http://127.0.0.1:9/in", secret="s" * 32)
    trace = hold()  # cites pricing r1 (14 days) and pricing-eu r1 (30 days): held
    seen = current_verdict_id(trace)
    # Alice opened the item page, which claimed it (the usual way to decide).
    lease_claim(answer=Answer.objects.get(trace_id=trace), user=reviewer,
                actor=Actor.of_user(reviewer))

    checked = threading.Event()
    go_on = threading.Event()
    fresh = decisions.verdict_is_fresh

    def freshness_then_wait(*args: Any, **kwargs: Any) -> bool:
        result = fresh(*args, **kwargs)  # fresh: r1 is current
        checked.set()
        assert go_on.wait(timeout=30)
        return result

    monkeypatch.setattr(decisions, "verdict_is_fresh", freshness_then_wait)
    results: dict[str, Any] = {}

    def alice_approves() -> None:
        try:
            results["alice"] = answer_decide(
                trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                data=DecisionInput(action="approve", verdict_id=seen))
        except Exception as exc:
            results["alice"] = exc
        finally:
            checked.set()
            connection.close()

    def service_publishes() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                results["publisher_pid"] = cursor.fetchone()[0]
            results["publish"] = _publish_thirty_days(service_api)
        finally:
            connection.close()

    deciding = threading.Thread(target=alice_approves)
    deciding.start()
    assert checked.wait(timeout=30)
    publishing = threading.Thread(target=service_publishes)
    publishing.start()
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
    # What happened: the approval went in after r2 was published, on the r1 verdict.
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


def _waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


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
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                results["pid"] = cursor.fetchone()[0]
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
