"""Reads for re-evaluation jobs: which answers a job covers, progress, lists for admins."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.db import connection
from django.db.models import BigIntegerField, Exists, F, Func, OuterRef, Q, QuerySet, Subquery
from django.urls import reverse
from django.utils import timezone

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.principals import EVERYONE, user_principals
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import WORKER, Actor
from reviewqueue.instants import instant_text
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.reviews.models import (
    Answer,
    AnswerVersion,
    RetrievedItem,
    ReviewItem,
    Verdict,
)
from reviewqueue.sources.models import Document, Fact, Revision
from reviewqueue.sources.selectors import document_get, may_see_document


def answer_ids_citing_document(document_key: str) -> QuerySet[Any]:
    """Answers with a retrieved item on the document: an index-only scan of
    `retrieved_by_document` (document_key, answer), however many answers are stored."""
    return (
        RetrievedItem.objects.filter(document_key=document_key)
        .values_list("answer_id", flat=True)
        .distinct()
        .order_by("answer_id")
    )


def document_fact_keys(document_key: str) -> list[str]:
    """The fact keys of the document's current revision and of the one before it: the keys on
    which a publish or a withdrawal changed what the knowledge base says. Before it by update
    time, as revisions take turns being current: a late revision, received after a newer one,
    came last but was never current, and the keys a publish dropped are those of the revision
    it replaced."""
    latest = (Revision.objects.filter(document__key=document_key)
              .order_by(*Revision.NEWEST_FIRST)
              .values_list("id", flat=True)[:2])
    return sorted(set(Fact.objects.filter(revision_id__in=list(latest))
                      .values_list("key", flat=True)))


def answer_ids_claiming(keys: list[str]) -> QuerySet[Any]:
    """Answers whose current version claims one of `keys`. The gate compares a claim with the
    facts on its key in every document, cited or not, so a change to any document carrying
    the key can change the verdict. Read through the GIN index of versions' claimed keys."""
    # `claim_keys && keys`: no keys, no answer.
    claims = Q(claim_keys__overlap=keys)
    # Driven from the versions (the index gives those claiming a key); whether each is its
    # answer's current version is a probe of the answer's primary key, never a walk of answers.
    # A scalar subquery, not EXISTS: the planner cannot turn it into a join, so it prices the
    # scan of versions alone (where the index wins) rather than a parallel scan of every
    # version that splits the probes between processes and looks cheaper (at 100,000 answers
    # with 1,000 claiming the key, about 14 ms against 1.4 through the index).
    current = Answer.objects.filter(pk=OuterRef("answer_id")).values("current_version_id")[:1]
    return (
        AnswerVersion.objects.filter(claims, pk=Subquery(current))
        .values_list("answer_id", flat=True)
        .order_by("answer_id")
    )


def answer_ids_affected_by_document(document_key: str,
                                    keys: list[str] | None = None) -> QuerySet[Any]:
    """Answers a change to the document may change the verdict of: those that cite it, and
    those that claim one of `keys`, by default those its facts carry (now or in the revision
    before)."""
    citing = answer_ids_citing_document(document_key)
    if keys is None:
        keys = document_fact_keys(document_key)
    if not keys:
        return citing
    # UNION drops the answers found both ways.
    return citing.order_by().union(answer_ids_claiming(keys).order_by()).order_by("answer_id")


def answer_ids_all() -> QuerySet[Any]:
    return (Answer.objects.filter(current_version__isnull=False)
            .values_list("id", flat=True).order_by("id"))


def answer_ids_due_for_validity(day: date, job_id: Any = None) -> QuerySet[Any]:
    """Answers whose *current* verdict's next validity boundary is `day` or earlier, and those
    whose current verdict was computed for a later day than `day` (see _ahead_due).

    PostgreSQL walks the partial index `verdict_next_boundary` up to `day` and joins each
    verdict to the answer that holds it as current through the index on
    `answer.current_verdict_id`; older verdicts of the same answer drop out in the join.
    """
    due = Q(current_verdict__next_boundary__lte=day)
    if _ahead_due(day, job_id):
        due |= _verdict_ahead_of(day)
    return (Answer.objects.filter(due).exclude(_failed_by_a_sweep_of(day))
            .values_list("id", flat=True).order_by("id"))


