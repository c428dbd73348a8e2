"""Keys stored before tabs and line breaks were refused in names are still read as they are:
the answer's page shows them, the gate matches them, an edit keeps them, and sending them back
as they came (the page's form, the API's edit, which send every claim) is not refused."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.audit.services import SYSTEM
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest
from reviewqueue.sources.services import FactInput, PassageInput, RevisionInput, revision_publish
from tests.reviews.conftest import days
from tests.reviews.test_decisions import claims_form, decide, page_post

pytestmark = pytest.mark.django_db


def stored(owner: Any, document: str, revision: str, key: str, value: int) -> None:
    """A revision as the API took it until now: its one fact's key may hold a tab."""
    revision_publish(document_key=document, revision=revision, actor=SYSTEM, data=RevisionInput(
        title=document, owner=owner.username, updated_at=timezone.now(),
        allowed_principals=("*",),
        passages=(PassageInput("p1", f"The free trial lasts {value} days."),),
        facts=(FactInput(key=key, value=value, span="p1",
                         valid_from=dt.date.fromisoformat(days(-30)), valid_until=None),)))


@pytest.fixture(params=["trial\tdays", "trial\ndays"], ids=["tab", "line feed"])
def key(request: Any) -> str:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def held(owner: Any, key: str) -> str:
    """An answer stored with the key, held because its two sources disagree on it."""
    stored(owner, "pricing", "r1", key, 14)
    stored(owner, "pricing-eu", "r1", key, 30)
    answer_ingest(actor=SYSTEM, data=AnswerInput(
        trace_id="legacy", question="How long is the trial?",
        answer="The trial lasts 14 days [d1].", asked_by=("*",), index_release="",
        retrieved=(RetrievedInput("d1", "pricing", "r1", "p1"),
                   RetrievedInput("d2", "pricing-eu", "r1", "p1")),
        claims=({"key": key, "value": 14, "cite": "d1"},)))
    answer = Answer.objects.get(trace_id="legacy")
    assert answer.status == "held"
    assert answer.current_verdict.reason == "conflicting_sources"
    return "legacy"


def test_the_answers_page_shows_it(held: str, reviewer: Any, login: Any, key: str) -> None:
    response = login(reviewer).get(f"/answers/{held}/")
    assert response.status_code == 200
    assert key in response.content.decode()


def test_the_edit_form_keeps_it_as_it_came(
    held: str, reviewer: Any, login: Any, key: str
) -> None:
    # A browser sends a line break of the text area the key is shown in as CR LF.
    sent = key.replace("\n", "\r\n")
    response = page_post(login(reviewer), held, "edit",
                         answer="The trial lasts 14 days [d1]. Terms apply.",
                         **claims_form({"key": sent, "value": "14", "value_type": "number",
                                        "cite": "d1"}))

    assert response.status_code == 302, response.content.decode()[:2000]
    answer = Answer.objects.get(trace_id=held)
    assert answer.current_version.number == 2
    assert answer.current_version.claims == [{"key": key, "value": 14, "cite": "d1"}]


def test_the_api_edit_takes_it_back_as_it_came_and_refuses_a_new_one(
    held: str, reviewer: Any, token_client: Any, key: str
) -> None:
    api = token_client(reviewer)
    version = Answer.objects.get(trace_id=held).current_version
    new = {"key": "seats\tmax", "value": 3, "cite": "d1"}
    refused = decide(api, held, action="edit", answer=version.text + " Terms apply.",
                     claims=[*version.claims, new])
    assert refused.status_code == 400
    assert {e["field"]: e["message"] for e in refused.json()["errors"]} == {
        "claims[1].key": "Must not contain tabs, line breaks or other control characters: a "
                         "page shows them as a space or not at all, so they make keys that "
                         "read alike."}

    response = decide(api, held, action="edit", answer=version.text + " Terms apply.",
                      claims=version.claims)
    assert response.status_code == 201, response.json()
    assert Answer.objects.get(trace_id=held).current_version.claims == [
        {"key": key, "value": 14, "cite": "d1"}]


def test_re_evaluation_still_matches_it(
    held: str, owner: Any, key: str, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    # The EU source now says 14 too: the answer citing the key holds.
    with django_capture_on_commit_callbacks(execute=True):
        stored(owner, "pricing-eu", "r2", key, 14)

    verdict = Answer.objects.get(trace_id=held).current_verdict
    assert (verdict.decision, verdict.reason) == ("candidate", "supported")
