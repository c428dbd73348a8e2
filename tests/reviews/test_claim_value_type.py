"""A claim row's type menu starts at "text". A number or true/false typed into a new row with
that type would be claimed as text ("29"), which no source's number supports: the row says so
and keeps what was typed; quotes say the text is meant."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import AnswerVersion
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

TEXT = "The trial lasts 14 days [d1]. Seats: 29 [d1]."
TRIAL = {"key": "trial_days", "value": "14", "value_type": "number", "cite": "d1"}


def edit(client: Any, trace: str, row: dict[str, str]) -> Any:
    data = claims_form(TRIAL, {"key": "seats", "cite": "d1", **row})
    data["claims-INITIAL_FORMS"] = "1"  # the second row is one the reviewer added
    return page_post(client, trace, "edit", answer=TEXT, **data)


def latest_claims(trace: str) -> list[dict[str, Any]]:
    version = AnswerVersion.objects.filter(answer__trace_id=trace).order_by("-number").first()
    assert version is not None
    return version.claims


@pytest.mark.parametrize("typed", ["29", " 2.5", "true"])
def test_a_number_or_boolean_typed_as_text_in_a_new_row_is_refused_and_kept(
    hold: Any, reviewer: Any, login: Any, typed: str
) -> None:
    trace = hold()
    response = edit(login(reviewer), trace, {"value": typed, "value_type": "text"})
    assert response.status_code == 400
    page = response.content.decode()
    shown = typed.strip()
    assert (f"{shown} is a number or true/false, but the type is “text”. Choose its type, or, "
            f"to claim the text, write it in quotes: &quot;{shown}&quot;.") in page
    assert f'value="{typed}"' in page
    assert len(latest_claims(trace)) == 1  # nothing saved


def test_the_same_value_with_its_type_or_in_quotes_is_saved(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    edit(client, trace, {"value": "29", "value_type": "number"})
    assert {"key": "seats", "value": 29, "cite": "d1"} in latest_claims(trace)
    edit(client, trace, {"value": '"30"', "value_type": "text"})
    assert {"key": "seats", "value": "30", "cite": "d1"} in latest_claims(trace)


def test_a_claim_that_came_in_as_text_keeps_its_type(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "seats", "value": "29", "cite": "d1"}])
    data = claims_form(TRIAL, {"key": "seats", "value": "31", "value_type": "text",
                               "cite": "d1"})
    response = page_post(login(reviewer), trace, "edit", answer=TEXT, **data)
    assert response.status_code in (200, 302), response.content.decode()[:300]
    assert {"key": "seats", "value": "31", "cite": "d1"} in latest_claims(trace)


def test_a_text_claim_left_as_it_came_keeps_its_quotes(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "code", "value": '"29"', "cite": "d1"}])
    data = claims_form(TRIAL, {"key": "code", "value": '"29"', "value_type": "text",
                               "cite": "d1"})
    response = page_post(login(reviewer), trace, "edit", answer=TEXT, **data)
    assert response.status_code in (200, 302), response.content.decode()[:300]
    assert {"key": "code", "value": '"29"', "cite": "d1"} in latest_claims(trace)


@pytest.mark.parametrize(("typed", "saved"), [
    # What only text can hold is taken as text.
    ("NaN", "NaN"), ("Infinity", "Infinity"), ("99999999999999999999", "99999999999999999999"),
    # Typographic quotes and corner brackets say the text is meant, as straight quotes do.
    ("“31”", "31"), ("「31」", "31"), ("\uff0231\uff02", "31"),
])
def test_a_value_typed_as_text_in_a_new_row_is_saved_as_the_text_meant(
    hold: Any, reviewer: Any, login: Any, typed: str, saved: str
) -> None:
    trace = hold()
    response = edit(login(reviewer), trace, {"value": typed, "value_type": "text"})
    assert response.status_code in (200, 302), response.content.decode()[:300]
    assert {"key": "seats", "value": saved, "cite": "d1"} in latest_claims(trace)
