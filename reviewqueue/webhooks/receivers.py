"""Turn every answer status change into a webhook event (stored now, sent after commit)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from reviewqueue.reviews.signals import answer_status_changed, answers_status_changed


@receiver(answer_status_changed, dispatch_uid="webhooks.status_changed")
def record_status_change(sender: Any, *, answer: Any, new_status: str, verdict: Any,
                         **kwargs: Any) -> None:
    from reviewqueue.webhooks.services import webhook_event_record

    webhook_event_record(answer=answer, status=new_status, verdict=verdict)


@receiver(answers_status_changed, dispatch_uid="webhooks.statuses_changed")
def record_status_changes(sender: Any, *, changes: list[dict[str, Any]], **kwargs: Any) -> None:
    from reviewqueue.webhooks.services import webhook_events_record

    webhook_events_record([(c["answer"], c["new_status"], c["verdict"]) for c in changes])
