"""An approval survives a revision of a document the answer neither cites nor retrieves when
that revision only rewords a passage: the gate sees the same facts, the same conflict and the
same cited revisions, so there is nothing new for a reviewer to look at."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, Decision, ReviewItem
from tests.reviews.conftest import fact
from tests.reviews.test_decisions import decide

pytestmark = pytest.mark.django_db


def test_rewording_an_unretrieved_document_leaves_an_approval_standing(
    hold: Any, reviewer: Any, token_client: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Held: it cites `pricing` (14 days); `pricing-eu` (30 days), which it did not retrieve,
    # disagrees from the knowledge base.
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    answer = Answer.objects.get(trace_id=trace)
    assert answer.current_verdict.reason == "conflicting_sources"
    approved_on = answer.current_verdict_id
    assert decide(token_client(reviewer), trace, action="approve").status_code == 201

    # pricing-eu gets a new revision: same fact, same dates, a reworded passage.
    _reword_pricing_eu(publish, django_capture_on_commit_callbacks)

    answer.refresh_from_db()
    # What the reviewer approved is still exactly what the gate holds it for.
    assert answer.current_verdict.reasons == ["conflicting_sources"]
    assert answer.status == "approved", (
        f"an approval on verdict #{approved_on} went back to the queue "
        f"(verdict #{answer.current_verdict_id}, trigger {answer.current_verdict.trigger}) "
        "although only an unretrieved document's wording changed")
    assert not ReviewItem.objects.filter(answer=answer).exists()


def test_rewording_an_unretrieved_document_does_not_refuse_a_decision_in_progress(
    hold: Any, reviewer: Any, token_client: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The reviewer opened the answer on verdict V; meanwhile a document it never retrieved
    gets a revision whose facts are the same (a passage reworded). Their approval on V should
    go through: the page they read is still exactly what the gate holds the answer for."""
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    _reword_pricing_eu(publish, django_capture_on_commit_callbacks)
    response = decide(token_client(reviewer), trace, action="approve", verdict=seen)
    assert response.status_code == 201, (response.status_code, response.content[:300])


def test_a_new_value_in_that_document_still_refuses_the_decision_in_progress(
    hold: Any, reviewer: Any, token_client: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The other side of the conflict now says 45, not 30: the verdict tells the reviewer
    something new, and their approval of what they read is not applied."""
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 45)],
                passages=[{"span": "p1", "text": "In the EU, the free trial runs for 45 days."}])

    response = decide(token_client(reviewer), trace, action="approve", verdict=seen)

    assert response.status_code == 409, response.content[:300]
    assert response.json()["error"] == "stale_verdict"
    assert Answer.objects.get(trace_id=trace).status == "held"


def _reword_pricing_eu(publish: Any, on_commit: Any) -> None:
    with on_commit(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 30)],
                passages=[{"span": "p1", "text": "In the EU, the free trial runs for 30 days."}])


@pytest.mark.parametrize("action", ["approve", "edit"])
def test_a_decision_made_on_the_verdict_that_replaced_the_one_sent_replays(
    hold: Any, reviewer: Any, token_client: Any, publish: Any,
    django_capture_on_commit_callbacks: Any, action: str,
) -> None:
    """Decided on the verdict telling the same that replaced the one the reviewer sent: the
    same request again (its reply was lost) is that decision, not a refusal."""
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    answer = Answer.objects.get(trace_id=trace)
    seen, version = answer.current_verdict_id, answer.current_version
    _reword_pricing_eu(publish, django_capture_on_commit_callbacks)
    api = token_client(reviewer)
    sent = ({"answer": version.text + " Terms apply.", "claims": version.claims}
            if action == "edit" else {"comment": "fine"})

    first = decide(api, trace, action=action, verdict=seen, **sent)
    again = decide(api, trace, action=action, verdict=seen, **sent)

    assert first.status_code == 201, first.content[:300]
    assert again.status_code == 200, again.content[:300]
    assert Decision.objects.filter(answer__trace_id=trace).count() == 1


def test_passages_read_on_the_verdict_sent_count_as_read(
    hold: Any, reviewer: Any, token_client: Any, publish: Any, login: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    opened = login(reviewer).post(f"/answers/{trace}/expanded",
                                  json.dumps({"cite": "d1", "verdict": seen}),
                                  content_type="application/json")
    assert opened.status_code == 204
    _reword_pricing_eu(publish, django_capture_on_commit_callbacks)

    assert decide(token_client(reviewer), trace, action="approve", verdict=seen
                  ).status_code == 201
    assert Decision.objects.get(answer__trace_id=trace).read_passages is True


# A claim its source does not support (✗): approving it needs "Approve it all the same".
WRONG_CLAIM = {"answer": "The free trial lasts 20 days [d1].",
               "claims": [{"key": "trial_days", "value": 20, "cite": "d1"}],
               "retrieved": [{"cite": "d1", "document_id": "pricing", "revision": "r1",
                              "span": "p1"}]}


def test_an_api_approval_on_a_verdict_replaced_by_one_telling_the_same_still_needs_despite(
    hold: Any, reviewer: Any, token_client: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold(**WRONG_CLAIM)
    api = token_client(reviewer)
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    # On the current verdict, the claim that does not hold is asked about.
    assert decide(api, trace, action="approve", verdict=seen).status_code == 400

    # A document the answer does not retrieve is reworded: a new verdict telling the same.
    _reword_pricing_eu(publish, django_capture_on_commit_callbacks)
    answer = Answer.objects.get(trace_id=trace)
    assert answer.current_verdict_id != seen

    response = decide(api, trace, action="approve", verdict=seen)
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_a_page_approval_on_a_verdict_replaced_by_one_telling_the_same_still_asks_for_the_box(
    hold: Any, reviewer: Any, login: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold(**WRONG_CLAIM)
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    page = login(reviewer)
    assert page.post(f"/answers/{trace}/claim").status_code == 302
    # The page drawn on `seen` asks for the box; the reviewer does not tick it.
    shown = page.get(f"/answers/{trace}/").content.decode()
    assert 'name="approve-despite"' in shown

    _reword_pricing_eu(publish, django_capture_on_commit_callbacks)
    assert Answer.objects.get(trace_id=trace).current_verdict_id != seen

    response = page.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": seen, "approve-held": "True",
        "approve-comment": ""})
    assert Answer.objects.get(trace_id=trace).status == "held", (
        "approved a claim marked ✗ without 'Approve it all the same'", response.status_code)
