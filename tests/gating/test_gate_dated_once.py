"""A batch hands the gate the same fact tuples for every answer that cites a document or reads
the same knowledge-base facts, and the gate dates them once (remembered by identity, with the
day). Whatever it has seen before, the same facts on another day, for other claims, or cited
under another id, must give the verdict that a first sight of equal facts gives."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gating import engine

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEY = st.sampled_from(["k1", "k2"])
VALUE = st.sampled_from([1, 2, True, "1"])
SUBJECT = st.none() | st.sampled_from(["s1", "s2"])
DATE = st.sampled_from(["2025-06-01", "2026-01-01", "2026-06-30", "9999-12-31", "2026-02-30"])
DAYS = st.lists(st.sampled_from(["2025-01-01", "2026-01-01", "2026-03-15", "2027-01-01"]),
                min_size=2, max_size=4)
FACT = st.tuples(KEY, VALUE, DATE, DATE, SUBJECT, st.none())
KB_FACT = st.tuples(st.sampled_from(["kb-a", "kb-b"]), st.just("r1"), KEY, VALUE, DATE, DATE,
                    SUBJECT, st.none())
FACTS = st.lists(FACT, max_size=4).map(tuple)


def fresh(value: Any) -> Any:
    """An equal copy sharing no tuple with `value` (the empty tuple excepted: there is one)."""
    return tuple([fresh(part) for part in value]) if isinstance(value, tuple) else value


@SETTINGS
@given(st.lists(FACTS, min_size=1, max_size=3), st.lists(KB_FACT, max_size=4).map(tuple),
       DAYS, st.data())
def test_shared_facts_give_what_fresh_facts_give_on_every_day(documents, kb, days, data):
    for day in days:
        # Each answer cites some of the shared documents, under ids of its own.
        cited = data.draw(st.lists(st.sampled_from(range(len(documents))), min_size=1,
                                   max_size=3))
        items = [(f"d{n}", documents[doc], f"doc-{doc}", "r1", None, None, None, False, None)
                 for n, doc in enumerate(data.draw(st.permutations(cited)))]
        claims = data.draw(st.lists(st.tuples(KEY, VALUE, st.sampled_from(["d0", "d1"]), SUBJECT),
                                    max_size=3))
        shared = engine.run(claims, items, day, None, None, kb)
        assert shared == engine.run(fresh(claims), [fresh(item) for item in items], day, None,
                                    None, fresh(kb))
