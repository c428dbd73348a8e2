"""A bad decision body, or a bad job request, is answered with every error in one 400: each
bad field, and what the action asks of the others, never an error a bad field explains."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.jobs.models import Job
from reviewqueue.reviews.models import Answer, Decision

pytestmark = pytest.mark.django_db


def errors(response: Any) -> dict[str, str]:
    assert response.status_code == 400, response.content
    return {e["field"]: e["message"] for e in response.json()["errors"]}


@pytest.fixture
def decide(hold: Any, reviewer: Any, token_client: Any) -> Any:
    trace = hold()
    api = token_client(reviewer)

    def post(**body: Any) -> Any:
        return api.post(f"/api/v1/answers/{trace}/decisions", body, format="json")

    yield post
    assert not Decision.objects.exists()
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_an_approval_with_a_bad_verdict_and_an_edits_fields_hears_of_all_three(
    decide: Any
) -> None:
    assert errors(decide(action="approve", verdict="7", reason="outdated",
                         answer="Fourteen days [d1].")) == {
        "verdict": "A valid integer is required.",
        "reason": "Only a reject takes a reason.",
        "answer": "Only an edit changes the answer.",
    }


def test_a_reject_reason_off_the_list_is_not_also_called_missing(decide: Any) -> None:
    said = errors(decide(action="reject", verdict=1, reason="because"))
    assert list(said) == ["reason"]
    assert "because" in said["reason"] and "Required" not in said["reason"]


@pytest.mark.parametrize(("sent", "said"), [
    ({}, "Required to reject."),
    ({"reason": ""}, '"" is not a valid choice.'),
    ({"reason": None}, "This field may not be null."),
])
def test_a_missing_or_blank_reject_reason_is_said_once(
    decide: Any, sent: dict[str, Any], said: str
) -> None:
    response = decide(action="reject", verdict=1, **sent)
    assert response.json()["errors"] == [{"field": "reason", "message": said}]


def test_an_edit_with_bad_claims_and_no_text_names_both(decide: Any) -> None:
    assert errors(decide(action="edit", verdict=1, claims="trial_days=14")) == {
        "answer": "Required to edit.",
        "claims": 'Expected a list of items but got type "str".',
    }


def test_other_as_a_reason_with_a_bad_comment_names_only_the_comment(decide: Any) -> None:
    said = errors(decide(action="reject", verdict=1, reason="other", comment=5))
    assert said == {"comment": "Not a valid string."}


def test_a_job_naming_both_scopes_with_a_bad_id_hears_of_both(
    admin_user: Any, token_client: Any
) -> None:
    response = token_client(admin_user).post(
        "/api/v1/jobs", {"trace_ids": ["t-1", 5], "document_id": "pricing"}, format="json")
    assert errors(response) == {
        "trace_ids[1]": "Not a valid string.",
        "document_id": "Give either trace_ids or document_id, not both.",
    }
    assert not Job.objects.exists()
