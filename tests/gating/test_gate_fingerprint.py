"""Fingerprints change exactly when a re-run could change something; next_boundary says when."""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

import pytest

import gating
from gating import Claim, Evidence, Fact, Options


def _fp(record: dict[str, Any]) -> str:
    return str(gating.evaluate_record(record)["fingerprint"])


def test_a_fingerprint_is_sha256_hex(cases):
    assert re.fullmatch(r"[0-9a-f]{64}", _fp(cases.record()))


def test_days_inside_the_same_validity_window_share_a_fingerprint(cases):
    days = ["2026-10-01", "2026-10-02", "2026-10-20", "2026-10-31"]

    assert len({_fp(cases.record(as_of=day)) for day in days}) == 1


def test_crossing_a_validity_boundary_changes_the_fingerprint(cases):
    last_day = _fp(cases.record(as_of="2026-10-31"))
    day_after = _fp(cases.record(as_of="2026-11-01"))
    week_after = _fp(cases.record(as_of="2026-11-08"))

    assert last_day != day_after
    assert day_after == week_after


def test_any_fact_crossing_a_boundary_counts_not_only_cited_ones(cases):
    evidence = [cases.item(), cases.item("d2", "seats", 5, "2026-10-01", "2026-10-25")]

    before = _fp(cases.record(evidence=evidence, as_of="2026-10-25"))
    after = _fp(cases.record(evidence=evidence, as_of="2026-10-26"))

    assert before != after


def test_evidence_order_does_not_matter_but_claim_order_does(cases):
    evidence = [cases.item(), cases.item("d2", "seats", 5), cases.item("d3", "plan", "pro")]
    claims = [cases.claim(), cases.claim("seats", 5, "d2")]

    forward = _fp(cases.record(claims=claims, evidence=evidence))
    shuffled = _fp(cases.record(claims=claims, evidence=evidence[::-1]))
    claims_swapped = _fp(cases.record(claims=claims[::-1], evidence=evidence))

    assert forward == shuffled
    assert forward != claims_swapped


def test_the_order_of_facts_principals_and_kb_facts_does_not_matter(cases):
    def record(flip: bool) -> dict[str, Any]:
        facts = [
            {
                "key": "trial_days",
                "value": 14,
                "valid_from": "2026-10-01",
                "valid_until": "2026-10-31",
            },
            {"key": "seats", "value": 5, "valid_from": "2026-10-01", "valid_until": "2026-10-31"},
        ]
        kb = [
            {
                "document": f"doc{i}",
                "revision": "r1",
                "key": "seats",
                "value": 5,
                "valid_from": "2026-01-01",
                "valid_until": "2026-12-31",
            }
            for i in range(3)
        ]
        principals = ["group:b", "group:a", "*"]
        if flip:
            facts, kb, principals = facts[::-1], kb[::-1], principals[::-1]
        return cases.record(
            evidence=[{"id": "d1", "facts": facts, "allowed_principals": principals}],
            kb_facts=kb,
            asked_by=principals,
        )

    assert _fp(record(False)) == _fp(record(True))


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r["claims"][0].update(value=15),
        lambda r: r["claims"][0].update(subject="pro"),
        lambda r: r["evidence"][0].update(text="A passage that changed."),
        lambda r: r["evidence"][0].update(revision="r2"),
        lambda r: r.update(answer="The trial lasts 14 days [d1]."),
        lambda r: r.update(asked_by=["user:ann"]),
        lambda r: r.update(unresolved={"d9": "withdrawn"}),
        lambda r: r["claims"][0].update(value=14.0),
        lambda r: r["claims"][0].update(value="14"),
    ],
)
def test_any_change_to_the_inputs_changes_the_fingerprint(cases, change):
    record = cases.record()
    change(record)

    assert _fp(record) != _fp(cases.record())


