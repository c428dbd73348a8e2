"""Writes to the audit log. Every state change calls `audit_record` inside its transaction."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent, QuarantinedPayload
from reviewqueue.middleware import request_id_var

GENESIS_HASH = "0" * 64
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


def canonical_event(fields: dict[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def event_hash(fields: dict[str, Any], prev_hash: str) -> str:
    body = canonical_event(fields)
    return hashlib.sha256(f"{prev_hash}|{body}".encode()).hexdigest()


def hashed_fields(event: AuditEvent) -> dict[str, Any]:
    """The fields the hash covers, in the form they were hashed."""
    return {
        "seq": event.seq,
        "created_at": event.created_at.isoformat(),
        "actor_type": event.actor_type,
        "actor": event.actor,
        "action": event.action,
        "object_type": event.object_type,
        "object_id": event.object_id,
        "trace_id": event.trace_id,
        "document_id": event.document_id,
        "request_id": event.request_id,
        "before": event.before,
        "after": event.after,
    }


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
        trace_id=trace_id,
        document_id=document_id,
        request_id=request_id_var.get(),
        before=json.loads(canonical_event(before or {})),
        after=json.loads(canonical_event(after or {})),
        prev_hash=prev_hash,
    )
    event.hash = event_hash(hashed_fields(event), prev_hash)
    event.save(force_insert=True)
    return event


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
