"""An unresolved id whose revision has no passage with the cited span (`passage_not_found`).

The answer says it quotes a passage its source does not contain: the citation points at
nothing, as a withdrawn document's does (step 4, abstain / unknown_citation), and step 0 still
applies when the document's principals come with the entry.
"""

from __future__ import annotations

from typing import Any

import pytest

import gating
from gating import Claim, InputError, Options
from tests.gating.test_design_order import TODAY, _codes


def _record(cases: Any, entry: Any, asked_by: list[str] | None = None) -> dict[str, Any]:
    record = cases.record(
        claims=[cases.claim(cite="d8"), cases.claim(cite="d1")],
        evidence=[cases.item("d1", "trial_days", 14, "2026-10-01", "2026-10-31")],
        answer="The trial lasts 14 days [d8][d1].",
        unresolved={"d8": entry},
    )
    if asked_by is not None:
        record["asked_by"] = asked_by
    return record


def test_a_passage_the_revision_lacks_is_an_unknown_citation(cases):
    result = gating.evaluate_record(_record(cases, "passage_not_found"))

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    # One finding for the claim citing d8, one for the marker; d1 supports its claim.
    assert _codes(result) == ["unknown_citation", "unknown_citation"]
    assert [f["claim"] for f in result["findings"]] == [None, 0]
    assert all(f["evidence"] == ["d8"] and f["step"] == "4" for f in result["findings"])
    assert result["findings"][1]["message"] == (
        "claim 0 cites d8: the revision it was taken from has no passage with the cited span")


def test_it_differs_from_a_withdrawn_document_only_in_its_message(cases):
    missing = gating.evaluate_record(_record(cases, "passage_not_found"))
    withdrawn = gating.evaluate_record(_record(cases, "withdrawn"))

    assert (missing["decision"], missing["reason"]) == (withdrawn["decision"],
                                                       withdrawn["reason"])
    assert "withdrawn" in withdrawn["findings"][0]["message"]
    assert "withdrawn" not in missing["findings"][0]["message"]
    assert missing["fingerprint"] != withdrawn["fingerprint"]


def test_step_0_applies_when_the_document_is_restricted(cases):
    entry = {"reason": "passage_not_found", "allowed_principals": ["group:hr"]}

    refused = gating.evaluate_record(_record(cases, entry, ["user:ann"]))
    allowed = gating.evaluate_record(_record(cases, entry, ["user:ann", "group:hr"]))

    assert (refused["decision"], refused["reason"]) == ("abstain", "unauthorized_evidence")
    assert "unknown_citation" in _codes(refused)
    assert (allowed["decision"], allowed["reason"]) == ("abstain", "unknown_citation")


def test_the_typed_options_take_the_reason_and_agree_with_the_record(cases):
    options = Options(TODAY, answer_text="The trial lasts 14 days [d8][d1].",
                      unresolved={"d8": "passage_not_found"})
    claims, evidence, _ = gating.parse_record(_record(cases, "passage_not_found"))

    verdict = gating.evaluate([Claim("trial_days", 14, "d8"), *claims[1:]], evidence, options)

    assert (verdict.decision, verdict.reason) == ("abstain", "unknown_citation")
    assert verdict.fingerprint == gating.evaluate_record(
        _record(cases, "passage_not_found"))["fingerprint"]


def test_an_unknown_reason_names_every_accepted_one():
    with pytest.raises(InputError) as caught:
        gating.evaluate([Claim("trial_days", 14, "d8")], [],
                        Options(TODAY, unresolved={"d8": "span_missing"}))

    assert str(caught.value) == ("unresolved.d8: must be 'withdrawn', 'revision_not_received' "
                                 "or 'passage_not_found'")
