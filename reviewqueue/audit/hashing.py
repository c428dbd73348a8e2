"""The canonical form of an audit event and its hash. No database access here, so the same
code checks the live table and an exported file."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

GENESIS_HASH = "0" * 64

HASHED_FIELDS = (
    "seq", "created_at", "actor_type", "actor", "action", "object_type", "object_id",
    "trace_id", "document_id", "request_id", "before", "after",
)


def canonical_event(fields: dict[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def event_hash(fields: dict[str, Any], prev_hash: str) -> str:
    body = canonical_event(fields)
    return hashlib.sha256(f"{prev_hash}|{body}".encode()).hexdigest()


def hashed_fields_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the hash covers, from a model instance's values, a `.values()` row or a line
    of a JSON Lines export. `created_at` may be a datetime or the ISO string an export holds."""
    created_at = row["created_at"]
    return {
        "seq": row["seq"],
        "created_at": created_at if isinstance(created_at, str) else created_at.isoformat(),
        "actor_type": row["actor_type"],
        "actor": row["actor"],
        "action": row["action"],
        "object_type": row["object_type"],
        "object_id": row["object_id"],
        "trace_id": row["trace_id"],
        "document_id": row["document_id"],
        "request_id": row["request_id"],
        "before": row["before"],
        "after": row["after"],
    }
