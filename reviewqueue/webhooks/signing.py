"""How a webhook body is signed, and how a receiver checks it.

The signed string is `<timestamp>.<body>`; the headers are
    X-ReviewQueue-Timestamp: <unix seconds>
    X-ReviewQueue-Signature: sha256=<hex HMAC-SHA256 of the signed string with the secret>
A receiver recomputes the HMAC, compares in constant time and refuses old timestamps, which
stops a captured request from being replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

SIGNATURE_HEADER = "X-ReviewQueue-Signature"
TIMESTAMP_HEADER = "X-ReviewQueue-Timestamp"
EVENT_HEADER = "X-ReviewQueue-Event"
EVENT_ID_HEADER = "X-ReviewQueue-Event-Id"
DELIVERY_HEADER = "X-ReviewQueue-Delivery"
DEFAULT_TOLERANCE_SECONDS = 300


def canonical_body(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def signed_headers(secret: str, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    stamp = int(time.time()) if timestamp is None else timestamp
    return {TIMESTAMP_HEADER: str(stamp), SIGNATURE_HEADER: signature(secret, stamp, body)}


def verify(secret: str, body: bytes, timestamp: str, signature_header: str, *,
           now: float | None = None, tolerance: int = DEFAULT_TOLERANCE_SECONDS) -> bool:
    """What a receiver does: True when the signature matches and the timestamp is recent."""
    try:
        stamp = int(timestamp)
    except (TypeError, ValueError):
        return False
    current = time.time() if now is None else now
    if abs(current - stamp) > tolerance:
        return False
    # Compared as bytes: compare_digest raises TypeError on a str with non-ASCII characters,
    # which a forged header may well hold; that is a mismatch, not a receiver's 500.
    given = str(signature_header or "").encode("utf-8", "replace")
    return hmac.compare_digest(signature(secret, stamp, body).encode(), given)
