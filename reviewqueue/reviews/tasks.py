"""Celery tasks of re-evaluation: thin shells that take ids and call one service.

The unit of work on the queue is a chunk of answer ids (REEVALUATION_CHUNK_SIZE, a few
hundred), never one message per answer. Chunks belong to a job (reviewqueue.jobs) that counts
how many answers were done and failed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from reviewqueue.audit.services import Actor, actor_username
from reviewqueue.dbconnections import drop_unsound_connections
from reviewqueue.jobs.tasking import PASS_THROUGH_ERRORS, ReliableTask

log = logging.getLogger(__name__)


class ChunkNeverFinished(Exception):
    """A chunk's message came back more often than REEVALUATION_CHUNK_MAX_RUNS."""


class ChunkTask(ReliableTask):
    def after_dead_letter(self, *, args: list[Any], kwargs: dict[str, Any]) -> None:
        from reviewqueue.jobs.services import chunk_mark_dead

        chunk_id = kwargs.get("chunk_id")
        if chunk_id is not None:
            chunk_mark_dead(chunk_id=int(chunk_id))


@shared_task(base=ChunkTask, name="reviews.reevaluate_answers")
def reevaluate_answers(answer_ids: list[int], trigger: str, job_id: str | None = None,
                       chunk_id: int | None = None, cause: str = "") -> int:
    """Re-evaluate a chunk of answers and count it into its job. Returns how many answers got
    a new verdict. Safe to run again: an unchanged answer is a no-op, a finished chunk is not
    counted twice. `cause` (the changed document) is the job's, or given for an answer sent
    again from the dead letters."""
    from reviewqueue.jobs.selectors import chunk_is_finished, job_actor_and_cause
    from reviewqueue.jobs.services import (
        chunk_finish,
        chunk_finish_early,
        chunk_mark_dead,
        chunk_mark_started,
        chunk_record_changed,
        dead_letter_record,
    )
    from reviewqueue.reviews.services.reevaluation import OutOfTime, answers_reevaluate

    if chunk_id is not None and chunk_is_finished(chunk_id=chunk_id):
        # A duplicate (redelivered or resent) of a chunk another delivery already did.
        log.info("chunk already finished", extra={"job": job_id, "chunk": chunk_id})
        return 0
    if chunk_id is not None:
        # Before any work, so that a slow chunk counts as taken up from its first second:
        # jobs_resume_stalled sends again a chunk nobody took up while chunks sent after it
        # were, taking its message for lost.
        runs = chunk_mark_started(chunk_id=chunk_id)
        if runs > settings.REEVALUATION_CHUNK_MAX_RUNS:
            # Taken up that often and never finished: each run killed its worker's main
            # process (which no retry counts), or was killed with it. Run again, it would take
            # a worker down at every visibility timeout, for ever.
            kwargs = {"job_id": job_id, "chunk_id": chunk_id, **({"cause": cause} if cause else {})}
            dead_letter_record(
                task_name=reevaluate_answers.name, task_id=reevaluate_answers.request.id or "",
                args=[answer_ids, trigger], kwargs=kwargs, attempts=runs - 1,
                error=ChunkNeverFinished(
                    "never finished: its worker died under "
                    + ("its one run" if runs == 2 else f"each of its {runs - 1} runs")))
            chunk_mark_dead(chunk_id=chunk_id)
            return 0
    started = time.perf_counter()
    actor, job_cause = job_actor_and_cause(job_id)
    cause = cause or job_cause
    # A chunk stops between two answers once three quarters of its soft time limit are gone,
    # before the limit itself, which strikes wherever the code is (inside a query, say).
    deadline = (time.monotonic() + settings.CELERY_TASK_SOFT_TIME_LIMIT * 0.75
                if chunk_id is not None else None)
    # Each answer that gets a new verdict is noted on the chunk as it commits: a run that dies
    # after it, and a run again that finds it unchanged, still count it.
    on_change = (None if chunk_id is None else
                 lambda answer_id: chunk_record_changed(chunk_id=chunk_id, answer_id=answer_id))
    try:
        outcome = answers_reevaluate(answer_ids=answer_ids, trigger=trigger, actor=actor,
                                     cause=cause, reraise=PASS_THROUGH_ERRORS,
                                     deadline=deadline, on_change=on_change)
    except (SoftTimeLimitExceeded, OutOfTime) as exc:
        if chunk_id is None:
            raise
        if isinstance(exc, SoftTimeLimitExceeded) and not reevaluate_answers.request.is_eager:
            # It may have struck inside a query or a transaction's bookkeeping.
            drop_unsound_connections()
        # What the chunk did before its time limit counts as done, and the answers it did not
        # get to go on as a new chunk: none of them has failed (a dead letter for the whole
        # chunk would count every one as failed).
        done = exc.batch_outcome  # type: ignore[attr-defined]
        chunk_finish_early(chunk_id=chunk_id, task_name=reevaluate_answers.name,
                           answer_ids=answer_ids, trigger=trigger, outcome=done, error=exc)
        return done.changed
    for answer_id, error in outcome.errors:
        # An error a retry would not fix: keep the one answer so an admin can send it again.
        dead_letter_record(task_name=reevaluate_answers.name, task_id="",
                           args=[[answer_id], trigger], kwargs={"cause": cause} if cause else {},
                           error=error, attempts=1,
                           # One letter per answer of a job, counted into it when sent again.
                           job_id=job_id if chunk_id is not None else None, answer_id=answer_id)
    if chunk_id is not None:
        chunk_finish(chunk_id=chunk_id, done=outcome.done, failed=len(outcome.errors),
                     changed_ids=outcome.changed_ids, done_ids=outcome.done_ids)
    log.info("reevaluated answers", extra={
        "job": job_id, "chunk": chunk_id, "count": len(answer_ids), "changed": outcome.changed,
        "failed": len(outcome.errors), "trigger": trigger,
        "ms": round((time.perf_counter() - started) * 1000, 1),
    })
    return outcome.changed


