"""The canonical form of an audit event and its hash. No database access here, so the same
code checks the live table and an exported file."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from reviewqueue.jsontext import encoder

GENESIS_HASH = "0" * 64

HASHED_FIELDS = (
    "seq", "created_at", "actor_type", "actor", "action", "object_type", "object_id",
    "trace_id", "document_id", "request_id", "before", "after",
)


_canonical = encoder(sort_keys=True, ensure_ascii=False, default=str)


def canonical_event(fields: Any) -> str:
    return _canonical(fields)


def as_jsonb_returns(value: Any) -> Any:
    """The value as PostgreSQL's jsonb will give it back, so the hash computed now matches the
    one recomputed from the stored row: jsonb keeps numbers as decimals, so 1e+20 comes back as
    the integer 100000000000000000000 and -0.0 as 0.0."""
    if isinstance(value, dict):
        return {key: as_jsonb_returns(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_jsonb_returns(item) for item in value]
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("audit values must be finite numbers")
        if value == 0:
            return 0.0
        written = repr(value)
        if value.is_integer() and "e" in written:
            # The decimal written, not the binary float: 1.5e+300 is 15 and 299 zeros.
            return int(Decimal(written))
    return value


def _written_as_jsonb_changes(text: str) -> bool:
    """Whether jsonb may give back the canonical JSON `text` other than as written: only a
    float written with an exponent (1e+16), a negative zero or a value JSON has no number for
    does (or a string that merely holds the same letters)."""
    return "e+" in text or "-0.0" in text or "NaN" in text or "Infinity" in text


def as_jsonb_value(text: str) -> Any:
    """The value whose canonical JSON is `text`, as jsonb will give it back (as_jsonb_returns
    only when the text holds a number jsonb changes)."""
    value = json.loads(text)
    return as_jsonb_returns(value) if _written_as_jsonb_changes(text) else value


def content_sha256(value: Any) -> str:
    """What an audit event records of a row's content that it does not spell out (free text,
    the gate's findings): the SHA-256 of its canonical JSON, taken as jsonb gives the value
    back, so that the row read back later gives the same digest."""
    text = _canonical(value)
    if _written_as_jsonb_changes(text):
        text = _canonical(as_jsonb_returns(value))
    return hashlib.sha256(text.encode()).hexdigest()


def event_hash(fields: dict[str, Any], prev_hash: str) -> str:
    body = canonical_event(fields)
    return hashlib.sha256(f"{prev_hash}|{body}".encode()).hexdigest()


# A key the text may have written from a number, a boolean or None (`{1: 2}` is `{"1":2}`):
# read back, it is a string, which may sort elsewhere. Such a key starts with a digit, a minus
# or the first letter of true, false, null, NaN or Infinity, and only a key is followed by
# `:`. A string key or value that merely looks like one only costs the slower way.
_KEY_NOT_A_STRING = re.compile(r'"[-0-9tfnNI][^"]*":')


def _reads_back_as_written(text: str) -> bool:
    """Whether the value jsonb gives back for the canonical JSON `text` has `text` as its
    canonical JSON again."""
    return not _written_as_jsonb_changes(text) and not _KEY_NOT_A_STRING.search(text)


# The hashed fields sorted as the canonical text writes them: "after" and "before" are next to
# each other there, with these before them and these after.
_BEFORE_AFTER = [key for key in sorted(HASHED_FIELDS) if key < "after"]
_AFTER_BEFORE = [key for key in sorted(HASHED_FIELDS) if key > "before"]


def event_hash_of_texts(row: Mapping[str, Any], before_text: str, after_text: str,
                        prev_hash: str) -> str:
    """`event_hash` of the row's fields with `before` and `after` given as their canonical
    JSON: the texts go into the event's canonical text as they are, instead of being read and
    written again, when the values jsonb gives back for them write the same texts (nearly
    always)."""
    if not (_reads_back_as_written(before_text) and _reads_back_as_written(after_text)):
        fields = {**row, "before": as_jsonb_value(before_text),
                  "after": as_jsonb_value(after_text)}
        return event_hash(hashed_fields_of(fields), prev_hash)
    fields = hashed_fields_of({**row, "before": None, "after": None})
    head = _canonical({key: fields[key] for key in _BEFORE_AFTER})
    tail = _canonical({key: fields[key] for key in _AFTER_BEFORE})
    body = f'{head[:-1]},"after":{after_text},"before":{before_text},{tail[1:]}'
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
