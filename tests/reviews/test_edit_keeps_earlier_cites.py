"""An answer stored before cites were checked (one citing "doc 1") can still be edited: an edit
sends every claim, those it keeps too."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest
from tests.reviews.test_decisions import decide

pytestmark = pytest.mark.django_db


def test_an_answer_stored_with_a_legacy_cite_can_still_be_edited(
    sources: None, service: Any, reviewer: Any, token_client: Any,
) -> None:
    # As the API accepted it until today.
    answer_ingest(data=AnswerInput(
        trace_id="legacy", question="How long is the trial?",
        answer="The trial lasts 14 days [d1].", asked_by=("*",), index_release="",
        retrieved=(RetrievedInput("d1", "pricing", "r1", "p1"),
                   RetrievedInput("doc 1", "pricing-eu", "r1", "p1")),
        claims=({"key": "trial_days", "value": 14, "cite": "d1"},
                {"key": "support_hours", "value": "24/7", "cite": "doc 1"})),
        actor=Actor.of_user(service), user=service)
    answer = Answer.objects.get(trace_id="legacy")
    print(answer.status, answer.current_verdict.reasons)
    assert answer.status == "held"
    version = answer.current_version
    response = decide(token_client(reviewer), "legacy", action="edit",
                      answer=version.text + " Terms apply.", claims=version.claims)
    assert response.status_code == 201, (response.status_code, response.content[:500])
