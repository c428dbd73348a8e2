"""Writes for re-evaluation jobs, their chunks and dead letters.

A job is created (scope, trigger, who asked), fanned out into chunks of answer ids (one Celery
message each), and finished when every chunk has finished. Every step is safe to repeat: a
message delivered twice finds its chunk already finished and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, F, Func, Max, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import WORKER, Actor, audit_record
from reviewqueue.errors import DomainError, NotFound
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.jobs.selectors import (
    answer_ids_affected_by_document,
    answer_ids_all,
    answer_ids_due_for_validity,
    document_fact_keys,
    validity_sweep_due,
)
from reviewqueue.jobs.tasking import BROKER_ERRORS, PASS_THROUGH_ERRORS
from reviewqueue.reviews.models import Verdict
from reviewqueue.sources.models import Document

log = logging.getLogger(__name__)

# Triggers that come from a person rather than from a change in the sources or the calendar.
_REQUESTED_TRIGGERS = {Verdict.Trigger.MANUAL, Verdict.Trigger.GATE_VERSION,
                       Verdict.Trigger.DISMISSAL, Verdict.Trigger.REOPENING}
# Any constant works; it only has to be the same for every process that starts a sweep.
_VALIDITY_SWEEP_LOCK = 0x52510A0D18
_CHUNK_INSERT_BATCH = 200
_MESSAGE_LINE = 300


def _actor_for(trigger: str, actor: Actor | None) -> Actor:
    # Verdicts that follow a source or calendar change are the worker's doing; a person who
    # asked for a re-evaluation is named on the verdicts it produces.
    if actor is not None and trigger in _REQUESTED_TRIGGERS:
        return actor
    return WORKER


def _chunks(ids: Iterable[int], size: int) -> Iterator[list[int]]:
    batch: list[int] = []
    for answer_id in ids:
        batch.append(int(answer_id))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _job_create(*, scope: str, trigger: str, actor: Actor | None, user: Any = None,
                document_key: str = "", cause: str = "", cause_event: int | None = None,
                as_of: date | None = None, fact_keys: list[str] | None = None) -> Job:
    chosen = _actor_for(trigger, actor)
    return Job.objects.create(
        scope=scope,
        trigger=trigger,
        document_key=document_key,
        cause=cause,
        cause_event=cause_event,
        as_of=as_of,
        fact_keys=fact_keys,
        requested_by=user if getattr(user, "is_authenticated", False) else None,
        actor_type=chosen.type,
        actor=chosen.name,
    )


def _enqueue_fan_out(job: Job) -> None:
    from reviewqueue.jobs.tasks import fan_out_job

    job_id = str(job.pk)
    # robust: a broker that is down must not fail a change that has already committed, nor
    # stop the messages queued after this one; the job stays pending for jobs.resume_stalled.
    transaction.on_commit(lambda: fan_out_job.delay(job_id), robust=True)


def _store_chunks(job: Job, ids: Iterable[int]) -> int:
    """Split `ids` into chunk rows; returns how many answers they hold."""
    size = settings.REEVALUATION_CHUNK_SIZE
    total = 0
    pending: list[JobChunk] = []
    for number, batch in enumerate(_chunks(ids, size)):
        total += len(batch)
        pending.append(JobChunk(job=job, number=number, answer_ids=batch))
        if len(pending) == _CHUNK_INSERT_BATCH:
            JobChunk.objects.bulk_create(pending)
            pending = []
    if pending:
        JobChunk.objects.bulk_create(pending)
    return total


def _send_chunks_on_commit(chunks: Q) -> None:
    """After the current transaction commits, send one message for each chunk matching `chunks`
    that is still pending, in job and number order: `jobs_resume_stalled` relies on a chunk of
    a batch being queued behind the chunks with lower numbers."""

    def send() -> None:
        from reviewqueue.reviews.tasks import reevaluate_answers

        pending = JobChunk.objects.filter(chunks, state=JobChunk.State.PENDING)
        rows = (pending.order_by("job_id", "number")
                .values_list("id", "answer_ids", "job_id", "job__trigger", "number",
                             "enqueued_at"))
        for chunk_id, answer_ids, job_id, trigger, number, sent_at in rows.iterator(
                chunk_size=500):
            try:
                reevaluate_answers.delay(answer_ids, trigger, job_id=str(job_id),
                                         chunk_id=chunk_id)
            except Exception as exc:
                # Stop at the first failure: with the broker down every further send would
                # wait out its own connection retries. The stamp of this chunk and of those
                # behind it in the batch is taken back: they were never sent, and a fan-out
                # delivered again or the resumer sends them at once, instead of taking them
                # for queued until they look lost.
                unsent = pending.filter(
                    Q(job_id=job_id, number__gte=number) | Q(job_id__gt=job_id),
                    enqueued_at=sent_at,
                ).update(enqueued_at=None)
                log.warning("chunks not sent", extra={
                    "job": str(job_id), "chunk": chunk_id, "not_sent": unsent,
                    "error_type": type(exc).__name__})
                return

    # robust: the chunks are stored; whatever else fails leaves them pending for the resumer.
    transaction.on_commit(send, robust=True)


def _enqueue_pending_chunks(job: Job) -> int:
    """Send every unfinished chunk of `job`, after the current transaction commits."""
    count = JobChunk.objects.filter(job=job, state=JobChunk.State.PENDING).update(
        enqueued_at=timezone.now()
    )
    _send_chunks_on_commit(Q(job_id=job.pk))
    return count


def _audit_request(job: Job, actor: Actor, count: int | None) -> None:
    audit_record(
        actor=actor,
        action="reevaluation.requested",
        object_type="job",
        object_id=job.pk,
        document_id=job.document_key,
        after={"scope": job.scope, "trigger": job.trigger, "answers": count},
    )


@transaction.atomic
def job_start_for_answers(answer_ids: Iterable[int], trigger: str, user: Any,
                          *, actor: Actor | None = None) -> Job:
    """Re-evaluate the given answers ("re-evaluate now"). Returns the job at once; its
    progress is at `job.progress_url` (JSON) and `job.get_absolute_url()` (a page).

    The work starts after the caller's transaction commits; without a broker (embedded mode)
    it has run by the time the outermost transaction returns.
    """
    ids = sorted({int(i) for i in answer_ids})
    actor = actor or Actor.of_user(user)
    job = _job_create(scope=Job.Scope.ANSWERS, trigger=trigger, actor=actor, user=user)
    job.total = _store_chunks(job, ids)
    job.started_at = timezone.now()
    job.state = Job.State.RUNNING if job.total else Job.State.FINISHED
    job.finished_at = None if job.total else job.started_at
    job.save(update_fields=["total", "started_at", "state", "finished_at"])
    if trigger in _REQUESTED_TRIGGERS:
        _audit_request(job, actor, job.total)
    _enqueue_pending_chunks(job)
    return job


@transaction.atomic
def job_start_for_document(*, document_key: str, trigger: str, actor: Actor | None = None,
                           user: Any = None, cause: str = "",
                           cause_event: int | None = None) -> Job:
    """Re-evaluate every answer citing `document_key`. The answers are looked up by the
    fan-out task, through the index on cited documents. `cause`: the document whose change
    started it, when that is `document_key` or another document of one of its conflicts;
    `cause_event`: the seq of that change's audit event."""
    job = _job_create(scope=Job.Scope.DOCUMENT, trigger=trigger, actor=actor, user=user,
                      document_key=document_key, cause=cause, cause_event=cause_event,
                      fact_keys=document_fact_keys(document_key))
    if trigger in _REQUESTED_TRIGGERS and actor is not None:
        _audit_request(job, actor, None)
    _enqueue_fan_out(job)
    return job


