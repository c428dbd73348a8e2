"""While a conflict is dismissed, the gate does not see the facts on its (subject, key) in the
rest of the knowledge base. When the daily close turns that dismissed conflict into `closed`
(one side's period ended), those facts count again: the answers claiming the key are
re-evaluated, not left on a verdict computed on a knowledge base that no longer holds."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from reviewqueue.audit.services import SYSTEM
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from reviewqueue.sources.conflicts import conflict_dismiss
from reviewqueue.sources.models import Conflict

pytestmark = pytest.mark.django_db


def about(value: Any, subject: str, *, valid_until: str | None = None) -> dict[str, Any]:
    return {"key": "trial_days", "value": value, "valid_from": "2026-01-01",
            "valid_until": valid_until, "span": "p1", "subject": subject}


def current(answer: Answer) -> Answer:
    return Answer.objects.select_related("current_verdict", "current_version").get(pk=answer.pk)


def test_a_dismissed_conflict_closed_by_date_re_evaluates_the_answers_claiming_its_key(
    publish_doc: Any, ingest: Any, on_commit: Any, settings: Any
) -> None:
    from reviewqueue.jobs.tasks import sweep_validity_boundaries
    from reviewqueue.sources.tasks import close_ended_conflicts

    settings.REEVALUATION_TODAY = dt.date(2027, 3, 1)
    # The answer's own source: 30 days for the "pro" plan.
    publish_doc("pricing", "r1", facts=[about(30, "pro")])
    # Two other documents disagree on the "basic" plan until 2027-06-30.
    publish_doc("basic-a", "r1", facts=[about(14, "basic")])
    publish_doc("basic-b", "r1", facts=[about(30, "basic", valid_until="2027-06-30")])
    conflict = Conflict.objects.get(subject="basic", key="trial_days")
    assert conflict.status == "open"

    # The claim names no subject: 14 days for "basic" elsewhere disagrees with it.
    answer = ingest("t-dismissed", text="The free trial lasts 30 days [d1].",
                    claims=[{"key": "trial_days", "value": 30, "cite": "d1"}])
    assert (answer.status, answer.current_verdict.reason) == ("held", "conflicting_sources")

    with on_commit():
        conflict_dismiss(conflict_id=conflict.pk, reason="two plans", user=None, actor=SYSTEM)
    answer = current(answer)
    assert answer.status == "candidate"  # the dismissed pair is hidden from the gate

    # 1 July: basic-b's fact has ended, the daily tasks run (beat asks for both from 00:05).
    settings.REEVALUATION_TODAY = dt.date(2027, 7, 1)
    with on_commit():
        close_ended_conflicts()
        sweep_validity_boundaries()
    assert Conflict.objects.get(pk=conflict.pk).status == "closed"

    answer = current(answer)
    # basic-a's 14 days is visible again and still disagrees with the claim of 30.
    assert verdict_is_fresh(answer, answer.current_verdict)
    assert answer.status == "held"
    assert (answer.current_verdict.reason, answer.current_verdict.trigger) == (
        "conflicting_sources", "validity")
