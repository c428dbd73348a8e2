"""Renewal from an open item page extends the reviewer's own lease and never claims the item
again: a lease an admin broke, or one that expired, stays ended."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import ReviewItem

pytestmark = pytest.mark.django_db


def renew(client: Any, trace_id: str) -> Any:
    """What item.js posts every few minutes."""
    return client.post(f"/answers/{trace_id}/renew", content_type="application/json", data="{}")


def holder(trace_id: str) -> Any:
    return ReviewItem.objects.get(answer__trace_id=trace_id).leased_by


def test_renewal_after_an_admin_broke_the_lease_is_409_and_leaves_the_item_free(
    hold: Any, reviewer: Any, admin_user: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    login(admin_user).post(f"/answers/{trace}/release", {"force": "1"})
    response = renew(alice, trace)
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "lease_lost"
    # item.js shows `message`
    assert body["message"] == ("Your lease on this answer has ended: an admin broke it. Reload "
                               "the page and start reviewing again to decide.")
    assert holder(trace) is None
    html = alice.get(f"/answers/{trace}/").content.decode()
    assert "Nobody is working on this answer." in html


def test_after_a_broken_lease_a_colleague_can_claim_the_item(
    hold: Any, reviewer: Any, bob: Any, admin_user: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    login(admin_user).post(f"/answers/{trace}/release", {"force": "1"})
    renew(alice, trace)
    login(bob).post(f"/answers/{trace}/claim")
    assert holder(trace) == bob
    response = renew(alice, trace)
    assert response.status_code == 409
    assert response.json()["holder"] == "bob"


def test_renewal_of_an_expired_lease_does_not_claim_the_item_again(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    ReviewItem.objects.filter(answer__trace_id=trace).update(
        lease_until=timezone.now() - dt.timedelta(seconds=1))
    response = renew(alice, trace)
    assert response.status_code == 409
    assert response.json()["error"] == "lease_lost"
    assert response.json()["message"].startswith(
        "Your lease on this answer has ended: it expired.")
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.lease_until < timezone.now()


def test_a_lease_released_from_another_tab_is_said_so_not_blamed_on_an_admin(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    alice.post(f"/answers/{trace}/release")  # the same answer open in a second tab
    response = renew(alice, trace)
    assert response.status_code == 409
    assert response.json()["message"] == (
        "You released this answer, in another tab or window: nobody is working on it now. "
        "Reload the page and start reviewing again to decide.")


def test_renewal_of_an_item_one_never_claimed_is_409(hold: Any, reviewer: Any,
                                                     login: Any) -> None:
    trace = hold()
    response = renew(login(reviewer), trace)
    assert response.status_code == 409
    assert holder(trace) is None
    assert not AuditEvent.objects.filter(action="lease.claimed").exists()


def test_renewal_of_ones_active_lease_extends_it_without_an_audit_event(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    ReviewItem.objects.filter(answer__trace_id=trace).update(
        lease_until=timezone.now() + dt.timedelta(seconds=5))
    response = renew(alice, trace)
    assert response.status_code == 200
    assert response.json()["holder"] == "alice"
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.lease_until > timezone.now() + dt.timedelta(seconds=60)
    # The new end, as the page writes it, for the page to show.
    assert response.json()["until_shown"] == timezone.localtime(item.lease_until).strftime(
        "%H:%M")
    assert AuditEvent.objects.filter(action="lease.claimed").count() == 1


def test_renewal_of_a_decided_answer_says_it_left_the_queue(hold: Any, reviewer: Any,
                                                             login: Any) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    ReviewItem.objects.filter(answer__trace_id=trace).delete()
    response = renew(alice, trace)
    assert response.status_code == 409
    assert response.json()["message"] == "This answer is no longer waiting for review."


def test_the_lost_lease_message_is_in_the_reviewers_language(
    hold: Any, reviewer: Any, admin_user: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer, HTTP_ACCEPT_LANGUAGE="ja")
    alice.post(f"/answers/{trace}/claim")
    login(admin_user).post(f"/answers/{trace}/release", {"force": "1"})
    response = renew(alice, trace)
    assert response.status_code == 409
    assert "この回答の担当は終了しました" in response.json()["message"]


def lease_end_on_page(client: Any, trace_id: str) -> str:
    """The lease end the item page gives item.js, which sends it back when the page goes."""
    html = client.get(f"/answers/{trace_id}/").content.decode()
    return html.split('data-lease-end="', 1)[1].split('"', 1)[0]


def leave(client: Any, trace_id: str, until: str) -> Any:
    return client.post(f"/answers/{trace_id}/leave", content_type="application/json",
                       data=json.dumps({"until": until}))


def test_leaving_the_item_page_lets_the_lease_lapse_within_a_minute_and_keeps_the_holder(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    response = leave(alice, trace, lease_end_on_page(alice, trace))
    assert response.status_code == 200 and response.json() == {"shortened": True}
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.leased_by == reviewer
    assert item.lease_until <= timezone.now() + dt.timedelta(seconds=60)
    # A minute later the colleague gets it.
    ReviewItem.objects.filter(pk=item.pk).update(
        lease_until=timezone.now() - dt.timedelta(seconds=1))
    login(bob).post(f"/answers/{trace}/claim")
    assert holder(trace) == bob
    assert AuditEvent.objects.filter(action="lease.claimed").count() == 2


def test_a_page_that_renewed_after_the_leaving_one_keeps_the_whole_lease(
    hold: Any, reviewer: Any, login: Any
) -> None:
    """A reload: the new page's renewal may reach the server before the old page's leave."""
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    old_page_saw = lease_end_on_page(alice, trace)
    renewed = renew(alice, trace).json()["until"]
    assert renewed != old_page_saw
    response = leave(alice, trace, old_page_saw)
    assert response.json() == {"shortened": False}
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.lease_until > timezone.now() + dt.timedelta(minutes=10)
    # The renewal answers the end the page sends back when it goes in turn.
    assert leave(alice, trace, renewed).json() == {"shortened": True}


def test_leaving_after_the_leaving_renewal_renews_the_whole_term_again(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    leave(alice, trace, lease_end_on_page(alice, trace))
    assert renew(alice, trace).status_code == 200
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.lease_until > timezone.now() + dt.timedelta(minutes=10)


def test_a_colleague_cannot_shorten_someone_elses_lease(hold: Any, reviewer: Any, bob: Any,
                                                        login: Any) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    until = lease_end_on_page(alice, trace)
    response = leave(login(bob), trace, until)
    assert response.json() == {"shortened": False}
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.leased_by == reviewer
    assert item.lease_until > timezone.now() + dt.timedelta(minutes=10)


@pytest.mark.parametrize(("body", "detail"), [
    ("{}", "until:"), ('{"until": "soon"}', "until:"), ('{"until": 5}', "until:"),
    ('{"until": "2026-12-02T10:00:00"}', "until: the offset is missing"), ("[", "until:"),
    ('{"until": "0001-01-01T00:00:00+14:00"}', "until:"),  # before the first year in UTC
])
def test_leave_with_a_bad_lease_end_is_400_naming_the_field(
    hold: Any, reviewer: Any, login: Any, body: str, detail: str
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    response = alice.post(f"/answers/{trace}/leave", content_type="application/json", data=body)
    assert response.status_code == 400
    assert response.json()["detail"].startswith(detail)
    assert ReviewItem.objects.get(answer__trace_id=trace).lease_until > (
        timezone.now() + dt.timedelta(minutes=10))


def test_an_offset_postgresql_cannot_hold_is_read_as_the_same_moment_in_utc(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    end = dt.datetime.fromisoformat(lease_end_on_page(alice, trace))
    far_east = end.astimezone(dt.timezone(dt.timedelta(hours=23, minutes=59))).isoformat()
    assert leave(alice, trace, far_east).json() == {"shortened": True}
    assert ReviewItem.objects.get(answer__trace_id=trace).lease_until <= (
        timezone.now() + dt.timedelta(seconds=60))
