"""Ask for re-evaluation of the answers citing some documents, once the transaction commits."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from reviewqueue.audit.services import Actor


def reevaluate_documents_on_commit(keys: Iterable[str], *, trigger: str, actor: Actor) -> None:
    keys = sorted(set(keys))

    def enqueue() -> None:
        # Imported late: sources must not depend on reviews at import time.
        from reviewqueue.reviews.tasks import enqueue_document_reevaluation

        for key in keys:
            enqueue_document_reevaluation(document_key=key, trigger=trigger, actor=actor)

    transaction.on_commit(enqueue)