def job_start_by_hand_for_document(*, document_key: str, actor: Actor, user: Any) -> Job:
    """An admin's "re-evaluate every answer citing this document". An unknown document is
    `NotFound`: a typo would otherwise start a job that finds nothing to do."""
    if not Document.objects.filter(key=document_key).exists():
        raise NotFound(f"no document {document_key!r}")
    return job_start_for_document(document_key=document_key, trigger=Verdict.Trigger.MANUAL,
                                  actor=actor, user=user)


@transaction.atomic
def job_start_for_all(*, trigger: str, actor: Actor, user: Any = None) -> Job:
    """Re-evaluate every answer, e.g. after the gate version changed."""
    job = _job_create(scope=Job.Scope.ALL, trigger=trigger, actor=actor, user=user)
    _audit_request(job, actor, None)
    _enqueue_fan_out(job)
    return job


@transaction.atomic
def job_start_validity_sweep(*, day: date) -> Job | None:
    """Re-evaluate the answers whose current verdict's next validity boundary is `day` or
    earlier. Returns None when there is nothing to do or a sweep for `day` is still running
    (beat and a starting worker may both ask on the same morning)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_VALIDITY_SWEEP_LOCK])
    running = Job.objects.filter(scope=Job.Scope.VALIDITY, as_of=day,
                                 state__in=[Job.State.PENDING, Job.State.RUNNING])
    if running.exists() or not validity_sweep_due(day):
        return None
    job = _job_create(scope=Job.Scope.VALIDITY, trigger=Verdict.Trigger.VALIDITY, actor=None,
                      as_of=day)
    _enqueue_fan_out(job)
    return job


def job_fan_out(*, job_id: str) -> Job | None:
    """Find the job's answers, store them as chunks and send one message per chunk.

    Run again on a job it already fanned out (its message delivered again: acks_late puts it
    back when a worker dies before acknowledging it, or the resumer ran the job meanwhile), it
    stores nothing new and sends only the chunks that never went out or that
    `jobs_resume_stalled` would take for lost. The others are still queued or running: sending
    them again would put a second copy of each behind the first.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.ended:
            return job
        if job.state == Job.State.PENDING:
            ids, hidden = _affected_answer_ids(job), list[int]()
            if _follows_only_readable(job):
                ids = _readable_only(ids, job.requested_by, hidden)
            _start_with_chunks(job, ids)
            sent = _enqueue_pending_chunks(job)
            if hidden:
                sent += _start_for_the_worker(job, hidden)
        else:
            sent = _chunks_send_again(_chunks_due_again(timezone.now()).filter(job_id=job.pk))
    log.info("job fanned out", extra={"job": str(job.pk), "scope": job.scope,
                                      "answers": job.total, "messages": sent})
    return job


