"""The figures behind the insight page, GET /api/v1/metrics and /metrics.

Unless a figure says otherwise it covers a cohort: the answers received in the window (by the
time of their first verdict, the one with trigger "ingest"), optionally of one index release.
Gate figures use that first verdict, so a later re-evaluation does not rewrite what the gate
decided when the answer arrived. Review figures use the first decision on each answer.

Breakdowns carry reason codes, decision names and index release names only: never question,
answer or passage text.

These functions count whole tables (the queue, a window's verdicts and decisions): only the
worker runs them, through insight/snapshots.py. Pages read the stored snapshot.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import connection
from django.db.models import Count, DateField, Exists, Min, OuterRef, Q, QuerySet
from django.db.models.functions import Trunc
from django.utils import timezone
from django.utils.translation import gettext_noop

from reviewqueue.counting import bounded_count
from reviewqueue.insight.stats import ratio, wilson_interval
from reviewqueue.instants import instant_text
from reviewqueue.reviews.models import Answer, Decision, RetrievedItem, ReviewItem, Verdict
from reviewqueue.sources.models import Document

RELEASE_LIMIT = 12
# The labels stay English in the figures (GET /api/v1/metrics returns them as they are); they
# are marked for translation only, and the insight page translates them when it shows them.
AGE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    (gettext_noop("under 1 hour"), 3600),
    (gettext_noop("1 to 24 hours"), 86400),
    (gettext_noop("1 to 7 days"), 7 * 86400),
    (gettext_noop("over 7 days"), None),
)


@dataclass(frozen=True)
class Window:
    since: dt.date
    until: dt.date  # inclusive
    release: str = ""
    bucket: str = "day"  # "day" or "week"

    @property
    def start(self) -> dt.datetime:
        return _day_start(self.since)

    @property
    def end(self) -> dt.datetime:
        return _day_start(self.until + dt.timedelta(days=1))

    def as_dict(self) -> dict[str, Any]:
        return {"since": self.since.isoformat(), "until": self.until.isoformat(),
                "release": self.release or None, "bucket": self.bucket}


def _day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def default_window(today: dt.date | None = None) -> Window:
    today = today or timezone.localdate()
    return Window(since=today - dt.timedelta(days=29), until=today)


def ingest_verdicts(w: Window) -> QuerySet[Verdict]:
    """The first verdict of every answer in the cohort."""
    verdicts = Verdict.objects.filter(trigger=Verdict.Trigger.INGEST,
                                      created_at__gte=w.start, created_at__lt=w.end)
    if w.release:
        verdicts = verdicts.filter(answer__index_release=w.release)
    return verdicts


# --- Gate ---------------------------------------------------------------------------------------


def hold_rates(w: Window) -> dict[str, Any]:
    """What the gate decided on arrival: the share held for review overall and per primary
    reason (per-reason shares add up to the hold rate), plus candidates and abstentions."""
    verdicts = ingest_verdicts(w)
    by_decision = dict(verdicts.values_list("decision").annotate(n=Count("id")).order_by())
    total = sum(by_decision.values())
    by_reason = (verdicts.filter(decision=Verdict.Decision.REVIEW).values_list("reason")
                 .annotate(n=Count("id")).order_by("-n", "reason"))
    return {
        "answers": total,
        "held": ratio(by_decision.get("review", 0), total),
        "candidate": ratio(by_decision.get("candidate", 0), total),
        "abstained": ratio(by_decision.get("abstain", 0), total),
        "by_reason": [{"reason": reason, **ratio(n, total)} for reason, n in by_reason],
    }


def hold_rate_over_time(w: Window) -> list[dict[str, Any]]:
    """The hold rate per day (or week, starting Monday); empty periods are listed with no rate."""
    rows = (
        ingest_verdicts(w)
        .annotate(period=Trunc("created_at", w.bucket, output_field=DateField()))
        .values("period")
        .annotate(total=Count("id"), held=Count("id", filter=Q(decision="review")))
        .order_by("period")
    )
    found = {row["period"]: row for row in rows}
    step = dt.timedelta(days=7 if w.bucket == "week" else 1)
    period = w.since - dt.timedelta(days=w.since.weekday()) if w.bucket == "week" else w.since
    series = []
    while period <= w.until:
        row = found.get(period, {"total": 0, "held": 0})
        series.append({"period": period.isoformat(), **ratio(row["held"], row["total"])})
        period += step
    return series


def hold_rate_by_release(w: Window) -> list[dict[str, Any]]:
    """Per index release (the busiest first): the hold rate with its 95% Wilson interval and
    the share held for each reason, so two releases on the same traffic can be compared."""
    verdicts = ingest_verdicts(w)
    rows = list(
        verdicts.values("answer__index_release")
        .annotate(total=Count("id"),
                  held=Count("id", filter=Q(decision="review")),
                  abstained=Count("id", filter=Q(decision="abstain")))
        .order_by("-total", "answer__index_release")[:RELEASE_LIMIT]
    )
    releases = [row["answer__index_release"] for row in rows]
    reasons: dict[str, dict[str, int]] = {}
    for release, reason, n in (
        verdicts.filter(decision="review", answer__index_release__in=releases)
        .values_list("answer__index_release", "reason").annotate(n=Count("id")).order_by()
    ):
        reasons.setdefault(release, {})[reason] = n
    out = []
    for row in rows:
        release, total = row["answer__index_release"], row["total"]
        interval = wilson_interval(row["held"], total)
        out.append({
            "release": release,
            "answers": total,
            "held": {**ratio(row["held"], total),
                     "low": round(interval[0], 6) if interval else None,
                     "high": round(interval[1], 6) if interval else None},
            "abstained": ratio(row["abstained"], total),
            "by_reason": {reason: ratio(n, total)
                          for reason, n in sorted(reasons.get(release, {}).items())},
        })
    return out


def citation_quality(w: Window) -> dict[str, Any]:
    """Citation figures of the first verdicts.

    - fabricated: a claim or marker cites an id that is not among the retrieved items at all
      (an unknown_citation finding whose id the answer never retrieved; a withdrawn document
      also gives unknown_citation but is not a fabrication). It should stay at zero.
    - uncited: the answer text has no citation marker (the uncited_answer finding).
    - single_source: at least one claim rests on a single source (the gate's warning).
    - never_cited: retrieved items that no claim cites, out of all retrieved items.
    """
    # Table names come from the models; every value is a query parameter.
    verdict, answer = Verdict._meta.db_table, Answer._meta.db_table
    sql = f"""
        SELECT
          count(*),
          count(*) FILTER (WHERE EXISTS (
              SELECT 1 FROM jsonb_array_elements(v.findings) AS f
              WHERE f->>'code' = 'unknown_citation'
                AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v.revisions_used) AS r
                                WHERE r->>'cite' = f->'evidence'->>0))),
          count(*) FILTER (WHERE 'uncited_answer' = ANY(v.reasons)),
          count(*) FILTER (WHERE EXISTS (
              SELECT 1 FROM jsonb_array_elements(v.warnings) AS g
              WHERE g->>'code' = 'single_source')),
          coalesce(sum(jsonb_array_length(v.revisions_used)), 0),
          coalesce(sum((SELECT count(*) FROM jsonb_array_elements(v.warnings) AS g
                        WHERE g->>'code' = 'uncited_evidence')), 0)
        FROM {verdict} AS v JOIN {answer} AS a ON a.id = v.answer_id
        WHERE v.trigger = 'ingest' AND v.created_at >= %(start)s AND v.created_at < %(end)s
          AND (%(release)s = '' OR a.index_release = %(release)s)
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"start": w.start, "end": w.end, "release": w.release})
        total, fabricated, uncited, single, retrieved, never_cited = cursor.fetchone()
    return {
        "answers": total,
        "fabricated": ratio(fabricated, total),
        "uncited": ratio(uncited, total),
        "single_source": ratio(single, total),
        "never_cited": ratio(int(never_cited), int(retrieved)),
    }


