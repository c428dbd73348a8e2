"""An admin sends given-up webhook deliveries again, from the endpoint's page.

Each goes back to the queue with a round of attempts of its own (the retry window and the
attempt limit count from then), unless a newer event of its answer followed it: sent now, it
would reach the receiver after that newer status and overwrite it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import Answer
from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.services import webhook_deliveries_due, webhook_delivery_attempt

pytestmark = pytest.mark.django_db

SECRET = "a-test-secret-that-is-long-enough"
FAILED, PENDING, DELIVERED = "failed", "pending", "delivered"


@pytest.fixture
def endpoint() -> WebhookEndpoint:
    # Nothing listens on the discard port: every attempt is refused.
    return WebhookEndpoint.objects.create(url="http://127.0.0.1:9/hook", secret=SECRET)


def delivery(endpoint: WebhookEndpoint, trace_id: str, state: str, *, attempts: int = 16,
             days_old: int = 2) -> WebhookDelivery:
    """An event telling that answer `trace_id` is held, which it still is."""
    Answer.objects.get_or_create(trace_id=trace_id, defaults={
        "question": "?", "status": "held", "status_changed_at": timezone.now(),
        "body_digest": "-"})
    made = WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", trace_id=trace_id,
        payload={"trace_id": trace_id, "status": "held"}, state=state, attempts=attempts,
        next_attempt_at=timezone.now() - timedelta(days=days_old),
        last_error="connection refused: nothing listens at that address and port")
    # Created days ago: its own retry window is long over.
    WebhookDelivery.objects.filter(pk=made.pk).update(
        created_at=timezone.now() - timedelta(days=days_old))
    made.refresh_from_db()
    return made


def resend(admin_client: Any, endpoint: WebhookEndpoint, **form: Any) -> str:
    response = admin_client.post(f"/webhooks/{endpoint.pk}/resend", form, follow=True)
    assert response.status_code == 200, response.content
    return response.content.decode()


def test_a_given_up_delivery_sent_again_gets_a_round_of_attempts_of_its_own(
    admin_client: Any, endpoint: WebhookEndpoint, settings: Any
) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 16
    given_up = delivery(endpoint, "t-1", FAILED)
    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert "Send again" in page
    assert "1 given-up delivery is the newest event of its answer" in page

    page = resend(admin_client, endpoint, delivery=given_up.pk)

    assert "1 given-up delivery is sent again, with a new round of attempts." in page
    given_up.refresh_from_db()
    assert (given_up.state, given_up.attempts_before_resend) == (PENDING, 16)
    assert "sent again " in page
    # Refused once more, it is not given up: its 17th attempt is the first of the new round,
    # and its window runs from the resend, not from its creation two days ago.
    result = webhook_delivery_attempt(delivery_id=given_up.pk)
    assert result is not None
    assert (result.delivery.state, result.delivery.attempts) == (PENDING, 17)
    event = AuditEvent.objects.get(action="webhook.deliveries_resent")
    assert event.actor.startswith("user:")
    assert event.after == {"state": PENDING, "deliveries": 1,
                           "event_ids": [str(given_up.event_id)]}


def test_the_new_round_ends_at_the_attempt_limit_counted_from_the_resend(
    admin_client: Any, endpoint: WebhookEndpoint, settings: Any
) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    given_up = delivery(endpoint, "t-1", FAILED, attempts=2)
    resend(admin_client, endpoint, delivery=given_up.pk)

    first = webhook_delivery_attempt(delivery_id=given_up.pk)
    assert first is not None and first.delivery.state == PENDING
    WebhookDelivery.objects.filter(pk=given_up.pk).update(next_attempt_at=timezone.now())
    second = webhook_delivery_attempt(delivery_id=given_up.pk)

    assert second is not None
    assert (second.delivery.state, second.delivery.attempts) == (FAILED, 4)


def test_an_attempt_that_vanished_in_the_new_round_is_freed_not_given_up(
    admin_client: Any, endpoint: WebhookEndpoint, settings: Any
) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    given_up = delivery(endpoint, "t-1", FAILED, attempts=3)
    resend(admin_client, endpoint, delivery=given_up.pk)
    # Its sender killed mid-attempt: claimed (the 4th attempt), its lease run out.
    WebhookDelivery.objects.filter(pk=given_up.pk).update(
        state="sending", attempts=4, lease_until=timezone.now() - timedelta(seconds=1))

    assert webhook_deliveries_due() == [given_up.pk]
    given_up.refresh_from_db()
    assert given_up.state == PENDING


def test_a_given_up_event_a_newer_one_of_its_answer_followed_is_not_sent_again(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    older = delivery(endpoint, "t-1", FAILED)
    delivery(endpoint, "t-1", DELIVERED, attempts=1, days_old=1)
    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert "a newer event of this answer followed it: it is not sent again" in page
    assert "Send again" not in page
    assert "data-resend-all" not in page

    page = resend(admin_client, endpoint, delivery=older.pk)

    assert "Nothing was sent again: a delivery is sent again only when it was given up" in page
    older.refresh_from_db()
    assert older.state == FAILED
    assert not AuditEvent.objects.filter(action="webhook.deliveries_resent").exists()


def test_send_them_again_takes_each_answer_s_newest_given_up_event_only(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    superseded = delivery(endpoint, "t-1", FAILED, days_old=3)
    newest = delivery(endpoint, "t-1", FAILED)
    other = delivery(endpoint, "t-2", FAILED)
    delivered = delivery(endpoint, "t-3", DELIVERED, attempts=1)
    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert "2 given-up deliveries are each the newest event of their answer" in page

    page = resend(admin_client, endpoint)

    assert "2 given-up deliveries are sent again, each with a new round of attempts." in page
    states = dict(WebhookDelivery.objects.values_list("pk", "state"))
    assert states == {superseded.pk: FAILED, newest.pk: PENDING, other.pk: PENDING,
                      delivered.pk: DELIVERED}
    assert AuditEvent.objects.get(action="webhook.deliveries_resent").after == {
        "state": PENDING, "deliveries": 2,
        "event_ids": [str(newest.event_id), str(other.event_id)]}
    assert "data-resend-all" not in page  # nothing left to send again


def test_an_event_telling_a_status_the_answer_has_left_is_not_sent_again(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    """The answer moved on while the endpoint was disabled (nothing was recorded for it then):
    its newest event there tells a status that is no longer true."""
    told_held = delivery(endpoint, "t-1", FAILED)
    still_true = delivery(endpoint, "t-2", FAILED)
    Answer.objects.filter(trace_id="t-1").update(status="candidate")
    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert "the answer's status has changed since: it is not sent again" in page
    assert "1 given-up delivery is the newest event of its answer" in page

    resend(admin_client, endpoint)

    assert dict(WebhookDelivery.objects.values_list("pk", "state")) == {
        told_held.pk: FAILED, still_true.pk: PENDING}


def test_sent_again_to_a_disabled_endpoint_they_wait_for_it(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    endpoint.is_active = False
    endpoint.save()
    given_up = delivery(endpoint, "t-1", FAILED)

    page = resend(admin_client, endpoint)

    assert "It waits until the endpoint is enabled." in page
    assert webhook_delivery_attempt(delivery_id=given_up.pk) is None
    given_up.refresh_from_db()
    assert given_up.state == PENDING


def test_a_delivery_that_is_no_number_is_refused_naming_the_field(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    given_up = delivery(endpoint, "t-1", FAILED)

    response = admin_client.post(f"/webhooks/{endpoint.pk}/resend", {"delivery": "1 OR 1=1"})

    assert response.status_code == 400
    assert "delivery" in response.content.decode()
    assert "not a delivery number" in response.content.decode()
    given_up.refresh_from_db()
    assert given_up.state == FAILED


def test_a_delivery_of_another_endpoint_is_not_sent_again(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    other = WebhookEndpoint.objects.create(url="http://127.0.0.1:9/other", secret=SECRET)
    theirs = delivery(other, "t-1", FAILED)

    page = resend(admin_client, endpoint, delivery=theirs.pk)

    assert "Nothing was sent again" in page
    theirs.refresh_from_db()
    assert theirs.state == FAILED


def test_the_log_costs_the_same_queries_with_5_or_50_given_up_deliveries(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries_with(count: int) -> int:
        WebhookDelivery.objects.all().delete()
        for i in range(count):
            delivery(endpoint, f"t-{i % 7}", FAILED)
        with CaptureQueriesContext(connection) as queries:
            page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
        # Each answer's newest given-up event may be sent again; the older ones are marked.
        assert page.count("data-resend>") == min(count, 7)
        assert page.count("data-superseded") == count - min(count, 7)
        return len(queries)

    assert queries_with(5) == queries_with(50)


def test_a_resend_during_a_stale_attempt_is_not_undone_by_its_outcome(
    endpoint: WebhookEndpoint, settings: Any
) -> None:
    """The last attempt outlives its lease, the sweep gives the delivery up, an admin sends it
    again; then the old attempt's outcome comes in. The resend's round stands."""
    from unittest import mock

    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.webhooks import services

    settings.WEBHOOK_MAX_ATTEMPTS = 3
    late = delivery(endpoint, "t-1", PENDING, attempts=2, days_old=0)

    def slow_send(_: Any) -> tuple[int | None, str]:
        WebhookDelivery.objects.filter(pk=late.pk).update(
            lease_until=timezone.now() - timedelta(seconds=1))
        services.webhook_deliveries_due()
        assert WebhookDelivery.objects.get(pk=late.pk).state == FAILED
        assert services.webhook_deliveries_resend(endpoint_id=endpoint.pk, actor=SYSTEM,
                                                  delivery_id=late.pk) == 1
        return None, "connection refused"

    with mock.patch.object(services, "_send", slow_send), \
            mock.patch.object(services, "_dispatch_waiting"):
        services.webhook_delivery_attempt(delivery_id=late.pk)

    late.refresh_from_db()
    assert (late.state, late.attempts_before_resend) == (PENDING, 3)


def test_sent_again_while_disabled_their_round_starts_when_it_is_enabled(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    endpoint.is_active = False
    endpoint.disabled_at = timezone.now() - timedelta(days=3)
    endpoint.save()
    given_up = delivery(endpoint, "t-1", FAILED)
    resend(admin_client, endpoint)
    # The receiver's outage lasts two more days; then the admin enables the endpoint.
    WebhookDelivery.objects.filter(pk=given_up.pk).update(
        resent_at=timezone.now() - timedelta(days=2))
    admin_client.post(f"/webhooks/{endpoint.pk}/active", {"active": "1"})

    result = webhook_delivery_attempt(delivery_id=given_up.pk)  # refused: nothing listens

    assert result is not None
    assert (result.delivery.state, result.delivery.attempts) == (PENDING, 17)


@pytest.mark.django_db(transaction=True)
def test_a_resend_during_a_status_change_waits_for_it_and_neither_deadlocks(
    endpoint: WebhookEndpoint,
) -> None:
    """A status change holds the audit chain's lock until it commits, and its new deliveries
    check their endpoint's row then. A resend takes the two in the same order."""
    import threading
    import time
    from types import SimpleNamespace

    from django.db import connection, transaction

    from reviewqueue.audit.services import SYSTEM, WORKER, audit_record
    from reviewqueue.webhooks.services import webhook_deliveries_resend, webhook_events_record

    delivery(endpoint, "t-1", FAILED)
    in_change = threading.Event()
    outcomes: dict[str, Any] = {}

    def status_change() -> None:  # as a re-evaluation does for an answer that moves
        try:
            with transaction.atomic():
                webhook_events_record([(SimpleNamespace(trace_id="t-2"), "held", SimpleNamespace(
                    pk=1, decision="review", reason="supported"))])
                audit_record(actor=WORKER, action="verdict.created", object_type="answer",
                             object_id="t-2")
                in_change.set()
                time.sleep(0.5)
            outcomes["change"] = "committed"
        except Exception as exc:
            outcomes["change"] = exc
        finally:
            connection.close()

    def resend_all() -> None:
        in_change.wait(10)
        try:
            outcomes["resend"] = webhook_deliveries_resend(endpoint_id=endpoint.pk, actor=SYSTEM)
        except Exception as exc:
            outcomes["resend"] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=status_change), threading.Thread(target=resend_all)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert outcomes == {"change": "committed", "resend": 1}, outcomes