def _start_with_chunks(job: Job, ids: Iterable[int]) -> None:
    job.total = _store_chunks(job, ids)
    job.started_at = timezone.now()
    job.state = Job.State.RUNNING if job.total else Job.State.FINISHED
    job.finished_at = None if job.total else job.started_at
    job.save(update_fields=["total", "started_at", "state", "finished_at"])


def _follows_only_readable(job: Job) -> bool:
    """A document job a person started (an owner's correction): it reaches the answers that
    claim one of the document's keys whatever they cite, and the person follows its counts.
    Admins and services follow every job whole."""
    return (job.scope == Job.Scope.DOCUMENT and job.requested_by is not None
            and not has_role(job.requested_by, Role.ADMIN)
            and not has_role(job.requested_by, Role.SERVICE))


def _readable_only(ids: Iterable[int], user: Any, hidden: list[int]) -> Iterator[int]:
    """The answers among `ids` that `user` may read; the others go to `hidden`. Two queries
    a batch of 5,000."""
    from reviewqueue.sources.selectors import readable_answers

    for batch in _chunks(ids, 5000):
        readable = readable_answers(set(batch), user)
        for answer_id in batch:
            if answer_id in readable:
                yield answer_id
            else:
                hidden.append(answer_id)


def _start_for_the_worker(job: Job, ids: list[int]) -> int:
    """The answers `job` reached that its person may not read, re-evaluated by a job of the
    worker's beside theirs: theirs counts only answers they may read. Returns the messages
    sent."""
    sibling = _job_create(scope=job.scope, trigger=job.trigger, actor=None,
                          document_key=job.document_key, cause=job.cause,
                          cause_event=job.cause_event, fact_keys=job.fact_keys)
    _start_with_chunks(sibling, ids)
    return _enqueue_pending_chunks(sibling)


def _affected_answer_ids(job: Job) -> Iterator[int]:
    if job.scope == Job.Scope.DOCUMENT:
        return answer_ids_affected_by_document(job.document_key, job.fact_keys
                                               ).iterator(chunk_size=5000)
    if job.scope == Job.Scope.ALL:
        return answer_ids_all().iterator(chunk_size=5000)
    if job.scope == Job.Scope.VALIDITY:
        assert job.as_of is not None
        return answer_ids_due_for_validity(job.as_of, job.pk).iterator(chunk_size=5000)
    raise ValueError(f"job {job.pk} of scope {job.scope!r} has its chunks from the start")


