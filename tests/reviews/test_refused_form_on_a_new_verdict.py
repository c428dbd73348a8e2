"""A decision form refused for what was typed in it (a rejection as "other" with no comment, an
edit with a claim row missing its key) while a re-evaluation replaced the verdict the page
showed. The page drawn again binds the form to the new verdict, so sending it once more decides
on that verdict: it must say that the sources changed, as a refusal on a stale verdict does,
or the reviewer decides on a verdict they were never told about."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Decision
from tests.reviews.conftest import current_verdict_id, fact
from tests.reviews.test_decisions import claims_form

pytestmark = pytest.mark.django_db

CHANGED = "The sources changed while you were reviewing."


def _seen_then_republished(hold: Any, publish: Any, reviewer: Any, login: Any,
                           on_commit: Any) -> tuple[str, Any, int]:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    seen = current_verdict_id(trace)
    # The EU document now says 45 days; the worker re-evaluates the answer at once.
    with on_commit(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 45)],
                passages=[{"span": "p1", "text": "In the EU the free trial lasts 45 days."}])
    assert current_verdict_id(trace) != seen
    return trace, client, seen


def test_a_rejection_refused_for_its_comment_says_the_sources_changed(
    hold: Any, publish: Any, reviewer: Any, login: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace, client, seen = _seen_then_republished(hold, publish, reviewer, login,
                                                 django_capture_on_commit_callbacks)

    response = client.post(f"/answers/{trace}/decide", {
        "action": "reject", "reject-verdict": seen, "reject-reason": "other",
        "reject-comment": ""})

    html = response.content.decode()
    assert "Say why the answer is rejected." in html
    assert CHANGED in html
    assert not Decision.objects.exists()


def test_an_edit_refused_for_a_claim_row_says_the_sources_changed(
    hold: Any, publish: Any, reviewer: Any, login: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace, client, seen = _seen_then_republished(hold, publish, reviewer, login,
                                                 django_capture_on_commit_callbacks)

    response = client.post(f"/answers/{trace}/decide", {
        "action": "edit", "edit-verdict": seen, "edit-answer": "Support is available 24/7 [d1].",
        **claims_form({"key": " ", "value": "30", "value_type": "number", "cite": "d2"})})

    html = response.content.decode()
    assert "Enter a key." in html
    assert CHANGED in html
    assert not Decision.objects.exists()


def test_a_form_refused_on_the_verdict_it_was_shown_with_says_nothing_changed(
    hold: Any, reviewer: Any, login: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")

    response = client.post(f"/answers/{trace}/decide", {
        "action": "reject", "reject-verdict": current_verdict_id(trace),
        "reject-reason": "other", "reject-comment": ""})

    html = response.content.decode()
    assert response.status_code == 400
    assert "Say why the answer is rejected." in html
    assert CHANGED not in html
