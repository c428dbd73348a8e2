"""Edges of the decision forms that a reviewer could hit without doing anything wrong: a claim
that arrived with an empty value, a fix of only a claim's type, a long comment with line
breaks, a form whose hidden verdict id was damaged, an odd expansion report."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, AnswerVersion, Decision
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

TEXT = "The trial lasts 14 days [d1]."
TRIAL = {"key": "trial_days", "value": "14", "value_type": "number", "cite": "d1"}


def test_a_claim_that_came_in_with_an_empty_value_does_not_block_an_edit(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "note", "value": "", "cite": "d1"}])
    client = login(reviewer)

    response = page_post(client, trace, "edit", answer=TEXT, **claims_form(
        TRIAL, {"key": "note", "value": "", "value_type": "text", "cite": "d1"}))

    assert "Enter a value." not in response.content.decode()
    assert response.status_code in (200, 302), response.content.decode()[:300]
    latest = AnswerVersion.objects.filter(answer__trace_id=trace).order_by("-number").first()
    assert latest is not None and latest.number == 2 and latest.text == TEXT
    assert {"key": "note", "value": "", "cite": "d1"} in latest.claims


def test_an_empty_value_typed_into_a_claim_that_had_one_is_still_refused(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "edit", answer=TEXT, **claims_form(
        {"key": "trial_days", "value": "", "value_type": "text", "cite": "d1"}))

    assert response.status_code == 400
    assert "Enter a value." in response.content.decode()


def test_correcting_only_a_claims_type_is_a_change(hold: Any, reviewer: Any,
                                                   login: Any) -> None:
    """1 and true are equal in Python, not to the gate."""
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "sso", "value": 1, "cite": "d1"}],
                 answer="The trial lasts 14 days, with single sign-on [d1].")
    text = Answer.objects.get(trace_id=trace).current_version.text

    response = page_post(login(reviewer), trace, "edit", answer=text, **claims_form(
        TRIAL, {"key": "sso", "value": "true", "value_type": "boolean", "cite": "d1"}))

    assert "changes nothing" not in response.content.decode()
    latest = AnswerVersion.objects.filter(answer__trace_id=trace).order_by("-number").first()
    assert latest is not None and latest.number == 2
    assert {"key": "sso", "value": True, "cite": "d1"} in latest.claims


def test_a_comment_the_browser_let_through_is_counted_as_the_browser_counts_it(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    comment = "ok\r\n" * 1600  # 4,800 characters as typed, 6,400 as sent

    response = page_post(login(reviewer), trace, "reject", reason="incorrect", comment=comment)

    assert response.status_code == 302
    assert Decision.objects.get().comment == ("ok\n" * 1600).strip()


def test_an_edit_comment_over_the_limit_is_said_on_the_page(hold: Any, reviewer: Any,
                                                           login: Any) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "edit", answer=TEXT, comment="x" * 5001,
                         **claims_form(TRIAL))

    assert response.status_code == 400
    assert "Ensure this value has at most 5000 characters" in response.content.decode()


@pytest.mark.parametrize("verdict", ["10000000000000000000000000", "abc", "999999"])
def test_a_damaged_verdict_id_is_said_above_the_form(hold: Any, reviewer: Any, login: Any,
                                                     verdict: str) -> None:
    trace = hold()
    client = login(reviewer)
    response = client.post(f"/answers/{trace}/decide",
                           {"action": "approve", "approve-verdict": verdict})

    assert response.status_code == 400
    html = response.content.decode()
    start = html.index('data-action="approve"')
    form = html[start:html.index("</form>", start)]
    assert 'class="errorlist' in form
    assert not Decision.objects.exists()


def test_an_expansion_report_with_an_infinite_verdict_is_refused(hold: Any, reviewer: Any,
                                                                 login: Any) -> None:
    trace = hold()
    response = login(reviewer).post(f"/answers/{trace}/expanded",
                                    '{"cite": "d1", "verdict": 1e400}',
                                    content_type="application/json")

    assert response.status_code == 400
