"""Writes to the audit log. Every state change calls `audit_record` inside its transaction."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.chain import Anchor, ChainReport, walk
from reviewqueue.audit.hashing import (
    GENESIS_HASH,
    HASHED_FIELDS,
    as_jsonb_value,
    canonical_event,
    event_hash_of_texts,
)
from reviewqueue.audit.models import AuditAlert, AuditEvent, QuarantinedPayload, VerificationRun
from reviewqueue.copying import FEW, JsonText, copy_instances, copy_rows
from reviewqueue.middleware import request_id_var, trace_id_var
from reviewqueue.prepared import prepared_cursor
from reviewqueue.storable import storable

log = logging.getLogger("reviewqueue.audit")

# Any constant works; it only has to be the same for every writer of the chain.
_CHAIN_LOCK_KEY = 0x52510A0D17
_TAIL_SQL = (f'SELECT seq, hash, created_at FROM "{AuditEvent._meta.db_table}" '
             "ORDER BY seq DESC LIMIT 1")


@dataclass(frozen=True)
class Actor:
    type: str
    name: str

    @classmethod
    def of_user(cls, user: Any, token: Any = None) -> Actor:
        if user is None or not getattr(user, "is_authenticated", False):
            return cls(AuditEvent.ActorType.SYSTEM, "anonymous")
        # A service is a service however it calls; a person stays a person through their own
        # token (the token is named either way).
        kind = AuditEvent.ActorType.SERVICE if has_role(user, Role.SERVICE) \
            else AuditEvent.ActorType.USER
        if token is not None and getattr(token, "prefix", None):
            return cls(kind, f"user:{user.username} token:{token.prefix}")
        return cls(kind, f"user:{user.username}")


def actor_username(name: str) -> str:
    """The account in an actor's name as the log writes it: "user:alice token:rq_ab12" is
    "alice"; a worker's or the system's name is itself, and none is ""."""
    return name.split(" ", 1)[0].removeprefix("user:") if name else ""


WORKER = Actor(AuditEvent.ActorType.WORKER, "worker")
SYSTEM = Actor(AuditEvent.ActorType.SYSTEM, "system")


# Keys that would carry what the log must never hold: passage or answer text, or secrets.
_FORBIDDEN_KEYS = frozenset({"text", "passage_text", "answer_text", "raw_token", "password"})
# A clear API token, whole ("rq_" and 43 URL-safe characters, see accounts.services): not an
# identifier that merely contains "rq_" (`sparq_customer_retention_policy`), nor a token's
# short display prefix.
_RAW_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-])rq_[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])")


def _refuse_forbidden(value: Any, path: str) -> None:
    """Stop a caller from writing text or a token into the append-only log by mistake: once
    written it could never be removed."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _FORBIDDEN_KEYS:
                raise ValueError(f"audit {path}.{key}: the audit log must not hold text or secrets")
            _refuse_forbidden(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_forbidden(item, f"{path}[{index}]")
    elif isinstance(value, str) and _RAW_TOKEN.search(value):
        raise ValueError(f"audit {path}: looks like an API token; record its prefix instead")


@dataclass(frozen=True)
class Entry:
    """One event to append, before the chain gives it a seq and a hash."""

    actor: Actor
    action: str
    object_type: str
    object_id: object
    trace_id: str = ""
    document_id: str = ""
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


def audit_record(
    *,
    actor: Actor,
    action: str,
    object_type: str,
    object_id: object,
    trace_id: str = "",
    document_id: str = "",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the chain. Must run inside the transaction of the change it records."""
    return _append([Entry(actor, action, object_type, object_id, trace_id, document_id,
                          before, after)])[0]


def audit_record_many(entries: list[Entry]) -> None:
    """Append events to the chain in the given order, with one lock and one write however
    many there are. Must run inside the transaction of the changes they record."""
    _append(entries)


def audit_chain_lock() -> None:
    """Take the chain's lock now rather than at the transaction's first `audit_record`. A
    change that also locks rows other writers of the chain lock after appending (conflicts,
    say) takes this first, so that every writer takes the two in the same order and none
    waits for the other's. Held until the transaction ends; taking it again never waits."""
    if not connection.in_atomic_block:
        raise RuntimeError("audit_chain_lock must run inside the transaction of the change")
    with prepared_cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CHAIN_LOCK_KEY])


# How a forbidden key shows in canonical JSON text: a key is always written `"key":`.
_FORBIDDEN_KEYS_WRITTEN = tuple(f'"{key}":' for key in sorted(_FORBIDDEN_KEYS))


