"""Re-evaluate answers against the revisions that are current now."""

from __future__ import annotations

from django.db import transaction

from reviewqueue.audit.services import WORKER, Actor
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.services.evaluation import run_gate, store_verdict, today
from reviewqueue.reviews.services.transitions import answer_apply_verdict


def answer_reevaluate(*, answer_id: int, trigger: str, actor: Actor = WORKER) -> Verdict | None:
    """Gate the answer's current version now. Returns the new verdict, or None when the
    fingerprint is unchanged (nothing a re-run could change) or the answer is gone.

    Safe to run twice: the answer row is locked, and an unchanged fingerprint is a no-op.
    """
    with transaction.atomic():
        answer = (
            Answer.objects.select_for_update()
            .select_related("current_version", "current_verdict")
            .filter(pk=answer_id)
            .first()
        )
        if answer is None or answer.current_version is None:
            return None
        retrieved = list(answer.retrieved.all())
        run = run_gate(answer=answer, version=answer.current_version, retrieved=retrieved,
                       as_of=today())
        current = answer.current_verdict
        if current is not None and current.fingerprint == run.verdict.fingerprint:
            return None
        verdict, _ = store_verdict(answer=answer, version=answer.current_version, run=run,
                                   trigger=trigger)
        answer_apply_verdict(answer=answer, verdict=verdict, actor=actor, cause=trigger)
        return verdict
