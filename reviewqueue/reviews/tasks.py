"""Celery tasks: thin shells that take ids and call one service."""

from __future__ import annotations

import logging

from celery import shared_task

from reviewqueue.audit.services import Actor

log = logging.getLogger(__name__)

FANOUT_CHUNK = 250


@shared_task(name="reviews.reevaluate_answers")
def reevaluate_answers(answer_ids: list[int], trigger: str) -> int:
    from reviewqueue.reviews.services.reevaluation import answer_reevaluate

    changed = 0
    for answer_id in answer_ids:
        if answer_reevaluate(answer_id=answer_id, trigger=trigger) is not None:
            changed += 1
    log.info("reevaluated answers", extra={"count": len(answer_ids), "changed": changed,
                                           "trigger": trigger})
    return changed


@shared_task(name="reviews.fan_out_document")
def fan_out_document(document_key: str, trigger: str) -> int:
    """Send every answer citing the document for re-evaluation, a chunk of ids per message."""
    from reviewqueue.reviews.selectors.answers import answer_ids_citing

    ids = list(answer_ids_citing(document_key))
    for start in range(0, len(ids), FANOUT_CHUNK):
        reevaluate_answers.delay(ids[start:start + FANOUT_CHUNK], trigger)
    return len(ids)


def enqueue_document_reevaluation(*, document_key: str, trigger: str, actor: Actor) -> None:
    """Called from transaction.on_commit by the sources services."""
    fan_out_document.delay(document_key, trigger)