def _may_be_forbidden(text: str) -> bool:
    """Whether the canonical JSON `text` of a value may hold what `_refuse_forbidden` refuses:
    a quick look at the text most events pass, without walking the value. A forbidden key
    shows as `"text":` and a token as `rq_`; a string that merely contains them only sends
    the value to the full check."""
    return "rq_" in text or any(key in text for key in _FORBIDDEN_KEYS_WRITTEN)


def _append(entries: list[Entry]) -> list[AuditEvent]:
    """Chain and write `entries`; returns the saved events when there are only a few (the many
    of a batch go in with COPY and are not read back)."""
    if not connection.in_atomic_block:
        raise RuntimeError("audit_record must run inside the transaction of the change")
    if not entries:
        return []
    request_id = request_id_var.get()
    rows: list[dict[str, Any]] = []
    texts: list[tuple[str, str]] = []
    for entry in entries:
        before, after = entry.before or {}, entry.after or {}
        before_text, after_text = canonical_event(before), canonical_event(after)
        if _may_be_forbidden(before_text) or _may_be_forbidden(after_text):
            _refuse_forbidden(before, "before")
            _refuse_forbidden(after, "after")
        texts.append((before_text, after_text))
        rows.append({
            "actor_type": entry.actor.type,
            "actor": entry.actor.name,
            "action": entry.action,
            "object_type": entry.object_type,
            "object_id": str(entry.object_id),
            "trace_id": entry.trace_id or trace_id_var.get(),
            "document_id": entry.document_id,
            "request_id": request_id,
        })
    # Serialise appends: two writers reading the same tail would fork the chain. The lock is
    # held until the surrounding transaction commits, so it is taken as late as possible.
    with prepared_cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CHAIN_LOCK_KEY])
        cursor.execute(_TAIL_SQL)
        tail = cursor.fetchone()
    seq, prev_hash = (tail[0], tail[1]) if tail else (0, GENESIS_HASH)
    # Read under the lock, and never before the tail's: hosts whose clocks drift apart append
    # to one chain, and its times must not go backwards along it.
    now = max(timezone.now(), tail[2]) if tail else timezone.now()
    for row, (before_text, after_text) in zip(rows, texts, strict=True):
        seq += 1
        row.update(seq=seq, created_at=now, prev_hash=prev_hash)
        row["hash"] = prev_hash = event_hash_of_texts(row, before_text, after_text, prev_hash)
    if len(rows) >= FEW:
        for row, (before_text, after_text) in zip(rows, texts, strict=True):
            # jsonb reads the text as the value the hash was taken of.
            row["before"], row["after"] = JsonText(before_text), JsonText(after_text)
        copy_rows(AuditEvent, rows)
        return []
    for row, (before_text, after_text) in zip(rows, texts, strict=True):
        row["before"], row["after"] = as_jsonb_value(before_text), as_jsonb_value(after_text)
    events = [AuditEvent(**row) for row in rows]
    copy_instances(events)
    return events


def quarantine_payload(
    *,
    endpoint: str,
    method: str,
    user: Any,
    status_code: int,
    errors: list[dict[str, str]],
    body: bytes,
    trace_id: str = "",
    max_bytes: int = 64 * 1024,
    charset: str = "utf-8",
) -> QuarantinedPayload:
    """Keep a refused body, read in the `charset` it was sent in. Oversized bodies are kept
    truncated, with their real size."""
    # A hostile body (field names included, which the errors repeat) must still be kept, not
    # turn into a 500.
    errors, endpoint, trace_id = storable(errors), storable(endpoint), storable(trace_id)
    truncated = len(body) > max_bytes
    # A byte the charset cannot read is kept as its \xNN escape, not replaced: nothing is lost.
    try:
        text = body[:max_bytes].decode(charset, errors="backslashreplace")
    except (LookupError, UnicodeError):
        # No such charset, none for text ("rot13"), or one that takes no error handler but
        # "strict" (punycode, idna: UnicodeError).
        text = body[:max_bytes].decode("utf-8", errors="backslashreplace")
    text = storable(text)
    with transaction.atomic():
        return QuarantinedPayload.objects.create(
            endpoint=endpoint[:200],
            method=method,
            sent_by=user if getattr(user, "is_authenticated", False) else None,
            status_code=status_code,
            errors=errors[:200],
            trace_id=trace_id[:200],
            size_bytes=len(body),
            body=text,
            truncated=truncated,
            request_id=request_id_var.get(),
        )


