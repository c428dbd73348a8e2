"""The decision order, step by step, and which step wins when two fail at once."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable
from typing import Any

import pytest

import gating

Record = dict[str, Any]

# What each step decides when it is the first to fail (DESIGN.md, "The gate").
OUTCOME = {
    "0": ("abstain", "unauthorized_evidence"),
    "1": ("abstain", "no_claims"),
    "2": ("abstain", "no_evidence"),
    "3": ("review", "invalid_metadata"),
    "4": ("abstain", "unknown_citation"),
    "5": ("review", "noncurrent_citation"),
    "5b": ("review", "superseded_revision"),
    "6": ("review", "conflicting_sources"),
    "7": ("abstain", "unsupported_claim"),
    "7b": ("abstain", "uncited_answer"),
}
STEPS = list(OUTCOME)
LONG_UNCITED = "Our plans include a free trial. " * 8  # 256 characters, no marker


def _codes(result: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in result["findings"]]


# -- one breaker per step: each adds the smallest thing that makes only that step fail --------


def _break_0(r: Record, cases: Any, steps: set[str]) -> None:
    r["asked_by"] = ["user:ann", "group:sales"]
    r["evidence"].append(
        cases.item("hr1", key="salary_band", value="B", allowed_principals=["group:hr"])
    )


def _break_1(r: Record, cases: Any, steps: set[str]) -> None:
    r["claims"] = []


def _break_2(r: Record, cases: Any, steps: set[str]) -> None:
    r["evidence"] = []


def _break_3(r: Record, cases: Any, steps: set[str]) -> None:
    # A revision the store never received.
    r["unresolved"] = {"lost": "revision_not_received"}


def _break_4(r: Record, cases: Any, steps: set[str]) -> None:
    if "1" in steps:  # no claims left to cite anything: cite from the answer text instead
        r["answer"] = "The trial lasts 14 days [nowhere]."
    else:
        r["claims"].append(cases.claim(key="plan", value="pro", cite="nowhere"))


def _break_5(r: Record, cases: Any, steps: set[str]) -> None:
    r["evidence"].append(cases.item("old", "seats", 5, "2026-09-01", "2026-09-30"))
    r["claims"].append(cases.claim("seats", 5, "old"))


def _break_5b(r: Record, cases: Any, steps: set[str]) -> None:
    r["evidence"].append(
        cases.item(
            "moved",
            "region",
            "eu",
            superseded=True,
            document="terms",
            revision="r1",
            current_revision="r2",
        )
    )
    r["claims"].append(cases.claim("region", "eu", "moved"))


def _break_6(r: Record, cases: Any, steps: set[str]) -> None:
    r["evidence"] += [cases.item("sla_a", "uptime", 99.9), cases.item("sla_b", "uptime", 99.5)]
    r["claims"].append(cases.claim("uptime", 99.9, "sla_a"))


def _break_7(r: Record, cases: Any, steps: set[str]) -> None:
    r["evidence"].append(cases.item("refunds", "refund_days", 30))
    r["claims"].append(cases.claim("refund_days", 14, "refunds"))


def _break_7b(r: Record, cases: Any, steps: set[str]) -> None:
    r["answer"] = LONG_UNCITED


BREAKERS: dict[str, Callable[[Record, Any, set[str]], None]] = {
    "0": _break_0,
    "1": _break_1,
    "2": _break_2,
    "3": _break_3,
    "4": _break_4,
    "5": _break_5,
    "5b": _break_5b,
    "6": _break_6,
    "7": _break_7,
    "7b": _break_7b,
}

# Pairs that cannot both fail: step 0 needs a retrieved item, steps 5 to 7 need a claim citing
# a retrieved item, and every step-3 problem is about a retrieved item (an unresolved one
# counts as retrieved, so it is not "no evidence").
CANNOT_COEXIST = {
    ("0", "2"),
    ("2", "3"),
    *(("1", later) for later in ("5", "5b", "6", "7")),
    *(("2", later) for later in ("5", "5b", "6", "7")),
}
PAIRS = [pair for pair in itertools.combinations(STEPS, 2) if pair not in CANNOT_COEXIST]


def _broken(cases: Any, *steps: str) -> Record:
    record = cases.record()
    wanted = set(steps)
    # Removing claims or evidence goes last, after the other breakers have added theirs.
    for step in sorted(wanted, key=lambda s: (s in ("1", "2"), STEPS.index(s))):
        BREAKERS[step](record, cases, wanted)
    return record


def test_the_baseline_record_is_a_candidate(cases):
    result = gating.evaluate_record(cases.record())

    assert (result["decision"], result["reason"], result["findings"]) == (
        "candidate",
        "supported",
        [],
    )


@pytest.mark.parametrize("step", STEPS)
def test_each_step_alone_gives_its_decision_and_reason(cases, step):
    result = gating.evaluate_record(_broken(cases, step))

    assert (result["decision"], result["reason"]) == OUTCOME[step]
    # Without evidence the baseline claim's citation cannot resolve either (step 4).
    also = {"4"} if step == "2" else set()
    assert {finding["step"] for finding in result["findings"]} == {step} | also


@pytest.mark.parametrize(("earlier", "later"), PAIRS, ids=lambda step: f"step{step}")
def test_the_earlier_of_two_failing_steps_gives_the_primary_reason(cases, earlier, later):
    result = gating.evaluate_record(_broken(cases, earlier, later))

    assert (result["decision"], result["reason"]) == OUTCOME[earlier]
    assert OUTCOME[later][1] in _codes(result), "the later problem is still reported"


def test_every_pair_of_steps_is_either_tested_or_known_to_be_impossible():
    assert len(PAIRS) + len(CANNOT_COEXIST) == len(STEPS) * (len(STEPS) - 1) // 2


def test_findings_come_in_step_order_then_claim_order(cases):
    result = gating.evaluate_record(_broken(cases, "7", "5", "6", "4", "3", "0"))

    order = [(f["step"], f["claim"]) for f in result["findings"]]
    assert order == sorted(order, key=lambda pair: (STEPS.index(pair[0]), pair[1] or -1))


# -- step 0 -----------------------------------------------------------------------------------


def test_an_item_the_asker_may_not_read_is_named_but_its_passage_never_shown(cases):
    secret = "The merger closes on 1 December; do not share."
    record = cases.record(
        evidence=[
            cases.item(),
            cases.item("m1", "deal_close", "2026-12-01", text=secret, allowed_principals=["g:x"]),
        ],
        asked_by=["user:ann"],
    )

    result = gating.evaluate_record(record)

    assert result["reason"] == "unauthorized_evidence"
    assert result["findings"][0]["evidence"] == ["m1"]
    everything = " ".join(m["message"] for m in result["findings"] + result["warnings"])
    assert secret not in everything
    assert "merger" not in everything


@pytest.mark.parametrize(
    "allowed",
    [None, ["*"], ["group:sales", "group:hr"]],
    ids=["unrestricted", "everyone", "shared-group"],
)
def test_an_item_the_asker_may_read_passes_step_0(cases, allowed):
    record = cases.record(
        evidence=[cases.item(allowed_principals=allowed)], asked_by=["user:ann", "group:sales"]
    )

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_step_0_is_skipped_when_the_asker_is_not_given(cases):
    record = cases.record(evidence=[cases.item(allowed_principals=["group:hr"])])

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_an_asker_with_no_principals_may_read_only_unrestricted_items(cases):
    record = cases.record(evidence=[cases.item(allowed_principals=["group:hr"])], asked_by=[])

    assert gating.evaluate_record(record)["reason"] == "unauthorized_evidence"


# -- step 3 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_date",
    [
        "invalid",
        "2026-13-01",
        "2026-02-30",
        "20261001",
        "2026-1-05",
        " 2026-10-01",
        "2026-10-01T00:00",
        "",
        "\uff12\uff10\uff12\uff16-10-01",  # full-width digits
    ],
)
def test_a_date_that_is_not_a_plain_iso_day_is_invalid_metadata(cases, bad_date):
    record = cases.record(evidence=[cases.item(valid_from=bad_date)])

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("review", "invalid_metadata")
    assert "valid_from" in result["findings"][0]["message"]


def test_a_validity_that_ends_before_it_starts_is_invalid_metadata(cases):
    record = cases.record(evidence=[cases.item(valid_from="2026-10-31", valid_until="2026-10-01")])

    result = gating.evaluate_record(record)

    assert result["reason"] == "invalid_metadata"
    assert "after valid_until" in result["findings"][0]["message"]


def test_an_item_with_bad_dates_takes_no_part_in_validity_reasoning(cases):
    # d9 would conflict with d1 if its dates could be read; they cannot, so it is reported as
    # invalid metadata and nothing else.
    record = cases.record(
        evidence=[cases.item(), cases.item("d9", value=30, valid_until="2026-10-32")]
    )

    result = gating.evaluate_record(record)

    assert _codes(result) == ["invalid_metadata"]


def test_a_cited_item_with_bad_dates_is_not_also_called_noncurrent(cases):
    record = cases.record(evidence=[cases.item(valid_until="someday")])

    assert _codes(gating.evaluate_record(record)) == ["invalid_metadata"]


def test_a_duplicate_evidence_id_is_invalid_metadata_naming_the_id(cases):
    record = cases.record(evidence=[cases.item(), cases.item()])

    result = gating.evaluate_record(record)

    assert result["reason"] == "invalid_metadata"
    assert result["findings"][0]["evidence"] == ["d1"]
    assert "2 times" in result["findings"][0]["message"]


def test_a_cited_revision_the_store_never_received_is_invalid_metadata(cases):
    record = cases.record(
        claims=[cases.claim(), cases.claim("seats", 5, "d7")],
        unresolved={"d7": "revision_not_received"},
    )

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("review", "invalid_metadata")
    finding = result["findings"][0]
    assert (finding["claim"], finding["evidence"]) == (1, ["d7"])
    assert "never received" in finding["message"]


def test_an_id_both_retrieved_and_unresolved_is_invalid_metadata(cases):
    result = gating.evaluate_record(cases.record(unresolved={"d1": "withdrawn"}))

    assert (result["decision"], result["reason"]) == ("review", "invalid_metadata")
    assert [f["code"] for f in result["findings"]] == ["invalid_metadata"]
    assert "also listed as unresolved (withdrawn)" in result["findings"][0]["message"]


# -- step 4 -----------------------------------------------------------------------------------


def test_a_claim_citing_an_id_that_was_not_retrieved_is_an_unknown_citation(cases):
    result = gating.evaluate_record(cases.record(claims=[cases.claim(cite="d8")]))

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert (result["findings"][0]["claim"], result["findings"][0]["evidence"]) == (0, ["d8"])


def test_a_fabricated_marker_in_the_answer_is_an_unknown_citation(cases):
    record = cases.record(answer="The trial lasts 14 days [d1]. Support is 24/7 [d2].")

    result = gating.evaluate_record(record)

    assert result["reason"] == "unknown_citation"
    assert result["findings"][0]["claim"] is None
    assert result["findings"][0]["evidence"] == ["d2"]
    assert "[d2]" in result["findings"][0]["message"]


def test_markers_that_all_name_retrieved_items_pass_step_4(cases):
    record = cases.record(answer="The trial lasts 14 days [d1].")

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_citing_a_withdrawn_document_is_an_unknown_citation_that_says_so(cases):
    record = cases.record(
        claims=[cases.claim(cite="gone")],
        evidence=[],
        answer="The trial lasts 14 days [gone].",
        unresolved={"gone": "withdrawn"},
    )

    result = gating.evaluate_record(record)

    withdrawn = [f for f in result["findings"] if f["code"] == "unknown_citation"]
    assert [(f["claim"], f["evidence"]) for f in withdrawn] == [(None, ["gone"]), (0, ["gone"])]
    assert all("withdrawn" in f["message"] for f in withdrawn)
    assert not any("not among" in f["message"] for f in withdrawn)


def test_a_withdrawn_document_nothing_cites_is_a_warning_not_a_finding(cases):
    # d1 supports the claim; "gone" was retrieved too, but neither a claim nor the text cites it.
    record = cases.record(answer="The trial lasts 14 days [d1].", unresolved={"gone": "withdrawn"})

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"], result["findings"]) == (
        "candidate", "supported", [])
    uncited = [w for w in result["warnings"] if w["code"] == "uncited_evidence"]
    assert [(w["evidence"], w["message"]) for w in uncited] == [
        (["gone"], "evidence gone was retrieved but no claim cites it; its document was withdrawn")
    ]


@pytest.mark.parametrize(
    ("why", "reason"),
    [("passage_not_found", "unknown_citation"), ("revision_not_received", "invalid_metadata")],
)
def test_other_unresolved_ids_nothing_cites_still_hold_the_answer(cases, why, reason):
    # Their documents still have facts, which could disagree with the claim.
    result = gating.evaluate_record(cases.record(unresolved={"gone": why}))

    assert result["reason"] == reason
    assert result["findings"][0]["evidence"] == ["gone"]


def test_a_withdrawn_document_cited_only_by_the_text_is_still_an_unknown_citation(cases):
    record = cases.record(answer="The trial lasts 14 days [d1][gone].",
                          unresolved={"gone": "withdrawn"})

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert "the answer text cites [gone]: its document was withdrawn" in [
        f["message"] for f in result["findings"]]


def test_a_withdrawn_citation_outranks_later_steps_but_not_missing_evidence(cases):
    record = cases.record(
        claims=[cases.claim(), cases.claim("seats", 5, "gone")],
        unresolved={"gone": "withdrawn"},
    )

    assert gating.evaluate_record(record)["reason"] == "unknown_citation"


# -- step 5: validity on as_of, both ends inclusive -------------------------------------------


@pytest.mark.parametrize(
    ("as_of", "reason"),
    [
        ("2026-09-30", "noncurrent_citation"),  # the day before it starts
        ("2026-10-01", "supported"),  # the first day
        ("2026-10-31", "supported"),  # the last day: still current
        ("2026-11-01", "noncurrent_citation"),  # the day after it ends
    ],
)
def test_a_fact_is_current_from_its_first_to_its_last_day_inclusive(cases, as_of, reason):
    result = gating.evaluate_record(cases.record(as_of=as_of))

    assert result["reason"] == reason


def test_a_one_day_fact_is_current_on_that_day_only(cases):
    record = cases.record(evidence=[cases.item(valid_from=cases.as_of, valid_until=cases.as_of)])

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_an_expired_citation_says_expired_and_a_future_one_says_not_yet(cases):
    expired = gating.evaluate_record(cases.record(as_of="2026-11-15"))
    future = gating.evaluate_record(cases.record(as_of="2026-09-15"))

    assert "expired" in expired["findings"][0]["message"]
    assert "not yet in force" in future["findings"][0]["message"]


def test_the_period_in_force_of_a_multi_period_item_is_the_one_that_counts(cases):
    periods = {
        "id": "d1",
        "facts": [
            {
                "key": "trial_days",
                "value": 7,
                "valid_from": "2026-01-01",
                "valid_until": "2026-09-30",
            },
            {
                "key": "trial_days",
                "value": 14,
                "valid_from": "2026-10-01",
                "valid_until": "2026-12-31",
            },
        ],
    }
    current = gating.evaluate_record(cases.record(evidence=[periods]))
    stale = gating.evaluate_record(cases.record(claims=[cases.claim(value=7)], evidence=[periods]))

    assert current["reason"] == "supported"
    assert stale["reason"] == "unsupported_claim"
    assert "gives 14" in stale["findings"][0]["message"]


def test_step_5_ignores_cited_facts_about_other_keys(cases):
    # An expired support_hours fact beside one in force: the item is in force, and the claim's
    # key is simply not there. (An item none of whose facts is in force is step 5 as well:
    # tests/gating/test_design_order.py.)
    item = {
        "id": "d1",
        "facts": [
            {"key": "support_hours", "value": 8, "valid_from": "2026-09-01",
             "valid_until": "2026-09-30"},
            {"key": "seats", "value": 5, "valid_from": "2026-10-01", "valid_until": "2026-10-31"},
        ],
    }
    record = cases.record(evidence=[item])

    assert _codes(gating.evaluate_record(record)) == ["unsupported_claim"]


def test_an_expired_item_cited_only_from_the_answer_text_is_noncurrent(cases):
    record = cases.record(
        evidence=[cases.item(), cases.item("d2", "seats", 5, "2026-01-01", "2026-02-01")],
        answer="The trial lasts 14 days [d1], and there are 5 seats [d2].",
    )

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("review", "noncurrent_citation")
    finding = result["findings"][0]
    assert (finding["step"], finding["claim"], finding["evidence"]) == ("5", None, ["d2"])
    assert "[d2]" in finding["message"]
    assert "valid 2026-01-01 to 2026-02-01, expired" in finding["message"]


def test_a_future_item_cited_only_from_the_answer_text_is_noncurrent(cases):
    record = cases.record(
        evidence=[cases.item(), cases.item("d2", "seats", 5, "2026-11-01", "2026-11-30")],
        answer="The trial lasts 14 days [d1], and there will be 5 seats [d2].",
    )

    result = gating.evaluate_record(record)

    assert _codes(result) == ["noncurrent_citation"]
    assert "not yet in force" in result["findings"][0]["message"]


def test_an_item_cited_from_the_answer_text_with_one_fact_in_force_is_current(cases):
    mixed = {
        "id": "d2",
        "facts": [
            {"key": "seats", "value": 3, "valid_from": "2026-01-01", "valid_until": "2026-02-01"},
            {"key": "seats", "value": 5, "valid_from": "2026-10-01", "valid_until": "2026-12-31"},
        ],
    }
    record = cases.record(
        evidence=[cases.item(), mixed],
        answer="The trial lasts 14 days [d1], and there are 5 seats [d2].",
    )

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_an_expired_item_cited_by_a_claim_and_a_marker_is_reported_once(cases):
    record = cases.record(as_of="2026-11-15", answer="The trial lasts 14 days [d1].")

    assert _codes(gating.evaluate_record(record)) == ["noncurrent_citation"]


def test_an_uncited_expired_item_that_no_marker_names_is_not_noncurrent(cases):
    record = cases.record(
        evidence=[cases.item(), cases.item("d2", "seats", 5, "2026-01-01", "2026-02-01")],
        answer="The trial lasts 14 days [d1].",
    )

    assert gating.evaluate_record(record)["reason"] == "supported"


# -- step 5b ----------------------------------------------------------------------------------


def test_citing_a_superseded_revision_goes_to_review_naming_both_revisions(cases):
    record = cases.record(
        evidence=[cases.item(superseded=True, revision="r3", current_revision="r4")]
    )

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("review", "superseded_revision")
    assert "r3" in result["findings"][0]["message"]
    assert "r4" in result["findings"][0]["message"]


def test_a_superseded_item_nobody_cites_is_only_a_warning(cases):
    record = cases.record(evidence=[cases.item(), cases.item("d2", "seats", 5, superseded=True)])

    result = gating.evaluate_record(record)

    assert result["reason"] == "supported"
    assert [w["code"] for w in result["warnings"]] == ["single_source", "uncited_evidence"]


def test_a_superseded_item_cited_only_from_the_answer_text_is_reported(cases):
    record = cases.record(
        evidence=[cases.item(), cases.item("d2", "seats", 5, superseded=True)],
        answer="The trial lasts 14 days [d1] and includes 5 seats [d2].",
    )

    result = gating.evaluate_record(record)

    assert result["reason"] == "superseded_revision"
    assert result["findings"][0]["claim"] is None


def test_an_item_whose_revision_is_not_the_current_one_is_superseded_without_the_flag(cases):
    record = cases.record(evidence=[cases.item(revision="r2", current_revision="r3")])

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("review", "superseded_revision")
    assert "r2" in result["findings"][0]["message"]
    assert "r3" in result["findings"][0]["message"]


def test_the_typed_entry_point_also_derives_superseded_from_the_revisions(cases):
    fact = gating.Fact("trial_days", 14, "2026-10-01", "2026-10-31")
    evidence = gating.Evidence("d1", (fact,), revision="r2", current_revision="r3")

    verdict = gating.evaluate(
        [gating.Claim("trial_days", 14, "d1")],
        [evidence],
        gating.Options(datetime.date(2026, 10, 20)),
    )

    assert verdict.reason == "superseded_revision"


def test_a_marker_cited_item_whose_revision_is_not_current_is_superseded(cases):
    record = cases.record(
        evidence=[cases.item(), cases.item("d2", "seats", 5, revision="r2", current_revision="r3")],
        answer="The trial lasts 14 days [d1] and includes 5 seats [d2].",
    )

    result = gating.evaluate_record(record)

    assert result["reason"] == "superseded_revision"
    assert result["findings"][0]["evidence"] == ["d2"]


@pytest.mark.parametrize(
    "revisions",
    [
        {"revision": "r3", "current_revision": "r3"},
        {"revision": "r3"},
        {"current_revision": "r3"},
        {"revision": "r3", "current_revision": None, "superseded": False},
    ],
    ids=["same", "no-current", "no-revision", "null-current"],
)
def test_an_item_is_not_superseded_when_its_revisions_agree_or_one_is_missing(cases, revisions):
    record = cases.record(evidence=[cases.item(**revisions)])

    assert gating.evaluate_record(record)["reason"] == "supported"


# -- step 6 -----------------------------------------------------------------------------------


def test_an_uncited_current_item_that_disagrees_is_a_conflict(cases):
    record = cases.record(evidence=[cases.item(), cases.item("d4", value=30)])

    result = gating.evaluate_record(record)

    finding = result["findings"][0]
    assert (result["reason"], finding["evidence"], finding["kb_documents"]) == (
        "conflicting_sources",
        ["d1", "d4"],
        [],
    )
    assert "14 from d1" in finding["message"]
    assert "30 from d4" in finding["message"]


def test_an_expired_item_that_disagrees_is_no_conflict(cases):
    record = cases.record(
        evidence=[
            cases.item(),
            cases.item("d4", value=30, valid_from="2026-09-01", valid_until="2026-09-30"),
        ]
    )

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_a_knowledge_base_fact_that_disagrees_is_a_conflict_naming_its_document(cases):
    kb = {
        "document": "pricing-faq",
        "revision": "r9",
        "key": "trial_days",
        "value": 30,
        "valid_from": "2026-01-01",
        "valid_until": "2026-12-31",
    }

    result = gating.evaluate_record(cases.record(kb_facts=[kb]))

    finding = result["findings"][0]
    assert (finding["code"], finding["evidence"], finding["kb_documents"]) == (
        "conflicting_sources",
        ["d1"],
        ["pricing-faq"],
    )


def test_a_knowledge_base_fact_that_agrees_is_a_second_source(cases):
    kb = {
        "document": "pricing-faq",
        "revision": "r9",
        "key": "trial_days",
        "value": 14,
        "valid_from": "2026-01-01",
        "valid_until": "2026-12-31",
    }

    result = gating.evaluate_record(cases.record(kb_facts=[kb]))

    assert (result["reason"], result["warnings"]) == ("supported", [])


def test_a_claim_about_one_subject_ignores_other_subjects(cases):
    evidence = [
        cases.item(subject="pro"),
        cases.item("d2", value=30, subject="enterprise"),
    ]
    about_pro = gating.evaluate_record(
        cases.record(claims=[cases.claim(subject="pro")], evidence=evidence)
    )
    about_nothing_in_particular = gating.evaluate_record(cases.record(evidence=evidence))

    assert about_pro["reason"] == "supported"
    assert about_nothing_in_particular["reason"] == "conflicting_sources"


def test_the_same_number_as_text_counts_as_a_different_value(cases):
    record = cases.record(evidence=[cases.item(), cases.item("d2", value="14")])

    assert gating.evaluate_record(record)["reason"] == "conflicting_sources"


# -- step 7 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claimed", "stated"),
    [(14, "14"), (14, 14.0), (1, True), (0, False), ("", None), (14, 15)],
    ids=["int-vs-string", "int-vs-float", "one-vs-true", "zero-vs-false", "empty-vs-null", "other"],
)
def test_values_match_only_with_the_same_json_type_and_value(cases, claimed, stated):
    record = cases.record(claims=[cases.claim(value=claimed)], evidence=[cases.item(value=stated)])

    assert gating.evaluate_record(record)["reason"] == "unsupported_claim"


@pytest.mark.parametrize("value", [14, 14.5, "14 days", True, False, None])
def test_a_value_matches_itself(cases, value):
    record = cases.record(claims=[cases.claim(value=value)], evidence=[cases.item(value=value)])

    assert gating.evaluate_record(record)["reason"] == "supported"


def test_an_unsupported_claim_message_shows_the_json_types(cases):
    record = cases.record(claims=[cases.claim(value="14")])

    message = gating.evaluate_record(record)["findings"][0]["message"]

    assert message == 'claim 0 says trial_days = "14", but d1 gives 14'


def test_a_claim_about_a_subject_the_cited_item_does_not_cover_is_unsupported(cases):
    record = cases.record(
        claims=[cases.claim(subject="pro")], evidence=[cases.item(subject="basic")]
    )

    result = gating.evaluate_record(record)

    assert result["reason"] == "unsupported_claim"
    assert "states nothing about trial_days of pro" in result["findings"][0]["message"]


def test_every_unsupported_claim_gets_its_own_finding(cases):
    record = cases.record(
        claims=[cases.claim(value=15), cases.claim(), cases.claim("seats", 5)],
    )

    result = gating.evaluate_record(record)

    assert [(f["code"], f["claim"]) for f in result["findings"]] == [
        ("unsupported_claim", 0),
        ("unsupported_claim", 2),
    ]


# -- step 7b ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("x" * gating.UNCITED_MIN_CHARS, "supported"),
        ("x" * (gating.UNCITED_MIN_CHARS + 1), "uncited_answer"),
        ("   " + "x" * gating.UNCITED_MIN_CHARS + "\n\n", "supported"),
        ("x" * 500 + " [d1]", "supported"),
        ("", "supported"),
    ],
    ids=["at-threshold", "over-threshold", "padding-ignored", "long-with-marker", "empty"],
)
def test_a_long_answer_needs_at_least_one_marker(cases, answer, reason):
    assert gating.evaluate_record(cases.record(answer=answer))["reason"] == reason


def test_an_uncited_answer_abstains(cases):
    result = gating.evaluate_record(cases.record(answer=LONG_UNCITED))

    assert (result["decision"], result["reason"]) == ("abstain", "uncited_answer")


# -- warnings ---------------------------------------------------------------------------------


def test_a_claim_backed_by_one_source_is_a_candidate_with_a_warning(cases):
    result = gating.evaluate_record(cases.record())

    assert result["decision"] == "candidate"
    assert result["warnings"] == [
        {
            "code": "single_source",
            "claim": 0,
            "evidence": ["d1"],
            "message": "claim 0 (trial_days = 14) rests on a single source: d1",
            "kb_documents": [],
        }
    ]


def test_a_claim_resting_on_one_knowledge_base_document_names_it_in_kb_documents(cases):
    # Django hides such a warning from readers of the answer who may not read the document.
    kb = {
        "document": "pricing-faq",
        "revision": "r9",
        "key": "trial_days",
        "value": 30,
        "valid_from": "2026-01-01",
        "valid_until": "2026-12-31",
    }
    record = cases.record(claims=[cases.claim(value=30)], kb_facts=[kb])

    warnings = gating.evaluate_record(record)["warnings"]

    assert warnings[0] == {
        "code": "single_source",
        "claim": 0,
        "evidence": [],
        "message": "claim 0 (trial_days = 30) rests on a single source: "
        "knowledge-base document pricing-faq",
        "kb_documents": ["pricing-faq"],
    }


def test_two_items_from_the_same_document_are_still_one_source(cases):
    record = cases.record(
        evidence=[cases.item(document="pricing"), cases.item("d2", document="pricing")],
        claims=[cases.claim(), cases.claim(cite="d2")],
    )

    codes = [w["code"] for w in gating.evaluate_record(record)["warnings"]]

    assert codes == ["single_source", "single_source"]


def test_two_documents_that_agree_are_two_sources(cases):
    record = cases.record(
        evidence=[cases.item(document="pricing"), cases.item("d2", document="faq")],
    )

    warnings = gating.evaluate_record(record)["warnings"]

    assert [w["code"] for w in warnings] == ["uncited_evidence"]
    assert warnings[0]["evidence"] == ["d2"]


def test_warnings_never_change_the_decision(cases):
    record = cases.record(evidence=[cases.item(), cases.item("extra", "seats", 5)])

    result = gating.evaluate_record(record)

    assert result["decision"] == "candidate"
    assert {w["code"] for w in result["warnings"]} == {"single_source", "uncited_evidence"}


def test_an_answer_whose_only_item_never_reached_the_store_is_invalid_metadata(cases):
    # It was retrieved, so there is evidence; the store is lagging, which a reviewer can see.
    result = gating.evaluate_record(
        cases.record(evidence=[], unresolved={"d1": "revision_not_received"})
    )
    assert (result["decision"], result["reason"]) == ("review", "invalid_metadata")


def test_an_answer_whose_only_document_was_withdrawn_is_an_unknown_citation(cases):
    result = gating.evaluate_record(cases.record(evidence=[], unresolved={"d1": "withdrawn"}))
    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert "withdrawn" in result["findings"][0]["message"]


# -- markers in links and code ----------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "The trial lasts 14 days [d1]. See [FAQ](https://ex.com/faq[2]).",
        "The trial lasts 14 days [d1]; the API returns it as `plans[0].trial`.",
        "The trial lasts 14 days [d1].\n\n```\ntrial = plans[0]['trial_days']\n```\n",
    ],
    ids=["link-url", "code-span", "code-fence"],
)
def test_brackets_in_links_and_code_are_no_unknown_citation(cases, answer):
    assert gating.evaluate_record(cases.record(answer=answer))["reason"] == "supported"


def test_a_long_answer_whose_only_brackets_are_in_code_is_uncited(cases):
    answer = LONG_UNCITED + "Call `plans[0]` for details."

    assert gating.evaluate_record(cases.record(answer=answer))["reason"] == "uncited_answer"


def test_a_period_with_no_end_says_so_rather_than_naming_the_last_day(cases):
    record = cases.record(
        evidence=[cases.item("d1", "trial_days", 14, "2027-01-04", "9999-12-31")],
        answer="The trial lasts 14 days [d1].",
    )

    finding = gating.evaluate_record(record)["findings"][0]

    assert "valid from 2027-01-04, with no end, not yet in force" in finding["message"]
    assert "9999" not in finding["message"]