def job_mark_failed(*, job_id: str) -> None:
    """A fan-out that failed for good: the job will not make progress until retried."""
    Job.objects.filter(pk=job_id, state=Job.State.PENDING).update(
        state=Job.State.FAILED, finished_at=timezone.now()
    )


def job_reopen(*, job_id: str) -> None:
    """Let a failed fan-out run again (its dead letter is being retried)."""
    Job.objects.filter(pk=job_id, state=Job.State.FAILED).update(
        state=Job.State.PENDING, finished_at=None
    )


def _finish_job_if_complete(job_id: Any) -> None:
    Job.objects.filter(pk=job_id, state=Job.State.RUNNING,
                       total__lte=F("done") + F("failed")).update(
        state=Job.State.FINISHED, finished_at=timezone.now()
    )


@transaction.atomic
def chunk_finish(*, chunk_id: int, done: int, failed: int, changed_ids: Iterable[int] = (),
                 done_ids: Iterable[int] = ()) -> bool:
    """Count a chunk into its job, once. Returns False when another delivery of the same
    message already did. `done_ids`: the answers this run re-evaluated; `changed_ids`: those
    of them it gave a new verdict."""
    chunk = JobChunk.objects.select_for_update().filter(pk=chunk_id).first()
    if chunk is None or chunk.state == JobChunk.State.FINISHED:
        return False
    # A dead chunk is counted in its job already: all its answers as failed, less those
    # re-evaluated since from their own dead letters. Its figures are replaced now.
    before = ((chunk.done, chunk.failed, chunk.changed) if chunk.state == JobChunk.State.DEAD
              else (0, 0, 0))
    done_ids = list(done_ids)
    # An earlier run of the chunk (a lost connection, a dead chunk sent again) may have given
    # some answers their new verdict: this run found them unchanged. The chunk noted each one
    # as its verdict committed. Only the answers done count: one this run failed on is counted
    # when its dead letter goes through.
    changed = len((set(chunk.changed_ids) | set(changed_ids)) & set(done_ids))
    now = timezone.now()
    if done_ids:
        # A dead letter of an answer this run re-evaluated after all: left by an earlier run
        # of this chunk (delivered again, retried, a dead chunk sent again), which counts it
        # done now, or by another job, whose figures keep the failure. Either way the answer
        # has a verdict of now: nothing waits on the letter. (By the answers this run did,
        # not by when it started: a second copy of the message starting meanwhile must not
        # resolve the letter of an answer this one failed on.)
        DeadLetter.objects.filter(answer_id__in=done_ids, resolved_at__isnull=True,
                                  ).update(resolved_at=now)
    chunk.state = JobChunk.State.FINISHED
    chunk.done, chunk.failed, chunk.changed = done, failed, changed
    chunk.finished_at = now
    chunk.save(update_fields=["state", "done", "failed", "changed", "finished_at"])
    Job.objects.filter(pk=chunk.job_id).update(
        done=F("done") + done - before[0],
        failed=F("failed") + failed - before[1],
        changed=F("changed") + changed - before[2],
    )
    _finish_job_if_complete(chunk.job_id)
    return True


@transaction.atomic
def chunk_finish_early(*, chunk_id: int, task_name: str, answer_ids: list[int], trigger: str,
                       outcome: Any, error: BaseException) -> None:
    """A time limit stopped the chunk's run part way through `answer_ids`; `outcome` (a
    reevaluation.BatchOutcome) says how far it got. The answers it re-evaluated count as done,
    those it could not as failed (each with its dead letter), and the answers it did not get to
    go into a new chunk of the job, sent after the commit: none of them has failed.

    When the limit stopped it on its first answer, that answer took the whole time: it is
    failed with the limit's error, so that every chunk sent on gets further than the last.
    """
    chunk = JobChunk.objects.select_for_update().filter(pk=chunk_id).first()
    if chunk is None or chunk.state == JobChunk.State.FINISHED:
        return
    errors = list(outcome.errors)
    reached = set(outcome.done_ids) | {answer_id for answer_id, _ in errors}
    rest = [answer_id for answer_id in answer_ids if answer_id not in reached]
    if not reached and rest:
        errors.append((rest.pop(0), error))
    for answer_id, answer_error in errors:
        dead_letter_record(task_name=task_name, task_id="", args=[[answer_id], trigger],
                           kwargs={}, error=answer_error, attempts=1, job_id=chunk.job_id,
                           answer_id=answer_id)
    if rest:
        moved = set(rest)
        chunk.answer_ids = [answer_id for answer_id in chunk.answer_ids if answer_id not in moved]
        # An earlier run's new verdicts go with their answers: the new chunk counts them.
        changed_ids = chunk.changed_ids
        chunk.changed_ids = [answer_id for answer_id in changed_ids if answer_id not in moved]
        chunk.save(update_fields=["answer_ids", "changed_ids"])
        _chunk_add(job_id=chunk.job_id, answer_ids=rest,
                   changed_ids=[answer_id for answer_id in changed_ids if answer_id in moved])
    chunk_finish(chunk_id=chunk.pk, done=outcome.done, failed=len(errors),
                 changed_ids=outcome.changed_ids, done_ids=outcome.done_ids)
    log.warning("chunk stopped by its time limit", extra={
        "job": str(chunk.job_id), "chunk": chunk.pk, "done": outcome.done,
        "failed": len(errors), "sent_on": len(rest)})


