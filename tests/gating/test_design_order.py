"""The gate against DESIGN.md's decision order where a review found it deviating.

- Step 5 before step 7: a claim citing an item that states nothing about the claim's key, and
  none of whose facts is in force, is a step 5 finding (as a marker citing it is), besides the
  step 7 one.
- Step 0 for an unresolved item whose document is known: its allowed principals can come with
  the unresolved entry, and an asker who may not read them makes the answer abstain.
- ``-0.0`` is refused like the Django API refuses it: one value, one JSON spelling.
- An empty subject is no subject, for claims, facts and kb facts alike.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from typing import Any

import pytest

import gating
from gating import Claim, Evidence, Fact, InputError, KbFact, Options
from gating.records import check_scalar

TODAY = datetime.date(2026, 10, 20)
SEPTEMBER = ("2026-09-01", "2026-09-30")


def _codes(result: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in result["findings"]]


def _error(record: Any) -> InputError:
    with pytest.raises(InputError) as caught:
        gating.evaluate_record(record)
    return caught.value


# -- step 5 before step 7 -----------------------------------------------------------------------


def test_a_claim_citing_an_expired_item_about_another_key_is_noncurrent_first(cases):
    record = cases.record(evidence=[cases.item("d1", "support_hours", 8, *SEPTEMBER)])

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("review", "noncurrent_citation")
    assert _codes(result) == ["noncurrent_citation", "unsupported_claim"]
    noncurrent, unsupported = result["findings"]
    assert (noncurrent["step"], noncurrent["claim"], noncurrent["evidence"]) == ("5", 0, ["d1"])
    assert noncurrent["message"] == (
        "claim 0 cites d1, which is not in force on the as_of date "
        "(valid 2026-09-01 to 2026-09-30, expired)"
    )
    assert unsupported["message"] == "claim 0 cites d1, which states nothing about trial_days"


def test_the_claim_and_a_marker_citing_the_same_item_get_the_same_step(cases):
    expired = cases.item("d3", "support_hours", 8, *SEPTEMBER)
    by_claim = cases.record(claims=[cases.claim(cite="d3")], evidence=[expired])
    by_marker = cases.record(
        evidence=[cases.item(), expired], answer="The trial lasts 14 days [d1][d3]."
    )

    claim_result = gating.evaluate_record(by_claim)
    marker_result = gating.evaluate_record(by_marker)

    assert claim_result["reason"] == marker_result["reason"] == "noncurrent_citation"
    assert claim_result["findings"][0]["step"] == marker_result["findings"][0]["step"] == "5"


def test_a_future_item_about_another_key_is_not_yet_in_force(cases):
    record = cases.record(evidence=[cases.item("d1", "seats", 5, "2026-11-01", "2026-11-30")])

    result = gating.evaluate_record(record)

    assert _codes(result) == ["noncurrent_citation", "unsupported_claim"]
    assert "not yet in force" in result["findings"][0]["message"]


def test_an_item_about_another_key_in_force_is_only_unsupported(cases):
    record = cases.record(evidence=[cases.item("d1", "support_hours", 8)])

    assert _codes(gating.evaluate_record(record)) == ["unsupported_claim"]


def test_an_item_with_one_fact_in_force_is_in_force_whatever_its_key(cases):
    item = {
        "id": "d1",
        "facts": [
            {"key": "support_hours", "value": 8, "valid_from": SEPTEMBER[0],
             "valid_until": SEPTEMBER[1]},
            {"key": "seats", "value": 5, "valid_from": "2026-10-01", "valid_until": "2026-10-31"},
        ],
    }

    assert _codes(gating.evaluate_record(cases.record(evidence=[item]))) == ["unsupported_claim"]


def test_an_expired_item_about_another_subject_is_noncurrent_for_a_claim_with_a_subject(cases):
    record = cases.record(
        claims=[cases.claim(subject="pro")],
        evidence=[cases.item(subject="basic", valid_from=SEPTEMBER[0], valid_until=SEPTEMBER[1])],
    )

    result = gating.evaluate_record(record)

    assert _codes(result) == ["noncurrent_citation", "unsupported_claim"]
    assert "states nothing about trial_days of pro" in result["findings"][1]["message"]


def test_an_item_whose_only_dates_are_bad_is_step_3_not_step_5(cases):
    record = cases.record(evidence=[cases.item("d1", "support_hours", 8, "bad", "2026-09-30")])

    assert _codes(gating.evaluate_record(record)) == ["invalid_metadata", "unsupported_claim"]


def test_the_fallback_covers_every_item_with_the_cited_id(cases):
    record = cases.record(
        evidence=[
            cases.item("d1", "support_hours", 8, *SEPTEMBER),
            cases.item("d1", "seats", 5),
        ]
    )

    # d1 twice (step 3); one of them is in force, so the cited id is not noncurrent.
    assert _codes(gating.evaluate_record(record)) == ["invalid_metadata", "unsupported_claim"]


def test_the_typed_entry_point_agrees(cases):
    record = cases.record(evidence=[cases.item("d1", "support_hours", 8, *SEPTEMBER)])

    verdict = gating.evaluate(*gating.parse_record(record))

    assert [f.code for f in verdict.findings] == ["noncurrent_citation", "unsupported_claim"]
    assert verdict.fingerprint == gating.evaluate_record(record)["fingerprint"]


# -- step 0 for unresolved items ----------------------------------------------------------------


def _unreceived(cases: Any, entry: Any, asked_by: list[str] | None) -> dict[str, Any]:
    record = cases.record(
        claims=[cases.claim(cite="d8")],
        evidence=[],
        answer="The trial lasts 14 days [d8].",
        unresolved={"d8": entry},
    )
    if asked_by is not None:
        record["asked_by"] = asked_by
    return record


HR_ONLY = {"reason": "revision_not_received", "allowed_principals": ["group:hr"]}


def test_an_unreceived_item_the_asker_may_not_read_abstains_as_unauthorized(cases):
    result = gating.evaluate_record(_unreceived(cases, HR_ONLY, ["user:ann"]))

    assert (result["decision"], result["reason"]) == ("abstain", "unauthorized_evidence")
    # The unresolved finding stays (one for the claim, one for the marker).
    assert _codes(result) == ["unauthorized_evidence", "invalid_metadata", "invalid_metadata"]
    refused = result["findings"][0]
    assert (refused["step"], refused["claim"], refused["evidence"]) == ("0", None, ["d8"])
    assert "group:hr" not in refused["message"]
    assert all("never received" in f["message"] for f in result["findings"][1:])


@pytest.mark.parametrize(
    ("allowed", "asked_by"),
    [(["group:hr"], ["user:ann", "group:hr"]), (["*"], ["user:ann"]), (["group:hr"], None)],
    ids=["asker-may-read", "everyone", "no-principals-given"],
)
def test_an_unreceived_item_the_asker_may_read_stays_in_review(cases, allowed, asked_by):
    entry = {"reason": "revision_not_received", "allowed_principals": allowed}

    result = gating.evaluate_record(_unreceived(cases, entry, asked_by))

    assert (result["decision"], result["reason"]) == ("review", "invalid_metadata")


def test_a_withdrawn_item_with_principals_is_checked_too(cases):
    entry = {"reason": "withdrawn", "allowed_principals": ["group:hr"]}

    result = gating.evaluate_record(_unreceived(cases, entry, ["user:ann"]))

    assert _codes(result) == ["unauthorized_evidence", "unknown_citation", "unknown_citation"]


@pytest.mark.parametrize(
    "entry",
    [{"reason": "revision_not_received"},
     {"reason": "revision_not_received", "allowed_principals": None}],
    ids=["no-principals", "null-principals"],
)
def test_an_entry_without_principals_is_the_plain_reason(cases, entry):
    plain = gating.evaluate_record(_unreceived(cases, "revision_not_received", ["user:ann"]))

    assert gating.evaluate_record(_unreceived(cases, entry, ["user:ann"])) == plain


def test_the_principals_of_an_unresolved_item_are_in_the_fingerprint_as_a_set(cases):
    def fingerprint(allowed: list[str]) -> object:
        entry = {"reason": "revision_not_received", "allowed_principals": allowed}
        return gating.evaluate_record(_unreceived(cases, entry, ["user:ann"]))["fingerprint"]

    plain = gating.evaluate_record(_unreceived(cases, "revision_not_received", ["user:ann"]))

    assert fingerprint(["group:hr", "*"]) == fingerprint(["*", "group:hr", "*"])
    assert fingerprint(["group:hr"]) != fingerprint(["group:sales"])
    assert fingerprint(["*"]) != plain["fingerprint"]


def test_typed_options_carry_unresolved_principals_and_match_the_record(cases):
    record = _unreceived(cases, HR_ONLY, ["user:ann"])
    options = Options(
        TODAY,
        answer_text="The trial lasts 14 days [d8].",
        principals=("user:ann",),
        unresolved={"d8": "revision_not_received"},
        unresolved_principals={"d8": ["group:hr"]},  # type: ignore[dict-item]
    )

    verdict = gating.evaluate([Claim("trial_days", 14, "d8")], [], options)

    assert (verdict.decision, verdict.reason) == ("abstain", "unauthorized_evidence")
    assert verdict.fingerprint == gating.evaluate_record(record)["fingerprint"]
    assert options.unresolved == (("d8", "revision_not_received"),)
    assert options.unresolved_principals == (("d8", ("group:hr",)),)
    claims, evidence, parsed = gating.parse_record(record)
    assert parsed.unresolved_principals == (("d8", ("group:hr",)),)
    assert gating.evaluate(claims, evidence, parsed).fingerprint == verdict.fingerprint


def test_options_without_unresolved_principals_work_as_before():
    options = Options(TODAY, unresolved={"d8": "revision_not_received"})

    verdict = gating.evaluate([Claim("trial_days", 14, "d8")], [], options)

    assert options.unresolved_principals == ()
    assert (verdict.decision, verdict.reason) == ("review", "invalid_metadata")
    assert Options(TODAY, unresolved_principals={"d8": None}).unresolved_principals == ()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"reason": "revision_not_received", "allowed_principals": "group:hr"},
         "unresolved.d8.allowed_principals: must be a list of strings"),
        ({"reason": "revision_not_received", "allowed_principals": [3]},
         "unresolved.d8.allowed_principals[0]: must be a string"),
        ({"reason": "revision_not_received", "allowed_principals": ["x"] * 1001},
         "unresolved.d8.allowed_principals: too many entries (1001, limit 1000)"),
        ({"allowed_principals": ["group:hr"]}, "unresolved.d8.reason: required"),
        ({"reason": "lost"},
         "unresolved.d8.reason: must be 'withdrawn', 'revision_not_received' or "
         "'passage_not_found'"),
        ({"reason": "withdrawn", "principals": []}, "unresolved.d8.principals: unknown field"),
        (["revision_not_received"], "unresolved.d8: must be 'withdrawn', "
                                    "'revision_not_received' or 'passage_not_found'"),
    ],
)
def test_a_bad_unresolved_entry_is_an_input_error_naming_its_path(cases, entry, expected):
    assert str(_error(_unreceived(cases, entry, ["user:ann"]))) == expected


@pytest.mark.parametrize(
    ("unresolved_principals", "expected"),
    [
        ({"d9": ("group:hr",)}, "unresolved_principals.d9: is not listed as unresolved"),
        ({"d8": "group:hr"}, "unresolved.d8.allowed_principals: must be a list of strings"),
        ({"d8": (3,)}, "unresolved.d8.allowed_principals[0]: must be a string"),
        ((("d8", ("a",)), ("d8", ("b",))), "unresolved_principals.d8: listed twice"),
        ((("d8",),), "unresolved_principals[0]: must be an (id, allowed principals) pair"),
    ],
)
def test_bad_typed_unresolved_principals_are_input_errors(unresolved_principals, expected):
    options = Options(
        TODAY,
        unresolved={"d8": "revision_not_received"},
        unresolved_principals=unresolved_principals,
    )

    with pytest.raises(InputError) as caught:
        gating.evaluate([Claim("trial_days", 14, "d8")], [], options)

    assert str(caught.value) == expected


def test_the_cli_reads_unresolved_principals(cases):
    record = _unreceived(cases, HR_ONLY, ["user:ann"])

    run = subprocess.run(
        [sys.executable, "-S", "-m", "gating", "evaluate"],
        cwd=cases.repo,
        input=json.dumps(record) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert (run.returncode, run.stderr) == (0, "")
    assert json.loads(run.stdout) == gating.evaluate_record(record)
    assert json.loads(run.stdout)["reason"] == "unauthorized_evidence"


# -- -0.0 ---------------------------------------------------------------------------------------


NEGATIVE_ZERO = "negative zero is not accepted: write 0.0"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda r, c: r["claims"][0].update(value=-0.0), "claims[0].value"),
        (lambda r, c: r["claims"][0].update(value=-0.0, subject="pro"), "claims[0].value"),
        (lambda r, c: r["evidence"][0].update(value=-0.0), "evidence[0].value"),
        (lambda r, c: r["evidence"].append(c.item("d2", value=-0.0, span="p1")),
         "evidence[1].value"),
        (lambda r, c: r["evidence"].append({"id": "d2", "facts": [
            {"key": "k", "value": -0.0, "valid_from": "2026-10-01", "valid_until": "2026-10-31"}
        ]}), "evidence[1].facts[0].value"),
        (lambda r, c: r.update(kb_facts=[{
            "document": "faq", "revision": "r1", "key": "trial_days", "value": -0.0,
            "valid_from": "2026-10-01", "valid_until": "2026-10-31"}]), "kb_facts[0].value"),
    ],
    ids=["claim", "claim-with-subject", "flat-item", "flat-item-with-span", "fact", "kb-fact"],
)
def test_negative_zero_in_a_record_is_an_input_error_naming_the_path(cases, change, path):
    record = cases.record()
    change(record, cases)

    error = _error(record)

    assert (error.path, error.message) == (path, NEGATIVE_ZERO)


def test_negative_zero_in_typed_input_is_an_input_error_naming_the_path():
    good = Fact("k", 0.0, "2026-10-01", "2026-10-31")
    cases_: list[tuple[list[Claim], list[Evidence], Options, str]] = [
        ([Claim("k", -0.0, "d1")], [Evidence("d1", (good,))], Options(TODAY),
         "claims[0].value"),
        ([Claim("k", 0.0, "d1")],
         [Evidence("d1", (good, Fact("k", -0.0, "2026-10-01", "2026-10-31")))],
         Options(TODAY), "evidence[0].facts[1].value"),
        ([Claim("k", 0.0, "d1")], [Evidence("d1", (good,))],
         Options(TODAY, kb_facts=(KbFact("faq", "r1", "k", -0.0, "2026-10-01", "2026-10-31"),)),
         "kb_facts[0].value"),
    ]
    for claims, evidence, options, path in cases_:
        with pytest.raises(InputError) as caught:
            gating.evaluate(claims, evidence, options)
        assert (caught.value.path, caught.value.message) == (path, NEGATIVE_ZERO)


def test_check_scalar_refuses_negative_zero_and_keeps_zero():
    with pytest.raises(InputError) as caught:
        check_scalar(-0.0, "x.value")

    assert str(caught.value) == f"x.value: {NEGATIVE_ZERO}"
    assert check_scalar(0.0, "x.value") == 0.0
    assert check_scalar(-0.5, "x.value") == -0.5
    assert check_scalar(0, "x.value") == 0


def test_zero_still_conflicts_and_reads_one_way(cases):
    evidence = [cases.item("a", "k", 0.0), cases.item("b", "k", 0.0), cases.item("c", "k", 5)]
    record = cases.record(claims=[cases.claim("k", 5, "c")], evidence=evidence)
    reordered = cases.record(claims=[cases.claim("k", 5, "c")], evidence=evidence[::-1])

    first, second = gating.evaluate_record(record), gating.evaluate_record(reordered)

    assert first == second
    assert first["findings"][0]["message"] == (
        "claim 0 (k): sources in force disagree: 0.0 from a, b; 5 from c"
    )


# -- empty subjects -----------------------------------------------------------------------------


def test_a_claim_with_an_empty_subject_is_a_claim_without_subject(cases):
    evidence = [cases.item(subject="pro"), cases.item("d2", value=30, subject="basic")]
    empty = cases.record(claims=[cases.claim(subject="")], evidence=evidence)
    none = cases.record(claims=[cases.claim()], evidence=evidence)

    result = gating.evaluate_record(empty)

    assert result == gating.evaluate_record(none)
    assert result["reason"] == "conflicting_sources"
    assert " of " not in result["findings"][0]["message"]


def test_a_claim_with_an_empty_subject_over_a_fact_without_one_is_supported(cases):
    result = gating.evaluate_record(cases.record(claims=[cases.claim(subject="")]))

    assert result["reason"] == "supported"
    assert result == gating.evaluate_record(cases.record())


def test_empty_subjects_of_facts_and_kb_facts_are_none(cases):
    kb = {"document": "faq", "revision": "r1", "key": "trial_days", "value": 14,
          "valid_from": "2026-10-01", "valid_until": "2026-10-31"}
    nested = {"id": "d2", "facts": [{"key": "seats", "value": 5, "valid_from": "2026-10-01",
                                     "valid_until": "2026-10-31", "subject": ""}]}
    record = cases.record(evidence=[cases.item(subject=""), nested],
                          kb_facts=[kb | {"subject": ""}])
    plain = cases.record(
        evidence=[cases.item(), nested | {"facts": [{**nested["facts"][0], "subject": None}]}],
        kb_facts=[kb],
    )

    claims, evidence, options = gating.parse_record(record)

    assert claims[0].subject is None
    assert [fact.subject for item in evidence for fact in item.facts] == [None, None]
    assert options.kb_facts[0].subject is None
    assert gating.evaluate_record(record) == gating.evaluate_record(plain)


def test_typed_empty_subjects_are_none():
    def verdict(subject: str | None) -> gating.Verdict:
        return gating.evaluate(
            [Claim("trial_days", 14, "d1", subject=subject)],
            [Evidence("d1", (Fact("trial_days", 14, "2026-10-01", "2026-10-31",
                                  subject=subject),))],
            Options(TODAY, kb_facts=(KbFact("faq", "r1", "trial_days", 14, "2026-10-01",
                                            "2026-10-31", subject=subject),)),
        )

    assert verdict("") == verdict(None)


def test_a_subject_that_is_not_a_string_is_still_an_input_error(cases):
    record = cases.record(evidence=[cases.item(subject=3)])

    assert str(_error(record)) == "evidence[0].subject: must be a string or null"
