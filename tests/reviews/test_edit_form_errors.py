"""The edit form on the item page: no claim row is dropped silently, and every refusal is said
in the reviewer's language, on the field it concerns."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.forms import ClaimForm
from reviewqueue.reviews.models import Answer, AnswerVersion
from tests.reviews.conftest import current_verdict_id
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


def test_a_decimal_number_too_large_to_keep_as_typed_is_refused_on_its_row(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    big = {"key": "seats", "value": "1e16", "value_type": "number", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(SUPPORT, big))
    assert response.status_code == 400
    row = response.content.decode().split('name="claims-1-value"', 1)[1]
    assert row.index("Write a number this large as a whole number, without a decimal point "
                     "or an exponent.") < row.index('name="claims-1-value_type"')
    assert_nothing_saved(trace)


def test_a_text_claim_with_no_value_is_refused_on_its_row(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    empty = {"key": "trial_days", "value": "  ", "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(SUPPORT, empty))
    assert response.status_code == 400
    row = response.content.decode().split('name="claims-1-value"', 1)[1]
    assert row.index("Enter a value.") < row.index('name="claims-1-value_type"')
    assert_nothing_saved(trace)


def test_a_claim_that_came_in_empty_may_be_left_as_it_was() -> None:
    initial = {"key": "note", "value": "", "value_type": "text", "cite": "d1"}
    form = ClaimForm(dict(initial), initial=initial, cites=["d1"])
    assert form.is_valid(), form.errors
    assert form.cleaned_data["parsed"] == ""


def test_negative_zero_is_read_as_zero() -> None:
    form = ClaimForm({"key": "seats", "value": "-0.0", "value_type": "number", "cite": "d1"},
                     cites=["d1"])
    assert form.is_valid(), form.errors
    assert repr(form.cleaned_data["parsed"]) == "0.0"


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


def test_the_language_menu_of_a_refused_form_returns_to_the_page_it_was_sent_from(
    hold: Any, reviewer: Any, login: Any
) -> None:
    """The refused page has the address of the form (POST only): changing the language there
    must not land on it, which would say that what was sent was not saved."""
    trace = hold()
    client = login(reviewer)
    sent_from = f"http://testserver/answers/{trace}/?back=%2F%3Freason%3Dconflicting_sources"
    response = client.post(f"/answers/{trace}/decide",
                           {"action": "reject", "reject-verdict": current_verdict_id(trace)},
                           HTTP_REFERER=sent_from)  # no reason given
    assert response.status_code == 400
    assert f'name="next" value="{sent_from.replace("&", "&amp;")}"' in response.content.decode()
    back = client.post("/language", {"language": "ja", "next": sent_from})
    assert back.status_code == 302 and back["Location"] == sent_from
    # A page read with GET comes back to itself, as before.
    page = client.get(f"/answers/{trace}/?back=%2F").content.decode()
    assert f'name="next" value="/answers/{trace}/?back=%2F"' in page
