"""The edit form on the item page: no claim row is dropped silently, and every refusal is said
in the reviewer's language, on the field it concerns."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, AnswerVersion
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

SUPPORT = {"key": "support_hours", "value": "24/7", "value_type": "text", "cite": "d1"}
NO_KEY = {"key": " ", "value": "30", "value_type": "number", "cite": "d2"}
SUPPORTED_TEXT = "Support is available 24/7 [d1]."


def assert_nothing_saved(trace_id: str) -> None:
    answer = Answer.objects.get(trace_id=trace_id)
    assert answer.status == "held"
    assert AnswerVersion.objects.filter(answer=answer).count() == 1


@pytest.mark.parametrize(("language", "says"), [
    ("en", "Enter a key."),
    ("ja", "キーを入力してください。"),
])
def test_a_claim_row_with_a_value_but_no_key_is_an_error_and_nothing_is_lost(
    hold: Any, reviewer: Any, login: Any, language: str, says: str
) -> None:
    trace = hold()
    client = login(reviewer, HTTP_ACCEPT_LANGUAGE=language)
    response = page_post(client, trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(SUPPORT, NO_KEY))
    assert response.status_code == 400
    html = response.content.decode()
    assert says in html
    # Both rows come back as posted.
    assert 'name="claims-0-value" value="24/7"' in html
    assert 'name="claims-1-value" value="30"' in html
    assert '<option value="d2" selected>' in html
    assert_nothing_saved(trace)


def test_a_number_past_64_bits_is_refused_on_its_row(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    huge = {"key": "seats", "value": "99999999999999999999", "value_type": "number",
            "cite": "d1"}
    response = page_post(client, trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(SUPPORT, huge))
    assert response.status_code == 400
    html = response.content.decode()
    # On the row's Value, where the reviewer typed it, with the value kept.
    assert ('name="claims-1-value" value="99999999999999999999"' in html)
    row = html[html.index('name="claims-1-value"'):]
    assert row.index("Enter a whole number between -9223372036854775808 and "
                     "9223372036854775807.") < row.index('name="claims-1-value_type"')
    assert_nothing_saved(trace)


def test_a_row_with_only_a_subject_is_not_empty_either(hold: Any, reviewer: Any,
                                                       login: Any) -> None:
    trace = hold()
    row = {"subject": "EU", "key": "", "value": "", "value_type": "text", "cite": ""}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(SUPPORT, row))
    assert response.status_code == 400
    assert "Enter a key." in response.content.decode()
    assert_nothing_saved(trace)


def test_a_row_left_entirely_blank_is_ignored(hold: Any, reviewer: Any, login: Any) -> None:
    trace = hold()
    blank = {"subject": " ", "key": "", "value": "", "value_type": "number", "cite": ""}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(SUPPORT, blank))
    assert response.status_code == 302
    answer = Answer.objects.get(trace_id=trace)
    assert answer.status == "approved"
    assert answer.current_version.claims == [
        {"key": "support_hours", "value": "24/7", "cite": "d1"}]


@pytest.mark.parametrize(("language", "says"), [
    ("en", "The edit changes nothing; approve the answer instead."),
    ("ja", "編集で何も変わっていません。代わりに回答を承認してください。"),
])
def test_an_edit_that_changes_nothing_is_refused_in_the_reviewers_language(
    hold: Any, reviewer: Any, login: Any, language: str, says: str
) -> None:
    trace = hold()
    client = login(reviewer, HTTP_ACCEPT_LANGUAGE=language)
    response = page_post(client, trace, "edit", answer="The free trial lasts 14 days [d1].",
                         **claims_form({"key": "trial_days", "value": "14",
                                        "value_type": "number", "cite": "d1"}))
    assert response.status_code == 400
    html = response.content.decode()
    assert says in html
    assert "answer:" not in html
    assert 'id="id_edit-answer_error"' in html  # on the answer text, not the whole form
    assert_nothing_saved(trace)


@pytest.mark.parametrize(("language", "says"), [
    ("en", "Enter the answer text."),
    ("ja", "回答本文を入力してください。"),
])
def test_an_edit_with_blank_text_is_refused_in_the_reviewers_language(
    hold: Any, reviewer: Any, login: Any, language: str, says: str
) -> None:
    trace = hold()
    client = login(reviewer, HTTP_ACCEPT_LANGUAGE=language)
    response = page_post(client, trace, "edit", answer=" \n ", **claims_form(SUPPORT))
    assert response.status_code == 400
    html = response.content.decode()
    assert says in html
    assert "answer:" not in html
    assert 'id="id_edit-answer_error"' in html
    assert_nothing_saved(trace)