# --- Verification -------------------------------------------------------------------------------

VERIFY_CHUNK = 5000


def _chain_rows(chunk: int = VERIFY_CHUNK) -> Iterator[dict[str, Any]]:
    """Every event in seq order, read in keyset chunks: memory stays flat however long the
    log is, and no transaction stays open for the whole walk. Paged by (seq, id), not seq
    alone: a row smuggled in with the seq of the last row of a chunk (the unique constraint
    dropped first) is read too, and the walk reports it out of order."""
    fields = (*HASHED_FIELDS, "prev_hash", "hash", "id")
    # No lower bound on the first chunk: a row smuggled in with seq 0 or below must be seen.
    events = AuditEvent.objects.order_by("seq", "id").values(*fields)
    rows = list(events[:chunk])
    while rows:
        yield from rows
        if len(rows) < chunk:
            return
        last = rows[-1]
        # seq >= last seq on its own, besides the OR: the index on seq then starts the scan
        # at the last row read; with the OR alone it reads the log from the start each chunk.
        rows = list(events.filter(Q(seq__gt=last["seq"]) | Q(seq=last["seq"], id__gt=last["id"]),
                                  seq__gte=last["seq"])[:chunk])


def _anchor() -> Anchor | None:
    """The end of the log as the last run that could vouch for it saw it: a clean run, or a
    broken one whose own anchor held (runs recorded before `tip_hash` existed kept none)."""
    run = (VerificationRun.objects
           .filter(Q(ok=True, last_seq__isnull=False)
                   | Q(checked_to_seq__isnull=False) & ~Q(tip_hash=""))
           .order_by("-finished_at", "-id").first())
    if run is None:
        return None
    seq, digest = ((run.last_seq, run.last_hash) if run.ok and run.last_seq is not None
                   else (run.checked_to_seq, run.tip_hash))
    return Anchor(seq=seq, hash=digest,
                  source=f"verified on {run.finished_at:%Y-%m-%d %H:%M} UTC")


def _last_seen_end() -> Anchor | None:
    """The end of the log as the last run read it, vouched for or not (see
    VerificationRun.seen_tip_hash)."""
    run = (VerificationRun.objects.filter(checked_to_seq__isnull=False)
           .exclude(seen_tip_hash="").order_by("-finished_at", "-id").first())
    if run is None:
        return None
    return Anchor(seq=run.checked_to_seq, hash=run.seen_tip_hash,
                  source=f"read by the check of {run.finished_at:%Y-%m-%d %H:%M} UTC")


# Held while a run is recorded and compared with the one before, so two runs finishing at
# once (the nightly one and one asked for on the page) do not both alert on the same news.
_ALERT_LOCK_KEY = 0x52510A0D19  # its own: 0x...18 is the validity sweep's (jobs)


def audit_verify(*, trigger: str, requested_by: str = "", record: bool = True,
                 anchors: Sequence[Anchor] = ()) -> VerificationRun:
    """Walk the whole chain, then store the outcome; problems not found before raise an alert.

    The walk also checks the log against an anchor: the tip the last verification vouched
    for, which catches events removed from the end and a chain rewritten wholesale; and,
    when given, those kept outside the database (printed by verify_audit and logged by every
    successful run), which whoever can write to the database cannot forge. All are checked:
    an older anchor given by hand must not let a run pass over what the stored one shows.

    A check of the sources or records that fails (a bug, or a row tampered with in a way it
    cannot read) is raised, but only once the run is stored with what the chain showed and
    the other check found, and alerted on: a broken chain is not lost with it.
    """
    started = timezone.now()
    stored = _anchor()
    # Once the stored anchor is broken it stays the one vouched for: the end the last run
    # read is checked as well, so a later removal from the end is still found.
    seen = _last_seen_end()
    if seen is not None and stored is not None and (seen.seq, seen.hash) == (stored.seq,
                                                                             stored.hash):
        seen = None
    # An anchor given by hand is most often the one the last run printed, and stored: the
    # same event and hash are checked once, or what they show would be reported twice.
    given = {(a.seq, a.hash) for a in anchors}
    also = [*anchors[1:], *(a for a in (stored if anchors else None, seen)
                            if a is not None and (a.seq, a.hash) not in given)]
    report = walk(_chain_rows(), anchor=anchors[0] if anchors else stored, also=also)
    run = VerificationRun(
        started_at=started,
        finished_at=timezone.now(),
        trigger=trigger,
        requested_by=requested_by[:200],
        ok=report.ok,
        events_checked=report.checked,
        # Only a clean run vouches for a tip: the next run takes it as its anchor.
        last_seq=report.last_seq if report.ok else None,
        last_hash=report.last_hash if report.ok else "",
        checked_to_seq=report.last_seq,
        tip_hash=report.last_hash if report.anchors_held else "",
        seen_tip_hash=report.last_hash,
        first_bad_seq=report.first_bad_seq,
        problem=report.problem,
        detail=report.describe(),
        problem_count=report.problem_count,
        problems=[finding.as_dict() for finding in report.problems],
        problems_digest=report.digest,
    )
    failure = _check_stores(run, log_intact=report.ok)
    run.finished_at = timezone.now()
    if record:
        _store(run, report, trigger)
    if failure is not None:
        raise failure
    return run