def _failed_by_a_sweep_of(day: date) -> Q:
    """An answer a sweep of `day` could not re-evaluate, its dead letter still open: the day's
    later sweeps (each starting worker asks for one) leave it to that letter, which an admin
    can send again, and to the next day's sweep, rather than each failing on it once more and
    adding a job and a letter.

    Its own letter, or its chunk's: a chunk that killed its worker at every run, or used up
    its retries, is dead-lettered whole, in a letter that names no answer, and stays dead
    until a run sent again from that letter finishes it. Taken again, it would take a worker
    down at every sweep of the day."""
    own_letter = Exists(DeadLetter.objects.filter(
        answer_id=OuterRef("pk"), resolved_at__isnull=True,
        job__scope=Job.Scope.VALIDITY, job__as_of=day))
    # The answers of the day's dead chunks, read once (a hashed subplan) rather than probed
    # per answer: chunks have no index on their answers, and there are few dead ones.
    in_a_dead_chunk = (JobChunk.objects.filter(state=JobChunk.State.DEAD,
                                               job__scope=Job.Scope.VALIDITY, job__as_of=day)
                       .annotate(answer_id=Func(F("answer_ids"), function="unnest",
                                                output_field=BigIntegerField()))
                       .values("answer_id"))
    return Q(own_letter) | Q(pk__in=in_a_dead_chunk)


def _verdict_ahead_of(day: date) -> Q:
    """Answers checked on today whose current verdict was computed for a later day: the date
    went back, as when a drill's REEVALUATION_TODAY is lifted. Their next boundaries lie
    further ahead still, so the boundaries alone would leave them on the drill's verdicts."""
    return Q(as_of__isnull=True, current_verdict__as_of__gt=day)


def _ahead_due(day: date, job_id: Any = None) -> bool:
    """Whether the day's sweep takes the answers `_verdict_ahead_of` the day: the first sweep
    of the day does (a scan, once a day and when a worker starts). One whose verdict came out
    the same (every fact as much in force today as on the later day) keeps that verdict,
    computed ahead, and is right today: taken once a day, not at every sweep of it. `job_id`:
    that first sweep's job, when it finds its answers."""
    earlier = Job.objects.filter(scope=Job.Scope.VALIDITY, as_of=day)
    if job_id is not None:
        earlier = earlier.exclude(pk=job_id)
    return not earlier.exists() and Answer.objects.filter(_verdict_ahead_of(day)).exists()


def validity_sweep_due(day: date) -> bool:
    return (Answer.objects.filter(current_verdict__next_boundary__lte=day)
            .exclude(_failed_by_a_sweep_of(day)).exists() or _ahead_due(day))


def reevaluation_waiting(answer: Answer) -> Job | None:
    """The oldest re-evaluation started after the answer's current verdict that has yet to
    reach the answer: one still waiting to look up its answers whose scope takes this one in
    (every answer; a document it cites or whose keys it claims; a validity sweep on or after
    its verdict's next boundary), or a running one holding it in a chunk no worker has
    finished. Until then the verdict may be behind the sources. One query; `retrieved` and
    the current version and verdict are read as loaded."""
    verdict, version = answer.current_verdict, answer.current_version
    if verdict is None or version is None:
        return None
    documents = sorted({r.document_key for r in answer.retrieved.all()})
    keys = sorted({claim["key"] for claim in version.claims})
    covers = (Q(scope=Job.Scope.ALL) | Q(scope=Job.Scope.DOCUMENT, document_key__in=documents)
              | Q(scope=Job.Scope.DOCUMENT, fact_keys__overlap=keys))
    if verdict.next_boundary is not None:
        covers |= Q(scope=Job.Scope.VALIDITY, as_of__gte=verdict.next_boundary)
    in_a_chunk = Exists(JobChunk.objects.filter(job=OuterRef("pk"), state=JobChunk.State.PENDING,
                                                answer_ids__contains=[answer.pk]))
    return (Job.objects.filter(created_at__gt=verdict.created_at)
            .filter(Q(state=Job.State.PENDING) & covers | Q(state=Job.State.RUNNING) & in_a_chunk)
            .order_by("created_at").first())


def job_actor_and_cause(job_id: str | None) -> tuple[Actor, str]:
    """Who the verdicts of a job are audited as (the worker, or the person who asked), and
    the document whose change started it ("" if none did)."""
    if job_id is None:
        return WORKER, ""
    found = Job.objects.filter(pk=job_id).values_list("actor_type", "actor", "cause").first()
    return (Actor(found[0], found[1]), found[2]) if found else (WORKER, "")


def jobs_started_by(event_seq: int) -> list[Job]:
    """The jobs the change audited as event `event_seq` started, in the order its reply gave
    them: its own document's first, then by document key."""
    jobs = Job.objects.filter(cause_event=event_seq)
    return sorted(jobs, key=lambda job: (job.document_key != job.cause, job.document_key))


