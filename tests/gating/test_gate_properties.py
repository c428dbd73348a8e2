"""Properties that must hold for every input, checked with generated records."""

from __future__ import annotations

import datetime
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gating
from gating.api import result_line
from gating.engine import encode_json, run
from gating.records import parse_raw

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TODAY = datetime.date(2026, 10, 20)
PASSAGE = "«confidential passage wording»"

# Small pools, so that generated records often cite, agree, conflict and collide.
KEYS = st.sampled_from(["trial_days", "seats"])
VALUES = st.sampled_from([14, 30, "14", 14.0, True, 1, None])
IDS = st.sampled_from(["d1", "d2", "d3"])
DATES = st.sampled_from(
    ["2026-09-30", "2026-10-01", "2026-10-20", "2026-10-31", "2026-11-01", "2027-01-01", "bad"]
)
SUBJECTS = st.sampled_from([None, "pro", "basic"])
AS_OF = st.sampled_from(["2026-09-30", "2026-10-01", "2026-10-20", "2026-10-31", "2026-11-01"])


@st.composite
def claims(draw: st.DrawFn) -> dict[str, Any]:
    claim = {"key": draw(KEYS), "value": draw(VALUES), "cite": draw(IDS | st.just("u1"))}
    if draw(st.booleans()):
        claim["subject"] = draw(SUBJECTS)
    return claim


@st.composite
def facts(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "key": draw(KEYS),
        "value": draw(VALUES),
        "valid_from": draw(DATES),
        "valid_until": draw(DATES),
        "subject": draw(SUBJECTS),
    }


@st.composite
def evidence_items(draw: st.DrawFn) -> dict[str, Any]:
    item: dict[str, Any] = {"id": draw(IDS)}
    if draw(st.booleans()):
        item.update(draw(facts()))
    else:
        item["facts"] = draw(st.lists(facts(), max_size=3))
    if draw(st.booleans()):
        item["document"] = draw(st.sampled_from(["pricing", "faq"]))
    if draw(st.booleans()):
        item["allowed_principals"] = draw(
            st.lists(st.sampled_from(["*", "user:ann", "group:hr"]), max_size=2)
        )
    if draw(st.booleans()):
        item["superseded"] = draw(st.booleans())
        item["revision"] = draw(st.sampled_from(["r1", "r2"]))
        item["current_revision"] = "r3"
    if draw(st.booleans()):
        item["text"] = PASSAGE
    return item


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "generated",
        "as_of": draw(AS_OF),
        "claims": draw(st.lists(claims(), max_size=4)),
        "evidence": draw(st.lists(evidence_items(), max_size=5)),
    }
    if draw(st.booleans()):
        record["answer"] = draw(
            st.sampled_from(
                [
                    "Trial is 14 days [d1].",
                    "Seats [d2][d9] and more [u1].",
                    "A long answer without any marker at all. " * 6,
                    "",
                ]
            )
        )
    if draw(st.booleans()):
        record["asked_by"] = draw(st.lists(st.sampled_from(["user:ann", "group:hr"]), max_size=2))
    if draw(st.booleans()):
        record["kb_facts"] = [
            {"document": draw(st.sampled_from(["kb1", "kb2"])), "revision": "r1", **fact}
            for fact in draw(st.lists(facts(), max_size=2))
        ]
    if draw(st.booleans()):
        why = draw(st.sampled_from(["withdrawn", "revision_not_received"]))
        record["unresolved"] = {draw(st.sampled_from(["u1", "d1"])): why}
    return record


def _outcome(result: dict[str, Any]) -> tuple[Any, ...]:
    return (
        result["decision"],
        result["reason"],
        result["findings"],
        result["warnings"],
        result["fingerprint"],
        result["next_boundary"],
    )


@SETTINGS
@given(records())
def test_the_same_input_always_gives_the_same_verdict_and_fingerprint(record):
    first = gating.evaluate_record(record)
    again = gating.evaluate_record(json.loads(json.dumps(record)))

    assert _outcome(first) == _outcome(again)


@SETTINGS
@given(records(), st.randoms(use_true_random=False))
def test_shuffling_evidence_and_kb_facts_changes_nothing(record, rng):
    shuffled = dict(record)
    shuffled["evidence"] = rng.sample(record["evidence"], len(record["evidence"]))
    if "kb_facts" in record:
        shuffled["kb_facts"] = rng.sample(record["kb_facts"], len(record["kb_facts"]))

    assert _outcome(gating.evaluate_record(shuffled)) == _outcome(gating.evaluate_record(record))


@SETTINGS
@given(records())
def test_the_typed_api_and_the_record_api_agree(record):
    claims, evidence, options = gating.parse_record(record)

    verdict = gating.evaluate(claims, evidence, options).to_dict()
    as_record = gating.evaluate_record(record)

    for key in ("decision", "reason", "findings", "warnings", "fingerprint", "next_boundary"):
        assert verdict[key] == as_record[key]


@SETTINGS
@given(records(), AS_OF)
def test_an_unchanged_fingerprint_means_an_unchanged_verdict(record, other_day):
    first = gating.evaluate_record(record)
    second = gating.evaluate_record(record | {"as_of": other_day})

    if first["fingerprint"] == second["fingerprint"]:
        assert _outcome(first) == _outcome(second)


@SETTINGS
@given(records())
def test_no_message_ever_quotes_passage_text(record):
    result = gating.evaluate_record(record)

    for entry in result["findings"] + result["warnings"]:
        assert "confidential" not in entry["message"]


@SETTINGS
@given(records())
def test_the_primary_reason_is_the_earliest_finding(record):
    result = gating.evaluate_record(record)

    if result["findings"]:
        assert result["reason"] == result["findings"][0]["code"]
        assert result["decision"] in ("review", "abstain")
    else:
        assert (result["decision"], result["reason"]) == ("candidate", "supported")


@SETTINGS
@given(records())
def test_the_cli_writer_and_the_record_api_write_the_same_json(record):
    case = parse_raw(record, TODAY)

    assert result_line(case[0], run(*case[1:])) == encode_json(gating.evaluate_record(record))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["d1", "trial_days", "2026-10-20", "claims", "evidence"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["id", "as_of", "claims", "evidence", "key", "value", "cite", "valid_from"]
            )
            | st.text(max_size=6),
            children,
            max_size=5,
        )
    ),
    max_leaves=30,
)


def _mutations(draw: st.DrawFn, record: dict[str, Any]) -> dict[str, Any]:
    """Replace one value somewhere in a good record by arbitrary JSON."""
    path: list[Any] = []
    node: Any = record
    while isinstance(node, dict | list) and node and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    if not path:
        return record
    parent: Any = record
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = draw(JSON)
    return record


@st.composite
def damaged_records(draw: st.DrawFn) -> dict[str, Any]:
    return _mutations(draw, draw(records()))


@settings(max_examples=300, deadline=None)
@given(JSON | damaged_records())
def test_any_json_value_gives_a_verdict_or_an_input_error(value):
    try:
        result = gating.evaluate_record(value)
    except gating.InputError as error:
        assert error.path
        assert str(error).startswith(f"{error.path}: ")
    else:
        assert result["decision"] in ("candidate", "review", "abstain")
        json.dumps(result)