def test_the_gate_version_is_part_of_the_fingerprint(cases, monkeypatch):
    before = _fp(cases.record())
    monkeypatch.setattr("gating.engine.GATE_VERSION", "0000.0.0")

    assert _fp(cases.record()) != before


def test_the_typed_and_the_json_entry_points_agree_on_the_fingerprint(cases):
    verdict = gating.evaluate(
        [Claim("trial_days", 14, "d1")],
        [Evidence("d1", (Fact("trial_days", 14, "2026-10-01", "2026-10-31"),))],
        Options(datetime.date(2026, 10, 20)),
    )

    assert verdict.fingerprint == _fp(cases.record())


# -- next_boundary ----------------------------------------------------------------------------


def test_the_next_boundary_is_the_day_after_the_earliest_end(cases):
    assert gating.evaluate_record(cases.record())["next_boundary"] == "2026-11-01"


def test_a_future_start_before_that_end_is_the_next_boundary(cases):
    evidence = [cases.item(), cases.item("d2", "seats", 5, "2026-10-25", "2026-12-31")]

    result = gating.evaluate_record(cases.record(evidence=evidence))

    assert result["next_boundary"] == "2026-10-25"


def test_expired_and_invalid_facts_set_no_boundary(cases):
    evidence = [cases.item(valid_from="2026-09-01", valid_until="2026-09-30")]
    invalid = [cases.item(valid_from="bad")]

    assert gating.evaluate_record(cases.record(evidence=evidence))["next_boundary"] is None
    assert gating.evaluate_record(cases.record(evidence=invalid))["next_boundary"] is None


def test_a_fact_valid_until_the_end_of_time_sets_no_boundary(cases):
    record = cases.record(evidence=[cases.item(valid_until="9999-12-31")])

    assert gating.evaluate_record(record)["next_boundary"] is None


def test_kb_facts_set_boundaries_too(cases):
    kb = {
        "document": "faq",
        "revision": "r1",
        "key": "trial_days",
        "value": 14,
        "valid_from": "2026-10-01",
        "valid_until": "2026-10-22",
    }

    assert gating.evaluate_record(cases.record(kb_facts=[kb]))["next_boundary"] == "2026-10-23"


def test_re_running_on_the_next_boundary_changes_the_fingerprint_and_before_it_does_not(cases):
    record = cases.record()
    first = gating.evaluate_record(record)
    boundary = datetime.date.fromisoformat(str(first["next_boundary"]))

    day_before = gating.evaluate_record(record | {"as_of": str(boundary - datetime.timedelta(1))})
    on_boundary = gating.evaluate_record(record | {"as_of": boundary.isoformat()})

    assert day_before["fingerprint"] == first["fingerprint"]
    assert on_boundary["fingerprint"] != first["fingerprint"]


def test_the_verdict_dict_is_json_ready(cases):
    claims, evidence, options = gating.parse_record(cases.record())

    as_dict = gating.evaluate(claims, evidence, options).to_dict()

    assert json.loads(json.dumps(as_dict)) == as_dict
    assert (as_dict["as_of"], as_dict["next_boundary"]) == ("2026-10-20", "2026-11-01")
    assert as_dict["gate_version"] == gating.GATE_VERSION


def test_fingerprints_of_stored_verdicts_stay_as_published(cases):
    # The README's examples, unchanged since gate 2026.12.8 was released: a change to what the
    # gate outputs (kb_documents on warnings) must not make stored verdicts look stale.
    assert gating.GATE_VERSION == "2026.12.8"
    published = {
        "valid": "7cb7bf83926173cda8762c9df96b51423ecccf293422b2b842f772caa9581c9c",
        "future": "e42224da9487ed88970c49c49bd6775111aeac85e412201a19999999739fcbe8",
        "conflict": "353b173c74fa51187d6d1a2b24302d6170010c4b2bd50fc35c7e418595f6392a",
    }
    records = {record["id"]: record for record in cases.published()}
    found = {case: _fp(records[case]) for case in published}
    assert found == published
