"""Reads for the audit pages: search with keyset pagination, streamed exports, the timeline
of one answer and the verification status."""

from __future__ import annotations

import datetime as dt
import functools
import json
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, F, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.translation import gettext as _

from reviewqueue.accounts.principals import may_read
from reviewqueue.audit.hashing import GENESIS_HASH, HASHED_FIELDS, event_hash, hashed_fields_of
from reviewqueue.audit.models import AuditAlert, AuditEvent, VerificationRun
from reviewqueue.parsers import unique_keys
from reviewqueue.snapshot import in_one_snapshot

PAGE_SIZE = 50
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


def _actor_names(actor: str) -> set[str]:
    # "alice" means the person, user:alice, and her tokens ("user:alice token:rq_..."); names
    # without a colon may also be the worker or the system. The log writes a service's
    # account as any other (user:rag-service), and the page shows it "service rag-service":
    # service:rag-service is that account too.
    if actor.startswith("service:"):
        return {f"user:{actor.removeprefix('service:')}"}
    return {actor} if ":" in actor else {actor, f"user:{actor}"}


def _field_conditions(f: EventFilter) -> dict[str, list[Q]]:
    """Each search field given, dates aside, as conditions that exclude each other: an event
    matches the field when it meets one of them."""
    conditions = {}
    if f.trace_id:
        conditions["trace_id"] = [Q(trace_id=f.trace_id)]
    if f.actor:
        names = _actor_names(f.actor)
        matches = Q(actor__in=names)
        for name in names:
            matches |= Q(actor__startswith=f"{name} ")
        conditions["actor"] = [matches]
    if f.action:
        conditions["action"] = [Q(action__startswith=f.action[:-1]) if f.action.endswith("*")
                                else Q(action=f.action)]
    if f.document:
        conditions["document"] = _parts_of_document(f.document)
    return conditions


def _any(conditions: list[Q]) -> Q:
    return functools.reduce(operator.or_, conditions)


def _conflict_events(documents: list[str]) -> Q | None:
    """Events about the conflicts these documents are or ever were in: such an event names
    the document whose change caused it, or none (a dismissal, a reopening, a close by date).
    A conflict has a handful of events, so this part is read whole and sorted."""
    from reviewqueue.sources.models import Conflict  # audit sits below the sources

    ids = [str(pk) for pk in Conflict.objects.filter(documents_ever__overlap=documents)
           .order_by("pk").values_list("pk", flat=True)]
    return Q(object_type="conflict", object_id__in=ids) if ids else None


def _parts_of_document(document: str) -> list[Q]:
    """A document search as disjoint conditions, each read through one index: the events that
    name the document; those about it that name no document or another one (a partial index
    holds only such events, so this part never walks past those that name it); and those
    about its conflicts that do not name it."""
    parts = [Q(document_id=document),
             Q(object_type="document", object_id=document) & ~Q(document_id=F("object_id"))]
    if (conflicts := _conflict_events([document])) is not None:
        parts.append(conflicts & ~Q(document_id=document))
    return parts


def events_naming_document(document: str) -> list[QuerySet[AuditEvent]]:
    """The events that name `document` as their document, and those about it: the log keeps
    the ids of documents never stored (an answer citing one not received yet). Each is read
    through its own index, so finding a first one costs one probe however many there are."""
    return [AuditEvent.objects.filter(document_id=document),
            AuditEvent.objects.filter(object_type="document", object_id=document)]


def _dates(f: EventFilter) -> Q:
    within = Q()
    if f.since:
        within &= Q(created_at__gte=_day_start(f.since))
    if f.until:
        within &= Q(created_at__lt=_day_start(f.until + dt.timedelta(days=1)))
    return within


def filtered_events(f: EventFilter) -> QuerySet[AuditEvent]:
    """Every event matching the filter (the export reads them all)."""
    events = AuditEvent.objects.filter(_dates(f))
    for conditions in _field_conditions(f).values():
        events = events.filter(_any(conditions))
    return events


@dataclass
class EventPage:
    events: list[AuditEvent]
    older: int | None  # `before` cursor for the next (older) page, if there is one
    newer: int | None  # `after` cursor for the previous (newer) page, if there is one


