"""Celery tasks of webhooks: thin shells around reviewqueue.webhooks.services."""

from __future__ import annotations

from celery import shared_task

from reviewqueue.jobs.tasking import ReliableTask


@shared_task(base=ReliableTask, name="webhooks.deliver")
def deliver_webhook(delivery_id: int) -> str | None:
    """One attempt at one delivery. A short wait before the next attempt is scheduled here,
    a long one is left to `dispatch_due` (beat, every minute). A delivery done (sent or given
    up) sends the next event of the same endpoint and answer, which waited for it."""
    from reviewqueue.webhooks.services import webhook_delivery_attempt

    result = webhook_delivery_attempt(delivery_id=delivery_id)
    if result is None:
        return None
    if result.retry_in is not None:
        deliver_webhook.apply_async((delivery_id,), countdown=result.retry_in)
    if result.next_in_line is not None:
        deliver_webhook.delay(result.next_in_line)
    return result.delivery.state


@shared_task(base=ReliableTask, name="webhooks.dispatch_due")
def dispatch_due(endpoint_id: int | None = None) -> int:
    """Send what is due: beat's minute sweep, or one endpoint's waiting deliveries when it is
    enabled again."""
    from reviewqueue.webhooks.services import webhook_deliveries_due

    due = webhook_deliveries_due(endpoint_id=endpoint_id)
    for delivery_id in due:
        deliver_webhook.delay(delivery_id)
    return len(due)
