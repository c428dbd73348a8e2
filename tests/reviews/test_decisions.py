"""Decisions: approve, reject and edit, bound to the verdict the reviewer saw."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import Answer, AnswerVersion, Decision, ReviewItem, Verdict
from reviewqueue.reviews.signals import answers_status_changed
from tests.reviews.conftest import current_verdict_id, fact

pytestmark = pytest.mark.django_db


def decide(client: Any, trace_id: str, **body: Any) -> Any:
    body.setdefault("verdict", current_verdict_id(trace_id))
    return client.post(f"/api/v1/answers/{trace_id}/decisions", body, format="json")


@pytest.fixture
def api(reviewer: Any, token_client: Any) -> Any:
    return token_client(reviewer)


# --- Approve and reject -----------------------------------------------------------------------

def test_approving_makes_the_answer_approved_and_leaves_the_queue(hold: Any, api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="approve", comment="Checked both documents.")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "approved"
    assert body["decision"]["action"] == "approve"
    assert body["decision"]["verdict"] == body["verdict"]["id"]
    assert Answer.objects.get(trace_id=trace).status == "approved"
    assert not ReviewItem.objects.filter(answer__trace_id=trace).exists()


def test_a_decision_is_audited_with_who_the_verdict_and_the_revisions(hold: Any,
                                                                      api: Any) -> None:
    trace = hold()
    verdict_id = current_verdict_id(trace)
    decide(api, trace, action="approve", comment="secret-comment-text")
    event = AuditEvent.objects.get(action="decision.approve")
    assert event.actor.startswith("user:alice")
    assert event.after["decided_on_verdict"] == verdict_id
    assert event.after["reviewer"] == "alice"
    assert sorted(event.after["revisions"]) == [["pricing", "r1"], ["pricing-eu", "r1"]]
    assert event.before["status"] == "held" and event.after["status"] == "approved"
    assert event.after["version_number"] == 1  # as people see it; "version" is the row id
    recorded = json.dumps([event.before, event.after])
    assert "secret-comment-text" not in recorded
    assert "14 days" not in recorded


def test_a_decision_sends_the_status_changed_signal(hold: Any, api: Any) -> None:
    trace = hold()
    seen: list[dict[str, Any]] = []

    def receiver(sender: Any, *, changes: list[dict[str, Any]], **kwargs: Any) -> None:
        seen.extend(changes)

    answers_status_changed.connect(receiver)
    try:
        decide(api, trace, action="reject", reason="incorrect")
    finally:
        answers_status_changed.disconnect(receiver)
    assert [(s["old_status"], s["new_status"], s["cause"]) for s in seen] == [
        ("held", "rejected", "decision")]


def test_rejecting_needs_a_reason_from_the_list(hold: Any, api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="reject", comment="no")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "reason"
    assert decide(api, trace, action="reject", reason="because").status_code == 400
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_rejecting_stores_the_reason_and_comment(hold: Any, api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="reject", reason="outdated", comment="EU doc is old")
    assert response.status_code == 201
    decision = Decision.objects.get()
    assert (decision.reject_reason, decision.comment) == ("outdated", "EU doc is old")
    assert Answer.objects.get(trace_id=trace).status == "rejected"


def test_other_as_a_reject_reason_needs_a_comment(hold: Any, api: Any) -> None:
    trace = hold()
    assert decide(api, trace, action="reject", reason="other").status_code == 400


def test_deciding_on_a_free_item_claims_it_first(hold: Any, api: Any) -> None:
    trace = hold()
    decide(api, trace, action="approve")
    assert AuditEvent.objects.filter(action="lease.claimed", trace_id=trace).count() == 1


def test_read_passages_is_set_when_the_reviewer_opened_a_passage(
    hold: Any, reviewer: Any, api: Any, login: Any
) -> None:
    trace = hold()
    hold("t-2")
    client = login(reviewer)
    response = client.post(f"/answers/{trace}/expanded",
                           json.dumps({"cite": "d1", "verdict": current_verdict_id(trace)}),
                           content_type="application/json")
    assert response.status_code == 204
    decide(api, trace, action="approve")
    decide(api, "t-2", action="approve")
    assert Decision.objects.get(answer__trace_id=trace).read_passages is True
    assert Decision.objects.get(answer__trace_id="t-2").read_passages is False


def test_passages_opened_on_an_earlier_verdict_do_not_count_as_read(
    hold: Any, reviewer: Any, api: Any, login: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/expanded",
                         json.dumps({"cite": "d1", "verdict": current_verdict_id(trace)}),
                         content_type="application/json")
    before = current_verdict_id(trace)
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
                passages=[{"span": "p1", "text": "The free trial now lasts 14 days."}])
    assert current_verdict_id(trace) != before
    decide(api, trace, action="approve")
    assert Decision.objects.get(answer__trace_id=trace).read_passages is False


def test_recording_an_expansion_of_a_cite_the_answer_does_not_have_is_400(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    response = login(reviewer).post(
        f"/answers/{trace}/expanded",
        json.dumps({"cite": "d9", "verdict": current_verdict_id(trace)}),
        content_type="application/json")
    assert response.status_code == 400


# --- 409s -------------------------------------------------------------------------------------

def test_a_decision_on_a_verdict_that_is_not_current_is_409_with_the_current_one(
    hold: Any, api: Any, publish: Any, django_capture_on_commit_callbacks: Any
) -> None:
    trace = hold()
    seen = current_verdict_id(trace)
    with django_capture_on_commit_callbacks(execute=True):  # re-evaluated: a new verdict
        publish("pricing", revision="r2", facts=[fact("trial_days", 14)])
    current = current_verdict_id(trace)
    assert current != seen
    response = decide(api, trace, action="approve", verdict=seen)
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "stale_verdict"
    assert body["verdict"]["id"] == current
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert not Decision.objects.exists()


@pytest.mark.parametrize("verdict", ["other answer's", "no such", "5", 5.0, True, 2**63])
def test_a_verdict_id_that_is_not_one_of_this_answer_is_a_400_and_changes_nothing(
    hold: Any, api: Any, verdict: Any
) -> None:
    trace, other = hold(), hold("t-other")
    sent = {"other answer's": current_verdict_id(other),
            "no such": current_verdict_id(trace) + 1000}.get(verdict, verdict)
    verdicts, events = Verdict.objects.count(), AuditEvent.objects.count()
    response = decide(api, trace, action="approve", verdict=sent)
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == ["verdict"]
    # Nothing claimed, re-evaluated or audited for a mistake.
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by is None
    assert (Verdict.objects.count(), AuditEvent.objects.count()) == (verdicts, events)


def test_a_decision_after_the_sources_changed_is_409_and_stores_the_fresh_verdict(
    hold: Any, api: Any, publish: Any
) -> None:
    trace = hold()
    seen = current_verdict_id(trace)
    # A new revision is published while the reviewer reads. (Its re-evaluation would run after
    # commit; inside this test transaction it never does, so the old verdict is still current.)
    publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial now lasts 14 days."}])
    assert current_verdict_id(trace) == seen
    response = decide(api, trace, action="approve", verdict=seen)
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "stale_verdict"
    fresh = Verdict.objects.get(pk=body["verdict"]["id"])
    assert fresh.pk != seen
    assert fresh.trigger == "decision"
    assert fresh.reason == "superseded_revision"
    assert current_verdict_id(trace) == fresh.pk
    assert not Decision.objects.exists()
    # Deciding again on the fresh verdict works.
    assert decide(api, trace, action="approve", verdict=fresh.pk).status_code == 201


def test_a_decision_after_a_fact_expired_is_refused(hold: Any, api: Any,
                                                    monkeypatch: Any) -> None:
    import datetime as dt

    from reviewqueue.reviews.services import evaluation

    trace = hold()
    later = evaluation.today() + dt.timedelta(days=90)  # past every fact's end
    monkeypatch.setattr(evaluation, "today", lambda: later)
    response = decide(api, trace, action="approve")
    assert response.status_code == 409
    assert response.json()["verdict"]["reason"] == "noncurrent_citation"


def test_deciding_on_an_answer_that_is_not_held_is_409(publish: Any, submit: Any,
                                                       api: Any) -> None:
    publish(facts=[fact()])
    submit("cand", as_of=None)
    response = decide(api, "cand", action="approve")
    assert response.status_code == 409
    assert response.json()["error"] == "not_held"
    assert response.json()["status"] == "candidate"


def test_deciding_on_an_item_a_colleague_holds_is_409(hold: Any, api: Any, bob: Any,
                                                      token_client: Any) -> None:
    trace = hold()
    token_client(bob).post(f"/api/v1/answers/{trace}/claim")
    response = decide(api, trace, action="approve")
    assert response.status_code == 409
    assert response.json()["error"] == "leased_by_other"
    assert response.json()["holder"] == "bob"
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_the_same_decision_sent_again_is_answered_with_the_stored_one(
    hold: Any, api: Any
) -> None:
    trace = hold()
    first = decide(api, trace, action="reject", reason="incorrect", comment="Wrong plan.")
    assert first.status_code == 201
    again = decide(api, trace, action="reject", reason="incorrect", comment="Wrong plan.")
    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    assert Decision.objects.count() == 1
    assert AuditEvent.objects.filter(action="decision.reject").count() == 1


def test_another_decision_after_one_is_409_naming_the_one_made(
    hold: Any, api: Any, bob: Any, token_client: Any
) -> None:
    trace = hold()
    made = decide(api, trace, action="approve", comment="ok").json()["decision"]
    for client, body in [(api, {"action": "reject", "reason": "incorrect"}),
                         (api, {"action": "approve", "comment": "ok, checked"}),
                         (token_client(bob), {"action": "approve", "comment": "ok"})]:
        response = decide(client, trace, **body)
        assert response.status_code == 409
        refusal = response.json()
        assert (refusal["error"], refusal["status"]) == ("not_held", "approved")
        named = refusal["decision"]
        assert (named["id"], named["action"], named["reviewer"]) == (made["id"], "approve",
                                                                     "alice")
        assert parse_datetime(named["created_at"]) == parse_datetime(made["created_at"])
    assert Decision.objects.count() == 1


def test_an_approval_sent_again_after_the_answer_came_back_says_it_was_recorded(
    hold: Any, api: Any, publish: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # The first reply was lost; meanwhile a source changed and the answer came back.
    trace = hold()
    body = {"action": "approve", "verdict": current_verdict_id(trace), "comment": "Checked."}
    made = decide(api, trace, **body).json()["decision"]
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 45)],
                passages=[{"span": "p1", "text": "In the EU the free trial lasts 45 days."}])
    assert Answer.objects.get(trace_id=trace).status == "held"

    retry = decide(api, trace, **body)

    assert retry.status_code == 409
    refusal = retry.json()
    assert (refusal["error"], refusal["status"]) == ("recorded_before", "held")
    assert (refusal["decision"]["id"], refusal["decision"]["action"]) == (made["id"], "approve")
    assert refusal["current_verdict"] == current_verdict_id(trace)
    assert Decision.objects.count() == 1
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.leased_by_id is None  # nothing claimed for a retry
    assert item.earlier_approval_id == made["id"]


def test_the_same_edit_sent_again_stores_one_version(hold: Any, api: Any) -> None:
    trace = hold()
    edit = {"action": "edit", "answer": "The trial lasts 14 days, in short [d1].",
            "claims": [{"key": "trial_days", "value": 14, "cite": "d1"}], "comment": "shorter"}
    first = decide(api, trace, **edit)
    assert first.status_code == 201
    # Sent again on the verdict the reviewer saw, which the edit replaced.
    again = decide(api, trace, **edit, verdict=first.json()["decision"]["verdict"])
    assert again.status_code == 200, again.content
    assert again.json()["decision"] == first.json()["decision"]
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 2


# --- 403, 404 and 400 -------------------------------------------------------------------------

def test_an_owner_may_not_decide(hold: Any, owner: Any, token_client: Any) -> None:
    trace = hold()
    assert decide(token_client(owner), trace, action="approve").status_code == 403


def test_a_service_token_may_not_decide(hold: Any, service_api: Any) -> None:
    trace = hold()
    assert decide(service_api, trace, action="approve").status_code == 403


def test_deciding_on_an_answer_one_may_not_read_is_404(hr_sources: Any, submit: Any,
                                                       sources: Any, api: Any) -> None:
    submit("hr-1", as_of=None, asked_by=["group:hr"], retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "hr-handbook", "revision": "r1", "span": "p1"},
    ])
    assert Answer.objects.get(trace_id="hr-1").status == "held"
    assert decide(api, "hr-1", action="approve").status_code == 404


@pytest.mark.parametrize("body", [
    {"action": "approve", "verdict": "x"},
    {"action": "maybe"},
    {"action": "approve", "answer": "changed"},
    {"action": "edit", "answer": "text [d1]."},
    {"action": "approve", "unknown": 1},
    {"action": "approve", "reason": "sensitive"},  # no reason would be kept
    {"action": "edit", "answer": "text [d1].", "claims": [], "reason": "outdated"},
])
def test_bad_decision_bodies_are_400(hold: Any, api: Any, body: dict[str, Any]) -> None:
    trace = hold()
    response = decide(api, trace, **body)
    assert response.status_code == 400, response.content
    assert not Decision.objects.exists()


# --- Edits ------------------------------------------------------------------------------------

def test_an_edit_to_an_html_comment_alone_is_refused_naming_the_answer(hold: Any,
                                                                       api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="edit", answer="<!-- [d1] -->",
                      claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert response.status_code == 400
    assert response.json()["errors"] == [{
        "field": "answer", "message": "the edited answer text is required (white space, "
                                      "citation markers and HTML comments alone say nothing)"}]
    assert not Decision.objects.exists()
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1


def test_an_edit_the_gate_abstains_on_is_refused_and_nothing_is_stored(hold: Any,
                                                                        api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="edit", answer="Support is open 9 to 5 [d1].",
                      claims=[{"key": "support_hours", "value": "9-5", "cite": "d1"}])
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "edit_refused"
    assert body["reason"] == "unsupported_claim"
    # Named at the claim the gate found unsupported, as every refusal names its fields.
    assert [e["field"] for e in body["errors"]] == ["claims[0]"]
    assert body["errors"][0]["message"] == body["findings"][0]["message"]
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert not Decision.objects.exists()


def test_an_edit_that_still_needs_review_is_saved_and_stays_held(hold: Any, api: Any) -> None:
    trace = hold()
    old = current_verdict_id(trace)
    response = decide(api, trace, action="edit",
                      answer="The free trial lasts 14 days in most countries [d1].",
                      claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "held"
    assert body["decision"]["new_version"] == 2
    answer = Answer.objects.get(trace_id=trace)
    assert answer.current_version.number == 2
    assert answer.current_version.created_by.username == "alice"
    assert answer.current_verdict.trigger == "edit"
    assert body["decision"]["verdict"] == old
    item = ReviewItem.objects.get(answer=answer)
    assert item.leased_by.username == "alice"
    # Then an explicit approval of the edited version.
    assert decide(api, trace, action="approve").json()["status"] == "approved"


def test_an_edit_the_gate_supports_is_approved_at_once(hold: Any, api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="edit", answer="Support is available 24/7 [d1].",
                      claims=[{"key": "support_hours", "value": "24/7", "cite": "d1"}])
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "approved"
    assert response.json()["verdict"]["decision"] == "candidate"
    answer = Answer.objects.get(trace_id=trace)
    assert (answer.status, answer.current_version.number) == ("approved", 2)
    edited = AuditEvent.objects.get(action="decision.edit").after
    assert (edited["verdict_decision"], edited["version_number"]) == ("candidate", 2)


def test_an_edit_that_changes_nothing_is_400(hold: Any, api: Any) -> None:
    trace = hold()
    response = decide(api, trace, action="edit", answer="The free trial lasts 14 days [d1].",
                      claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert response.status_code == 400


# --- The item page forms ----------------------------------------------------------------------

def page_post(client: Any, trace_id: str, action: str, **fields: Any) -> Any:
    data = {"action": action, f"{action}-verdict": current_verdict_id(trace_id)}
    data.update({k if k.startswith("claims-") or k in ("back", "then") else f"{action}-{k}": v
                 for k, v in fields.items()})
    return client.post(f"/answers/{trace_id}/decide", data)


def page_edit(client: Any, trace_id: str, text: str, value: str) -> Any:
    """Post an edit of the answer text with one support_hours claim, as the page does."""
    return page_post(client, trace_id, "edit", answer=text, **claims_form(
        {"key": "support_hours", "value": value, "value_type": "text", "cite": "d1"}))


def claims_form(*rows: dict[str, str]) -> dict[str, str]:
    data = {"claims-TOTAL_FORMS": str(len(rows)), "claims-INITIAL_FORMS": str(len(rows)),
            "claims-MIN_NUM_FORMS": "0", "claims-MAX_NUM_FORMS": "200"}
    for i, row in enumerate(rows):
        for key, value in row.items():
            data[f"claims-{i}-{key}"] = value
    return data


def test_approving_from_the_page_returns_to_the_queue_without_the_item(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    response = page_post(client, trace, "approve", comment="ok")
    assert response.status_code == 302 and response["Location"] == "/"
    page = client.get("/").content.decode()
    # Many answers share a question: the message names and links the one decided...
    assert f'Approved <a href="/answers/{trace}/">{trace}</a>: “' in page
    assert page.count(trace) == 2  # ...and no queue row holds it any more


def test_a_double_click_on_approve_says_it_was_approved(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    assert page_post(client, trace, "approve", comment="ok").status_code == 302
    response = page_post(client, trace, "approve", comment="ok")
    assert response.status_code == 302 and response["Location"] == "/"
    page = client.get("/").content.decode()
    assert f'Approved <a href="/answers/{trace}/">{trace}</a>: “' in page
    assert "Not saved" not in page
    assert Decision.objects.count() == 1


def test_an_approval_sent_again_from_the_page_after_the_answer_came_back_says_so(
    hold: Any, reviewer: Any, login: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    seen = current_verdict_id(trace)
    assert page_post(client, trace, "approve", comment="ok").status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 45)],
                passages=[{"span": "p1", "text": "In the EU the free trial lasts 45 days."}])
    made = timezone.localtime(Decision.objects.get().created_at)
    response = page_post(client, trace, "approve", comment="ok", verdict=seen)
    assert response.status_code == 409
    page = response.content.decode()
    assert (f"Nothing new was recorded: you approved this answer at {made:%H:%M} UTC, and it "
            "has come back to the queue since, as its sources changed.") in page
    assert Decision.objects.count() == 1


def test_a_decision_a_colleague_made_first_is_named_with_what_was_not_saved(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    colleague = login(bob)
    assert page_post(colleague, trace, "reject", reason="incorrect").status_code == 302
    made = timezone.localtime(Decision.objects.get().created_at)
    response = page_post(login(reviewer), trace, "approve", comment="Looks right to me")
    assert response.status_code == 409
    page = response.content.decode()
    assert ("This answer is no longer waiting for review: bob rejected it at "
            f"{made:%H:%M} UTC.") in page
    assert "Looks right to me" in page  # what was not saved, to copy


def test_the_page_shows_the_fresh_verdict_when_the_sources_changed(
    hold: Any, reviewer: Any, login: Any, publish: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    data = {"action": "approve", "approve-verdict": current_verdict_id(trace),
            "approve-comment": "my comment"}
    publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial now lasts 14 days."}])
    response = client.post(f"/answers/{trace}/decide", data)
    assert response.status_code == 409
    html = response.content.decode()
    assert "The sources changed while you were reviewing." in html
    assert "Source revised" in html
    assert "my comment" in html
    fresh = current_verdict_id(trace)
    assert f'name="approve-verdict" value="{fresh}"' in html
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_an_approval_after_a_colleagues_edit_says_the_answer_was_edited(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    seen = current_verdict_id(trace)
    # Another tab of the same reviewer saves an edit the gate still holds.
    page_post(client, trace, "edit", answer="The trial lasts 14 days, in short [d1].",
              **claims_form({"key": "trial_days", "value": "14", "value_type": "number",
                             "cite": "d1"}))
    assert current_verdict_id(trace) != seen
    response = client.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": seen, "approve-comment": "ok"})
    assert response.status_code == 409
    html = response.content.decode()
    assert "The answer was edited while you were reviewing." in html
    assert "The sources changed" not in html
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_the_api_says_the_answer_was_edited_when_it_was(hold: Any, api: Any) -> None:
    trace = hold()
    seen = current_verdict_id(trace)
    edited = decide(api, trace, action="edit", answer="The trial lasts 14 days, in short [d1].",
                    claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert edited.json()["status"] == "held"
    response = decide(api, trace, action="approve", verdict=seen)
    assert response.status_code == 409
    # Its author is told it was their own edit, not that someone edited it meanwhile.
    assert response.json()["detail"] == ("the answer was edited after that verdict (version 2, "
                                         "by alice); decide again on the current verdict")


def test_an_unsupported_edit_on_the_page_is_refused_and_keeps_the_text(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    response = page_edit(client, trace, "Support is open 9 to 5, trust me [d1].", "9-5")
    assert response.status_code == 400
    html = response.content.decode()
    assert "The gate refuses your edit" in html
    assert "9 to 5, trust me" in html
    assert "is not what [d1] says" in html
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1
    # Opened by its address, the item was free: the edit took its lease, which the refusal
    # keeps, and the page says so (item.js renews a lease marked as the reviewer's).
    assert ReviewItem.objects.get(answer__trace_id=trace).leased_by_id == reviewer.pk
    assert 'data-lease-mine="1"' in html
    assert "Nobody is working on this answer." not in html


def test_a_supported_edit_on_the_page_is_approved(hold: Any, reviewer: Any,
                                                  login: Any) -> None:
    trace = hold()
    client = login(reviewer)
    response = page_edit(client, trace, "Support is available 24/7 [d1].", "24/7")
    assert response.status_code == 302, response.content.decode()[:2000]
    answer = Answer.objects.get(trace_id=trace)
    assert answer.status == "approved"
    assert answer.current_version.claims == [
        {"key": "support_hours", "value": "24/7", "cite": "d1"}]


def test_a_claim_value_typed_as_a_number_reaches_the_gate_as_a_number(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    page_post(client, trace, "edit", answer="The trial lasts 14 days, in short [d1].",
              **claims_form({"key": "trial_days", "value": "14", "value_type": "number",
                             "cite": "d1"}))
    version = Answer.objects.get(trace_id=trace).current_version
    assert version.claims == [{"key": "trial_days", "value": 14, "cite": "d1"}]


def test_rejecting_from_the_page_needs_a_reason(hold: Any, reviewer: Any, login: Any) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "reject", comment="bad")
    assert response.status_code == 400
    assert Answer.objects.get(trace_id=trace).status == "held"


@pytest.mark.django_db(transaction=True)
def test_a_decision_that_waited_for_a_concurrent_re_evaluation_is_a_clean_409(
    hold: Any, reviewer: Any
) -> None:
    import threading
    import time

    from django.db import connection, transaction
    from django.utils import timezone

    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.services.decisions import (
        DecisionInput,
        StaleVerdict,
        answer_decide,
    )

    trace = hold()
    verdict_id = current_verdict_id(trace)
    locked = threading.Event()

    def writer() -> None:
        # A re-evaluation holds the answer row for a moment and gives it a new verdict.
        try:
            with transaction.atomic():
                answer = Answer.objects.select_for_update().get(trace_id=trace)
                old = answer.current_verdict
                answer.current_verdict = Verdict.objects.create(
                    answer=answer, version=old.version, decision=old.decision,
                    reason=old.reason, reasons=old.reasons, fingerprint="another",
                    gate_version=old.gate_version, as_of=old.as_of, trigger="manual")
                answer.status_changed_at = timezone.now()
                answer.save(update_fields=["current_verdict", "status_changed_at"])
                locked.set()
                time.sleep(0.5)
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    assert locked.wait(timeout=10)
    # The decision waits for the lock, then finds its verdict replaced: a clean 409, not a 500.
    with pytest.raises(StaleVerdict):
        answer_decide(trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                      data=DecisionInput(action="approve", verdict_id=verdict_id))
    thread.join(timeout=10)
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_deciding_from_the_page_on_a_colleagues_item_says_who_holds_it(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    login(bob).post(f"/answers/{trace}/claim")
    response = page_post(login(reviewer), trace, "approve")
    assert response.status_code == 409
    assert "bob is working on this" in response.content.decode()
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_an_approved_answer_shows_its_history_and_nothing_to_decide(
    hold: Any, reviewer: Any, api: Any, login: Any
) -> None:
    trace = hold()
    decide(api, trace, action="approve", comment="fine")
    html = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert "This answer is not waiting for review (status: Approved)." in html
    assert 'id="decide"' not in html and 'data-action="approve"' not in html
    assert "<q>fine</q>" in html


def test_an_edit_posted_after_a_colleague_took_the_item_keeps_the_text(
    hold: Any, reviewer: Any, bob: Any, login: Any, token_client: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    token_client(bob).post(f"/api/v1/answers/{trace}/claim")
    response = page_edit(client, trace, "Support is open around the clock, all week [d1].",
                         "24/7")
    assert response.status_code == 409
    html = response.content.decode()
    assert "bob is working on this" in html
    assert "Not saved: what you wrote" in html
    assert "open around the clock, all week" in html
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1


def test_an_edit_posted_after_the_answer_was_decided_keeps_the_text(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    verdict = current_verdict_id(trace)
    assert page_post(login(bob), trace, "approve", comment="fine").status_code == 302
    text = "Support is open around the clock, all week [d1]."
    response = client.post(f"/answers/{trace}/decide", {
        "action": "edit", "edit-verdict": verdict, "edit-answer": text, **claims_form(
            {"key": "support_hours", "value": "24/7", "value_type": "text", "cite": "d1"})})
    assert response.status_code == 409
    html = response.content.decode()
    assert "This answer is no longer waiting for review: bob approved it at " in html
    assert "open around the clock, all week" in html
    assert Answer.objects.get(trace_id=trace).status == "approved"


def test_approving_an_answer_whose_claim_does_not_hold_takes_a_second_yes(
    hold: Any, publish: Any, reviewer: Any, login: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The source it was generated from said 14; the current one says 21. Still held for
    review (its source was revised), the claim is ✗ on the page: one click on Approve must not
    approve it."""
    trace = hold()
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    assert Verdict.objects.get(pk=current_verdict_id(trace)).decision == "review"
    client = login(reviewer)
    page = client.get(f"/answers/{trace}/").content.decode()
    assert "✗ Claim 1 does not hold against its source." in page

    refused = page_post(client, trace, "approve", comment="looks fine")
    assert refused.status_code == 400
    assert "Tick the box to approve an answer whose claims do not hold" in (
        refused.content.decode())
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert not Decision.objects.exists()

    done = page_post(client, trace, "approve", comment="the 14 days still apply", despite="on")
    assert done.status_code == 302
    assert Answer.objects.get(trace_id=trace).status == "approved"


