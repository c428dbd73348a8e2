"""An event's hash taken from its before/after texts is the hash of the values jsonb gives back
for them: the one `verify_audit` recomputes from the stored row."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reviewqueue.audit.hashing import (
    as_jsonb_value,
    canonical_event,
    event_hash,
    event_hash_of_texts,
    hashed_fields_of,
)

SCALARS = (st.none() | st.booleans() | st.integers() | st.text(max_size=8)
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.sampled_from([-0.0, 1e16, 1.5e300, 0.1]))
# Keys of one type in a dict (json cannot sort mixed ones); those that are not strings are
# written as strings and read back as strings, and may then sort elsewhere.
KEYS = st.sampled_from([st.text(max_size=4), st.integers(), st.booleans(),
                        st.floats(allow_nan=False), st.sampled_from(["1", "10", "9", "-2"])])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | KEYS.flatmap(lambda keys: st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)
ROWS = st.fixed_dictionaries({
    "seq": st.integers(min_value=1), "actor_type": st.sampled_from(["user", "service"]),
    "actor": st.text(max_size=6), "action": st.text(max_size=6),
    "object_type": st.text(max_size=6), "object_id": st.text(max_size=6),
    "trace_id": st.text(max_size=6), "document_id": st.text(max_size=6),
    "request_id": st.text(max_size=6),
    "created_at": st.datetimes(timezones=st.just(UTC)),
})


def read_back(row: dict[str, Any], before_text: str, after_text: str, prev: str) -> str:
    """The hash of the row as stored: its values as jsonb gives them back."""
    stored = {**row, "before": as_jsonb_value(before_text), "after": as_jsonb_value(after_text)}
    return event_hash(hashed_fields_of(stored), prev)


@settings(max_examples=400, deadline=None)
@given(ROWS, st.dictionaries(st.text(max_size=6), VALUES, max_size=4),
       st.dictionaries(st.text(max_size=6), VALUES, max_size=4))
def test_the_hash_from_texts_is_the_hash_of_the_stored_row(row, before, after):
    before_text, after_text = canonical_event(before), canonical_event(after)
    prev = "ab" * 32
    assert (event_hash_of_texts(row, before_text, after_text, prev)
            == read_back(row, before_text, after_text, prev))


def test_values_that_read_back_otherwise_still_hash_as_stored():
    row = {"seq": 7, "actor_type": "service", "actor": "svc", "action": "answer.ingested",
           "object_type": "answer", "object_id": "t-1", "trace_id": "t-1", "document_id": "",
           "request_id": "r", "created_at": datetime(2026, 12, 7, tzinfo=UTC)}
    cases = [
        ({"by_number": {10: "a", 9: "b"}}, {"n": 1}),  # "10" sorts before "9" once read back
        ({"big": 1e20}, {"zero": -0.0}),  # jsonb keeps 1e20 as 100000000000000000000
        ({"9": "a string key that looks like a number"}, {}),
        ({"status": "held", "verdict": 3}, {"status": "candidate", "revisions": [["d", "r1"]]}),
    ]
    for before, after in cases:
        before_text, after_text = canonical_event(before), canonical_event(after)
        assert (event_hash_of_texts(row, before_text, after_text, "0" * 64)
                == read_back(row, before_text, after_text, "0" * 64))
    # The int keys do come back in another order: the check above is not vacuous.
    assert canonical_event(as_jsonb_value(canonical_event({10: "a", 9: "b"}))) != \
        canonical_event({10: "a", 9: "b"})
