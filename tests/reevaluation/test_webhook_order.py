"""An endpoint gets the events of one answer in the order they happened, and the minute sweep
sends no second copy of a message still in the queue.

Without the order, an event waiting for a retry ("approved", while the receiver was down)
reached the receiver after a newer one ("held"), and it kept the stale status.
"""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.services import (
    webhook_deliveries_due,
    webhook_delivery_attempt,
    webhook_events_record,
)
from reviewqueue.webhooks.tasks import dispatch_due
from tests.reevaluation.conftest import Receiver

pytestmark = pytest.mark.django_db

SECRET = "a-test-secret-that-is-long-enough"


def _change(trace_id: str, status: str, verdict_id: int) -> tuple[Any, str, Any]:
    answer = SimpleNamespace(trace_id=trace_id)
    verdict = SimpleNamespace(pk=verdict_id, decision="review", reason="supported")
    return answer, status, verdict


def _record(trace_id: str, status: str, verdict_id: int = 1) -> int:
    [delivery_id] = webhook_events_record([_change(trace_id, status, verdict_id)])
    return delivery_id


def _make_due(*ids: int) -> None:
    WebhookDelivery.objects.filter(pk__in=ids).update(next_attempt_at=timezone.now())


def test_a_newer_event_waits_for_the_older_one_of_the_same_answer(
    receiver: Receiver, settings: Any
) -> None:
    settings.WEBHOOK_RETRY_BASE_SECONDS = 600  # the failed first event waits ten minutes
    receiver.fail_first = 1
    WebhookEndpoint.objects.create(url=receiver.url, secret=SECRET)
    approved = _record("t-1", "approved")
    webhook_delivery_attempt(delivery_id=approved)  # 500: a retry in ten minutes
    held = _record("t-1", "held")
    other = _record("t-2", "candidate")

    assert webhook_delivery_attempt(delivery_id=held) is None  # waits for `approved`
    assert webhook_deliveries_due() == [other]  # another answer's event does not wait
    assert WebhookDelivery.objects.get(pk=held).attempts == 0

    _make_due(approved)
    dispatch_due.delay()  # `approved` goes, then `held` right after it (its first try: 500)
    _make_due(held)
    dispatch_due.delay()

    sent = [(r.json["trace_id"], r.json["status"], r.status) for r in receiver.requests]
    assert [s for s in sent if s[0] == "t-1"] == [
        ("t-1", "approved", 500), ("t-1", "approved", 200), ("t-1", "held", 500),
        ("t-1", "held", 200)]
    assert ("t-2", "candidate", 500) in sent  # tried at once, not after t-1's events


def test_the_delivery_log_says_a_newer_event_waits_for_the_older_one(
    receiver: Receiver, settings: Any, admin_client: Any
) -> None:
    """Its own next attempt time has passed and means nothing while the older event of the
    same answer is still to be delivered: the log says what it waits for instead."""
    settings.WEBHOOK_RETRY_BASE_SECONDS = 600
    receiver.fail_first = 1
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, secret=SECRET)
    approved = _record("t-1", "approved")
    webhook_delivery_attempt(delivery_id=approved)
    held = _record("t-1", "held")
    other = _record("t-2", "candidate")
    page = admin_client.get(f"/webhooks/{endpoint.pk}/").content.decode()
    first = WebhookDelivery.objects.get(pk=approved)
    rows = {pk: page[page.index(str(WebhookDelivery.objects.get(pk=pk).event_id)):]
            .split("</tr>", 1)[0] for pk in (approved, held, other)}
    assert (f"after the earlier event <code>{first.event_id}</code> of this answer, still to be "
            "delivered") in rows[held]
    assert "data-behind" not in rows[other] and "next " in rows[other]
    assert "data-behind" not in rows[approved]


def test_an_older_event_given_up_lets_the_newer_one_go(receiver: Receiver,
                                                       settings: Any) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    receiver.fail_first = 1
    WebhookEndpoint.objects.create(url=receiver.url, secret=SECRET)
    approved = _record("t-1", "approved")
    held = _record("t-1", "held")

    result = webhook_delivery_attempt(delivery_id=approved)

    assert result is not None and result.delivery.state == "failed"
    assert result.next_in_line == held


def test_every_event_says_when_it_happened(receiver: Receiver) -> None:
    WebhookEndpoint.objects.create(url=receiver.url, secret=SECRET)
    first = timezone.now()
    webhook_delivery_attempt(delivery_id=_record("t-1", "approved"))
    webhook_delivery_attempt(delivery_id=_record("t-1", "held"))

    stamps = [datetime.fromisoformat(r.json["occurred_at"]) for r in receiver.delivered()]
    assert first <= stamps[0] < stamps[1] <= timezone.now()


def test_the_sweep_sends_no_second_copy_of_a_message_still_queued(settings: Any) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = False  # messages wait in a broker's queue
    WebhookEndpoint.objects.create(url="http://127.0.0.1:9/hook", secret=SECRET)
    ids = [_record(f"t-{n}", "held") for n in range(3)]

    with mock.patch("reviewqueue.webhooks.tasks.deliver_webhook.delay") as send:
        dispatch_due()  # each was sent when its change committed
        assert send.call_count == 0
        # Their messages were lost (a broker restart): once they are overdue, one copy each.
        WebhookDelivery.objects.update(dispatched_until=timezone.now())
        dispatch_due()
        dispatch_due()

    assert sorted(call.args[0] for call in send.call_args_list) == ids
