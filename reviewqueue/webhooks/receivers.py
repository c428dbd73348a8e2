"""Turn every answer status change into a webhook event (stored now, sent after commit)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from reviewqueue.reviews.signals import answers_status_changed


@receiver(answers_status_changed, dispatch_uid="webhooks.statuses_changed")
def record_status_changes(sender: Any, *, changes: list[dict[str, Any]], **kwargs: Any) -> None:
    from reviewqueue.webhooks.services import webhook_events_record

    webhook_events_record([(c["answer"], c["new_status"], c["verdict"]) for c in changes])