# Past this many distinct actors (or actions) under one prefix, a page does not merge one
# index range per value: it reads another field's index, or the time index, instead.
MAX_MERGED_VALUES = 64
# A search on two fields or more is read through one field's index; the other fields are
# checked on at most this many of its events per page. A page may then hold fewer than
# PAGE_SIZE events while its `Older` link goes on from the last event it looked at.
SCAN_WINDOW = 1000


def _prefix_values(column: str, prefix: str) -> list[str] | None:
    """The distinct values of `column` that start with `prefix`, found by skipping through its
    pattern index (one probe per value, however many events each has); None when there are
    more than MAX_MERGED_VALUES of them."""
    if column not in {"actor", "action"}:  # an identifier, never user input
        raise ValueError(column)
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    table = AuditEvent._meta.db_table
    sql = f"""
        WITH RECURSIVE found(value) AS (
            (SELECT {column} FROM {table} WHERE {column} ~>=~ %s AND {column} ~<~ %s
             ORDER BY {column} USING ~<~ LIMIT 1)
            UNION ALL
            SELECT (SELECT {column} FROM {table} WHERE {column} ~>~ found.value
                    AND {column} ~<~ %s ORDER BY {column} USING ~<~ LIMIT 1)
            FROM found WHERE found.value IS NOT NULL
        )
        SELECT value FROM found WHERE value IS NOT NULL LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [prefix, upper, upper, MAX_MERGED_VALUES + 1])
        values = [row[0] for row in cursor.fetchall()]
    return values if len(values) <= MAX_MERGED_VALUES else None


@dataclass(frozen=True)
class _Plan:
    """How a search is read: `parts` are disjoint conditions that each read one index in
    (created_at, seq) order with the dates as its range (time; actor, action or document_id
    then time; the few events of a trace; events about a document that name no document or
    another one); `residual` is what those indexes do not check, if anything."""

    parts: list[Q]
    residual: Q | None


def _parts_by(name: str, f: EventFilter, conditions: list[Q]) -> list[Q] | None:
    """The field `name` (its `conditions`) as disjoint index ranges, or None when it cannot be
    read that way."""
    if name in {"trace_id", "document"}:
        return conditions
    if name == "actor":
        values = _actor_names(f.actor)
        for person in _actor_names(f.actor):
            found = _prefix_values("actor", f"{person} ")
            if found is None:
                return None
            values.update(found)
        return [Q(actor=value) for value in sorted(values)]
    if not f.action.endswith("*"):
        return [Q(action=f.action)]
    actions = _prefix_values("action", f.action[:-1]) if f.action != "*" else None
    return None if actions is None else [Q(action=value) for value in actions]


def _plan(f: EventFilter) -> _Plan:
    """Read through the most selective field that has an index (a trace, then a document,
    then an actor, then an action); with no such field, through the time index."""
    conditions = _field_conditions(f)
    for name in ("trace_id", "document", "actor", "action"):
        if name in conditions and (parts := _parts_by(name, f, conditions[name])) is not None:
            others = [_any(q) for other, q in conditions.items() if other != name]
            return _Plan(parts, _all(others))
    return _Plan([Q()], _all([_any(q) for q in conditions.values()]))


def _all(conditions: list[Q]) -> Q | None:
    return functools.reduce(operator.and_, conditions) if conditions else None


@dataclass(frozen=True)
class _Key:
    """A position in (created_at, seq) order; `inclusive` when the event at it is itself on
    the side being read (a cursor that named no event fell back to its nearest neighbour)."""

    at: dt.datetime
    seq: int
    inclusive: bool = False


def _key_of(seq: int, *, at_or_below: bool) -> _Key | None:
    """The position of event `seq`. A cursor that names no event (edited by hand) falls back
    to the nearest one on its side, which the page then includes."""
    near = AuditEvent.objects.filter(**{"seq__lte" if at_or_below else "seq__gte": seq})
    found = near.order_by("-seq" if at_or_below else "seq").values_list("created_at",
                                                                        "seq").first()
    return _Key(found[0], found[1], inclusive=found[1] != seq) if found else None


def _beyond(key: _Key, *, older: bool) -> RawSQL:
    op = "<" if older else ">"
    # A row comparison, so PostgreSQL starts reading the index at that point.
    return RawSQL(f"(created_at, seq) {op}{'=' if key.inclusive else ''} (%s, %s)",
                  (key.at, key.seq), output_field=BooleanField())


def _read(plan: _Plan, dates: Q, *, older: bool, key: _Key | None,
          limit: int) -> tuple[list[AuditEvent], int | None]:
    """Up to `limit` matching events past `key` (from the newest when there is none), newest
    first when reading older ones and oldest first otherwise, merged from the plan's parts.

    With a residual, each part is read for at most SCAN_WINDOW events: when they run out
    before `limit` matches are found, the seq of the last event looked at comes back as well,
    to go on from there; otherwise None."""
    order = ("-created_at", "-seq") if older else ("created_at", "seq")
    window = limit if plan.residual is None else SCAN_WINDOW
    reads = []
    for part in plan.parts:
        events = AuditEvent.objects.filter(part, dates)
        if key is not None:
            events = events.filter(_beyond(key, older=older))
        if plan.residual is not None:
            events = (events.annotate(hit=ExpressionWrapper(plan.residual,
                                                            output_field=BooleanField()))
                      .values_list("seq", "created_at", "hit"))
        reads.append(events.order_by(*order)[:window])
    if not reads:
        return [], None
    merged = reads[0] if len(reads) == 1 else (
        reads[0].union(*reads[1:], all=True).order_by(*order)[:window])
    if plan.residual is None:
        return list(merged), None
    looked_at = list(merged)
    hits = [seq for seq, _, hit in looked_at if hit][:limit]
    rows = sorted(AuditEvent.objects.filter(seq__in=hits),
                  key=lambda e: (e.created_at, e.seq), reverse=older) if hits else []
    more = len(looked_at) == SCAN_WINDOW and len(hits) < limit
    return rows, looked_at[-1][0] if more else None


def event_page(f: EventFilter, *, before: int | None = None, after: int | None = None,
               size: int = PAGE_SIZE) -> EventPage:
    """One page, newest first, by keyset on (created_at, seq), the order events are appended
    in: no OFFSET and no COUNT, and every part is read through an index in that order with
    the dates as its range, so the cost of a page does not grow with the size of the log or
    how deep one has paged. The cursors are seqs; a page looks up the position of its own."""
    plan = _plan(f)
    dates = _dates(f)
    if after is not None:
        key = _key_of(after, at_or_below=False)
        if key is None:
            return EventPage([], older=None, newer=None)
        rows, scanned_to = _read(plan, dates, older=False, key=key, limit=size + 1)
        more_newer = len(rows) > size
        rows = rows[:size][::-1]
        newer = rows[0].seq if rows and more_newer else scanned_to
        # "Older" only when something older matches (or is left to look at): `after` may
        # be the oldest event, or one the search does not match.
        # An empty page: the event at `after` itself may be the match "Older" leads back to.
        bottom = (_Key(rows[-1].created_at, rows[-1].seq) if rows
                  else _Key(key.at, key.seq, inclusive=True))
        found, scanned = _read(plan, dates, older=True, key=bottom, limit=1)
        # An empty page: "Older" must still include the event at `after` (exclusive here).
        older = (rows[-1].seq if rows else after + 1) if found or scanned is not None else None
        return EventPage(rows, older=older, newer=newer)
    key = _key_of(before, at_or_below=True) if before is not None else None
    if before is not None and key is None:
        return EventPage([], older=None, newer=None)
    rows, scanned_to = _read(plan, dates, older=True, key=key, limit=size + 1)
    older = rows[size - 1].seq if len(rows) > size else scanned_to
    rows = rows[:size]
    newer = None
    if key is not None:
        # An empty page: the event at `before` itself may be the match "Newer" leads back to.
        top = (_Key(rows[0].created_at, rows[0].seq) if rows
               else _Key(key.at, key.seq, inclusive=True))
        found, scanned = _read(plan, dates, older=False, key=top, limit=1)
        if found or scanned is not None:
            # An empty page: "Newer" must still include the event at `before`.
            newer = rows[0].seq if rows else (before if key.inclusive else max(before - 1, 0))
    return EventPage(rows, older=older, newer=newer)


# --- Export ------------------------------------------------------------------------------------

# The export is formatted by PostgreSQL and streamed with COPY: a million events go out at
# close to the speed PostgreSQL reads them, with no Python object per row or per cell.
_ISO_TIME = (
    # datetime.isoformat() of the UTC time Django reads back: what the hash covers, so a JSON
    # Lines export verifies offline. No fraction when it is zero, as isoformat writes it.
    "replace(to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), "
    "'.000000', '') || '+00:00'"
)
_JSON_FIELDS = frozenset({"before", "after"})
# Cells a spreadsheet would run as a formula (=, +, -, @, tab, carriage return) get a leading
# apostrophe in the CSV.
_FORMULA_SQL = "'=', '+', '-', '@', E'\\t', E'\\r'"
EXPORT_BLOCK_BYTES = 256 * 1024


def _csv_column(name: str) -> str:
    if name == "seq":
        return "e.seq AS seq"
    if name == "created_at":
        value = _ISO_TIME
    elif name in _JSON_FIELDS:
        value = f"e.{name}::text"
    else:
        value = f"e.{name}"
    return (f"CASE WHEN left({value}, 1) IN ({_FORMULA_SQL}) THEN chr(39) || {value} "
            f"ELSE {value} END AS {name}")


def _jsonl_line() -> str:
    # row_to_json writes compact JSON and keeps the column order.
    columns = ", ".join(f"{_ISO_TIME} AS created_at" if name == "created_at" else f"e.{name}"
                        for name in EXPORT_FIELDS)
    return f"(SELECT row_to_json(line) FROM (SELECT {columns}) AS line)"


# CSV: PostgreSQL quotes what needs quoting. JSON Lines: one json value per line, sent as a
# CSV of one column whose quote and delimiter are control characters, which JSON text always
# escapes, so no line is ever quoted or altered (the text format would double backslashes).
_EXPORT_FORMATS = {
    "csv": (", ".join(_csv_column(name) for name in EXPORT_FIELDS), "FORMAT csv, HEADER true"),
    "jsonl": (_jsonl_line(), "FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01'"),
}


def export_blocks(f: EventFilter, fmt: str) -> Iterator[bytes]:
    """The matching events, oldest first, as CSV or JSON Lines, in blocks of a few hundred KiB.

    One COPY statement reads one snapshot and streams it: memory stays flat however many
    events there are. Stopping early (the client went away) cancels the COPY."""
    columns, options = _EXPORT_FORMATS[fmt]
    inner, params = (filtered_events(f).order_by("seq").values(*EXPORT_FIELDS)
                     .query.sql_with_params())
    sql = f"COPY (SELECT {columns} FROM ({inner}) AS e ORDER BY e.seq) TO STDOUT ({options})"
    block: list[bytes] = []
    size = 0
    # In a transaction (a savepoint when the caller has one): cancelling the COPY of a
    # half-read export then rolls back only this, and leaves the connection usable.
    with (transaction.atomic(), connection.cursor() as cursor,
          cursor.cursor.copy(sql, params) as copy):
        for data in copy:
            block.append(bytes(data))
            size += len(data)
            if size >= EXPORT_BLOCK_BYTES:
                yield b"".join(block)
                block, size = [], 0
        if block:
            yield b"".join(block)


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
    # When the answer no longer stands where the last event that set its status left it (see
    # _status_against_log): that event's seq, status and verdict.
    status_against_log: dict[str, Any] | None = None
    # The seq of the ingest event whose body digest the answer no longer gives (see
    # _body_against_log).
    body_changed_since: int | None = None


def _event_checks(events: list[AuditEvent]) -> dict[int, str]:
    """Per event: "ok" when its content still matches its hash and it links to the event
    before it, "edited" when its content does not match its hash, "unlinked" when it does but
    the event before it is missing or holds another hash. A quick local look; the full walk
    is `verify_audit`."""
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
        checks[event.seq] = ("edited" if not own
                             else "ok" if event.prev_hash == expected_prev else "unlinked")
    return checks


@in_one_snapshot
def answer_timeline(trace_id: str) -> Timeline | None:
    """Everything that happened to one answer, oldest first: its audit events, every verdict
    with the revisions it used, every decision, every version, and the publications and
    withdrawals of the documents it cites while it existed. Ids and statuses only. In one
    snapshot: a decision committing while it reads would set the answer's row beside events
    that moved past it, which the page would show as a row changed by hand."""
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
    retrieved = list(answer.retrieved.order_by("pk").values_list(
        "cite", "document_key", "revision", "span"))
    documents = sorted({item[1] for item in retrieved})
    about_sources = Q(document_id__in=documents)
    if documents and (conflicts := _conflict_events(documents)) is not None:
        about_sources |= conflicts
    source_events = list(
        AuditEvent.objects.filter(about_sources, created_at__gte=answer.created_at)
        .exclude(seq__in=[e.seq for e in events])
        .order_by("seq")[:TIMELINE_LIMIT]
    ) if documents else []
    checks = _event_checks(events + source_events)

    entries: list[TimelineEntry] = []
    verdict_ids = {v.pk for v in verdicts}
    verdicts_logged, decisions_logged = logged_rows(events, checks)
    # Every event about the answer was read: a row none of them recorded was made outside
    # ReviewQueue, or its event was taken out of the log. Rows are made only beside their event.
    every_event_read = len(events) < TIMELINE_LIMIT
    for v in verdicts:
        recorded = verdicts_logged.get(v.pk)
        logged = recorded or {}
        entries.append(TimelineEntry(v.created_at, "verdict", 1, v, {
            "current": v.pk == answer.current_verdict_id,
            "revisions": _revisions_shown(v.revisions_used),
            "against_log": against_log(verdict_as_logged(v, recorded), recorded),
            "log_edited": logged.get("edited"),
            "unlogged": every_event_read and v.pk not in verdicts_logged,
        }))
    for d in decisions:
        logged = decisions_logged.get(d.pk) or {}
        entries.append(TimelineEntry(d.created_at, "decision", 2, d, {
            "on_known_verdict": d.verdict_id in verdict_ids,
            "revisions": _revisions_shown(d.revisions_used),
            "against_log": against_log(decision_as_logged(d), decisions_logged.get(d.pk)),
            "log_edited": logged.get("edited"),
            "unlogged": every_event_read and d.pk not in decisions_logged,
        }))
    # A version's text and claims are vouched for by its first verdict's event (the digest).
    rewritten = {entry.obj.version_id for entry in entries if entry.kind == "verdict"
                 and "version_sha256" in (entry.extra["against_log"] or ())}
    for version in versions:
        entries.append(TimelineEntry(version.created_at, "version", 0, version,
                                     {"rewritten": version.pk in rewritten}))
    for e in events:
        entries.append(TimelineEntry(e.created_at, "event", 3, e, {"check": checks.get(e.seq)}))
    for e in source_events:
        entries.append(TimelineEntry(e.created_at, "source", 3, e, {"check": checks.get(e.seq)}))
    entries.sort(key=lambda entry: (entry.at, entry.order))
    return Timeline(
        answer=answer,
        entries=entries,
        verdict_count=len(verdicts),
        decision_count=len(decisions),
        event_count=len(events) + len(source_events),  # every event the page lists
        truncated=any(len(x) >= TIMELINE_LIMIT
                      for x in (verdicts, decisions, versions, events, source_events)),
        status_against_log=(_status_against_log(answer, events, checks)
                            if every_event_read else None),
        body_changed_since=_body_against_log(answer, retrieved, verdicts, events, checks),
    )


def _body_against_log(answer: Any, retrieved: list[Any], verdicts: list[Any],
                      events: list[AuditEvent], checks: dict[int, str]) -> int | None:
    """The seq of the answer's ingest event when the body it recorded (its digest) is no
    longer what the answer's row, first version and retrieved items give: its question, who
    asked, its day or its citations were changed in the table (the records check of a
    verification finds the same). None when they match, when the event holds no digest (it is
    older than that), or when the event was itself edited (its own card says so)."""
    from reviewqueue.reviews.models import AnswerVersion, body_sha256  # audit sits below reviews

    ingested = next((e for e in events if e.action == "answer.ingested"
                     and e.object_id == answer.trace_id), None)
    logged = (ingested.after.get("body_sha256")
              if ingested is not None and isinstance(ingested.after, dict) else None)
    if ingested is None or logged is None or checks.get(ingested.seq) == "edited":
        return None
    # The first verdict judged the first version; read on its own only when not listed.
    first = next((v.version for v in verdicts if v.version.number == 1), None) \
        or AnswerVersion.objects.filter(answer=answer, number=1).first()
    now = body_sha256(answer.submitted_body(first.text if first else "",
                                            first.claims if first else [], retrieved))
    return None if now == logged == answer.body_digest else ingested.seq


def _status_against_log(answer: Any, events: list[AuditEvent], checks: dict[int, str]
                        ) -> dict[str, Any] | None:
    """The last event that set the answer's status (ingest, a verdict, a decision), when the
    answer's status or current verdict is no longer what it left, or its current version is
    not the one that verdict judged: someone changed the row in the table (the records check
    of a verification finds the same). None when they match, or when that event was itself
    edited (its own card says so)."""
    from reviewqueue.reviews.integrity import changed_since_logged  # audit sits below reviews

    last = next((e for e in reversed(events)
                 if e.object_type == "answer" and e.object_id == answer.trace_id
                 and isinstance(e.after, dict) and "status" in e.after), None)
    if last is None:
        return {"seq": None}
    if checks.get(last.seq) == "edited":
        return None
    status, verdict = last.after.get("status"), last.after.get("verdict")
    current = answer.current_verdict
    judged = current.version_id if current is not None else answer.current_version_id
    if not changed_since_logged(answer.status, answer.current_verdict_id,
                                answer.current_version_id, status, verdict, judged):
        return None
    return {"seq": last.seq, "status": status, "verdict": verdict,
            "version": answer.current_version_id, "judged": judged}


# What an edit's decision event records of the verdict and version it made, beside the
# decision's own fields (events before these were recorded hold neither).
_EDIT_DIGESTS = ("verdict_sha256", "version_sha256")


# Verdicts and decisions are rows of their own, without a hash: what proves them unaltered is
# the chained event that recorded each as it was made. The timeline sets each row beside that
# event, field by field, as the event wrote it.
def logged_rows(events: list[AuditEvent], checks: dict[int, str]
                 ) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """What the events recorded of each verdict and each decision, by the row's id: a
    verdict at ingest, at a re-evaluation or with the edit that made it. An event that no
    longer matches its own hash (`checks`, from _event_checks) records nothing: its rows get
    {"edited": its seq} instead."""
    verdicts: dict[int, dict[str, Any]] = {}
    decisions: dict[int, dict[str, Any]] = {}
    for e in events:
        after = e.after if isinstance(e.after, dict) else {}
        verdict_of_edit = e.action.startswith("decision.") and "verdict_decision" in after
        if e.action in ("answer.ingested", "verdict.created") or verdict_of_edit:
            logged = {"decision": after.get("verdict_decision"),
                      "revisions": after.get("verdict_revisions"),
                      **{key: after[key] for key in _EDIT_DIGESTS if key in after},
                      } if verdict_of_edit else after
            if checks.get(e.seq) == "edited":
                logged = {"edited": e.seq}
            if isinstance(after.get("verdict"), int):
                verdicts.setdefault(after["verdict"], logged)
        if e.action.startswith("decision.") and isinstance(after.get("decision"), int):
            decisions[after["decision"]] = (
                {"edited": e.seq} if checks.get(e.seq) == "edited"
                else {**after, "action": e.action.removeprefix("decision."),
                      # The version decided on: the answer's before the decision.
                      **({"decided_on_version": e.before["version"]}
                         if isinstance(e.before, dict) and "version" in e.before else {})})
    return verdicts, decisions


def _pairs(revisions_used: Any) -> Any:
    """The revisions a verdict or a decision used as its event records them: each document
    with the revision the gate read. A value of another shape (a row rewritten by hand) is
    read as itself, boxed so that no recorded list of pairs can equal it (`[["pricing",
    "r2"]]` bare would): the row is reported changed, and the check goes on."""
    if revisions_used is None:
        return []
    if isinstance(revisions_used, list) and all(isinstance(r, dict) for r in revisions_used):
        return [[r.get("document"), r.get("current")] for r in revisions_used]
    return {"as_stored": revisions_used}


def verdict_as_logged(v: Any, logged: dict[str, Any] | None) -> dict[str, Any]:
    """A verdict as its event recorded it (`logged`), with its version (`v.version`) as that
    version's first verdict's event did. Only the fields the event holds are compared (see
    against_log), so only those digests are taken: a re-evaluation's event holds no digest of
    the text, which the version's first verdict vouches for."""
    stored = {"decision": v.decision, "reason": v.reason, "revisions": _pairs(v.revisions_used)}
    if logged and "verdict_sha256" in logged:
        stored["verdict_sha256"] = v.content_sha256()
    if logged and "version_sha256" in logged:
        stored["version_sha256"] = v.version.content_sha256()
    return stored


