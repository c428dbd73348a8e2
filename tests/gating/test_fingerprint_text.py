"""The fingerprint of a batch's answer is put together from texts written once per fact (and
remembered by the identity of the fact tuples a batch shares); a record's is written in one
call. Both must stay the SHA-256 of exactly what encode_json gives for the canonical tuple,
whatever the input, the order, or what was seen before."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gating.engine import AFTER, BEFORE, CURRENT, INVALID, encode_json, fingerprint
from gating.model import GATE_VERSION

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# 1, True and 1.0 are equal as dict keys, and so are 0.0 and -0.0, but each is written
# differently: a cache keyed by value would mix them up.
VALUES = st.sampled_from([1, True, 1.0, 0.0, -0.0, "1", None, 14, 1e16, 2.5])
TEXT = st.sampled_from(["a", "b", "é", "x,y", 'q"t', "[z]"])
DATES = st.sampled_from(["2026-01-01", "2026-12-31", "9999-12-31", "bad"])
STATUS = st.sampled_from([BEFORE, CURRENT, AFTER, INVALID])
OPTIONAL = st.none() | TEXT
FACT = st.tuples(TEXT, VALUES, DATES, DATES, OPTIONAL, OPTIONAL)
KB_FACT = st.tuples(TEXT, TEXT, TEXT, VALUES, DATES, DATES, OPTIONAL, OPTIONAL)


@st.composite
def items(draw: st.DrawFn) -> tuple[Any, ...]:
    facts = tuple(draw(st.lists(FACT, max_size=4)))
    allowed = draw(st.none() | st.lists(TEXT, max_size=2).map(lambda p: tuple(sorted(set(p)))))
    return (draw(st.sampled_from(["d1", "d2", "d3"])), facts, draw(OPTIONAL), draw(OPTIONAL),
            draw(OPTIONAL), draw(OPTIONAL), allowed, draw(st.booleans()), draw(OPTIONAL))


@st.composite
def inputs(draw: st.DrawFn) -> dict[str, Any]:
    evidence = draw(st.lists(items(), max_size=4))
    kb = draw(st.lists(KB_FACT, max_size=5))
    return {
        "claims": draw(st.lists(st.tuples(TEXT, VALUES, TEXT, OPTIONAL), max_size=3)),
        "items": evidence,
        "item_statuses": [draw(st.lists(STATUS, min_size=len(i[1]), max_size=len(i[1])))
                          for i in evidence],
        "answer": draw(OPTIONAL),
        "principals": draw(st.none() | st.lists(TEXT, max_size=3).map(tuple)),
        "kb": kb,
        "kb_statuses": draw(st.lists(STATUS, min_size=len(kb), max_size=len(kb))),
        "unresolved": draw(st.lists(st.tuples(TEXT, TEXT), max_size=3)),
        "distinct_ids": len({i[0] for i in evidence}) == len(evidence),
        "unresolved_principals": draw(st.lists(
            st.tuples(TEXT, st.lists(TEXT, max_size=2).map(tuple)), max_size=2)),
    }


def written_whole(claims: Any, items: Any, item_statuses: Any, answer: Any, principals: Any,
                  kb: Any, kb_statuses: Any, unresolved: Any, distinct_ids: bool,
                  unresolved_principals: Any) -> str:
    """The definition: every part in its canonical order, then one encode_json of the whole."""
    canonical = []
    for item, statuses in zip(items, item_statuses, strict=True):
        pairs = sorted(zip(item[1], statuses, strict=True), key=lambda p: encode_json(p[0]))
        canonical.append(((item[0], tuple(f for f, _ in pairs), *item[2:]),
                          [s for _, s in pairs]))
    canonical.sort(key=(lambda c: c[0][0]) if distinct_ids else (lambda c: encode_json(c[0])))
    kb_pairs = sorted(zip(kb, kb_statuses, strict=True), key=encode_json)
    payload = encode_json((
        GATE_VERSION, claims, answer,
        sorted(set(principals)) if principals is not None else None,
        sorted(unresolved),
        [c[0] for c in canonical], [c[1] for c in canonical],
        [f for f, _ in kb_pairs], [s for _, s in kb_pairs],
        sorted(unresolved_principals),
    ))
    return hashlib.sha256(payload.encode()).hexdigest()


@SETTINGS
@given(inputs())
def test_the_fingerprint_is_the_digest_of_the_whole_canonical_text(given_input):
    whole = written_whole(**given_input)
    assert fingerprint(**given_input) == whole
    assert fingerprint(**given_input, shared=True) == whole
    # Again with the very same objects, now remembered by identity.
    assert fingerprint(**given_input, shared=True) == whole


@SETTINGS
@given(inputs(), st.randoms(use_true_random=False), st.booleans())
def test_the_order_of_items_facts_and_kb_facts_does_not_matter(given_input, random, shared):
    # A fact's status depends on the fact (its dates) and the day only: equal facts share it.
    def status(fact: tuple[Any, ...]) -> str:
        return [BEFORE, CURRENT, AFTER, INVALID][len(encode_json(fact)) % 4]

    given_input["item_statuses"] = [[status(f) for f in i[1]] for i in given_input["items"]]
    given_input["kb_statuses"] = [status(f) for f in given_input["kb"]]
    evidence = list(zip(given_input["items"], given_input["item_statuses"], strict=True))
    shuffled_evidence = []
    for item, statuses in random.sample(evidence, len(evidence)):
        pairs = random.sample(list(zip(item[1], statuses, strict=True)), len(statuses))
        shuffled_evidence.append(((item[0], tuple(f for f, _ in pairs), *item[2:]),
                                  [s for _, s in pairs]))
    kb = random.sample(list(zip(given_input["kb"], given_input["kb_statuses"], strict=True)),
                       len(given_input["kb"]))
    shuffled = {**given_input,
                "items": [i for i, _ in shuffled_evidence],
                "item_statuses": [s for _, s in shuffled_evidence],
                "kb": [f for f, _ in kb], "kb_statuses": [s for _, s in kb]}
    assert fingerprint(**shuffled, shared=shared) == fingerprint(**given_input, shared=shared)


def test_equal_values_of_different_types_in_shared_facts_are_told_apart():
    """1, True, 1.0 and 0.0, -0.0 compare equal; each must keep its own text when a batch hands
    the same fact tuples to many answers."""
    def one(value: object) -> str:
        fact = ("k", value, "2026-01-01", "9999-12-31", None, None)
        item = ("d1", (fact,), None, None, None, None, None, False, None)
        return fingerprint([], [item], [[CURRENT]], None, None, [], [], [], True, shared=True)

    digests = [one(value) for value in (1, True, 1.0, 0.0, -0.0, 1, True, 1.0, 0.0, -0.0)]
    assert len(set(digests[:5])) == 5
    assert digests[:5] == digests[5:]


@SETTINGS
@given(inputs(), st.lists(STATUS, min_size=5, max_size=5))
def test_the_same_kb_tuple_read_on_another_day_is_written_with_that_days_statuses(
        given_input, other_day):
    """A batch hands the gate one tuple of kb facts for many answers; an answer asked about
    another day gives its facts other statuses, and must not get the first one's text."""
    given_input["kb"] = tuple(given_input["kb"])
    given_input["items"] = [(*item[:1], tuple(item[1]), *item[2:])
                            for item in given_input["items"]]
    assert fingerprint(**given_input, shared=True) == written_whole(**given_input)
    again = {**given_input, "kb_statuses": other_day[:len(given_input["kb"])]}
    assert fingerprint(**again, shared=True) == written_whole(**again)
    assert fingerprint(**given_input, shared=True) == written_whole(**given_input)


def test_no_facts_anywhere_is_written_as_empty_arrays():
    """The empty tuple is one object in Python: as an item's facts and as the kb it must
    still be written as each."""
    item = ("d1", (), None, None, None, None, None, False, None)
    args = ([], [item], [[]], None, None, (), [], [], True, [])
    assert fingerprint(*args) == fingerprint(*args, shared=True) == written_whole(*args)
