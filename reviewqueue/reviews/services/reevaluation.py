"""Re-evaluate answers against the revisions that are current now.

`answer_reevaluate` is the one service every trigger ends in (a revision published, a document
withdrawn, a validity boundary, a new gate version, "re-evaluate now", a refused decision).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import InterfaceError, OperationalError, transaction

from reviewqueue.audit.services import WORKER, Actor, audit_record
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.services import evaluation
from reviewqueue.reviews.services.transitions import answer_apply_verdict


def answer_reevaluate(*, answer_id: int, trigger: str, actor: Actor = WORKER,
                      cause: str = "") -> Verdict | None:
    """Gate the answer's current version on the current revisions and today. `cause`: the
    document whose change this follows; for an answer that does not cite it, a new verdict's
    trigger says that another document changed.

    Returns the verdict that became current, or None when nothing changed: the fingerprint
    equals the current verdict's, or the answer is gone. Safe to run twice and concurrently:
    the answer row is locked for the whole evaluation, and (version, fingerprint) is unique.
    """
    with transaction.atomic():
        # Lock first, without joins. Had another transaction changed the row while this one
        # waited for the lock, PostgreSQL would re-check only the locked row and return the
        # outer-joined verdict and version as NULL. A fresh read after the lock sees both.
        locked = Answer.objects.select_for_update().filter(pk=answer_id).values_list("pk")
        if not locked.first():
            return None
        answer = Answer.objects.select_related("current_version", "current_verdict").get(
            pk=answer_id
        )
        if answer.current_version is None:
            return None
        # Read the documents only now, under the lock: a revision published after this point
        # queues its own re-evaluation, which waits for this lock and then sees it.
        retrieved = list(answer.retrieved.all())
        if cause and all(r.document_key != cause for r in retrieved):
            trigger = Verdict.Trigger.OTHER_DOCUMENT
        run = evaluation.run_gate(answer=answer, version=answer.current_version,
                                  retrieved=retrieved, as_of=evaluation.gate_day(answer))
        current = answer.current_verdict
        if (current is not None and current.version_id == answer.current_version_id
                and current.fingerprint == run.verdict.fingerprint):
            return None
        verdict, _ = evaluation.store_verdict(answer=answer, version=answer.current_version,
                                              run=run, trigger=trigger)
        old_status = answer.status
        new_status = answer_apply_verdict(answer=answer, verdict=verdict, actor=actor,
                                          cause=trigger)
        record_cleared(answer=answer, old_status=old_status, new_status=new_status,
                       verdict=verdict, trigger=trigger, actor=actor)
        return verdict


def record_cleared(*, answer: Answer, old_status: str, new_status: str, verdict: Verdict,
                   trigger: str, actor: Actor) -> None:
    """A fresh verdict took the answer out of the queue without a reviewer's decision: say so
    in the log in plain terms. Every path that applies a re-evaluated verdict calls this (a
    trigger, or a decision refused on a stale verdict)."""
    if old_status != Answer.Status.HELD or new_status == Answer.Status.HELD:
        return
    audit_record(
        actor=actor,
        action="review_item.cleared",
        object_type="answer",
        object_id=answer.trace_id,
        trace_id=answer.trace_id,
        before={"status": old_status},
        after={"status": new_status, "by": "reevaluation", "trigger": trigger,
               "verdict": verdict.pk, "decision": verdict.decision,
               "reason": verdict.reason},
    )


@dataclass
class BatchOutcome:
    """What happened to a batch of answers: `done` re-evaluated (changed or not), `changed`
    of those got a new verdict, `errors` could not be re-evaluated."""

    done: int = 0
    changed: int = 0
    errors: list[tuple[int, Exception]] = field(default_factory=list)


def answers_reevaluate(
    *,
    answer_ids: Iterable[int],
    trigger: str,
    actor: Actor = WORKER,
    cause: str = "",
    reraise: tuple[type[BaseException], ...] = (OperationalError, InterfaceError),
) -> BatchOutcome:
    """Re-evaluate each answer in its own transaction.

    An error in one answer is recorded and the batch goes on; errors of the `reraise` kinds
    (a lost database connection, a time limit) stop the batch so the caller can retry it as a
    whole, which is harmless for the answers already done.
    """
    outcome = BatchOutcome()
    for answer_id in answer_ids:
        try:
            verdict = answer_reevaluate(answer_id=answer_id, trigger=trigger, actor=actor,
                                        cause=cause)
        except reraise:
            raise
        except Exception as exc:
            outcome.errors.append((answer_id, exc))
            continue
        outcome.done += 1
        if verdict is not None:
            outcome.changed += 1
    return outcome
