"""A publish's fan-out re-evaluates the answers claiming the keys the document carried when
the publish committed, not when the fan-out runs: with a queue backlog a second revision may
be published first, and the key the first one dropped is then in neither of the latest two.
An answer claiming only that key (without citing the document) is re-evaluated all the same."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db


def about(value: Any, subject: str, *, key: str = "trial_days") -> dict[str, Any]:
    return {**fact(value, key=key), "subject": subject}


def current(answer: Answer) -> Answer:
    return Answer.objects.select_related("current_verdict", "current_version").get(pk=answer.pk)


def test_two_quick_publishes_still_reach_answers_claiming_a_dropped_key(
    publish: Any, publish_doc: Any, ingest: Any, django_capture_on_commit_callbacks: Any,
    on_commit: Any,
) -> None:
    publish_doc("pricing", "r1", facts=[about(14, "basic")])
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    answer = ingest("t-dropped-fast")
    assert answer.status == "held"  # the other document disagrees

    # Two publishes commit before any worker takes the first fan-out message.
    with django_capture_on_commit_callbacks(execute=False) as queued:
        publish("pricing-pro", "r2", facts=[fact(5, key="seats")])
        publish("pricing-pro", "r3", facts=[fact(6, key="seats")])
    with on_commit():
        for callback in queued:
            callback()

    answer = current(answer)
    # Gating now: candidate (nothing disagrees any more)...
    fresh = verdict_is_fresh(answer, answer.current_verdict)
    assert fresh, (
        f"answer left on a stale verdict: status={answer.status} "
        f"reason={answer.current_verdict.reason} trigger={answer.current_verdict.trigger}")
    assert answer.status == "candidate"


def test_one_publish_at_a_time_reaches_it_too(
    publish_doc: Any, ingest: Any,
) -> None:
    publish_doc("pricing", "r1", facts=[about(14, "basic")])
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    answer = ingest("t-dropped-slow")
    publish_doc("pricing-pro", "r2", facts=[fact(5, key="seats")])
    publish_doc("pricing-pro", "r3", facts=[fact(6, key="seats")])
    assert current(answer).status == "candidate"


def test_a_late_revision_in_between_does_not_hide_the_key_a_publish_dropped(
    publish_doc: Any, ingest: Any,
) -> None:
    """r0 of pricing-pro arrives late (updated before r1): kept, never current. r2 then
    replaces r1, the revision that was current, and drops its trial_days: the answers claiming
    trial_days are re-evaluated, though r0 came in after r1."""
    publish_doc("pricing", "r1", facts=[about(14, "basic")])
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")], updated_at="2026-10-01T09:00:00Z")
    answer = ingest("t-late-between")
    assert answer.status == "held"
    publish_doc("pricing-pro", "r0", facts=[fact(5, key="seats")],
                updated_at="2026-09-01T09:00:00Z")
    assert current(answer).status == "held"  # r1 still says 30 for pro
    publish_doc("pricing-pro", "r2", facts=[fact(6, key="seats")],
                updated_at="2026-11-01T09:00:00Z")
    answer = current(answer)
    assert verdict_is_fresh(answer, answer.current_verdict)
    assert answer.status == "candidate"
