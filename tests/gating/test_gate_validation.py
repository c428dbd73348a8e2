"""Malformed input is an InputError naming the field, never a verdict."""

from __future__ import annotations

import datetime
import math
import pickle
from typing import Any

import pytest

import gating
from gating import Claim, Evidence, Fact, InputError, KbFact, Options


def _error(record: Any) -> InputError:
    with pytest.raises(InputError) as caught:
        gating.evaluate_record(record)
    return caught.value


def test_the_error_reads_as_path_colon_message_and_survives_pickling():
    error = InputError("claims[3].value", "required")

    assert str(error) == "claims[3].value: required"
    assert isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.path, copy.message) == ("claims[3].value", "required")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r["claims"][0].pop("key"), "claims[0].key: required"),
        (lambda r: r["claims"][0].pop("value"), "claims[0].value: required"),
        (lambda r: r["claims"][0].update(cite=7), "claims[0].cite: must be a string"),
        (lambda r: r["claims"][0].update(key=""), "claims[0].key: must not be empty"),
        (lambda r: r["claims"][0].update(value=[14]), "claims[0].value: must be a string"),
        (lambda r: r["claims"][0].update(subject=3), "claims[0].subject: must be a string"),
        (lambda r: r["claims"][0].update(vlaue=14), "claims[0].vlaue: unknown field"),
        (lambda r: r["claims"].append("d1"), "claims[1]: must be an object"),
        (lambda r: r.pop("claims"), "claims: required"),
        (lambda r: r.update(claims={}), "claims: must be a list"),
        (lambda r: r.pop("evidence"), "evidence: required"),
        (lambda r: r["evidence"][0].pop("id"), "evidence[0].id: required"),
        (lambda r: r["evidence"][0].pop("valid_until"), "evidence[0].valid_until: required"),
        (lambda r: r["evidence"][0].update(valid_from=20261001), "evidence[0].valid_from: must"),
        (lambda r: r["evidence"][0].update(value={"days": 14}), "evidence[0].value: must"),
        (lambda r: r["evidence"][0].update(superseded="yes"), "evidence[0].superseded: must"),
        (lambda r: r["evidence"][0].update(allowed_principals="*"), "evidence[0].allowed_princ"),
        (lambda r: r["evidence"][0].update(score=0.9), "evidence[0].score: unknown field"),
        (lambda r: r["evidence"][0].update(facts=[]), "evidence[0].key: not allowed next to"),
        (lambda r: r.update(as_of="20/10/2026"), "as_of: must be a date written YYYY-MM-DD"),
        (lambda r: r.update(as_of=20261020), "as_of: must be a string"),
        (lambda r: r.update(id=True), "id: must be a string or an integer"),
        (lambda r: r.update(asked_by="user:ann"), "asked_by: must be a list of strings"),
        (lambda r: r.update(asked_by=["user:ann", 7]), "asked_by[1]: must be a string"),
        (lambda r: r.update(answer=42), "answer: must be a string or null"),
        (lambda r: r.update(unresolved={"d9": "lost"}), "unresolved.d9: must be 'withdrawn'"),
        (lambda r: r.update(kb_facts=[{"document": "faq"}]), "kb_facts[0].revision: required"),
        (lambda r: r.update(retrieved=[]), "retrieved: unknown field"),
    ],
)
def test_a_malformed_record_names_the_bad_field(cases, change, expected):
    record = cases.record()
    change(record)

    assert str(_error(record)).startswith(expected)


def test_a_fact_inside_a_facts_list_is_named_by_its_position(cases):
    record = cases.record(
        evidence=[
            {
                "id": "d1",
                "facts": [
                    {
                        "key": "a",
                        "value": 1,
                        "valid_from": "2026-01-01",
                        "valid_until": "2026-12-31",
                    },
                    {"key": "b", "valid_from": "2026-01-01", "valid_until": "2026-12-31"},
                ],
            }
        ]
    )

    assert str(_error(record)) == "evidence[0].facts[1].value: required"


@pytest.mark.parametrize("record", [None, 7, "text", [], [{"claims": []}]])
def test_a_record_that_is_not_an_object_is_an_error_at_the_root(record):
    assert _error(record).path == "$"