# --- Review -------------------------------------------------------------------------------------


def review_outcomes(w: Window) -> dict[str, Any]:
    """What reviewers did with what the gate held, and with the audit samples.

    Held answers are those whose first verdict was `review`; each counts with its first
    decision that took it out of the queue (an edit the gate still held did not), as an edit
    when it was edited on the way. Over-hold: approved unchanged, out of held answers decided.
    Edit and reject rates share that denominator, so the three add up to one. Time to
    decision runs from the first verdict to that decision.

    Audit samples are answers the gate passed as candidates that were sent to the queue at
    random (AUDIT_SAMPLE_RATE). A sample counts when its first decision was taken on a verdict
    that still passed it: the one at ingest, or a later one computed after its sources changed
    (leaving those out would drop exactly the samples whose sources moved). A sample the gate
    held on a later verdict no longer tests a pass. The share of samples rejected, with a 95%
    Wilson interval, estimates the share of candidates that should not have passed.
    """
    verdict, answer, decision = (Verdict._meta.db_table, Answer._meta.db_table,
                                 Decision._meta.db_table)
    sql = f"""
        WITH ingest AS (
            SELECT v.id AS verdict_id, v.answer_id, v.decision, v.created_at AS held_at
            FROM {verdict} AS v JOIN {answer} AS a ON a.id = v.answer_id
            WHERE v.trigger = 'ingest' AND v.created_at >= %(start)s AND v.created_at < %(end)s
              AND (%(release)s = '' OR a.index_release = %(release)s)
        ), first_decision AS (
            -- The first decision that took the answer out of the queue: an edit the gate
            -- still held left it there. An answer edited before it went counts as edited.
            SELECT DISTINCT ON (d.answer_id) d.answer_id, d.verdict_id, d.created_at,
                   CASE WHEN EXISTS (SELECT 1 FROM {decision} AS e
                                     WHERE e.answer_id = d.answer_id AND e.action = 'edit'
                                       AND e.id <= d.id)
                        THEN 'edit' ELSE d.action END AS action
            FROM {decision} AS d
            WHERE d.answer_id IN (SELECT answer_id FROM ingest)
              AND (d.action <> 'edit' OR EXISTS (
                  SELECT 1 FROM {verdict} AS ev
                  WHERE ev.version_id = d.new_version_id AND ev.trigger = 'edit'
                    AND ev.decision = 'candidate'))
            ORDER BY d.answer_id, d.created_at, d.id
        ), joined AS (
            SELECT i.decision AS gate, fv.decision = 'candidate' AS on_candidate,
                   f.action, f.answer_id IS NOT NULL AS decided,
                   extract(epoch FROM f.created_at - i.held_at) AS wait
            FROM ingest AS i LEFT JOIN first_decision AS f ON f.answer_id = i.answer_id
                 LEFT JOIN {verdict} AS fv ON fv.id = f.verdict_id
        )
        SELECT
          count(*) FILTER (WHERE gate = 'review'),
          count(*) FILTER (WHERE gate = 'review' AND decided),
          count(*) FILTER (WHERE gate = 'review' AND action = 'approve'),
          count(*) FILTER (WHERE gate = 'review' AND action = 'edit'),
          count(*) FILTER (WHERE gate = 'review' AND action = 'reject'),
          percentile_cont(0.5) WITHIN GROUP (ORDER BY wait)
              FILTER (WHERE gate = 'review' AND decided),
          percentile_cont(0.95) WITHIN GROUP (ORDER BY wait)
              FILTER (WHERE gate = 'review' AND decided),
          count(*) FILTER (WHERE gate = 'candidate'),
          count(*) FILTER (WHERE gate = 'candidate' AND on_candidate),
          count(*) FILTER (WHERE gate = 'candidate' AND on_candidate AND action = 'reject'),
          count(*) FILTER (WHERE gate = 'candidate' AND on_candidate AND action = 'edit')
        FROM joined
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"start": w.start, "end": w.end, "release": w.release})
        (held, decided, approved, edited, rejected, p50, p95,
         candidates, samples, samples_rejected, samples_edited) = cursor.fetchone()

    cohort = ingest_verdicts(w).values("answer_id")
    decisions = Decision.objects.filter(answer_id__in=cohort)
    expanded = decisions.aggregate(total=Count("id"),
                                   expanded=Count("id", filter=Q(read_passages=True)))
    interval = wilson_interval(samples_rejected, samples)
    false_pass: dict[str, Any] = {
        "samples_decided": samples,
        "samples_waiting": ReviewItem.objects.filter(audit_sample=True,
                                                     answer_id__in=cohort).count(),
        "rejected": ratio(samples_rejected, samples),
        "edited": ratio(samples_edited, samples),
        "low": round(interval[0], 6) if interval else None,
        "high": round(interval[1], 6) if interval else None,
        "candidates": candidates,
        "estimated_bad_candidates": None,
    }
    if interval:
        false_pass["estimated_bad_candidates"] = {
            "low": round(candidates * interval[0], 1),
            "estimate": round(candidates * samples_rejected / samples, 1),
            "high": round(candidates * interval[1], 1),
        }
    return {
        "held": held,
        "decided": decided,
        "over_hold": ratio(approved, decided),
        "edit": ratio(edited, decided),
        "reject": ratio(rejected, decided),
        "time_to_decision_seconds": {
            "median": None if p50 is None else round(float(p50), 3),
            "p95": None if p95 is None else round(float(p95), 3),
        },
        "expanded_passage": ratio(expanded["expanded"], expanded["total"]),
        "false_pass": false_pass,
    }


# --- Now: queue and operations ------------------------------------------------------------------


def backlog(now: dt.datetime | None = None) -> dict[str, Any]:
    """The queue as it stands: its size, the age of its oldest entry, how ages spread."""
    now = now or timezone.now()
    items = ReviewItem.objects.all()
    filters: dict[str, Any] = {}
    lower = None
    for index, (_, upper) in enumerate(AGE_BUCKETS):
        q = Q()
        if upper is not None:
            q &= Q(entered_at__gt=now - dt.timedelta(seconds=upper))
        if lower is not None:
            q &= Q(entered_at__lte=now - dt.timedelta(seconds=lower))
        filters[f"age_{index}"] = Count("id", filter=q)
        lower = upper
    figures = items.aggregate(
        depth=Count("id"),
        oldest=Min("entered_at"),
        samples=Count("id", filter=Q(audit_sample=True)),
        waiting_for_owner=Count("id", filter=Q(waiting_for_owner=True)),
        **filters,
    )
    by_reason = (items.values_list("primary_reason").annotate(n=Count("id"))
                 .order_by("-n", "primary_reason"))
    oldest = figures["oldest"]
    return {
        "waiting_for_documents": waiting_for_documents(),
        "depth": figures["depth"],
        "oldest_age_seconds": round((now - oldest).total_seconds(), 3) if oldest else 0.0,
        "audit_samples": figures["samples"],
        "waiting_for_owner": figures["waiting_for_owner"],
        "by_age": [{"age": label, "count": figures[f"age_{i}"]}
                   for i, (label, _) in enumerate(AGE_BUCKETS)],
        "by_reason": [{"reason": reason, "count": n} for reason, n in by_reason],
    }


def waiting_for_documents(limit: int = 10) -> dict[str, Any]:
    """Held answers citing a document the store has not received. Nobody but the services may
    read such an answer (no document says who may), so no reviewer sees it in the queue until
    the document is published, which re-evaluates it. How many, and the documents most cited
    among them (ids only). Two queries, run by the worker's snapshot, not by a page."""
    missing = RetrievedItem.objects.filter(
        answer_id__in=ReviewItem.objects.values("answer_id")
    ).exclude(Exists(Document.objects.filter(key=OuterRef("document_key"))))
    answers = missing.values("answer_id").distinct().count()
    documents = (missing.values_list("document_key").annotate(n=Count("answer_id", distinct=True))
                 .order_by("-n", "document_key")[:limit]) if answers else []
    return {"answers": answers, "documents": [key for key, _ in documents]}


