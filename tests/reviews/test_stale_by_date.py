"""A reviewer has a held answer open when midnight passes and a fact it rests on ends (or
starts). Nothing was published: their approval is refused as stale all the same, since the
verdict they saw no longer holds on the new day, and they are told that a validity date passed,
not that the sources changed (the documents' history shows no change)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, Decision
from tests.reviews.conftest import current_verdict_id, days

pytestmark = pytest.mark.django_db


def opened_then_a_day_passes(hold: Any, settings: Any) -> tuple[str, int, dt.date]:
    """A held answer and the verdict the reviewer's page showed; then the day after pricing's
    14 days last hold comes, before the nightly check."""
    trace = hold()
    seen = current_verdict_id(trace)
    boundary = Answer.objects.get(trace_id=trace).current_verdict.next_boundary
    assert boundary == dt.date.fromisoformat(days(61))
    settings.REEVALUATION_TODAY = boundary
    return trace, seen, boundary


def test_an_approval_refused_because_a_fact_ended_overnight_says_a_validity_date_passed(
    hold: Any, reviewer: Any, login: Any, settings: Any
) -> None:
    client = login(reviewer)
    trace = hold()
    client.post(f"/answers/{trace}/claim")
    client.get(f"/answers/{trace}/")
    seen = current_verdict_id(trace)
    boundary = Answer.objects.get(trace_id=trace).current_verdict.next_boundary
    settings.REEVALUATION_TODAY = boundary  # midnight passed while the page was open

    response = client.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": seen, "approve-comment": "looks fine"})

    html = response.content.decode()
    assert response.status_code == 409
    assert "The sources changed while you were reviewing." not in html
    assert (f"A validity date passed while you were reviewing: on {boundary:%Y-%m-%d} a fact "
            "this answer rests on started or stopped holding.") in html
    assert current_verdict_id(trace) != seen
    assert not Decision.objects.exists()


def test_the_api_says_so_too(hold: Any, reviewer: Any, token_client: Any,
                             settings: Any) -> None:
    trace, seen, boundary = opened_then_a_day_passes(hold, settings)

    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions",
                                           {"action": "approve", "verdict": seen}, format="json")

    assert response.status_code == 409
    assert response.json()["detail"] == (
        f"a validity date passed while you were reviewing: on {boundary:%Y-%m-%d} a fact "
        "this answer rests on started or stopped holding; decide again on the current verdict")


def test_when_the_sources_changed_as_well_it_says_the_sources_changed(
    hold: Any, publish: Any, reviewer: Any, token_client: Any, settings: Any
) -> None:
    from tests.reviews.conftest import fact

    trace, seen, _ = opened_then_a_day_passes(hold, settings)
    publish("pricing", revision="r2", facts=[fact("trial_days", 21, end=90)])

    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions",
                                           {"action": "approve", "verdict": seen}, format="json")

    assert response.status_code == 409
    assert response.json()["detail"] == ("the sources changed while you were reviewing; "
                                          "decide again on the current verdict")


def test_after_the_nightly_check_gave_the_new_verdict_it_says_so_as_well(
    hold: Any, reviewer: Any, token_client: Any, settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.jobs.tasks import sweep_validity_boundaries

    trace, seen, boundary = opened_then_a_day_passes(hold, settings)
    with django_capture_on_commit_callbacks(execute=True):
        sweep_validity_boundaries()
    assert current_verdict_id(trace) != seen

    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions",
                                           {"action": "approve", "verdict": seen}, format="json")

    assert response.status_code == 409
    assert response.json()["detail"].startswith(
        f"a validity date passed while you were reviewing: on {boundary:%Y-%m-%d} ")


def test_a_rejection_refused_for_its_comment_after_the_nightly_check_says_a_date_passed(
    hold: Any, reviewer: Any, login: Any, settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.jobs.tasks import sweep_validity_boundaries

    client = login(reviewer)
    trace, seen, boundary = opened_then_a_day_passes(hold, settings)
    client.post(f"/answers/{trace}/claim")
    with django_capture_on_commit_callbacks(execute=True):
        sweep_validity_boundaries()
    assert current_verdict_id(trace) != seen

    response = client.post(f"/answers/{trace}/decide", {
        "action": "reject", "reject-verdict": seen, "reject-reason": "other",
        "reject-comment": ""})

    html = response.content.decode()
    assert "Say why the answer is rejected." in html
    assert "The sources changed while you were reviewing." not in html
    assert f"A validity date passed while you were reviewing: on {boundary:%Y-%m-%d} " in html


def test_a_question_to_the_owners_refused_after_the_nightly_check_says_a_date_passed(
    hold: Any, reviewer: Any, login: Any, settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.jobs.tasks import sweep_validity_boundaries

    client = login(reviewer)
    trace, seen, boundary = opened_then_a_day_passes(hold, settings)
    with django_capture_on_commit_callbacks(execute=True):
        sweep_validity_boundaries()
    assert current_verdict_id(trace) != seen

    response = client.post(f"/answers/{trace}/send-to-owner",
                           {"note": "Is it 14 or 30 days?", "asked": "", "verdict": seen})

    assert response.status_code == 409
    html = response.content.decode()
    assert "the sources changed while you were reviewing" not in html
    assert (f"Not sent: a validity date passed while you were reviewing (on {boundary:%Y-%m-%d}"
            " a fact this answer rests on started or stopped holding), and the verdict changed "
            "with it; read it below before asking the owners.") in html
    assert "Is it 14 or 30 days?" in html  # kept to copy