def test_labels_for_compare_and_eval_are_allowed_at_the_top_level(cases):
    record = cases.record(expected={"decision": "candidate"}, label="answerable")

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_optional_fields_may_be_null(cases):
    record = cases.record(
        claims=[cases.claim(subject=None)],
        evidence=[cases.item(document=None, text=None, allowed_principals=None, superseded=None)],
        answer=None,
        asked_by=None,
        kb_facts=None,
        unresolved=None,
        as_of=None,
    )

    result = gating.evaluate_record(record, default_as_of=datetime.date(2026, 10, 20))

    assert result["reason"] == "supported"


@pytest.mark.parametrize(
    ("field", "count", "path"),
    [("claims", 1001, "claims"), ("evidence", 1001, "evidence")],
)
def test_more_than_a_thousand_claims_or_items_is_an_input_error(cases, field, count, path):
    record = cases.record()
    record[field] = [
        cases.claim() if field == "claims" else cases.item(f"d{i}") for i in range(count)
    ]

    error = _error(record)

    assert error.path == path
    assert "limit 1000" in error.message


def test_a_thousand_claims_and_items_are_still_accepted(cases):
    record = cases.record(
        claims=[cases.claim(cite=f"d{i}") for i in range(1000)],
        evidence=[cases.item(f"d{i}") for i in range(1000)],
    )

    assert gating.evaluate_record(record)["decision"] == "candidate"


def test_over_200_kb_of_answer_and_passage_text_is_an_input_error(cases):
    passage = "x" * (150 * 1024)
    fits = cases.record(evidence=[cases.item(text=passage)], answer="[d1] " + "y" * (50 * 1000))
    too_much = cases.record(evidence=[cases.item(text=passage)], answer="y" * (51 * 1024))

    assert gating.evaluate_record(fits)["reason"] == "supported"
    error = _error(too_much)
    assert error.path == "answer"
    assert str(gating.MAX_TEXT_BYTES) in error.message


def test_the_text_limit_counts_utf8_bytes_not_characters(cases):
    record = cases.record(answer="é" * (gating.MAX_TEXT_BYTES // 2 + 1))

    assert _error(record).path == "answer"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 2**63, -(2**63) - 1])
def test_values_without_a_single_json_spelling_are_rejected(cases, value):
    record = cases.record(claims=[cases.claim(value=value)])

    assert _error(record).path == "claims[0].value"


def test_an_unparsable_date_is_a_verdict_not_an_input_error(cases):
    record = cases.record(evidence=[cases.item(valid_from="soon")])

    assert gating.evaluate_record(record)["reason"] == "invalid_metadata"


# -- the typed entry point checks the same things ---------------------------------------------

TODAY = datetime.date(2026, 10, 20)


def _fact(value: Any = 14) -> Fact:
    return Fact("trial_days", value, "2026-10-01", "2026-10-31")


def test_typed_input_with_a_bad_value_raises_the_same_error():
    with pytest.raises(InputError) as caught:
        gating.evaluate(
            [Claim("trial_days", math.nan, "d1")], [Evidence("d1", (_fact(),))], Options(TODAY)
        )

    assert str(caught.value) == "claims[0].value: must be a finite number"


def test_typed_input_with_a_non_string_date_raises_with_the_json_path():
    bad = Fact("trial_days", 14, datetime.date(2026, 10, 1), "2026-10-31")  # type: ignore[arg-type]

    with pytest.raises(InputError) as caught:
        gating.evaluate([Claim("trial_days", 14, "d1")], [Evidence("d1", (bad,))], Options(TODAY))

    assert caught.value.path == "evidence[0].facts[0].valid_from"


def test_typed_input_with_an_unknown_unresolved_reason_raises():
    options = Options(TODAY, unresolved={"d9": "misplaced"})

    with pytest.raises(InputError) as caught:
        gating.evaluate([Claim("trial_days", 14, "d9")], [], options)

    assert caught.value.path == "unresolved.d9"


def test_typed_input_with_a_bad_kb_fact_raises_with_its_path():
    kb = KbFact("faq", "r1", "trial_days", [14], "2026-01-01", "2026-12-31")  # type: ignore[arg-type]

    with pytest.raises(InputError) as caught:
        gating.evaluate(
            [Claim("trial_days", 14, "d1")],
            [Evidence("d1", (_fact(),))],
            Options(TODAY, kb_facts=(kb,)),
        )

    assert caught.value.path == "kb_facts[0].value"


def test_options_accept_unresolved_as_a_mapping_and_store_sorted_pairs():
    options = Options(TODAY, unresolved={"z": "withdrawn", "a": "revision_not_received"})

    assert options.unresolved == (("a", "revision_not_received"), ("z", "withdrawn"))