def job_visible_to(job: Job, user: Any, *, started_by_user_only: bool = False) -> bool:
    """Admins follow every job; anyone else the jobs they started, unless the job names a
    document they may not see (any more), since a job shows its document id.

    `started_by_user_only` is for an API token that may start jobs but not read: it follows
    only the jobs its user started, an admin's token as well.
    """
    if not getattr(user, "is_authenticated", False):
        return False
    if has_role(user, Role.ADMIN) and not started_by_user_only:
        return True
    if job.requested_by_id != user.pk:
        return False
    if not job.document_key:
        return True
    document = document_get(job.document_key)
    # No such document (an admin named a key that does not exist): the id is one the user
    # typed, and it says nothing about a document.
    return document is None or may_see_document(user, document)


def job_progress(job: Job) -> dict[str, Any]:
    return {
        "id": str(job.pk),
        "scope": job.scope,
        "document_id": job.document_key or None,
        "trigger": job.trigger,
        "state": job.state,
        "total": job.total,
        "done": job.done,
        "failed": job.failed,
        "changed": job.changed,
        "percent": job.percent,
        "finished": job.ended,
        "created_at": instant_text(job.created_at),
        "finished_at": instant_text(job.finished_at) if job.finished_at else None,
        # Where a token follows it; the other two are for a signed-in browser.
        "url": reverse("api:job", args=[job.pk]),
        "progress_url": job.progress_url,
        "page_url": job.get_absolute_url(),
    }


# The order in which the progress page lists where the answers stand: those still waiting first.
STANDING_ORDER = (Answer.Status.HELD, Answer.Status.ABSTAINED, Answer.Status.CANDIDATE,
                  Answer.Status.APPROVED, Answer.Status.REJECTED)


# The progress page counts where at most this many of the answers a change reached stand.
STANDING_CAP = 10_000