def _chunk_add(*, job_id: Any, answer_ids: list[int], changed_ids: list[int]) -> None:
    """Store `answer_ids` as a new chunk of the job and send it after the commit. `changed_ids`:
    those of them the job gave a new verdict already."""
    # The job's row lock keeps two chunks split at once from taking the same number.
    Job.objects.select_for_update().filter(pk=job_id).values_list("pk").first()
    last = JobChunk.objects.filter(job_id=job_id).aggregate(last=Max("number"))["last"]
    chunk = JobChunk.objects.create(job_id=job_id, number=(last or 0) + 1, answer_ids=answer_ids,
                                    changed_ids=changed_ids, enqueued_at=timezone.now())
    # A dead chunk sent again belongs to a job that was over; it has work again.
    Job.objects.filter(pk=job_id, state=Job.State.FINISHED).update(
        state=Job.State.RUNNING, finished_at=None)
    _send_chunks_on_commit(Q(pk=chunk.pk))


@transaction.atomic
def chunk_mark_dead(*, chunk_id: int) -> None:
    """The chunk's task failed for good: count its answers as failed so the job ends."""
    chunk = JobChunk.objects.select_for_update().filter(pk=chunk_id).first()
    if chunk is None or chunk.state != JobChunk.State.PENDING:
        return
    chunk.state = JobChunk.State.DEAD
    chunk.failed = len(chunk.answer_ids)
    chunk.finished_at = timezone.now()
    # Sent again from its dead letter, it counts its runs afresh.
    chunk.runs = 0
    chunk.save(update_fields=["state", "failed", "finished_at", "runs"])
    Job.objects.filter(pk=chunk.job_id).update(failed=F("failed") + chunk.failed)
    _finish_job_if_complete(chunk.job_id)


def chunk_record_changed(*, chunk_id: int, answer_id: int) -> None:
    """Note on the chunk that its job gave the answer a new verdict. Called in the transaction
    that stores the verdict, so the two commit together; only an answer that changed costs
    this query. The chunk's row stays locked until then: another copy of the same message waits
    for it, nothing else does."""
    JobChunk.objects.filter(pk=chunk_id).update(
        changed_ids=Func(F("changed_ids"), Value(answer_id), function="array_append",
                         output_field=JobChunk._meta.get_field("changed_ids")))


def chunk_mark_started(*, chunk_id: int) -> int:
    """Record that a worker took the chunk up; returns how often one has, this time included.
    Only the first start is kept as `started_at`: a redelivery of a chunk that was already
    running must not make it look freshly started. Every run is stamped as the last, though."""
    now = timezone.now()
    runs = (JobChunk.objects.filter(pk=chunk_id)
            .update(started_at=Coalesce("started_at", Value(now)), last_started_at=now,
                    runs=F("runs") + 1))
    if not runs:
        return 0
    return int(JobChunk.objects.values_list("runs", flat=True).get(pk=chunk_id))


