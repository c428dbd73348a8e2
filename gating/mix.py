"""The published case mix, generated in memory for benchmarks.

``published_mix(n)`` cycles through the thirteen published case shapes (one candidate, six
abstain, six review) and varies every copy: keys, evidence ids, values and dates are renamed or
shifted consistently, so each line is different but keeps the decision of the shape it comes
from. Nothing is read from disk, so ``python -m gating bench`` works from a bare checkout.
"""

from __future__ import annotations

import datetime
import json
import random
from collections.abc import Iterator

# (name, claims, evidence, expected decision, expected reason). Claims are (key, value, cite);
# evidence rows are (id, key, value, valid_from, valid_until). Dates are day offsets from as_of,
# or a literal string for a date that does not parse.
_Row = tuple[str, str, int, int | str, int]
SHAPES: tuple[tuple[str, list[tuple[str, int, str]], list[_Row], str, str], ...] = (
    ("valid", [("A", 14, "d1")], [("d1", "A", 14, -19, 11)], "candidate", "supported"),
    ("no_evidence", [("A", 14, "d1")], [], "abstain", "no_evidence"),
    (
        "unknown_id",
        [("A", 14, "missing")],
        [("d1", "A", 14, -19, 11)],
        "abstain",
        "unknown_citation",
    ),
    ("expired", [("A", 14, "d0")], [("d0", "A", 14, -49, -20)], "review", "noncurrent_citation"),
    ("future", [("A", 30, "d2")], [("d2", "A", 30, 12, 41)], "review", "noncurrent_citation"),
    (
        "conflict",
        [("A", 14, "d1")],
        [("d1", "A", 14, -19, 11), ("d4", "A", 30, -19, 11)],
        "review",
        "conflicting_sources",
    ),
    ("wrong_value", [("A", 30, "d1")], [("d1", "A", 14, -19, 11)], "abstain", "unsupported_claim"),
    ("unrelated", [("A", 14, "d3")], [("d3", "B", 8, -19, 11)], "abstain", "unsupported_claim"),
    (
        "expired_plus_other",
        [("A", 14, "d0")],
        [("d0", "A", 14, -49, -20), ("d3", "B", 8, -19, 11)],
        "review",
        "noncurrent_citation",
    ),
    (
        "invalid_date",
        [("A", 14, "d5")],
        [("d5", "A", 14, "invalid", 11)],
        "review",
        "invalid_metadata",
    ),
    (
        "extra_claim",
        [("A", 14, "d1"), ("B", 24, "d1")],
        [("d1", "A", 14, -19, 11)],
        "abstain",
        "unsupported_claim",
    ),
    ("empty_claims", [], [("d1", "A", 14, -19, 11)], "abstain", "no_claims"),
    (
        "duplicate_id",
        [("A", 14, "d1")],
        [("d1", "A", 14, -19, 11), ("d1", "A", 14, -19, 11)],
        "review",
        "invalid_metadata",
    ),
)

_KEYS = (
    "trial_days",
    "support_hours",
    "refund_window_days",
    "seats_included",
    "storage_gb",
    "uptime_sla",
    "api_rate_limit",
    "retention_days",
    "notice_period_days",
    "max_file_mb",
)
_BASE_DAY = datetime.date(2026, 10, 20)


def _shape_record(shape_index: int, copy: int, rng: random.Random) -> dict[str, object]:
    name, claims, evidence, decision, reason = SHAPES[shape_index]
    key_a, key_b = rng.sample(_KEYS, 2)
    keys = {"A": key_a, "B": key_b}
    prefix = rng.choice(("d", "doc", "src", "p"))
    ids: dict[str, str] = {}

    def ident(name: str) -> str:
        if name == "missing":
            return f"{prefix}x{rng.randrange(10**6)}"
        if name not in ids:
            ids[name] = f"{prefix}{rng.randrange(10**6)}"
        return ids[name]

    # Shift every value by the same amount so equal values stay equal and distinct ones distinct.
    bump = rng.randrange(0, 500)
    as_of = _BASE_DAY + datetime.timedelta(days=rng.randrange(-400, 400))

    def day(offset: int | str) -> str:
        if isinstance(offset, str):
            return offset
        return (as_of + datetime.timedelta(days=offset)).isoformat()

    return {
        "id": f"{name}-{copy}",
        "as_of": as_of.isoformat(),
        "claims": [{"key": keys[k], "value": v + bump, "cite": ident(c)} for k, v, c in claims],
        "evidence": [
            {
                "id": ident(i),
                "key": keys[k],
                "value": v + bump,
                "valid_from": day(start),
                "valid_until": day(end),
            }
            for i, k, v, start, end in evidence
        ],
        "expected": {"decision": decision, "reason": reason},
    }


def published_mix(count: int, seed: int = 2026) -> Iterator[dict[str, object]]:
    """Yield ``count`` records of the published mix, thirteen shapes in turn."""
    rng = random.Random(seed)
    for index in range(count):
        yield _shape_record(index % len(SHAPES), index // len(SHAPES), rng)


def published_mix_lines(count: int, seed: int = 2026) -> Iterator[str]:
    """The same records as compact JSON lines (without the trailing newline)."""
    for record in published_mix(count, seed):
        yield json.dumps(record, separators=(",", ":"))