def where_answers_stand(jobs: list[Job], user: Any, cap: int = STANDING_CAP
                        ) -> tuple[list[dict[str, Any]], bool, bool]:
    """Where the answers `jobs` reached stand now: per status (and, for held ones, per reason
    they wait), how many, how many of them the change moved there while its jobs worked on
    them (their status changed, or, held before and after, the reason they wait did: a
    decided answer's verdicts still change, but it waits for nothing), and are still there
    (`moved`), and how many it moved at all, wherever they are now (`moved_any`); whether more
    than `cap` answers were reached, only `cap` of them counted; and whether any of them
    changed again after the jobs ended (a later change). An answer reached by several jobs
    counts once, and only an answer `user` may read counts at all: a job also reaches the
    answers that claim one of its document's keys, whatever they cite. One query, which reads
    at most `cap` + 1 answers.

    An answer counts as moved by what happened while a chunk that held it ran, from its first
    start to its end, not over the jobs' whole time: a job of an earlier change that still
    waited for a worker when these started runs its chunks in that time, and the moves it
    makes are that change's. The chunks are those of `jobs` and of the other jobs of the same
    changes (naming the same audit event), such as the worker's job on a document the person
    may not read, which may reach an answer first. (Verdicts do not say which job gave them:
    chunks of two changes' jobs that two workers run at the same moment are told apart only by
    their times.)"""
    if not jobs:
        return [], False, False
    now = timezone.now()
    ended = max(job.finished_at or now for job in jobs)
    verdicts = Verdict._meta.db_table
    last_verdict = f"""(SELECT v.decision, v.reason FROM {verdicts} v
                        WHERE v.answer_id = a.id AND v.created_at {{}}
                        ORDER BY v.created_at DESC, v.id DESC LIMIT 1)"""
    with connection.cursor() as cursor:
        # One answer past the cap is read, only to say that there are more. Each answer `jobs`
        # reached comes with the times of the chunks of the change's jobs that held it (one,
        # unless several of them reached it); for each, the reason it waited for before is its
        # last verdict's from before the chunk started, after, its last verdict's from the
        # chunk's time.
        cursor.execute(f"""
            SELECT status, primary_reason, count(*) FILTER (WHERE n <= %(cap)s),
                   count(*) FILTER (WHERE moved AND NOT later AND n <= %(cap)s),
                   count(*) FILTER (WHERE moved AND n <= %(cap)s), bool_or(n > %(cap)s),
                   bool_or(later)
            FROM (SELECT a.status, i.primary_reason,
                         EXISTS (
                             SELECT 1 FROM unnest(h.starts, h.ends) w(started, ended)
                             LEFT JOIN LATERAL {last_verdict.format("< w.started")}
                                 earlier ON true
                             LEFT JOIN LATERAL {last_verdict.format(
                                 "BETWEEN w.started AND w.ended")} during ON true
                             WHERE a.status_changed_at BETWEEN w.started AND w.ended
                                OR (earlier.decision = 'review' AND during.decision = 'review'
                                    AND earlier.reason <> during.reason
                                    AND (a.status = %(held)s
                                         OR a.status_changed_at > w.ended))) AS moved,
                         coalesce(a.status_changed_at > %(ended)s
                                  OR c.created_at > %(ended)s, false) AS later,
                         row_number() OVER () AS n
                  FROM (SELECT u.answer_id, array_agg(k.started_at) AS starts,
                               array_agg(coalesce(k.finished_at, %(now)s)) AS ends
                        FROM {JobChunk._meta.db_table} k, unnest(k.answer_ids) u(answer_id)
                        -- One array, read first: the chunks are then found through the
                        -- index on their job, as an OR of the two would not let them be.
                        WHERE k.job_id = ANY(%(jobs)s::uuid[] || ARRAY(
                            SELECT j.id FROM {Job._meta.db_table} j
                            WHERE j.cause_event = ANY(%(events)s::bigint[])))
                        GROUP BY u.answer_id
                        HAVING bool_or(k.job_id = ANY(%(jobs)s))) h
                  JOIN {Answer._meta.db_table} a ON a.id = h.answer_id
                  LEFT JOIN {ReviewItem._meta.db_table} i ON i.answer_id = a.id
                  LEFT JOIN {verdicts} c ON c.id = a.current_verdict_id
                  -- Readable: some retrieved document, and none the user may not read (or
                  -- that never came). Per-row probes, as in readable_rows, not anti joins.
                  WHERE EXISTS (SELECT 1 FROM {RetrievedItem._meta.db_table} r
                                WHERE r.answer_id = a.id)
                    AND coalesce((
                        SELECT 1 FROM {RetrievedItem._meta.db_table} r
                        WHERE r.answer_id = a.id AND NOT EXISTS (
                            SELECT 1 FROM {Document._meta.db_table} d
                            WHERE d.key = r.document_key
                              AND d.allowed_principals && %(principals)s::varchar[])
                        LIMIT 1), 0) <> 1
                  LIMIT %(read)s) reached
            GROUP BY 1, 2""", {"cap": cap, "now": now, "ended": ended,
                               "held": Answer.Status.HELD,
                               "jobs": [job.pk for job in jobs], "read": cap + 1,
                               "events": sorted({job.cause_event for job in jobs
                                                 if job.cause_event is not None}),
                               "principals": [*user_principals(user), EVERYONE]})
        found = cursor.fetchall()
    rows = [{"status": status, "reason": reason or "", "count": count, "moved": moved,
             "moved_any": moved_any}
            for status, reason, count, moved, moved_any, _past, _later in found if count]
    capped = any(past for *_, past, _later in found)
    later = any(changed for *_, changed in found)
    return sorted(rows, key=lambda row: (STANDING_ORDER.index(row["status"]), -row["count"],
                                         row["reason"])), capped, later


JOB_PAGE = 100


def jobs_page(*, before: Job | None = None, size: int = JOB_PAGE) -> tuple[list[Job], Job | None]:
    """One page of jobs, newest first, older than `before` (a keyset on (created_at, id)
    through the index on created_at: no OFFSET, no COUNT), and the job to read the next older
    page from, or None at the oldest."""
    jobs = Job.objects.select_related("requested_by")
    if before is not None:
        # created_at <= on its own too, besides the OR: the index then starts the scan where
        # the last page ended (the OR alone is a filter over every newer job).
        jobs = jobs.filter(Q(created_at__lt=before.created_at)
                           | Q(created_at=before.created_at, pk__lt=before.pk),
                           created_at__lte=before.created_at)
    page = list(jobs.order_by("-created_at", "-id")[:size + 1])
    return page[:size], page[size - 1] if len(page) > size else None


def dead_letters_waiting() -> QuerySet[DeadLetter]:
    """Dead letters neither sent again (since they last failed) nor resolved by a later run
    of their chunk: what an admin still has to look at."""
    return DeadLetter.objects.filter(retried_at__isnull=True, resolved_at__isnull=True)


def dead_letters_recent(limit: int = 20) -> QuerySet[DeadLetter]:
    return DeadLetter.objects.order_by("-failed_at")[:limit]


def chunk_is_finished(*, chunk_id: int) -> bool:
    """Whether another delivery of the chunk's message already did its work: a cheap check a
    duplicate makes before re-evaluating anything."""
    return JobChunk.objects.filter(pk=chunk_id, state=JobChunk.State.FINISHED).exists()