def jobs_resume_stalled(*, now: Any = None) -> int:
    """Send again what should have run by now. Returns how many jobs were fanned out again plus
    how many chunks were sent again.

    - A job still pending well after it was created: its fan-out message never ran.
    - A chunk whose message was lost. Redis hands a message over (BRPOP) before the worker
      records it as unacknowledged, so a worker killed in between loses it for good; a message
      the worker did record comes back by itself after the visibility timeout. A pending chunk
      is taken for lost when
        - no worker ever took it up, and a chunk of the same job sent after it in the same
          batch was taken up more than REEVALUATION_CHUNK_OVERTAKEN_SECONDS ago: the queue
          is first in, first out, so the queue has moved past it; or
        - it is still pending REEVALUATION_CHUNK_LOST_SECONDS after it was sent (and never
          sooner than a message takes to come back by itself). This also covers the last
          chunk of a batch, which nothing can overtake, and a chunk whose message was lost
          after it started.
    - A chunk never sent: its send failed after the commit (a broker that was down), which
      took back its `enqueued_at`.
    Only these chunks are sent again, as a new batch: sending a job's whole backlog again
    would put a second copy of each chunk in the queue. A chunk sent once too often costs a
    duplicate run: its answers are fresh by then, so no verdict changes, and `chunk_finish`
    counts a chunk into its job once.
    """
    now = now or timezone.now()
    resumed = 0
    for job_id in Job.objects.filter(state=Job.State.PENDING,
                                     created_at__lt=_message_back_by_itself_before(now)) \
            .values_list("pk", flat=True):
        job_fan_out(job_id=str(job_id))
        resumed += 1
    return resumed + _chunks_send_again(_chunks_due_again(now))


def _message_back_by_itself_before(now: Any) -> Any:
    # A message sent before this has had time to come back by itself if it was going to: a
    # worker that took it was killed, Redis restored it after the visibility timeout, and a
    # worker ran it within the time limit.
    return now - timedelta(seconds=settings.CELERY_VISIBILITY_TIMEOUT
                           + settings.CELERY_TASK_TIME_LIMIT)


def _chunks_due_again(now: Any) -> QuerySet[JobChunk]:
    """The pending chunks of running jobs that need a message (again): the lost ones, as
    `jobs_resume_stalled` describes them, and any that was stored but never sent."""
    lost_before = min(_message_back_by_itself_before(now),
                      now - timedelta(seconds=settings.REEVALUATION_CHUNK_LOST_SECONDS))
    overtaken_before = now - timedelta(seconds=settings.REEVALUATION_CHUNK_OVERTAKEN_SECONDS)
    # Only chunks of one batch are compared: one UPDATE stamped them and one loop sent them in
    # `number` order, so in the queue each one sits behind those before it. Across batches the
    # stamps do not tell the queue's order: two jobs committing at once interleave their
    # messages, and Redis puts a message it restores after the visibility timeout back at the
    # head of the queue, ahead of batches sent after it.
    # A restored message can make a chunk look lost that is not: one whose worker died after
    # taking it and before starting it. By the time Redis restores it, the chunks behind it
    # have started and it has been sent again; both copies run and only the first to finish
    # is counted. The restored copy may also start a chunk that was already sent again as lost,
    # in a newer batch: that start only counts against the few chunks sent again with it, each
    # one more such duplicate, never against the older batch still waiting in the queue.
    overtaken_by = JobChunk.objects.filter(
        job_id=OuterRef("job_id"),
        enqueued_at=OuterRef("enqueued_at"),
        number__gt=OuterRef("number"),
        started_at__lt=overtaken_before,
        # Taken up from this batch: a chunk sent again after it started (another fan-out of
        # its job) keeps its older start and says nothing about the new batch.
        started_at__gte=F("enqueued_at"),
    )
    return (
        JobChunk.objects.filter(state=JobChunk.State.PENDING, job__state=Job.State.RUNNING)
        .filter(Q(enqueued_at__lt=lost_before)
                | Q(Exists(overtaken_by), started_at__isnull=True)
                # Stored and stamped in one transaction today; a chunk without a stamp was
                # never sent, however it came to be.
                | Q(enqueued_at__isnull=True))
    )


@transaction.atomic
def _chunks_send_again(chunks: QuerySet[JobChunk]) -> int:
    """Send `chunks` as a new batch, after the current transaction commits."""
    # Two resumers at once (beat, and a worker catching up as it starts), or a resumer and a
    # fan-out delivered again: the second skips what the first is sending.
    chunk_ids = list(chunks.select_for_update(of=("self",), skip_locked=True)
                     .values_list("pk", flat=True))
    if not chunk_ids:
        return 0
    JobChunk.objects.filter(pk__in=chunk_ids).update(enqueued_at=timezone.now())
    _send_chunks_on_commit(Q(pk__in=chunk_ids))
    log.info("lost chunks sent again", extra={"chunks": len(chunk_ids)})
    return len(chunk_ids)


