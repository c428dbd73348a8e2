"""Every figure against the hand-built scenario in conftest.py, worked out by hand here."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from reviewqueue.insight import selectors
from reviewqueue.insight.selectors import Window
from reviewqueue.insight.stats import wilson_interval
from tests.insight.conftest import Builder, at

pytestmark = pytest.mark.django_db

WINDOW = Window(since=dt.date(2026, 10, 4), until=dt.date(2026, 10, 7))


def share(count: int, of: int) -> dict[str, Any]:
    return {"count": count, "of": of, "rate": round(count / of, 6) if of else None}


def test_the_hold_rate_counts_first_verdicts_in_the_window(scenario: Builder) -> None:
    gate = selectors.hold_rates(WINDOW)
    # a1 a2 a3 b1 b2 held; b3 b4 b5 abstained; a4 b6 b7 b8 candidates. "old" is outside the
    # window and b8's later review verdict is not a first verdict.
    assert gate["answers"] == 12
    assert gate["held"] == share(5, 12)
    assert gate["abstained"] == share(3, 12)
    assert gate["candidate"] == share(4, 12)


def test_the_hold_rate_per_reason_adds_up_to_the_hold_rate(scenario: Builder) -> None:
    by_reason = selectors.hold_rates(WINDOW)["by_reason"]
    assert by_reason == [
        {"reason": "conflicting_sources", **share(2, 12)},
        {"reason": "invalid_metadata", **share(1, 12)},
        {"reason": "noncurrent_citation", **share(1, 12)},
        {"reason": "superseded_revision", **share(1, 12)},
    ]


def test_the_hold_rate_over_time_leaves_empty_days_without_a_rate(scenario: Builder) -> None:
    assert selectors.hold_rate_over_time(WINDOW) == [
        {"period": "2026-10-04", **share(0, 0)},
        {"period": "2026-10-05", **share(3, 4)},
        {"period": "2026-10-06", **share(2, 8)},
        {"period": "2026-10-07", **share(0, 0)},
    ]


def test_the_hold_rate_per_week_starts_on_monday(scenario: Builder) -> None:
    weekly = Window(since=dt.date(2026, 9, 28), until=dt.date(2026, 10, 11), bucket="week")
    # 28 September and 5 October 2026 are Mondays; "old" (1 October) is in the first week.
    assert selectors.hold_rate_over_time(weekly) == [
        {"period": "2026-09-28", **share(1, 1)},
        {"period": "2026-10-05", **share(5, 12)},
    ]


def test_two_index_releases_can_be_compared(scenario: Builder) -> None:
    releases = selectors.hold_rate_by_release(WINDOW)
    assert [r["release"] for r in releases] == ["2026.10", "2026.09"]  # busiest first
    new, old = releases
    assert (new["answers"], old["answers"]) == (8, 4)
    low, high = wilson_interval(2, 8)
    assert new["held"] == {**share(2, 8), "low": round(low, 6), "high": round(high, 6)}
    assert old["held"]["rate"] == 0.75
    assert new["abstained"] == share(3, 8)
    assert new["by_reason"] == {"invalid_metadata": share(1, 8),
                                "noncurrent_citation": share(1, 8)}
    assert old["by_reason"] == {"conflicting_sources": share(2, 4),
                                "superseded_revision": share(1, 4)}


def test_over_hold_edit_and_reject_rates_use_each_answers_first_decision(
    scenario: Builder,
) -> None:
    review = selectors.review_outcomes(WINDOW)
    # Held and decided: a1 approve, a2 edit, a3 reject, b1 approve (then reject: not first).
    assert (review["held"], review["decided"]) == (5, 4)
    assert review["over_hold"] == share(2, 4)
    assert review["edit"] == share(1, 4)
    assert review["reject"] == share(1, 4)


def test_an_edit_the_gate_still_held_is_no_decision_yet(build: Builder) -> None:
    """c1's edit was saved but still held; c2 was edited (held), then approved: edited."""
    c1 = build.answer("c1", when=at(5), decision="review", reason="conflicting_sources")
    c2 = build.answer("c2", when=at(5), decision="review", reason="conflicting_sources")
    build.decide(c1, "edit", when=at(5, 10), gate_on_edit="review")
    build.decide(c2, "edit", when=at(5, 10), gate_on_edit="review")
    build.decide(c2, "approve", when=at(5, 12))
    review = selectors.review_outcomes(WINDOW)
    assert (review["held"], review["decided"]) == (2, 1)
    assert review["edit"] == share(1, 1)
    assert review["over_hold"] == share(0, 1)
    assert review["time_to_decision_seconds"]["median"] == 3 * 3600.0


def test_time_from_held_to_decision(scenario: Builder) -> None:
    waits = selectors.review_outcomes(WINDOW)["time_to_decision_seconds"]
    # 1 h, 2 h, 3 h and 4 h. Median: halfway between 2 h and 3 h. 95th percentile, linear
    # between the closest ranks: 3 h + 0.85 h.
    assert waits == {"median": 9000.0, "p95": 13860.0}