def test_a_delivery_delivered_after_it_was_chosen_is_not_queued_again(
    endpoint: WebhookEndpoint
) -> None:
    """An attempt that outlived its lease delivers the event as the resend reads: the resend
    leaves it delivered, or the receiver would get it twice. (Across connections the row
    lock the resend takes as it reads orders the two; here, on one, the update checks.)"""
    from unittest import mock

    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.webhooks import services

    given_up = delivery(endpoint, "t-1", FAILED)
    real_now, calls = timezone.now, []

    def now() -> Any:
        if not calls:  # the first call comes once the deliveries to send are read
            WebhookDelivery.objects.filter(pk=given_up.pk).update(state=DELIVERED,
                                                                   delivered_at=real_now())
        calls.append(1)
        return real_now()

    with mock.patch.object(services.timezone, "now", side_effect=now):
        assert services.webhook_deliveries_resend(endpoint_id=endpoint.pk, actor=SYSTEM) == 0

    given_up.refresh_from_db()
    assert given_up.state == DELIVERED
    assert not AuditEvent.objects.filter(action="webhook.deliveries_resent").exists()


def test_the_page_offers_to_send_again_exactly_what_a_resend_sends(
    admin_client: Any, endpoint: WebhookEndpoint
) -> None:
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.webhooks.services import webhook_deliveries_resend

    cases = {
        "no answer named": WebhookDelivery.objects.create(
            endpoint=endpoint, event_type="answer.status_changed", trace_id="",
            payload={"status": "held"}, state=FAILED, attempts=16,
            next_attempt_at=timezone.now()),
        "an answer never stored": WebhookDelivery.objects.create(
            endpoint=endpoint, event_type="answer.status_changed", trace_id="t-gone",
            payload={}, state=FAILED, attempts=16, next_attempt_at=timezone.now()),
        "the newest, still true": delivery(endpoint, "t-1", FAILED),
    }
    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    for name, made in cases.items():
        offered = f'name="delivery" value="{made.pk}"' in page
        sent = webhook_deliveries_resend(endpoint_id=endpoint.pk, actor=SYSTEM,
                                         delivery_id=made.pk)
        assert offered == (sent == 1), name
