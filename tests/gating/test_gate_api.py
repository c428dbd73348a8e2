"""The typed API the Django side codes against."""

from __future__ import annotations

import dataclasses
import datetime
import json

import pytest

import gating
from gating import Claim, Evidence, Fact, Finding, GateWarning, KbFact, Options, Verdict
from gating.api import result_line
from gating.engine import encode_json, run
from gating.mix import SHAPES, published_mix
from gating.records import parse_raw

TODAY = datetime.date(2026, 10, 20)


def _evidence(evidence_id: str = "d1", value: object = 14, **extra: object) -> Evidence:
    fact = Fact("trial_days", value, "2026-10-01", "2026-10-31")  # type: ignore[arg-type]
    return Evidence(evidence_id, (fact,), **extra)  # type: ignore[arg-type]


def test_evaluate_returns_a_frozen_verdict():
    verdict = gating.evaluate([Claim("trial_days", 14, "d1")], [_evidence()], Options(TODAY))

    assert isinstance(verdict, Verdict)
    assert (verdict.decision, verdict.reason, verdict.findings) == ("candidate", "supported", ())
    assert verdict.warnings == (
        GateWarning(
            "single_source", 0, ("d1",), "claim 0 (trial_days = 14) rests on a single source: d1"
        ),
    )
    assert (verdict.as_of, verdict.next_boundary) == (TODAY, datetime.date(2026, 11, 1))
    assert verdict.gate_version == gating.GATE_VERSION
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.decision = "review"  # type: ignore[misc]


def test_a_claim_citing_an_id_not_retrieved_rests_on_no_single_source():
    verdict = gating.evaluate([Claim("trial_days", 14, "d9")], [_evidence()], Options(TODAY))

    assert (verdict.decision, verdict.reason) == ("abstain", "unknown_citation")
    # Only that d1 is cited by nothing: not, as well, that the claim rests on d1.
    assert [(w.code, w.evidence) for w in verdict.warnings] == [("uncited_evidence", ("d1",))]


def test_a_conflict_with_the_knowledge_base_names_the_kb_document():
    kb = KbFact("pricing-faq", "r7", "trial_days", 30, "2026-01-01", "2026-12-31")

    verdict = gating.evaluate(
        [Claim("trial_days", 14, "d1")], [_evidence()], Options(TODAY, kb_facts=(kb,))
    )

    assert verdict.findings == (
        Finding(
            code="conflicting_sources",
            step="6",
            claim=0,
            evidence=("d1",),
            message="claim 0 (trial_days): sources in force disagree: "
            "14 from d1; 30 from knowledge-base document pricing-faq",
            kb_documents=("pricing-faq",),
        ),
    )


def test_answer_text_and_principals_are_options():
    options = Options(
        TODAY, answer_text="The trial lasts 14 days [d1] [d5].", principals=("user:ann",)
    )

    verdict = gating.evaluate(
        [Claim("trial_days", 14, "d1")], [_evidence(allowed_principals=("user:ann",))], options
    )

    assert (verdict.reason, verdict.findings[0].evidence) == ("unknown_citation", ("d5",))


def test_parse_record_gives_the_typed_input_for_a_record(cases):
    record = cases.record(
        claims=[cases.claim(subject="pro")],
        evidence=[
            cases.item(subject="pro", document="pricing", allowed_principals=["b", "a", "a"])
        ],
        answer="The trial lasts 14 days [d1].",
        asked_by=["user:ann"],
        unresolved={"d9": "withdrawn"},
    )

    claims, evidence, options = gating.parse_record(record)

    assert claims == (Claim("trial_days", 14, "d1", subject="pro"),)
    assert evidence == (
        Evidence(
            "d1",
            (Fact("trial_days", 14, "2026-10-01", "2026-10-31", subject="pro"),),
            document="pricing",
            allowed_principals=("a", "b"),
        ),
    )
    assert options == Options(
        TODAY,
        answer_text="The trial lasts 14 days [d1].",
        principals=("user:ann",),
        unresolved=(("d9", "withdrawn"),),
    )


def test_the_record_as_of_wins_over_the_default_and_today_is_the_last_resort(cases):
    record = cases.record()
    without = {k: v for k, v in record.items() if k != "as_of"}

    _, _, own = gating.parse_record(record, default_as_of=datetime.date(2030, 1, 1))
    _, _, defaulted = gating.parse_record(without, default_as_of=datetime.date(2030, 1, 1))
    _, _, today = gating.parse_record(without)

    assert own.as_of == TODAY
    assert defaulted.as_of == datetime.date(2030, 1, 1)
    assert today.as_of == datetime.date.today()


_LAST_DAY_RECORD = {
    "claims": [{"key": "trial_days", "value": 14, "cite": "d1"}],
    "evidence": [{"id": "d1", "key": "trial_days", "value": 14,
                  "valid_from": "2026-10-01", "valid_until": "2026-10-31"}],
}


def test_a_datetime_default_as_of_is_judged_on_its_day():
    """A datetime is a date too: on the last day of a fact's validity, at 09:00, the fact is
    still valid (as with Options(as_of=datetime)), not past its end."""
    moment = datetime.datetime(2026, 10, 31, 9, 0)
    result = gating.evaluate_record(_LAST_DAY_RECORD, default_as_of=moment)

    assert (result["decision"], result["reason"], result["next_boundary"]) == (
        "candidate", "supported", "2026-11-01")
    assert result == gating.evaluate_record(_LAST_DAY_RECORD,
                                            default_as_of=datetime.date(2026, 10, 31))


def test_parse_record_reads_a_datetime_default_as_of_as_its_day():
    _, _, options = gating.parse_record(_LAST_DAY_RECORD,
                                        default_as_of=datetime.datetime(2026, 10, 31, 9, 0))

    assert type(options.as_of) is datetime.date
    assert options.as_of == datetime.date(2026, 10, 31)


def test_evaluate_record_returns_the_documented_keys(cases):
    result = gating.evaluate_record(cases.record())

    assert list(result) == [
        "id",
        "decision",
        "reason",
        "findings",
        "warnings",
        "fingerprint",
        "next_boundary",
    ]


def test_citation_only_pass_checks_ids_and_nothing_else(cases):
    wrong_value_but_cited = cases.record(claims=[cases.claim(value=99)])
    no_claims = cases.record(claims=[])

    assert gating.citation_only_pass(wrong_value_but_cited) is True
    assert gating.citation_only_pass(no_claims) is False


def test_the_cli_line_writer_matches_the_record_dictionary_exactly(cases):
    records = [*cases.published(), *published_mix(len(SHAPES) * 3)]
    records.append(
        cases.record(
            id=7,
            claims=[cases.claim(), cases.claim("seats", "five ☂", "d2")],
            evidence=[cases.item(), cases.item("d2", "seats", 'five "5"', superseded=True)],
            answer='Quotes " and unicode ☂ [d3]',
            kb_facts=[
                {
                    "document": "faq",
                    "revision": "r1",
                    "key": "trial_days",
                    "value": 30,
                    "valid_from": "2026-01-01",
                    "valid_until": "2026-12-31",
                }
            ],
        )
    )

    for record in records:
        case = parse_raw(record, TODAY)
        line = result_line(case[0], run(*case[1:]))

        assert line == encode_json(gating.evaluate_record(record, default_as_of=TODAY))
        assert json.loads(line) == gating.evaluate_record(record, default_as_of=TODAY)
