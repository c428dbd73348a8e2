"""A reviewer may not change a claim that the gate checks against a document they may not
read: each edit's verdict (a single-source warning that comes and goes as the guessed value
matches) would tell them what the document says."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.reviews.models import AnswerVersion
from tests.reviews.conftest import current_verdict_id, fact
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked_by_hr(publish: Any, service_api: Any) -> str:
    """An HR question answered from a public document; an HR-only memo states the same key."""
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5)])
    publish("hr-memo", title="HR memo", principals=["group:hr"],
            facts=[fact("trial_days", 60)])
    body = {
        "trace_id": "t-hr", "question": "How long is the trial?", "as_of": None,
        "answer": "The trial lasts 14 days [d1]. Up to 5 seats [d1].",
        "asked_by": ["group:hr"], "index_release": "2026.10",
        "retrieved": [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}],
        "claims": [{"key": "trial_days", "value": 14, "cite": "d1"},
                   {"key": "seats", "value": 5, "cite": "d1"}],
    }
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 201, response.content
    return "t-hr"


def edit(api: Any, trace: str, trial: Any, seats: Any = 5) -> Any:
    return api.post(f"/api/v1/answers/{trace}/decisions", {
        "action": "edit", "verdict": current_verdict_id(trace),
        "answer": f"The trial lasts {trial} days [d1]. Up to {seats} seats [d1].",
        "claims": [{"key": "trial_days", "value": trial, "cite": "d1"},
                   {"key": "seats", "value": seats, "cite": "d1"}],
    }, format="json")


def test_a_reviewer_who_may_not_read_the_memo_cannot_probe_it_through_edits(
    asked_by_hr: str, reviewer: Any, hr_reviewer: Any, token_client: Any,
) -> None:
    alice = token_client(reviewer)
    assert alice.get(f"/api/v1/answers/{asked_by_hr}").status_code == 200  # she reads it
    for guess in (59, 60):  # the refusal is the same, right guess or not
        refused = edit(alice, asked_by_hr, guess)
        assert refused.status_code == 400
        assert refused.json()["errors"] == [{
            "field": "claims",
            "message": "claims[0] is checked against a document you may not read, and "
                       "changing such a claim would tell you what the document says: leave it "
                       "as it is or remove it (a reviewer who may read the document can "
                       "change it)"}]
    assert AnswerVersion.objects.filter(answer__trace_id=asked_by_hr).count() == 1
    # A claim no hidden document states is hers to change.
    assert edit(alice, asked_by_hr, 14, seats=6).status_code == 201
    assert alice.post(f"/api/v1/answers/{asked_by_hr}/release").status_code == 200
    # Who may read the memo may change the claim it bears on.
    assert edit(token_client(hr_reviewer), asked_by_hr, 60, seats=6).status_code == 201


def test_the_page_says_why_the_edit_was_refused(
    asked_by_hr: str, reviewer: Any, login: Any,
) -> None:
    response = page_post(login(reviewer), asked_by_hr, "edit",
                         answer="The trial lasts 59 days [d1]. Up to 5 seats [d1].",
                         **claims_form(
                             {"key": "trial_days", "value": "59", "value_type": "number",
                              "cite": "d1"},
                             {"key": "seats", "value": "5", "value_type": "number",
                              "cite": "d1"}))
    assert response.status_code == 400
    page = response.content.decode()
    assert ("Nothing was saved: the gate checks claim 1 against a document you may not read, "
            "so changing it would tell you what that document says.") in page
    assert "59" in page.split('data-action="edit"', 1)[1]  # what she typed is kept
    # The memo's value nowhere as a number (a random token may hold the digits "60").
    assert "HR memo" not in page
    assert not re.search(r"(?<!\w)60(?!\w)", page.split('data-action="edit"', 1)[1])