def test_the_share_of_decisions_taken_after_expanding_a_passage(scenario: Builder) -> None:
    # Seven decisions on answers of the window (b1 twice); a1, a3, b1's first and b7 read.
    assert selectors.review_outcomes(WINDOW)["expanded_passage"] == share(4, 7)


def test_the_false_pass_estimate_from_audit_samples(scenario: Builder) -> None:
    false_pass = selectors.review_outcomes(WINDOW)["false_pass"]
    # Samples decided on their candidate verdict: b6 rejected, b7 approved.
    assert false_pass["samples_decided"] == 2
    assert false_pass["rejected"] == share(1, 2)
    assert false_pass["edited"] == share(0, 2)
    # The Wilson 95% interval for 1 of 2.
    assert false_pass["low"] == pytest.approx(0.094531, abs=1e-6)
    assert false_pass["high"] == pytest.approx(0.905469, abs=1e-6)
    assert false_pass["candidates"] == 4
    assert false_pass["estimated_bad_candidates"] == {"low": 0.4, "estimate": 2.0, "high": 3.6}


def test_a_sample_decided_on_a_later_verdict_counts_while_the_gate_still_passes_it(
    build: Builder,
) -> None:
    """s1's sources changed and the gate passed it again: its rejection still says the gate
    let a bad answer through. s2 was held on its later verdict: no longer a test of a pass."""
    s1 = build.answer("s1", when=at(5))
    s2 = build.answer("s2", when=at(5))
    s3 = build.answer("s3", when=at(5))
    later = build.later_verdict(s1, when=at(5, 2), decision="candidate", reason="supported")
    held = build.later_verdict(s2, when=at(5, 2), decision="review",
                               reason="conflicting_sources")
    build.decide(s1, "reject", when=at(5, 3), verdict=later)
    build.decide(s2, "reject", when=at(5, 3), verdict=held)
    build.decide(s3, "approve", when=at(5, 3))
    false_pass = selectors.review_outcomes(WINDOW)["false_pass"]
    assert false_pass["candidates"] == 3
    assert false_pass["samples_decided"] == 2
    assert false_pass["rejected"] == share(1, 2)


def test_samples_waiting_are_those_of_the_window_and_release(build: Builder) -> None:
    for trace_id, day, release in (("w1", 5, "2026.10"), ("w2", 5, "2026.09"),
                                   ("w3", 1, "2026.10")):
        sample = build.answer(trace_id, when=at(day), release=release)
        build.queue(sample, entered=at(day), sample=True)

    assert selectors.review_outcomes(WINDOW)["false_pass"]["samples_waiting"] == 2
    one_release = Window(since=WINDOW.since, until=WINDOW.until, release="2026.10")
    assert selectors.review_outcomes(one_release)["false_pass"]["samples_waiting"] == 1


def test_citation_quality(scenario: Builder) -> None:
    citations = selectors.citation_quality(WINDOW)
    assert citations["answers"] == 12
    # b3 cites d9, never retrieved. b4 cites a withdrawn document: not a fabrication.
    assert citations["fabricated"] == share(1, 12)
    assert citations["uncited"] == share(1, 12)  # b5
    assert citations["single_source"] == share(2, 12)  # a1, a4
    # 15 retrieved items in all (a2 has 3, b5 2, the others 1); a2's d3 and b5's two uncited.
    assert citations["never_cited"] == share(3, 15)


def test_one_release_only(scenario: Builder) -> None:
    window = Window(since=WINDOW.since, until=WINDOW.until, release="2026.09")
    assert selectors.hold_rates(window)["held"] == share(3, 4)
    review = selectors.review_outcomes(window)
    assert review["over_hold"] == share(1, 3)
    assert review["false_pass"]["rejected"] == share(0, 0)
    assert review["false_pass"]["low"] is None
    assert selectors.citation_quality(window)["single_source"] == share(2, 4)


def test_an_empty_window_has_no_rates(scenario: Builder) -> None:
    empty = Window(since=dt.date(2026, 11, 1), until=dt.date(2026, 11, 2))
    assert selectors.hold_rates(empty)["held"] == share(0, 0)
    review = selectors.review_outcomes(empty)
    assert review["time_to_decision_seconds"] == {"median": None, "p95": None}
    assert review["false_pass"]["estimated_bad_candidates"] is None
    assert selectors.citation_quality(empty)["never_cited"] == share(0, 0)


# --- now: backlog and operations ----------------------------------------------------------------

NOW = dt.datetime(2026, 10, 20, 12, tzinfo=dt.UTC)


