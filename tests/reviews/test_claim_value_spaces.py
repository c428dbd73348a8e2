"""Spaces typed around a text claim value are not part of the claim: nobody sees them, yet the
gate compares values exactly, so "24/7 " (a copy from the passage often brings the space)
would not hold against a source saying "24/7". The owner's correction form reads plain text
the same way (sources.forms.parse_value); a value that came with spaces and is left as it was
keeps them."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

SUPPORTED_TEXT = "Support is available 24/7 [d1]."


@pytest.mark.parametrize("typed", ["24/7 ", " 24/7", "\t24/7  "])
def test_spaces_typed_around_a_text_claim_value_are_left_out(
    hold: Any, reviewer: Any, login: Any, typed: str
) -> None:
    trace = hold()
    claim = {"key": "support_hours", "value": typed, "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(claim))
    assert response.status_code == 302
    answer = Answer.objects.get(trace_id=trace)
    assert answer.current_version.claims == [
        {"key": "support_hours", "value": "24/7", "cite": "d1"}]
    assert answer.status == "approved"  # the source says 24/7: the edit holds


@pytest.mark.parametrize("typed", ["support_hours\u200b", "cafe\u0301_hours"],
                         ids=["zero-width space", "decomposed accent"])
def test_a_typed_key_that_reads_as_another_is_refused_on_its_row(
    hold: Any, reviewer: Any, login: Any, typed: str
) -> None:
    trace = hold()
    before = Answer.objects.get(trace_id=trace).current_version_id
    claim = {"key": typed, "value": "24/7", "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(claim))

    assert response.status_code == 400
    html = response.content.decode()
    assert "as typed, it reads like another" in html
    assert typed in html  # what was typed is kept in the form
    assert Answer.objects.get(trace_id=trace).current_version_id == before


@pytest.mark.parametrize(("language", "says"), [
    ("en", "Remove tabs and line breaks: the page shows them as a space, so as typed, it reads "
           "like another."),
    ("ja", "タブや改行を取り除いてください。ページでは空白として表示されるため、入力のままでは、"
           "別のものと同じに見えます。"),
])
def test_a_typed_key_with_a_tab_is_refused_on_its_row_in_the_reviewers_language(
    hold: Any, reviewer: Any, login: Any, language: str, says: str
) -> None:
    """The page shows `support\thours` as `support hours`: to the gate they are two keys."""
    trace = hold()
    before = Answer.objects.get(trace_id=trace).current_version_id
    claim = {"key": "support\thours", "value": "24/7", "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer, HTTP_ACCEPT_LANGUAGE=language), trace, "edit",
                         answer=SUPPORTED_TEXT, **claims_form(claim))

    assert response.status_code == 400
    html = response.content.decode()
    row = html[html.index('name="claims-0-key"'):]
    assert says in row[:row.index('name="claims-0-value"')]  # on the key, where it was typed
    assert 'name="claims-0-key" value="support\thours"' in html  # kept as typed
    assert Answer.objects.get(trace_id=trace).current_version_id == before


def test_a_typed_subject_with_a_line_break_is_refused_on_its_row(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    before = Answer.objects.get(trace_id=trace).current_version_id
    claim = {"subject": "plan\r\nbasic", "key": "support_hours", "value": "24/7",
             "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(claim))

    assert response.status_code == 400
    html = response.content.decode()
    row = html[html.index('name="claims-0-subject"'):]
    assert "Remove tabs and line breaks" in row[:row.index('name="claims-0-key"')]
    assert "plan\r\nbasic</textarea>" in row  # kept as typed, its line break too
    assert Answer.objects.get(trace_id=trace).current_version_id == before