def _first_line(error: BaseException) -> str:
    # Only the first line: database errors put the offending values on the DETAIL line.
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return text[:_MESSAGE_LINE]


@transaction.atomic
def dead_letter_record(*, task_name: str, task_id: str, args: list[Any], kwargs: dict[str, Any],
                       error: BaseException, attempts: int, job_id: Any = None,
                       answer_id: int | None = None) -> DeadLetter:
    """Store a task that failed for good. For one answer of a job (`job_id`, `answer_id`)
    there is one letter however often it fails: a chunk delivered again stores the same
    failure again. The letter keeps the latest error, and waits for an admin again: one that
    was sent again and failed again is as much to look at as a new one (`retry_count` keeps
    how often it was sent, the audit log by whom)."""
    fields: dict[str, Any] = {
        "task_name": task_name,
        "task_id": task_id,
        "args": args,
        "kwargs": kwargs,
        "error_type": f"{type(error).__module__}.{type(error).__qualname__}",
        "error_message": _first_line(error),
        "attempts": attempts,
        "failed_at": timezone.now(),
    }
    if (job_id is not None and answer_id is not None
            and _chunk_holding(job_id=job_id, answer_id=answer_id) is not None):
        # The chunk's row lock (taken first, as chunk_finish does) lets one run of it at a
        # time in; get_or_create still copes with a letter stored in between.
        letter, created = DeadLetter.objects.select_for_update().get_or_create(
            job_id=job_id, answer_id=answer_id, defaults=fields)
        if not created:
            for name, value in fields.items():
                setattr(letter, name, value)
            letter.resolved_at = letter.retried_at = letter.retried_by = None
            letter.save(update_fields=[*fields, "resolved_at", "retried_at", "retried_by"])
    else:
        letter = DeadLetter.objects.create(**fields)
    log.error("task failed for good", extra={"task": task_name, "task_id": task_id,
                                             "error_type": type(error).__name__,
                                             "attempts": attempts, "dead_letter": letter.pk})
    return letter


def _chunk_holding(*, job_id: Any, answer_id: int) -> JobChunk | None:
    """The job's chunk that holds the answer, locked."""
    return (JobChunk.objects.select_for_update()
            .filter(job_id=job_id, answer_ids__contains=[answer_id]).order_by("number").first())


def dead_letter_reevaluate(*, dead_letter_id: int) -> bool:
    """Re-evaluate the answer of a job's dead letter and, when it goes through, count it into
    the job as done instead of failed. Returns whether it did.

    The new verdict and the job's figures commit together. A letter already resolved (sent
    again twice, or its chunk ran again) changes nothing: its answer is counted once.
    """
    from reviewqueue.jobs.selectors import job_actor_and_cause
    from reviewqueue.reviews.services.reevaluation import answers_reevaluate

    with transaction.atomic():
        letter = DeadLetter.objects.filter(pk=dead_letter_id).first()
        if (letter is None or letter.resolved_at is not None or letter.job_id is None
                or letter.answer_id is None):
            return False
        actor, cause = job_actor_and_cause(str(letter.job_id))
        trigger = str(letter.args[1]) if len(letter.args) > 1 else Verdict.Trigger.MANUAL
        outcome = answers_reevaluate(answer_ids=[letter.answer_id], trigger=trigger, actor=actor,
                                     cause=letter.kwargs.get("cause") or cause,
                                     reraise=PASS_THROUGH_ERRORS)
        if outcome.errors:  # it fails still: the letter keeps the latest error
            [(_, error)] = outcome.errors
            dead_letter_record(task_name=letter.task_name, task_id=letter.task_id,
                               args=letter.args, kwargs=letter.kwargs, error=error,
                               attempts=letter.attempts, job_id=letter.job_id,
                               answer_id=letter.answer_id)
            return False
        return _dead_letter_resolve(letter_id=letter.pk, job_id=letter.job_id,
                                    answer_id=letter.answer_id, changed=bool(outcome.changed))


