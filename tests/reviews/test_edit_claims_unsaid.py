"""An edit that changes the text away from a value its claims state, while leaving the claims
as they were, is refused until the reviewer says the claims are right: the gate checks the
claims, not the text, so "within 365 days" beside a claim of 30 would be approved unseen."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, AnswerVersion
from reviewqueue.reviews.services.decisions import claims_unsaid
from tests.reviews.test_decisions import claims_form, decide, page_post

pytestmark = pytest.mark.django_db

TRIAL = {"key": "trial_days", "value": "14", "value_type": "number", "cite": "d1"}


@pytest.fixture
def api(reviewer: Any, token_client: Any) -> Any:
    return token_client(reviewer)


def versions(trace: str) -> int:
    return AnswerVersion.objects.filter(answer__trace_id=trace).count()


def test_the_page_refuses_an_edit_whose_text_no_longer_says_the_claims_value(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()  # "The free trial lasts 14 days [d1]." claiming trial_days 14
    client = login(reviewer)
    text = "The free trial lasts <b>30</b> days [d1]."

    refused = page_post(client, trace, "edit", answer=text, **claims_form(TRIAL))

    assert refused.status_code == 400
    page = refused.content.decode()
    assert ("Nothing was saved: claim 1 states a value the text said before your edit and no "
            "longer says.") in page
    assert "The claims are right as they are" in page
    assert "The free trial lasts &lt;b&gt;30&lt;/b&gt; days [d1]." in page  # kept, escaped
    assert versions(trace) == 1

    # The reviewer says the claim is right: the edit is saved.
    saved = page_post(client, trace, "edit", answer=text, claims_checked="on",
                      **claims_form(TRIAL))
    assert saved.status_code == 302
    assert versions(trace) == 2
    assert Answer.objects.get(trace_id=trace).current_version.text == text


def test_an_edit_that_changes_the_claim_with_the_text_goes_through(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "edit",
                         answer="The free trial lasts 30 days [d1].",
                         **claims_form({**TRIAL, "value": "30"}))
    assert response.status_code in (200, 302)
    assert "Nothing was saved" not in response.content.decode()
    assert versions(trace) == 2


def test_the_api_asks_for_claims_checked(hold: Any, api: Any) -> None:
    trace = hold()
    claims = [{"key": "trial_days", "value": 14, "cite": "d1"}]
    edit = {"action": "edit", "answer": "The free trial lasts two weeks [d1].",
            "claims": claims}

    refused = decide(api, trace, **edit)
    assert refused.status_code == 400
    errors = refused.json()["errors"]
    assert [e["field"] for e in errors] == ["claims_checked"]
    assert errors[0]["message"].startswith(
        "claims[0] states a value the text said before the edit and no longer says")
    assert versions(trace) == 1
    assert decide(api, trace, claims_checked=True, comment="two weeks is 14 days",
                  **edit).status_code == 201
    assert versions(trace) == 2
    # The answer's history gives the edit as the decision's own reply does.
    [decision] = api.get(f"/api/v1/answers/{trace}").json()["decisions"]
    assert {k: decision[k] for k in ("action", "comment", "new_version", "read_passages")} == {
        "action": "edit", "comment": "two weeks is 14 days", "new_version": 2,
        "read_passages": False}
    other = decide(api, trace, action="approve", claims_checked=True)
    assert other.status_code == 400
    assert other.json()["errors"][0]["field"] == "claims_checked"


@pytest.mark.parametrize(("before", "after", "claims", "unsaid"), [
    ("Trial: 14 days.", "Trial: 30 days.", [14], [1]),
    ("Trial: 14 days.", "Trial: 14 days, or 30.", [14], []),      # still says it
    ("Trial: 14 days.", "Trial: 30 days.", [30], []),             # never said it before
    ("Open 08:00-20:00.", "Open all day.", ["08:00-20:00"], [1]),
    ("Price 7.5.", "Price 8.", [7.5, True], [1]),                  # booleans are not looked for
    ("A 1, b 2.", "A 3, b 4.", [1, 2], [1, 2]),
    # A value is looked for whole: not inside a longer number or word.
    ("Trial: 14 days.", "Trial: 140 days.", [14], [1]),
    ("Trial: 14 days.", "Trial: 14.5 days.", [14], [1]),
    ("Trial: 14 days.", "Trial: 2,14 days.", [14], [1]),          # a decimal comma
    ("Trial: 14 days.", "Trial: 2, 14 days.", [14], []),
    ("Costs 1 EUR.", "Costs 1,000 EUR.", [1], [1]),
    ("Sold in the EU.", "Sold in EUR.", ["EU"], [1]),
    ("Trial: 14 days.", "Trial (14) days.", [14], []),
    ("試用期間は14日です。", "試用期間は14日間です。", [14], []),
    ("本社は東京です。", "本社は東京都です。", ["東京"], []),
])
def test_which_claims_the_text_no_longer_says(before: str, after: str, claims: list[Any],
                                              unsaid: list[int]) -> None:
    rows = [{"key": f"k{i}", "value": v, "cite": "d1"} for i, v in enumerate(claims)]
    assert claims_unsaid(before, after, rows, rows) == unsaid
    # Claims changed by the edit are the reviewer's own: nothing is asked.
    assert claims_unsaid(before, after, rows, [*rows[:-1], {**rows[-1], "key": "x"}]) == []
