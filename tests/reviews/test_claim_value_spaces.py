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