def _dead_letter_resolve(*, letter_id: int, job_id: Any, answer_id: int, changed: bool) -> bool:
    # The chunk first, as chunk_finish locks it: the two count the same answer.
    chunk = _chunk_holding(job_id=job_id, answer_id=answer_id)
    if not DeadLetter.objects.filter(pk=letter_id, resolved_at__isnull=True).update(
            resolved_at=timezone.now()):
        return False  # another retry of the same letter got there first
    if chunk is None:
        return True
    fields: list[str] = []
    if changed and answer_id not in chunk.changed_ids:
        # Noted as a run of the chunk notes it: a dead chunk sent again counts it still.
        chunk.changed_ids.append(answer_id)
        fields.append("changed_ids")
    if chunk.state != JobChunk.State.PENDING and chunk.failed > 0:
        # The chunk counted the answer as failed (a finished chunk, or a dead one: all of its
        # answers). A pending chunk will count it when it finishes. Changed by this retry, or
        # by a run of the chunk before it failed there.
        changed_now = int(answer_id in chunk.changed_ids)
        chunk.done += 1
        chunk.failed -= 1
        chunk.changed += changed_now
        chunk.save(update_fields=[*fields, "done", "failed", "changed"])
        Job.objects.filter(pk=chunk.job_id).update(
            done=F("done") + 1, failed=F("failed") - 1, changed=F("changed") + changed_now)
    elif fields:
        chunk.save(update_fields=fields)
    return True


class BrokerUnavailable(DomainError):
    """The broker (Redis) could not be reached to send a task; nothing was recorded."""

    status_code = 503
    code = "broker_unavailable"


def _dead_letter_sender(name: str, args: list[Any], kwargs: dict[str, Any]) -> Callable[[], None]:
    from reviewqueue.celery import app

    # A web process has imported only the task modules its views use: look the task up among
    # all of them, or an eager app would hand it to the in-memory broker, where nothing runs.
    if name not in app.tasks:
        app.loader.import_default_modules()

    def send() -> None:
        task = app.tasks.get(name)
        if task is not None:
            task.apply_async(args=args, kwargs=kwargs)  # honours eager mode
        else:
            app.send_task(name, args=args, kwargs=kwargs)

    return send


@transaction.atomic
def dead_letter_retry(*, dead_letter_id: int, user: Any, actor: Actor) -> DeadLetter | None:
    """Send a dead-lettered task again, with the same arguments, and record that it was. One
    resolved meanwhile (its answer was re-evaluated) is not sent: None comes back, as for a
    letter that is gone.

    The message goes to the broker inside this transaction, after everything is recorded: a
    broker that cannot be reached raises `BrokerUnavailable` and rolls back the retry count,
    the audit event and the reopening of a failed fan-out job, so none of them claims a retry
    that did not happen. A worker that takes a fan-out message before this commits waits for
    it: the fan-out locks its job row, which the reopening holds until then. Without a broker
    (eager, embedded mode) the task runs in this process after the commit, as queued work does.
    """
    from reviewqueue.celery import app

    letter = DeadLetter.objects.select_for_update().filter(pk=dead_letter_id).first()
    if letter is None or letter.resolved_at is not None:
        return None  # gone, or its answer was re-evaluated since: nothing to send
    if letter.task_name == "jobs.fan_out_job":
        job_id = letter.kwargs.get("job_id") or (letter.args[0] if letter.args else None)
        if job_id:
            job_reopen(job_id=str(job_id))
    letter.retry_count += 1
    letter.retried_at = timezone.now()
    letter.retried_by = user if getattr(user, "is_authenticated", False) else None
    letter.save(update_fields=["retry_count", "retried_at", "retried_by"])
    audit_record(actor=actor, action="dead_letter.retried", object_type="dead_letter",
                 object_id=letter.pk,
                 after={"task": letter.task_name, "retry_count": letter.retry_count})
    if letter.job_id is not None and letter.answer_id is not None:
        # One answer of a job: the task that re-evaluates it also counts it into the job.
        send = _dead_letter_sender("jobs.reevaluate_dead_letter", [letter.pk], {})
    else:
        send = _dead_letter_sender(letter.task_name, list(letter.args), dict(letter.kwargs))
    if app.conf.task_always_eager:
        transaction.on_commit(send)
        return letter
    try:
        send()
    except BROKER_ERRORS as exc:
        log.warning("dead letter not sent again", extra={
            "dead_letter": letter.pk, "task": letter.task_name, "error_type": type(exc).__name__})
        raise BrokerUnavailable("the broker could not be reached; the task was not sent "
                                "again") from exc
    return letter
