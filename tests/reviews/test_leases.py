"""Leases: one reviewer at a time per held answer, for REVIEW_LEASE_SECONDS."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, Decision, ReviewItem
from reviewqueue.reviews.services.leases import (
    LeasedByOther,
    NotHeld,
    lease_claim,
    lease_release,
)
from tests.reviews.test_decisions import page_post

pytestmark = pytest.mark.django_db


def claim(trace_id: str, user: Any) -> Any:
    answer = Answer.objects.get(trace_id=trace_id)
    return lease_claim(answer=answer, user=user, actor=Actor.of_user(user))


def test_a_claim_holds_the_item_for_the_lease_setting(hold: Any, reviewer: Any,
                                                      settings: Any) -> None:
    settings.REVIEW_LEASE_SECONDS = 600
    trace = hold()
    before = timezone.now()
    lease = claim(trace, reviewer)
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.leased_by == reviewer
    assert lease.mine and lease.holder == "alice"
    assert dt.timedelta(seconds=599) < item.lease_until - before < dt.timedelta(seconds=610)


def test_a_claim_is_audited_without_any_text(hold: Any, reviewer: Any) -> None:
    trace = hold()
    claim(trace, reviewer)
    event = AuditEvent.objects.get(action="lease.claimed")
    assert event.trace_id == trace
    assert event.actor == "user:alice"
    assert event.after["holder"] == "alice"
    assert event.before == {"holder": None}


def test_renewing_ones_own_lease_extends_it_without_a_new_audit_event(
    hold: Any, reviewer: Any
) -> None:
    trace = hold()
    first = claim(trace, reviewer)
    second = claim(trace, reviewer)
    assert second.until >= first.until
    assert AuditEvent.objects.filter(action="lease.claimed").count() == 1


def test_the_second_reviewer_is_told_who_holds_it_and_until_when(
    hold: Any, reviewer: Any, bob: Any
) -> None:
    trace = hold()
    lease = claim(trace, reviewer)
    with pytest.raises(LeasedByOther) as caught:
        claim(trace, bob)
    assert caught.value.holder == "alice"
    assert caught.value.until == lease.until
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by == reviewer


def test_an_expired_lease_is_free_for_the_next_reviewer(hold: Any, reviewer: Any,
                                                        bob: Any) -> None:
    trace = hold()
    claim(trace, reviewer)
    ReviewItem.objects.filter(answer__trace_id=trace).update(
        lease_until=timezone.now() - dt.timedelta(seconds=1))
    lease = claim(trace, bob)
    assert lease.holder == "bob"
    event = AuditEvent.objects.filter(action="lease.claimed").order_by("-seq").first()
    assert event.before["holder"] == "alice"
    assert event.before["expired"] is True


def test_claiming_an_answer_that_is_not_held_is_refused(publish: Any, submit: Any,
                                                        reviewer: Any) -> None:
    from tests.reviews.conftest import fact

    publish(facts=[fact()])
    submit("cand", as_of=None)
    assert Answer.objects.get(trace_id="cand").status == "candidate"
    with pytest.raises(NotHeld):
        claim("cand", reviewer)


def test_releasing_frees_the_item_and_is_audited(hold: Any, reviewer: Any) -> None:
    trace = hold()
    claim(trace, reviewer)
    answer = Answer.objects.get(trace_id=trace)
    assert lease_release(answer=answer, user=reviewer, actor=Actor.of_user(reviewer)) is True
    item = ReviewItem.objects.get(answer=answer)
    assert item.leased_by is None and item.lease_until is None
    assert AuditEvent.objects.filter(action="lease.released", trace_id=trace).count() == 1


def test_releasing_a_free_item_does_nothing(hold: Any, reviewer: Any) -> None:
    trace = hold()
    answer = Answer.objects.get(trace_id=trace)
    events = AuditEvent.objects.count()
    assert lease_release(answer=answer, user=reviewer, actor=Actor.of_user(reviewer)) is False
    assert AuditEvent.objects.count() == events


def test_a_reviewer_cannot_release_a_colleagues_lease(hold: Any, reviewer: Any,
                                                      bob: Any) -> None:
    trace = hold()
    claim(trace, reviewer)
    answer = Answer.objects.get(trace_id=trace)
    with pytest.raises(LeasedByOther):
        lease_release(answer=answer, user=bob, actor=Actor.of_user(bob))
    with pytest.raises(Exception, match="admin"):
        lease_release(answer=answer, user=bob, actor=Actor.of_user(bob), force=True)
    assert ReviewItem.objects.get(answer=answer).leased_by == reviewer


def test_an_admin_breaks_a_lease_and_the_break_is_audited(hold: Any, reviewer: Any,
                                                          admin_user: Any) -> None:
    trace = hold()
    claim(trace, reviewer)
    answer = Answer.objects.get(trace_id=trace)
    assert lease_release(answer=answer, user=admin_user, actor=Actor.of_user(admin_user),
                         force=True) is True
    assert ReviewItem.objects.get(answer=answer).leased_by is None
    event = AuditEvent.objects.get(action="lease.broken")
    assert event.actor == "user:ada"
    assert event.before["holder"] == "alice"


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_racing_for_one_item_exactly_one_wins(hold: Any, reviewer: Any,
                                                            bob: Any) -> None:
    trace = hold()
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def race(user: Any) -> None:
        try:
            barrier.wait(timeout=10)
            results[user.username] = claim(trace, user)
        except LeasedByOther as exc:
            results[user.username] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(u,)) for u in (reviewer, bob)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    winners = [name for name, r in results.items() if not isinstance(r, LeasedByOther)]
    losers = [r for r in results.values() if isinstance(r, LeasedByOther)]
    assert len(winners) == 1 and len(losers) == 1
    assert losers[0].holder == winners[0]
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by.username == winners[0]
    assert AuditEvent.objects.filter(action="lease.claimed").count() == 1


# --- The API --------------------------------------------------------------------------------

def test_api_claim_returns_the_lease(hold: Any, reviewer: Any, token_client: Any) -> None:
    trace = hold()
    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/claim")
    assert response.status_code == 200, response.content
    assert response.json()["lease"]["holder"] == "alice"


def test_api_claim_by_a_second_reviewer_is_409_with_holder_and_until(
    hold: Any, reviewer: Any, bob: Any, token_client: Any
) -> None:
    trace = hold()
    token_client(reviewer).post(f"/api/v1/answers/{trace}/claim")
    response = token_client(bob).post(f"/api/v1/answers/{trace}/claim")
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "leased_by_other"
    assert body["holder"] == "alice"
    assert dt.datetime.fromisoformat(body["until"]) > timezone.now()


def test_api_release_by_an_admin_with_force_breaks_the_lease(
    hold: Any, reviewer: Any, admin_user: Any, token_client: Any
) -> None:
    trace = hold()
    token_client(reviewer).post(f"/api/v1/answers/{trace}/claim")
    response = token_client(admin_user).post(f"/api/v1/answers/{trace}/release",
                                             {"force": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["released"] is True


def test_api_force_release_by_a_reviewer_is_403(hold: Any, reviewer: Any, bob: Any,
                                                token_client: Any) -> None:
    trace = hold()
    token_client(reviewer).post(f"/api/v1/answers/{trace}/claim")
    response = token_client(bob).post(f"/api/v1/answers/{trace}/release", {"force": True},
                                      format="json")
    assert response.status_code == 403


def test_a_token_without_the_review_scope_cannot_claim(hold: Any, reviewer: Any,
                                                       token_client: Any) -> None:
    trace = hold()
    response = token_client(reviewer, scopes=["read"]).post(f"/api/v1/answers/{trace}/claim")
    assert response.status_code == 403


# --- The pages ------------------------------------------------------------------------------

def test_the_loser_of_a_claim_sees_who_holds_the_item(hold: Any, reviewer: Any, bob: Any,
                                                      login: Any) -> None:
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/claim")
    response = login(bob).post(f"/answers/{trace}/claim", follow=True)
    html = response.content.decode()
    assert "alice is working on this" in html
    assert 'data-action="approve"' not in html


def test_the_item_page_renews_the_lease_on_request(hold: Any, reviewer: Any,
                                                   login: Any) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    ReviewItem.objects.filter(answer__trace_id=trace).update(
        lease_until=timezone.now() + dt.timedelta(seconds=5))
    response = client.post(f"/answers/{trace}/renew")
    assert response.status_code == 200
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.lease_until > timezone.now() + dt.timedelta(seconds=60)


def test_renewal_after_a_colleague_took_over_reports_the_holder(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    ReviewItem.objects.filter(answer__trace_id=trace).update(
        lease_until=timezone.now() - dt.timedelta(seconds=1))
    login(bob).post(f"/answers/{trace}/claim")
    response = client.post(f"/answers/{trace}/renew")
    assert response.status_code == 409
    assert response.json()["holder"] == "bob"


def test_release_from_the_page_returns_to_the_queue(hold: Any, reviewer: Any,
                                                    login: Any) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    response = client.post(f"/answers/{trace}/release")
    assert response.status_code == 302 and response["Location"] == "/"
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by is None


def test_an_admin_can_break_a_lease_from_the_item_page(hold: Any, reviewer: Any,
                                                       admin_user: Any, login: Any) -> None:
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/claim")
    admin = login(admin_user)
    assert "Break lease" in admin.get(f"/answers/{trace}/").content.decode()
    admin.post(f"/answers/{trace}/release", {"force": "1"})
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by is None


def test_a_decision_sent_from_a_page_whose_lease_an_admin_broke_is_refused_once(
    hold: Any, reviewer: Any, admin_user: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    assert 'name="approve-held" value="True"' in alice.get(f"/answers/{trace}/").content.decode()
    login(admin_user).post(f"/answers/{trace}/release", {"force": "1"})

    response = page_post(alice, trace, "approve", comment="Checked the pricing page.",
                         held="True")
    assert response.status_code == 409
    page = response.content.decode()
    assert "Nothing was recorded: your lease on this answer ended while you worked on it" in page
    assert "Checked the pricing page." in page  # what she wrote is kept
    assert not Decision.objects.exists()
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by is None  # not taken back
    # The page she got back knows the lease is gone: sending it again takes the answer back.
    assert 'name="approve-held" value="False"' in page
    response = page_post(alice, trace, "approve", comment="Checked the pricing page.",
                         held="False")
    assert response.status_code == 302
    assert Decision.objects.get().reviewer == reviewer