def decision_as_logged(d: Any) -> dict[str, Any]:
    return {"action": d.action, "reviewer": d.reviewer.get_username(),
            "decided_on_verdict": d.verdict_id, "reject_reason": d.reject_reason or None,
            "comment_sha256": d.comment_sha256(), "read_passages": d.read_passages,
            "revisions": _pairs(d.revisions_used),
            # The version the answer rests on after it: an edit's new one, else the one decided.
            "version": d.new_version_id or d.version_id, "decided_on_version": d.version_id}


def against_log(stored: dict[str, Any], logged: dict[str, Any] | None) -> list[str] | None:
    """The fields of a row that differ from what its event recorded (of those it recorded:
    an older event may hold fewer); None when no event shown here recorded the row, or
    when the one that did no longer matches its hash."""
    if logged is None or "edited" in logged:
        return None
    return [key for key, value in stored.items() if key in logged and logged[key] != value]


def _revisions_shown(revisions_used: Any) -> list[dict[str, Any]]:
    """The retrieved items of a verdict or a decision as the timeline lists them; what is not
    an item (a row rewritten by hand, which its card says changed) is left out."""
    items = revisions_used if isinstance(revisions_used, list) else []
    return [_revision_used(r) for r in items if isinstance(r, dict)]


def _revision_used(used: dict[str, Any]) -> dict[str, Any]:
    """One retrieved item of a verdict: which revision the answer came from and which one the
    gate read, in words an auditor can scan."""
    generated_from = used.get("revision")
    current = used.get("current")
    if used.get("withdrawn"):
        state = "withdrawn"
    elif used.get("received") is False:
        state = "not received"
    elif used.get("passage_found") is False:
        state = "passage not found"
    elif current and generated_from and current != generated_from:
        state = "superseded"
    else:
        state = "current"
    return {"cite": used.get("cite", ""), "document": used.get("document", ""),
            "generated_from": generated_from, "evaluated": current, "state": state}