def reevaluation_lag(now: dt.datetime | None = None) -> float:
    """Seconds since the validity boundary of the most overdue answer came: the answer whose
    current verdict's next_boundary has passed longest ago. 0 when none is overdue. A date a
    drill pins (REEVALUATION_TODAY) is the day, as for the sweep that would catch them up."""
    now = now or timezone.now()
    today = settings.REEVALUATION_TODAY or timezone.localdate(now)
    earliest = Answer.objects.filter(current_verdict__next_boundary__lte=today).aggregate(
        first=Min("current_verdict__next_boundary"))["first"]
    if earliest is None:
        return 0.0
    return round(max(0.0, (now - _day_start(earliest)).total_seconds()), 3)


def task_failures() -> tuple[int, int]:
    """Tasks that failed for good (dead letters) ever, and those of them still waiting for
    an admin (neither sent again nor resolved; counted up to 1,000), when the jobs area is
    installed."""
    try:
        dead_letter = apps.get_model("jobs", "DeadLetter")
    except LookupError:
        return 0, 0
    from reviewqueue.jobs.selectors import dead_letters_waiting

    return int(dead_letter.objects.count()), bounded_count(dead_letters_waiting())


def operations(now: dt.datetime | None = None,
               queue: dict[str, Any] | None = None) -> dict[str, Any]:
    """The figures an on-call person watches; /metrics exposes them to Prometheus."""
    from reviewqueue.audit.models import AuditAlert, VerificationRun

    now = now or timezone.now()
    queue = queue or backlog(now)
    last_run = VerificationRun.objects.order_by("-finished_at", "-id").first()
    failures, waiting = task_failures()
    return {
        "queue_depth": queue["depth"],
        "queue_depth_by_reason": queue["by_reason"],
        "oldest_held_age_seconds": queue["oldest_age_seconds"],
        "reevaluation_lag_seconds": reevaluation_lag(now),
        "task_failures": failures,
        "task_failures_waiting": waiting,
        "audit": {
            "last_verification_at": instant_text(last_run.finished_at) if last_run else None,
            "last_verification_ok": last_run.ok if last_run else None,
            "open_alerts": AuditAlert.objects.filter(acknowledged_at__isnull=True).count(),
        },
    }


def insight_metrics(w: Window, now: dt.datetime | None = None) -> dict[str, Any]:
    """Everything, in the shape GET /api/v1/metrics returns."""
    now = now or timezone.now()
    queue = backlog(now)
    return {
        "window": w.as_dict(),
        "generated_at": instant_text(now),
        "gate": hold_rates(w),
        "hold_rate_over_time": hold_rate_over_time(w),
        "releases": hold_rate_by_release(w),
        "citations": citation_quality(w),
        "review": review_outcomes(w),
        "backlog": queue,
        "operations": operations(now, queue),
    }