def test_the_backlog_its_age_and_spread(build: Builder) -> None:
    held = [build.answer(f"q{i}", when=at(1), decision="review", reason=reason)
            for i, reason in enumerate(["conflicting_sources", "invalid_metadata",
                                        "conflicting_sources", "superseded_revision"])]
    build.queue(held[0], entered=NOW - dt.timedelta(minutes=30), sample=True)
    build.queue(held[1], entered=NOW - dt.timedelta(hours=2), owner=True)
    build.queue(held[2], entered=NOW - dt.timedelta(days=3))
    build.queue(held[3], entered=NOW - dt.timedelta(days=9))
    backlog = selectors.backlog(NOW)
    assert backlog["depth"] == 4
    assert backlog["oldest_age_seconds"] == 9 * 86400
    assert [b["count"] for b in backlog["by_age"]] == [1, 1, 1, 1]
    assert (backlog["audit_samples"], backlog["waiting_for_owner"]) == (1, 1)
    assert backlog["by_reason"] == [
        {"reason": "conflicting_sources", "count": 2},
        {"reason": "invalid_metadata", "count": 1},
        {"reason": "superseded_revision", "count": 1},
    ]


def test_held_answers_citing_a_document_never_received_are_counted_with_its_id(
    build: Builder, publish: Any
) -> None:
    from reviewqueue.reviews.models import RetrievedItem

    publish("pricing")
    cites = {"a": ["pricing", "hosting-regions"], "b": ["hosting-regions", "sla-2027"],
             "c": ["pricing"], "candidate": ["never-held"]}
    for trace_id, keys in cites.items():
        decision = "candidate" if trace_id == "candidate" else "review"
        answer = build.answer(trace_id, when=at(1), decision=decision, reason="invalid_metadata")
        if decision == "review":
            build.queue(answer, entered=NOW)
        RetrievedItem.objects.bulk_create([
            RetrievedItem(answer=answer, cite=f"d{i}", document_key=key, revision="r1")
            for i, key in enumerate(keys)])
    assert selectors.backlog(NOW)["waiting_for_documents"] == {
        "answers": 2, "documents": ["hosting-regions", "sla-2027"]}


def test_an_empty_queue_has_no_age(db: Any) -> None:
    backlog = selectors.backlog(NOW)
    assert (backlog["depth"], backlog["oldest_age_seconds"]) == (0, 0.0)


def test_the_reevaluation_lag_is_the_age_of_the_most_overdue_boundary(build: Builder) -> None:
    build.answer("due-2-days-ago", when=at(1), next_boundary=dt.date(2026, 10, 18))
    build.answer("due-today", when=at(1), next_boundary=dt.date(2026, 10, 20))
    build.answer("due-later", when=at(1), next_boundary=dt.date(2026, 10, 25))
    build.answer("no-boundary", when=at(1))
    assert selectors.reevaluation_lag(NOW) == 2 * 86400 + 12 * 3600


def test_no_overdue_boundary_means_no_lag(build: Builder) -> None:
    build.answer("due-later", when=at(1), next_boundary=dt.date(2026, 10, 25))
    assert selectors.reevaluation_lag(NOW) == 0.0


def test_a_drill_date_sets_which_boundaries_are_overdue(build: Builder, settings: Any) -> None:
    # REEVALUATION_TODAY pins the day the validity sweep and the gate work on: a boundary after
    # it is not due yet, whatever the clock says, so the metric must not call it overdue.
    build.answer("due-today", when=at(1), next_boundary=dt.date(2026, 10, 20))
    settings.REEVALUATION_TODAY = dt.date(2026, 10, 19)
    assert selectors.reevaluation_lag(NOW) == 0.0
    settings.REEVALUATION_TODAY = dt.date(2026, 10, 20)
    assert selectors.reevaluation_lag(NOW) == 12 * 3600


def test_task_failures_count_dead_letters_and_those_still_waiting(
    db: Any, admin_client: Any
) -> None:
    from django.apps import apps

    dead_letter = apps.get_model("jobs", "DeadLetter")
    for i in range(3):
        dead_letter.objects.create(task_name="reviews.reevaluate_answers", args=[i],
                                   error_type="OperationalError", failed_at=NOW)
    assert selectors.task_failures() == (3, 3)
    dead_letter.objects.filter(args=[0]).update(retried_at=NOW)  # sent again
    dead_letter.objects.filter(args=[1]).update(resolved_at=NOW)  # its chunk ran again
    assert selectors.task_failures() == (3, 1)
    from reviewqueue.insight.snapshots import snapshot_refresh

    snapshot_refresh(selectors.default_window())  # as the worker does every minute
    page = admin_client.get("/insight/").content.decode()
    [shown] = re.findall(r"<dd data-task-failures>(.*?)</dd>", page, re.S)
    assert re.sub(r"<[^>]+>", "", shown).split() == [
        "1", "·", "3", "in", "all,", "sent", "again", "or", "resolved", "included"]


def test_task_failures_are_zero_without_the_jobs_area(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(app_label: str, model_name: str) -> Any:
        raise LookupError(app_label)

    monkeypatch.setattr(selectors.apps, "get_model", missing)
    assert selectors.task_failures() == (0, 0)