# --- The quarantine ----------------------------------------------------------------------------


# What a revision body holds that only a reader of the revision may see.
_READERS_ONLY = ("title", "note", "passages", "facts")


def _not_shown(value: Any) -> str:
    return _("[%(n)s characters not shown: a revision you may not read]") % {
        "n": len(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))}


def _hide_in_items(items: Any, field: str) -> Any:
    if not isinstance(items, list):
        return _not_shown(items)
    return [{**item, field: _not_shown(item[field])}
            if isinstance(item, dict) and field in item else item for item in items]


# What an answer or a decision body holds that only a reader of its documents may see: the
# question and answer, claims' values and subjects, a reviewer's comment and edited text.
_ANSWER_TEXT = frozenset({"question", "answer", "comment", "text", "value", "subject", "note",
                          "title", "justification"})
# An answer's own endpoints: its decisions, claims and the like name it in the address.
_ANSWER_PATH = re.compile(r"^/api/v1/answers/([^/]+)/[^/]+$")


def _named_documents(data: Any) -> set[str]:
    """Every `document_id` a body names, at any depth (a batch holds many answers)."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("document_id"), str):
                found.add(item["document_id"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _answer_documents(payload: Any) -> set[str]:
    """The documents retrieved by the stored answer the body was sent for, if any."""
    from reviewqueue.reviews.models import RetrievedItem  # audit sits below the reviews

    match = _ANSWER_PATH.match(payload.endpoint or "")
    traces = {t for t in (match.group(1) if match else "", payload.trace_id or "") if t}
    if not traces:
        return set()
    return set(RetrievedItem.objects.filter(answer__trace_id__in=traces)
               .values_list("document_key", flat=True))


def _may_read_all(keys: set[str], principals: frozenset[str]) -> bool:
    from reviewqueue.sources.models import Document  # audit sits below the sources

    allowed = dict(Document.objects.filter(key__in=keys).values_list("key",
                                                                      "allowed_principals"))
    return all(key in allowed and may_read(allowed[key], principals) for key in keys)


def _hide_answer_text(data: Any) -> Any:
    if isinstance(data, list):
        return [_hide_answer_text(item) for item in data]
    if not isinstance(data, dict):
        return data
    return {key: (_("[%(n)s characters not shown: it names a document you may not read]")
                  % {"n": len(value if isinstance(value, str)
                              else json.dumps(value, ensure_ascii=False))}
                  if key in _ANSWER_TEXT and value is not None else _hide_answer_text(value))
            for key, value in data.items()}


_HIDDEN_TEXT_NAMES = tuple(sorted({*_READERS_ONLY, *_ANSWER_TEXT, "document_id"}))


def _may_name_hidden_text(body: str) -> bool:
    """Whether a body that is no JSON object may still hold a field hidden from some readers:
    a name of one anywhere, in any case and form (`passages=` of a form, a key of a cut JSON
    body), or an escape that could spell one (`p\\u0061ssages`, `p%61ssages`)."""
    lowered = body.lower()
    return "\\" in body or "%" in body or any(name in lowered for name in _HIDDEN_TEXT_NAMES)


def quarantined_body_shown(payload: Any, principals: frozenset[str]) -> str:
    """A refused body as an admin holding `principals` may read it.

    A revision's title, note, passage texts and fact values, when the admin may not read the
    revision (by the principals the body itself declares), and an answer's or a decision's
    text, when the body names or was sent for an answer citing a document the admin may not
    read (or one the store has not received), are replaced by their length. A body too broken
    to tell whose they are shows only its size: one that is not a JSON object (a form, a
    truncated body), or one giving a key twice (the API refuses it because it cannot tell
    which value was meant, so neither can this: `allowed_principals` twice, say). What is
    stored stays whole: nothing refused is dropped."""
    body: str = payload.body
    answer_documents = _answer_documents(payload)
    try:
        data = json.loads(body, object_pairs_hook=unique_keys)
        if isinstance(data, dict):
            return _redacted(body, data, answer_documents | _named_documents(data),
                             principals)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python reads
        pass
    if not answer_documents and not _may_name_hidden_text(body):
        return body  # broken JSON of no document's text: shown for what it is
    return _("[%(n)s characters not shown: this body could not be read as one JSON object "
             "with each key once, and may hold text you may not read]") % {"n": len(body)}


def _redacted(body: str, data: dict[str, Any], documents: set[str],
              principals: frozenset[str]) -> str:
    """`body`, read as `data`, naming `documents`, as `quarantined_body_shown` shows it."""
    if documents and not _may_read_all(documents, principals):
        return json.dumps(_hide_answer_text(data), ensure_ascii=False, indent=2)
    allowed = data.get("allowed_principals")
    if not any(name in data for name in _READERS_ONLY) or (
            isinstance(allowed, list) and all(isinstance(p, str) for p in allowed)
            and may_read(allowed, principals)):
        return body
    shown = dict(data)
    for name in ("title", "note"):
        if name in shown:
            shown[name] = _not_shown(shown[name])
    if "passages" in shown:
        shown["passages"] = _hide_in_items(shown["passages"], "text")
    if "facts" in shown:
        shown["facts"] = _hide_in_items(shown["facts"], "value")
    return json.dumps(shown, ensure_ascii=False, indent=2)