@shared_task(base=ReliableTask, name="reviews.catch_up_after_commit")
def catch_up_after_commit(*, seen: dict[str, list[Any]], citing: dict[str, list[int]],
                          kb_seen: dict[str, list[list[Any]]], claiming: dict[str, list[int]],
                          unreceived: list[list[str]]) -> None:
    """The check after an ingest or an edit committed, which failed in the request: did a
    cited document, or the facts on a claimed key, change while the gate read them?"""
    from reviewqueue.reviews.services.reevaluation import catch_up_handed_over

    catch_up_handed_over(seen=seen, citing=citing, kb_seen=kb_seen, claiming=claiming,
                         unreceived=unreceived)


@shared_task(base=ReliableTask, name="reviews.fan_out_document")
def fan_out_document(document_key: str, trigger: str) -> str:
    """Start a job for every answer citing the document (kept for callers of the old name)."""
    from reviewqueue.jobs.services import job_start_for_document

    return str(job_start_for_document(document_key=document_key, trigger=trigger).pk)


def enqueue_document_reevaluation(*, document_key: str, trigger: str, actor: Actor,
                                  cause: str = "", cause_event: int | None = None) -> Any:
    """Start the job that re-evaluates the answers a changed document may affect, inside the
    transaction that changed it (a publish, a withdrawal, a conflict dismissed or reopened).

    The job row commits with the change or not at all, so no committed change is left without
    its job. Only the fan-out message waits for the commit; if it never gets through (a broker
    that is down, a process that dies), the job stays pending and `jobs.resume_stalled` sends
    it. Errors are not caught: a job that cannot be recorded must fail the change with it.
    """
    from reviewqueue.jobs.services import job_start_for_document
    from reviewqueue.sources.selectors import document_get, may_see_document

    user = _user_of(actor)
    requester: Actor | None = actor
    if user is not None:
        document = document_get(document_key)
        if document is None or not may_see_document(user, document):
            # A document the person may not read: the job is not theirs to follow, and the
            # worker's doing, not theirs.
            user, requester = None, None
    return job_start_for_document(document_key=document_key, trigger=trigger,
                                  actor=requester, user=user, cause=cause,
                                  cause_event=cause_event)


def enqueue_documents_reevaluation(*, document_keys: Iterable[str], trigger: str,
                                   actor: Actor, cause: str = "",
                                   cause_event: int | None = None) -> list[Any]:
    """`enqueue_document_reevaluation` for each document, once: the one whose change it is
    first, then in key order. An answer several of the jobs reach is counted by the job that
    gets to it first, so the changed document's own job is sent first to be credited."""
    return [enqueue_document_reevaluation(document_key=key, trigger=trigger, actor=actor,
                                          cause=cause, cause_event=cause_event)
            for key in sorted(set(document_keys), key=lambda key: (key != cause, key))]


def _user_of(actor: Actor) -> Any:
    """The account behind an actor named `user:<name>` (optionally `token:<prefix>`)."""
    from django.contrib.auth import get_user_model

    if not actor.name.startswith("user:"):
        return None
    return get_user_model().objects.filter(username=actor_username(actor.name)).first()
