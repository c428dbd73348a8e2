"""Reads for the audit pages: search with keyset pagination, streamed exports, the timeline
of one answer and the verification status."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from reviewqueue.audit.hashing import GENESIS_HASH, HASHED_FIELDS, event_hash, hashed_fields_of
from reviewqueue.audit.models import AuditAlert, AuditEvent, VerificationRun

PAGE_SIZE = 50
EXPORT_CHUNK = 2000
TIMELINE_LIMIT = 500

EXPORT_FIELDS = (
    "seq", "created_at", "actor_type", "actor", "action", "object_type", "object_id",
    "trace_id", "document_id", "request_id", "before", "after", "prev_hash", "hash",
)


@dataclass(frozen=True)
class EventFilter:
    """What the search form allows. Every field is optional; empty means no filter."""

    trace_id: str = ""
    actor: str = ""
    action: str = ""
    document: str = ""
    since: dt.date | None = None
    until: dt.date | None = None

    def is_empty(self) -> bool:
        return not (self.trace_id or self.actor or self.action or self.document
                    or self.since or self.until)


def _day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def filtered_events(f: EventFilter) -> QuerySet[AuditEvent]:
    """Events matching the filter, each condition served by an index on the table."""
    events = AuditEvent.objects.all()
    if f.trace_id:
        events = events.filter(trace_id=f.trace_id)
    if f.actor:
        # "alice" means the person, user:alice, and her tokens ("user:alice token:rq_...");
        # names without a colon may also be the worker or the system.
        names = {f.actor} if ":" in f.actor else {f.actor, f"user:{f.actor}"}
        matches = Q(actor__in=names)
        for name in names:
            matches |= Q(actor__startswith=f"{name} ")
        events = events.filter(matches)
    if f.action:
        if f.action.endswith("*"):
            events = events.filter(action__startswith=f.action[:-1])
        else:
            events = events.filter(action=f.action)
    if f.document:
        events = events.filter(
            Q(document_id=f.document) | Q(object_type="document", object_id=f.document)
        )
    if f.since:
        events = events.filter(created_at__gte=_day_start(f.since))
    if f.until:
        events = events.filter(created_at__lt=_day_start(f.until + dt.timedelta(days=1)))
    return events


@dataclass
class EventPage:
    events: list[AuditEvent]
    older: int | None  # `before` cursor for the next (older) page, if there is one
    newer: int | None  # `after` cursor for the previous (newer) page, if there is one


def event_page(f: EventFilter, *, before: int | None = None, after: int | None = None,
               size: int = PAGE_SIZE) -> EventPage:
    """One page, newest first, by keyset on `seq`: no OFFSET and no COUNT, so the cost of a
    page does not grow with the size of the log or how deep one has paged."""
    events = filtered_events(f)
    if after is not None:
        rows = list(events.filter(seq__gt=after).order_by("seq")[: size + 1])
        more_newer = len(rows) > size
        rows = rows[:size][::-1]
        older = rows[-1].seq if rows else None
        # Coming back from an older page: there is always something older than this page.
        return EventPage(rows, older=older if rows else None,
                         newer=rows[0].seq if rows and more_newer else None)
    if before is not None:
        events = events.filter(seq__lt=before)
    rows = list(events.order_by("-seq")[: size + 1])
    has_older = len(rows) > size
    rows = rows[:size]
    newer = None
    if before is not None and rows:
        newer = rows[0].seq if filtered_events(f).filter(seq__gt=rows[0].seq).exists() else None
    return EventPage(rows, older=rows[-1].seq if has_older else None, newer=newer)


def export_rows(f: EventFilter) -> Iterator[dict[str, Any]]:
    """Matching events, oldest first, as plain dicts, read through a server-side cursor in
    chunks. The transaction keeps the cursor inside one snapshot and lets PostgreSQL stream it
    instead of materialising the whole result first (as a cursor WITH HOLD would)."""
    with transaction.atomic():
        rows = filtered_events(f).order_by("seq").values(*EXPORT_FIELDS)
        yield from rows.iterator(chunk_size=EXPORT_CHUNK)


# --- Verification status ----------------------------------------------------------------------


@dataclass(frozen=True)
class ChainStatus:
    last_run: VerificationRun | None
    last_ok_run: VerificationRun | None
    open_alerts: list[AuditAlert]
    recent_runs: list[VerificationRun]
    tip: dict[str, Any] | None


def chain_status() -> ChainStatus:
    runs = list(VerificationRun.objects.order_by("-finished_at", "-id")[:10])
    last_ok = next((r for r in runs if r.ok), None)
    if last_ok is None and runs:
        last_ok = VerificationRun.objects.filter(ok=True).order_by("-finished_at", "-id").first()
    alerts = list(AuditAlert.objects.filter(acknowledged_at__isnull=True)
                  .select_related("run").order_by("-created_at")[:20])
    tip = AuditEvent.objects.order_by("-seq").values("seq", "hash", "created_at").first()
    return ChainStatus(last_run=runs[0] if runs else None, last_ok_run=last_ok,
                       open_alerts=alerts, recent_runs=runs, tip=tip)


# --- Timeline of one answer ---------------------------------------------------------------------


@dataclass
class TimelineEntry:
    at: dt.datetime
    kind: str  # "event", "verdict", "decision", "version", "source"
    order: int
    obj: Any
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Timeline:
    answer: Any
    entries: list[TimelineEntry]
    verdict_count: int
    decision_count: int
    event_count: int
    truncated: bool


def _event_checks(events: list[AuditEvent]) -> dict[int, bool]:
    """Per event: does its content still match its hash, and does it link to the event
    before it? A quick local look; the full walk is `verify_audit`."""
    if not events:
        return {}
    previous = dict(
        AuditEvent.objects.filter(seq__in=[e.seq - 1 for e in events]).values_list("seq", "hash")
    )
    checks = {}
    for event in events:
        fields = hashed_fields_of({name: getattr(event, name) for name in HASHED_FIELDS})
        own = event_hash(fields, event.prev_hash) == event.hash
        expected_prev = previous.get(event.seq - 1, GENESIS_HASH if event.seq == 1 else None)
        checks[event.seq] = own and event.prev_hash == expected_prev
    return checks


def answer_timeline(trace_id: str) -> Timeline | None:
    """Everything that happened to one answer, oldest first: its audit events, every verdict
    with the revisions it used, every decision, every version, and the publications and
    withdrawals of the documents it cites while it existed. Ids and statuses only."""
    from reviewqueue.reviews.models import Answer, AnswerVersion, Decision, Verdict

    answer = (Answer.objects.select_related("current_verdict", "current_version")
              .filter(trace_id=trace_id).first())
    if answer is None:
        return None
    verdicts = list(Verdict.objects.filter(answer=answer).select_related("version")
                    .order_by("id")[:TIMELINE_LIMIT])
    decisions = list(Decision.objects.filter(answer=answer)
                     .select_related("reviewer", "version", "new_version", "verdict")
                     .order_by("id")[:TIMELINE_LIMIT])
    versions = list(AnswerVersion.objects.filter(answer=answer).select_related("created_by")
                    .only("id", "number", "created_at", "created_by__username", "answer_id")
                    .order_by("number")[:TIMELINE_LIMIT])
    events = list(
        AuditEvent.objects.filter(Q(trace_id=trace_id) | Q(object_type="answer",
                                                           object_id=trace_id))
        .order_by("seq")[:TIMELINE_LIMIT]
    )
    documents = sorted({item.document_key for item in answer.retrieved.all()})
    source_events = list(
        AuditEvent.objects.filter(document_id__in=documents,
                                  created_at__gte=answer.created_at)
        .exclude(seq__in=[e.seq for e in events])
        .order_by("seq")[:TIMELINE_LIMIT]
    ) if documents else []
    checks = _event_checks(events + source_events)

    entries: list[TimelineEntry] = []
    verdict_ids = {v.pk for v in verdicts}
    for v in verdicts:
        entries.append(TimelineEntry(v.created_at, "verdict", 1, v, {
            "current": v.pk == answer.current_verdict_id,
            "revisions": [_revision_used(r) for r in v.revisions_used],
        }))
    for d in decisions:
        entries.append(TimelineEntry(d.created_at, "decision", 2, d, {
            "on_known_verdict": d.verdict_id in verdict_ids,
            "revisions": [_revision_used(r) for r in (d.revisions_used or [])],
        }))
    for version in versions:
        entries.append(TimelineEntry(version.created_at, "version", 0, version))
    for e in events:
        entries.append(TimelineEntry(e.created_at, "event", 3, e, {"intact": checks.get(e.seq)}))
    for e in source_events:
        entries.append(TimelineEntry(e.created_at, "source", 3, e, {"intact": checks.get(e.seq)}))
    entries.sort(key=lambda entry: (entry.at, entry.order))
    return Timeline(
        answer=answer,
        entries=entries,
        verdict_count=len(verdicts),
        decision_count=len(decisions),
        event_count=len(events),
        truncated=any(len(x) >= TIMELINE_LIMIT for x in (verdicts, decisions, events)),
    )


def _revision_used(used: dict[str, Any]) -> dict[str, Any]:
    """One retrieved item of a verdict: which revision the answer came from and which one the
    gate read, in words an auditor can scan."""
    generated_from = used.get("revision")
    current = used.get("current")
    if used.get("withdrawn"):
        state = "withdrawn"
    elif used.get("received") is False:
        state = "not received"
    elif current and generated_from and current != generated_from:
        state = "superseded"
    else:
        state = "current"
    return {"cite": used.get("cite", ""), "document": used.get("document", ""),
            "generated_from": generated_from, "evaluated": current, "state": state}
