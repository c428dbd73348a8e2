"""Writes to the audit log. Every state change calls `audit_record` inside its transaction."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from reviewqueue.audit.chain import Anchor, walk
from reviewqueue.audit.hashing import (
    GENESIS_HASH,
    HASHED_FIELDS,
    canonical_event,
    event_hash,
    hashed_fields_of,
)
from reviewqueue.audit.models import AuditAlert, AuditEvent, QuarantinedPayload, VerificationRun
from reviewqueue.middleware import request_id_var, trace_id_var

log = logging.getLogger("reviewqueue.audit")

# Any constant works; it only has to be the same for every writer of the chain.
_CHAIN_LOCK_KEY = 0x52510A0D17


@dataclass(frozen=True)
class Actor:
    type: str
    name: str

    @classmethod
    def of_user(cls, user: Any, token: Any = None) -> Actor:
        if user is None or not getattr(user, "is_authenticated", False):
            return cls(AuditEvent.ActorType.SYSTEM, "anonymous")
        if token is not None and getattr(token, "prefix", None):
            return cls(AuditEvent.ActorType.SERVICE, f"user:{user.username} token:{token.prefix}")
        return cls(AuditEvent.ActorType.USER, f"user:{user.username}")


WORKER = Actor(AuditEvent.ActorType.WORKER, "worker")
SYSTEM = Actor(AuditEvent.ActorType.SYSTEM, "system")


def hashed_fields(event: AuditEvent) -> dict[str, Any]:
    """The fields the hash covers, in the form they were hashed."""
    return hashed_fields_of({name: getattr(event, name) for name in HASHED_FIELDS})


# Keys that would carry what the log must never hold: passage or answer text, or secrets.
_FORBIDDEN_KEYS = frozenset({"text", "passage_text", "answer_text", "raw_token", "password"})
# A clear API token starts with this; a token's short display prefix is shorter than this.
_RAW_TOKEN = re.compile(r"rq_[A-Za-z0-9_\-]{20,}")


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


def _as_jsonb_returns(value: Any) -> Any:
    """The value as PostgreSQL's jsonb will give it back, so the hash computed now matches the
    one recomputed from the stored row: jsonb keeps numbers as decimals, so 1e+20 comes back as
    the integer 100000000000000000000 and -0.0 as 0.0."""
    if isinstance(value, dict):
        return {key: _as_jsonb_returns(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_jsonb_returns(item) for item in value]
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("audit values must be finite numbers")
        if value == 0:
            return 0.0
        if value.is_integer() and "e" in repr(value):
            return int(value)
    return value


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
    if not connection.in_atomic_block:
        raise RuntimeError("audit_record must run inside the transaction of the change")
    _refuse_forbidden(before or {}, "before")
    _refuse_forbidden(after or {}, "after")
    # Serialise appends: two writers reading the same tail would fork the chain. The lock is
    # held until the surrounding transaction commits.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CHAIN_LOCK_KEY])
    tail = AuditEvent.objects.order_by("-seq").values_list("seq", "hash").first()
    seq, prev_hash = (tail[0] + 1, tail[1]) if tail else (1, GENESIS_HASH)
    event = AuditEvent(
        seq=seq,
        created_at=timezone.now(),
        actor_type=actor.type,
        actor=actor.name,
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        trace_id=trace_id or trace_id_var.get(),
        document_id=document_id,
        request_id=request_id_var.get(),
        before=_as_jsonb_returns(json.loads(canonical_event(before or {}))),
        after=_as_jsonb_returns(json.loads(canonical_event(after or {}))),
        prev_hash=prev_hash,
    )
    event.hash = event_hash(hashed_fields(event), prev_hash)
    event.save(force_insert=True)
    return event


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nul(v) for v in value]
    return value


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
) -> QuarantinedPayload:
    """Keep a refused body. Oversized bodies are kept truncated, with their real size."""
    # PostgreSQL stores no NUL character in text or jsonb; a hostile body (field names
    # included, which the errors repeat) must still be kept, not turn into a 500.
    errors = _without_nul(errors)
    endpoint, trace_id = _without_nul(endpoint), _without_nul(trace_id)
    truncated = len(body) > max_bytes
    text = body[:max_bytes].decode("utf-8", errors="replace")
    with transaction.atomic():
        return QuarantinedPayload.objects.create(
            endpoint=endpoint[:200],
            method=method,
            sent_by=user if getattr(user, "is_authenticated", False) else None,
            status_code=status_code,
            errors=errors[:200],
            trace_id=trace_id[:200],
            size_bytes=len(body),
            body=text.replace("\x00", "\ufffd"),
            truncated=truncated,
            request_id=request_id_var.get(),
        )


# --- Verification -------------------------------------------------------------------------------

VERIFY_CHUNK = 5000


def _chain_rows(chunk: int = VERIFY_CHUNK) -> Iterator[dict[str, Any]]:
    """Every event in seq order, read in keyset chunks: memory stays flat however long the
    log is, and no transaction stays open for the whole walk."""
    fields = (*HASHED_FIELDS, "prev_hash", "hash")
    # No lower bound on the first chunk: a row smuggled in with seq 0 or below must be seen.
    events = AuditEvent.objects.order_by("seq").values(*fields)
    rows = list(events[:chunk])
    while rows:
        yield from rows
        if len(rows) < chunk:
            return
        rows = list(events.filter(seq__gt=rows[-1]["seq"])[:chunk])


def _anchor() -> Anchor | None:
    run = (VerificationRun.objects.filter(ok=True, last_seq__isnull=False)
           .order_by("-finished_at", "-id").first())
    if run is None:
        return None
    return Anchor(seq=run.last_seq, hash=run.last_hash,
                  verified_at=f"{run.finished_at:%Y-%m-%d %H:%M} UTC")


def audit_verify(*, trigger: str, requested_by: str = "", record: bool = True) -> VerificationRun:
    """Walk the whole chain, then store the outcome; a failure raises an alert.

    The walk also checks the log against the tip the last successful verification vouched for,
    which catches events removed from the end and a chain rewritten wholesale.
    """
    started = timezone.now()
    report = walk(_chain_rows(), anchor=_anchor())
    run = VerificationRun(
        started_at=started,
        finished_at=timezone.now(),
        trigger=trigger,
        requested_by=requested_by[:200],
        ok=report.ok,
        events_checked=report.checked,
        last_seq=report.last_seq if report.ok else None,
        last_hash=report.last_hash if report.ok else "",
        first_bad_seq=report.first_bad_seq,
        problem=report.problem,
        detail=report.describe(),
    )
    if not record:
        return run
    with transaction.atomic():
        run.save(force_insert=True)
        if not report.ok:
            _raise_alert(run)
    if report.ok:
        log.info("audit chain verified", extra={"events": report.checked, "trigger": trigger})
    else:
        log.error("audit chain broken", extra={"first_bad_seq": report.first_bad_seq,
                                               "problem": report.problem, "trigger": trigger})
    return run


def _raise_alert(run: VerificationRun) -> None:
    # History cannot be repaired, so the same break is found again every night: one alert per
    # break is enough, and an acknowledged one stays acknowledged. Any other break is new.
    known = AuditAlert.objects.filter(first_bad_seq=run.first_bad_seq,
                                      problem=run.problem).exists()
    if not known:
        AuditAlert.objects.create(run=run, first_bad_seq=run.first_bad_seq, problem=run.problem,
                                  message=run.detail)


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