def test_an_approval_on_a_stale_verdict_whose_claim_no_longer_holds_is_refused_as_stale(
    hold: Any, publish: Any, reviewer: Any, login: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The page was drawn while claim 1 held; the owner then published 21 days. The reviewer
    is told the sources changed, and sees the new verdict and the ✗, not asked to tick a box
    about a claim the page they approved never showed."""
    trace = hold()
    client = login(reviewer)
    seen = current_verdict_id(trace)
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    assert current_verdict_id(trace) != seen
    response = client.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": seen, "approve-comment": "looks fine"})
    assert response.status_code == 409
    html = response.content.decode()
    assert "The sources changed while you were reviewing." in html
    assert "Tick the box to approve" not in html
    assert "✗ Claim 1 does not hold against its source." in html
    assert f'name="approve-verdict" value="{current_verdict_id(trace)}"' in html
    assert "looks fine" in html
    assert not Decision.objects.exists()


def test_the_api_asks_the_same_second_yes_for_claims_that_do_not_hold(
    hold: Any, publish: Any, api: Any, django_capture_on_commit_callbacks: Any
) -> None:
    trace = hold()
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    refused = decide(api, trace, action="approve", comment="looks fine")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{
        "field": "despite",
        "message": "claims[0] does not hold against what it cites: send true to approve "
                   "the answer all the same, or edit or reject it"}]
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert not Decision.objects.exists()
    # Only an approval takes it; a reject with it is refused whole, naming it.
    wrong = decide(api, trace, action="reject", reason="conflict", despite=True)
    assert wrong.status_code == 400
    assert wrong.json()["errors"] == [{"field": "despite",
                                       "message": "Only an approval takes it."}]
    done = decide(api, trace, action="approve", comment="the 14 days still apply",
                  despite=True)
    assert done.status_code == 201, done.json()
    assert Answer.objects.get(trace_id=trace).status == "approved"


def test_the_api_asks_no_second_yes_of_an_approval_a_colleagues_lease_refuses(
    hold: Any, publish: Any, api: Any, bob: Any, token_client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """bob works on the answer: the approval is refused for his lease, first, rather than
    asked for `despite`, which would not let it through either."""
    trace = hold()
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    token_client(bob).post(f"/api/v1/answers/{trace}/claim")
    refused = decide(api, trace, action="approve")
    assert refused.status_code == 409
    assert (refused.json()["error"], refused.json()["holder"]) == ("leased_by_other", "bob")


def test_an_answer_whose_claims_hold_is_approved_without_the_second_yes(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    assert "data-contradicted" not in client.get(f"/answers/{trace}/").content.decode()
    assert page_post(client, trace, "approve").status_code == 302


def test_a_removed_claim_row_is_not_asked_to_be_fixed(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    response = page_post(client, trace, "edit", answer="The free trial lasts 14 days [d1].",
                         **claims_form(
                             {"key": "trial_days", "value": "abc", "value_type": "number",
                              "cite": "d1"},
                             {"key": "to_remove", "value": "zzz", "value_type": "text",
                              "cite": "", "DELETE": "on"}))
    assert response.status_code == 400
    page = response.content.decode()
    # The row kept has its error; the removed one, no source chosen, is not told to choose one.
    assert page.count('<ul class="errorlist"') == 1, page
    assert "Choose the source this claim cites." not in page


def test_past_thirty_sources_each_claim_row_offers_them_from_one_list_on_the_page(
    hold: Any, reviewer: Any, login: Any
) -> None:
    n = 40
    trace = hold(retrieved=[{"cite": f"d{i}", "document_id": "pricing", "revision": "r1",
                             "span": "p1"} for i in range(1, n + 1)],
                 answer=" ".join(f"The free trial lasts 14 days [d{i}]." for i in range(1, n + 1)),
                 claims=[{"key": "trial_days", "value": 14, "cite": f"d{i}"}
                         for i in range(1, n + 1)])
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    page = client.get(f"/answers/{trace}/").content.decode()
    # One list of the ids, not a menu of 40 in each of 40 rows.
    lists = re.findall(r'<datalist id="claim-cites">(.*?)</datalist>', page, re.S)
    assert len(lists) == 1 and lists[0].count("<option") == n
    assert '<select name="claims-0-cite"' not in page
    box = re.search(r'<input type="text" name="claims-6-cite"[^>]*>', page)
    assert box is not None and 'value="d7"' in box.group(0) and 'list="claim-cites"' in box.group(0)
    # What is typed there is checked as the menu's choice was.
    rows = [{"key": "trial_days", "value": "14", "value_type": "number", "cite": f"d{i}"}
            for i in range(1, n + 1)]
    rows[0]["cite"] = "d99"
    refused = page_post(client, trace, "edit", answer="The free trial lasts 14 days [d1].",
                        **claims_form(*rows))
    assert refused.status_code == 400
    assert "Select a valid choice. d99 is not one of the available choices." in (
        refused.content.decode())


def test_a_decision_on_an_answer_the_gate_took_out_of_the_queue_says_why(
    hold: Any, reviewer: Any, login: Any, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Nobody decided it: a cited document was withdrawn while the reviewer read, and the gate
    now abstains. The refusal says so, not only that the answer stopped waiting."""
    trace = hold()
    client = login(reviewer)
    verdict = current_verdict_id(trace)
    with django_capture_on_commit_callbacks(execute=True):
        assert service_api.delete("/api/v1/documents/pricing").status_code == 200
    assert Answer.objects.get(trace_id=trace).status == "abstained"

    response = client.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": verdict, "approve-comment": "fine"})

    assert response.status_code == 409
    assert ("This answer is no longer waiting for review: its sources changed, and the gate "
            "now abstains on it (see its verdict).") in response.content.decode()