def _check_stores(run: VerificationRun, *, log_intact: bool) -> Exception | None:
    """The sources, then the records, against the log; the first that fails is logged,
    leaves its part of `run` unchecked, and is returned, once the other has run too."""
    def records(r: VerificationRun) -> None:
        _check_records(r, log_intact=log_intact)

    failure = None
    for check in (_check_sources, records):
        try:
            check(run)
        except Exception as error:  # raised by audit_verify, once the run is stored
            log.exception("verification check failed", extra={"check": check.__name__})
            failure = failure or error
    return failure


def _store(run: VerificationRun, report: ChainReport, trigger: str) -> None:
    """Save `run`, raise an alert for what it found that the run before did not, and log
    the outcome."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ALERT_LOCK_KEY])
        previous = VerificationRun.objects.order_by("-finished_at", "-id").first()
        run.save(force_insert=True)
        if not report.ok and not _same_problems(run, previous):
            AuditAlert.objects.create(run=run, first_bad_seq=run.first_bad_seq,
                                      problem=run.problem, message=_alert_message(run, previous))
        if not run.sources_ok and not _same_findings(run, previous, "sources"):
            AuditAlert.objects.create(run=run, problem=SOURCES_CHANGED, message=_findings_message(
                "Sources changed after they were published", run.sources_problem_count,
                run.sources_problems))
        if not run.records_ok and not _same_findings(run, previous, "records"):
            AuditAlert.objects.create(run=run, problem=RECORDS_CHANGED, message=_findings_message(
                "Answers, verdicts, decisions or API tokens differ from the audit events "
                "that recorded them", run.records_problem_count, run.records_problems))
    if not run.sources_ok:
        log.error("sources changed", extra={"problems": run.sources_problem_count,
                                            "trigger": trigger})
    if not run.records_ok:
        log.error("answers, verdicts, decisions or API tokens changed", extra={
            "problems": run.records_problem_count, "trigger": trigger})
    if report.ok:
        log.info("audit chain verified", extra={"events": report.checked, "trigger": trigger,
                                                "last_seq": report.last_seq,
                                                "last_hash": report.last_hash})
    else:
        log.error("audit chain broken", extra={"first_bad_seq": report.first_bad_seq,
                                               "problem": report.problem,
                                               "problems": report.problem_count,
                                               "checked_to_seq": report.last_seq,
                                               "trigger": trigger})


def _same_problems(run: VerificationRun, previous: VerificationRun | None) -> bool:
    """Did the run before find exactly these problems? History cannot be repaired, so a
    broken chain is found broken every night: only a change is news. Any change counts, a
    problem gone as much as a new one, since either means someone wrote to the log again."""
    if previous is None or previous.ok:
        return False
    if previous.problems_digest:
        return bool(previous.problems_digest == run.problems_digest)
    # A run recorded before runs kept all their problems knew only the first one.
    return bool(run.problem_count == 1 and (previous.first_bad_seq, previous.problem) == (
        run.first_bad_seq, run.problem))


ALERT_NEW_LISTED = 5

# Sources: every stored revision against the chained event that published it. Checked on the
# same run as the chain, since that event is the proof (sources/integrity.py).
SOURCES_CHANGED = "sources_changed"
RECORDS_CHANGED = "records_changed"
SOURCES_LISTED = 100


def _check_sources(run: VerificationRun) -> None:
    from reviewqueue.sources.integrity import sources_check  # audit sits below the sources

    check = sources_check()
    run.sources_checked = {"revisions": check.revisions, "documents": check.documents}
    run.sources_problem_count = len(check.problems)
    run.sources_problems = [p.as_dict() for p in check.problems[:SOURCES_LISTED]]


def _check_records(run: VerificationRun, *, log_intact: bool) -> None:
    from reviewqueue.reviews.integrity import records_check  # audit sits below the reviews

    # Keeps its first problems (as many as listed), counts them all.
    check = records_check(log_intact=log_intact)
    run.records_checked = {"answers": check.answers, "verdicts": check.verdicts,
                           "decisions": check.decisions, "tokens": check.tokens}
    run.records_problem_count = check.problem_count
    run.records_problems = [p.as_dict() for p in check.problems]


def _same_findings(run: VerificationRun, previous: VerificationRun | None, kind: str) -> bool:
    """As with the chain, only a change is news: the same differences in the sources (`kind`
    "sources") or the records ("records") found again raise no second alert."""
    def found(r: VerificationRun) -> tuple[int, list[Any]]:
        return getattr(r, f"{kind}_problem_count"), getattr(r, f"{kind}_problems")

    return bool(previous is not None and getattr(previous, f"{kind}_checked") is not None
                and found(previous) == found(run))


def _findings_message(head: str, count: int, problems: list[dict[str, Any]]) -> str:
    listed = "; ".join(p["detail"] for p in problems[:ALERT_NEW_LISTED])
    more = count - min(len(problems), ALERT_NEW_LISTED)
    return f"{head} ({count} difference(s)): {listed}" + (f" (and {more} more)" if more > 0
                                                           else "")


def new_problems(run: VerificationRun, previous: VerificationRun) -> list[dict[str, Any]]:
    """The problems `run` found that the broken run before it had not (by event and kind)."""
    seen = {(p["seq"], p["problem"]) for p in previous.problems or []}
    if not seen and previous.first_bad_seq is not None:
        seen = {(previous.first_bad_seq, previous.problem)}
    return [p for p in run.problems or [] if (p["seq"], p["problem"]) not in seen]


def runs_before(runs: Iterable[VerificationRun]) -> dict[int, VerificationRun]:
    """For each of `runs` (by id), the verification finished before it, the one its alert
    compared it with (2 queries; runs are one a night and one a "Verify now")."""
    ids = sorted({run.pk for run in runs})
    if not ids:
        return {}
    table = connection.ops.quote_name(VerificationRun._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, before FROM (SELECT id, LAG(id) OVER (ORDER BY finished_at, "
                       f"id) AS before FROM {table}) runs WHERE id = ANY(%s)", [ids])
        before = dict(cursor.fetchall())
    found = VerificationRun.objects.in_bulk([pk for pk in before.values() if pk is not None])
    return {pk: found[prior] for pk, prior in before.items() if prior in found}


def _alert_message(run: VerificationRun, previous: VerificationRun | None) -> str:
    """The run's own summary, led by what is new since the run before when that was broken
    too, so an admin who acknowledged the first alert sees at once what changed. Stored in
    English, as the run's summary is; the audit page says it in the reader's language."""
    if previous is None or previous.ok:
        return str(run.detail)
    when = f"{previous.finished_at:%Y-%m-%d %H:%M} UTC"
    new = new_problems(run, previous)
    if new:
        listed = "; ".join(f"event #{p['seq']}: {p['detail']}" for p in new[:ALERT_NEW_LISTED])
        more = (f" (and {len(new) - ALERT_NEW_LISTED} more new among those listed)"
                if len(new) > ALERT_NEW_LISTED else "")
        head = f"New since the verification of {when}: {listed}{more}"
    else:
        # A run recorded before runs counted their problems knew of one.
        then = max(previous.problem_count, 1)
        head = (f"The problems differ from those found on {when} ({then} "
                f"then, {run.problem_count} now): the log was written to again, at events "
                "already known to be bad or past the ones listed.")
    return f"{head} {run.detail}"


@transaction.atomic
def audit_alert_acknowledge(*, alert_id: int, user: Any, actor: Actor) -> AuditAlert | None:
    """Mark an alert as seen. Acknowledging one that is already acknowledged changes nothing."""
    alert = AuditAlert.objects.select_for_update().filter(pk=alert_id).first()
    if alert is None or alert.acknowledged_at is not None:
        return alert
    alert.acknowledged_at = timezone.now()
    alert.acknowledged_by = user
    alert.save(update_fields=["acknowledged_at", "acknowledged_by"])
    audit_record(actor=actor, action="audit.alert_acknowledged", object_type="audit_alert",
                 object_id=alert.pk, before={"acknowledged": False},
                 after={"acknowledged": True, "first_bad_seq": alert.first_bad_seq,
                        "problem": alert.problem})
    return alert
