"""Checking the hash chain. Pure functions over rows; the database walk lives in services.

A row is a mapping with the hashed fields plus `prev_hash` and `hash`, in `seq` order: a
`.values()` dict from the table or a line of a JSON Lines export.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewqueue.audit.hashing import GENESIS_HASH, event_hash, hashed_fields_of


class Problem:
    """Codes for what went wrong at the first bad event."""

    MISSING = "missing"  # a gap in seq: events were deleted
    OUT_OF_ORDER = "out_of_order"  # seq goes backwards or repeats, or starts below 1
    BROKEN_LINK = "broken_link"  # prev_hash is not the previous event's hash
    CHANGED = "changed"  # the event's content no longer matches its own hash
    TRUNCATED = "truncated"  # events a past verification saw at the end are gone
    REWRITTEN = "rewritten"  # the anchored event's hash differs from the one verified before


@dataclass(frozen=True)
class Anchor:
    """The last event a past successful verification vouched for."""

    seq: int
    hash: str
    verified_at: str


@dataclass(frozen=True)
class ChainReport:
    ok: bool
    checked: int
    last_seq: int | None
    last_hash: str
    first_bad_seq: int | None = None
    problem: str = ""
    detail: str = ""

    def describe(self) -> str:
        if self.ok:
            if not self.checked:
                return "The audit log is empty: nothing to verify."
            return (f"All {self.checked} events check out "
                    f"(last event #{self.last_seq}, hash {self.last_hash[:12]}).")
        return f"Event #{self.first_bad_seq} is the first bad event: {self.detail}"


def walk(rows: Iterable[Mapping[str, Any]], *, anchor: Anchor | None = None) -> ChainReport:
    """Check every link and every hash; stop at the first bad event.

    The checks, in order, for the event in position n (counting from 1):
    its seq is n (a gap means events were deleted); its prev_hash is the hash of event n-1
    (otherwise something before it was changed and re-hashed, or it was inserted or moved);
    and the hash of its own canonical content equals its stored hash (otherwise it was edited).
    """
    expected_seq = 1
    prev_hash = GENESIS_HASH
    checked = 0
    anchor_seen = False

    def fail(seq: int, problem: str, detail: str) -> ChainReport:
        return ChainReport(ok=False, checked=checked, last_seq=expected_seq - 1 or None,
                           last_hash=prev_hash if checked else "", first_bad_seq=seq,
                           problem=problem, detail=detail)

    for row in rows:
        seq = int(row["seq"])
        if seq != expected_seq:
            if seq > expected_seq:
                missing = (f"event #{expected_seq} is" if seq == expected_seq + 1
                           else f"events #{expected_seq} to #{seq - 1} are")
                return fail(seq, Problem.MISSING,
                            f"{missing} missing before it (deleted from the log).")
            return fail(seq, Problem.OUT_OF_ORDER,
                        f"it sits where event #{expected_seq} should be: it was inserted or "
                        "moved.")
        if row["prev_hash"] != prev_hash:
            follows = f"event #{seq - 1}" if seq > 1 else "the start of the chain"
            return fail(seq, Problem.BROKEN_LINK,
                        f"it does not link to {follows}: an earlier event was changed and "
                        "re-hashed, or this event was inserted or moved.")
        if event_hash(hashed_fields_of(row), row["prev_hash"]) != row["hash"]:
            return fail(seq, Problem.CHANGED,
                        "its content no longer matches its hash: the event was edited.")
        if anchor is not None and seq == anchor.seq:
            anchor_seen = True
            if row["hash"] != anchor.hash:
                return fail(seq, Problem.REWRITTEN,
                            f"its hash differs from the one verified on {anchor.verified_at}: "
                            "the chain up to here was rewritten and re-hashed.")
        prev_hash = row["hash"]
        expected_seq += 1
        checked += 1

    if anchor is not None and not anchor_seen:
        return fail(anchor.seq, Problem.TRUNCATED,
                    f"it was verified on {anchor.verified_at} but is no longer in the log: "
                    f"events after #{expected_seq - 1} were removed.")
    return ChainReport(ok=True, checked=checked, last_seq=expected_seq - 1 or None,
                       last_hash=prev_hash if checked else "")
