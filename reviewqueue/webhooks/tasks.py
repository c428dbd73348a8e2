"""Celery tasks of webhooks: thin shells around reviewqueue.webhooks.services."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from reviewqueue.jobs.tasking import ReliableTask


@shared_task(base=ReliableTask, name="webhooks.deliver")
def deliver_webhook(delivery_id: int) -> str | None:
    """One attempt at one delivery. A short wait before the next attempt is scheduled here;
    a long one is left to `dispatch_due` (beat, every minute), because Redis would hand a
    message with a countdown beyond the visibility timeout to a second worker."""
    from reviewqueue.webhooks.services import webhook_delivery_attempt

    result = webhook_delivery_attempt(delivery_id=delivery_id)
    if result is None:
        return None
    if result.retry_in is not None and result.retry_in <= settings.CELERY_VISIBILITY_TIMEOUT / 2:
        deliver_webhook.apply_async((delivery_id,), countdown=result.retry_in)
    return result.delivery.state


@shared_task(base=ReliableTask, name="webhooks.dispatch_due")
def dispatch_due() -> int:
    from reviewqueue.webhooks.services import webhook_deliveries_due

    due = webhook_deliveries_due()
    for delivery_id in due:
        deliver_webhook.delay(delivery_id)
    return len(due)
