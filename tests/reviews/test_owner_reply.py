"""An owner asked about a held answer replies instead of publishing: the item goes back to the
reviewers, and the question and its reply stay on the answer's page after it is decided."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.core import mail

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import OwnerQuestion, ReviewItem
from tests.reviews.conftest import current_verdict_id, fact

pytestmark = pytest.mark.django_db

TRACE = "t-1"  # the answer `hold` sends
QUESTION = "Which trial length is right for the EU?"
REPLY = "Both are right: 30 days in the EU, 14 elsewhere.\nSay which applies."


@pytest.fixture
def sent(hold: Callable[..., str], login: Any, reviewer: Any, owner: Any) -> str:
    """A held answer alice sent to olivia, who owns both pricing documents."""
    reviewer.email = "alice@example.test"
    reviewer.save()
    trace = hold()
    assert login(reviewer).post(f"/answers/{trace}/send-to-owner",
                                {"note": QUESTION}).status_code == 302
    return trace


def questions_shown(html: str) -> list[str]:
    """The question boxes of an item page, tags left out, spaces collapsed."""
    boxes = re.findall(r'<div class="banner small owner-question"[^>]*>(.*?)</div>', html, re.S)
    return [" ".join(re.sub(r"<[^>]*>", " ", box).split()) for box in boxes]


def test_the_owner_replies_from_the_inbox_and_the_reviewer_reads_it(
    sent: str, login: Any, reviewer: Any, owner: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    client = login(owner)
    inbox = client.get("/owner/").content.decode()
    assert f'action="/answers/{sent}/owner-reply"' in inbox
    # Which answer the card is about, when several share a question.
    card = inbox.split('class="card sent-to-owner"', 1)[1].split("</form>", 1)[0]
    assert f'<code class="muted small" data-sent-trace>{sent}</code>' in card
    assert "The answer: The free trial lasts 14 days [d1]." in card
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/answers/{sent}/owner-reply",
                               {"reply": REPLY.replace("\n", "\r\n"), "from": "inbox"},
                               follow=True)
    assert response.redirect_chain == [("/owner/", 302)]
    page = response.content.decode()
    assert (f"Your reply about {sent} was sent to alice. The answer is back with the "
            "reviewers.") in page
    assert f'action="/answers/{sent}/owner-reply"' not in page  # no longer waiting for her
    assert "No reviewer is waiting for you." in page

    assert not ReviewItem.objects.get(answer__trace_id=sent).waiting_for_owner
    question = OwnerQuestion.objects.get(answer__trace_id=sent)
    assert (question.note, question.reply, question.replied_by) == (QUESTION, REPLY, owner)

    event = AuditEvent.objects.get(action="review_item.owner_replied")
    assert event.actor == "user:olivia"
    assert event.after == {"waiting_for_owner": False, "asked_by": "alice",
                           "reply_sha256": hashlib.sha256(REPLY.encode()).hexdigest()}
    assert "30 days" not in str(event.after)  # the audit log keeps who, never what

    [message] = [m for m in mail.outbox if m.to == ["alice@example.test"]]
    assert "olivia replied" in message.subject and "30 days in the EU" in message.body

    reviewer_client = login(reviewer)
    item_page = reviewer_client.get(f"/answers/{sent}/").content.decode()
    [shown] = questions_shown(item_page)
    assert re.fullmatch(rf"alice asked on [-0-9: ]+UTC: {re.escape(QUESTION)} olivia replied "
                        r"on [-0-9: ]+UTC: Both are right: 30 days in the EU, 14 elsewhere\. "
                        r"Say which applies\.", shown), shown
    assert "data-waiting-owner" not in item_page and "data-owner-replied-link" in item_page
    queue = reviewer_client.get("/").content.decode()
    assert "data-owner-replied>The owner replied</a>" in queue
    assert "data-owner-waiting" not in queue


def test_the_question_and_the_reply_stay_on_the_page_once_decided(
    sent: str, login: Any, owner: Any, reviewer: Any
) -> None:
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "The EU value is right."})
    client = login(reviewer)
    client.post(f"/answers/{sent}/claim")
    assert client.post(f"/answers/{sent}/decide", {
        "action": "reject", "reject-verdict": current_verdict_id(sent), "reject-held": "True",
        "reject-reason": "conflict"}).status_code == 302
    assert not ReviewItem.objects.filter(answer__trace_id=sent).exists()
    for user in (reviewer, owner):
        [shown] = questions_shown(login(user).get(f"/answers/{sent}/").content.decode())
        assert QUESTION in shown and "olivia replied on" in shown
        assert "The EU value is right." in shown


def test_a_reply_from_the_item_page_returns_there(sent: str, login: Any, owner: Any) -> None:
    client = login(owner)
    page = client.get(f"/answers/{sent}/").content.decode()
    assert "data-owner-reply-form" in page and 'name="from"' not in page
    # The owner reads who asks her, not that she is being waited for.
    assert questions_shown(page)[0].startswith("alice asks you, since ")
    response = client.post(f"/answers/{sent}/owner-reply", {"reply": "The EU value is right."})
    assert response["Location"] == f"/answers/{sent}/"
    assert "The EU value is right." in client.get(response["Location"]).content.decode()


def test_the_queue_api_says_the_owner_replied(
    sent: str, login: Any, owner: Any, reviewer: Any, token_client: Any
) -> None:
    api = token_client(reviewer)

    def row() -> dict[str, Any]:
        [found] = [r for r in api.get("/api/v1/queue").json()["results"]
                   if r["trace_id"] == sent]
        return found

    assert (row()["waiting_for_owner"], row()["owner_replied"]) == (True, False)
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Right as it is."})
    assert (row()["waiting_for_owner"], row()["owner_replied"]) == (False, True)


def test_next_hands_out_the_answer_again_once_the_owner_replied(
    sent: str, login: Any, owner: Any, bob: Any
) -> None:
    assert login(bob).post("/next")["Location"] == "/"  # nothing unclaimed to hand out
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Right as it is."})
    assert login(bob).post("/next")["Location"] == f"/answers/{sent}/"


def queue_traces(html: str) -> list[str]:
    return re.findall(r'data-read>([^<]+)</a>', html)


def test_the_queue_filters_answers_waiting_for_the_owners_or_replied_to(
    sent: str, hold: Callable[..., str], login: Any, owner: Any, reviewer: Any, bob: Any,
    token_client: Any,
) -> None:
    hold("t-other")  # never sent to anyone
    hold("t-asked")
    client = login(reviewer)
    client.post("/answers/t-asked/send-to-owner", {"note": "Is this still right?"})
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Right as it is."})

    page = client.get("/").content.decode()
    assert sorted(queue_traces(page)) == ["t-1", "t-asked", "t-other"]
    # Each badge links to its filter, keeping the others.
    assert 'href="?handoff=replied" class="badge tone-replied" data-owner-replied>' in page
    assert 'href="?handoff=waiting" class="badge subtle" data-owner-waiting>' in page
    assert ('href="?reason=conflicting_sources&amp;handoff=waiting"'
            in client.get("/?reason=conflicting_sources").content.decode())

    replied = client.get("/?handoff=replied").content.decode()
    assert queue_traces(replied) == ["t-1"]
    assert '<option value="replied" selected>The owner replied</option>' in replied
    assert queue_traces(client.get("/?handoff=waiting").content.decode()) == ["t-asked"]
    unknown = client.get("/?handoff=soon", follow=True).content.decode()
    assert "Not a value this filter knows, so it was left out: handoff=soon." in unknown
    assert sorted(queue_traces(unknown)) == ["t-1", "t-asked", "t-other"]

    # "Next" within a filter: the replied answer first; the waiting ones are never handed out.
    assert login(bob).post("/next", {"handoff": "replied"})["Location"] == f"/answers/{sent}/"
    refused = login(bob).post("/next", {"handoff": "waiting"}, follow=True).content.decode()
    assert ("Answers waiting for their owners are not handed out: open one from the list."
            in refused)

    api = token_client(reviewer)
    assert [r["trace_id"] for r in api.get("/api/v1/queue?handoff=waiting").json()["results"]
            ] == ["t-asked"]
    rows = api.get("/api/v1/queue?handoff=replied").json()["results"]
    assert [(r["trace_id"], r["owner_replied"]) for r in rows] == [(sent, True)]
    bad = api.get("/api/v1/queue?handoff=soon")
    assert bad.status_code == 400
    assert bad.json()["errors"] == [{"field": "handoff",
                                     "message": '"soon" is not a valid choice.'}]


@pytest.mark.parametrize(("reply", "says"), [
    ("   ", "Say what the reviewer should know."),
    ("y" * 5001, "Nothing was sent: the reply is 5,001 characters long, over the limit of 5,000."),
])
@pytest.mark.parametrize(("sent_from", "reply_id"), [("inbox", f"reply-{TRACE}"),
                                                   ("page", "owner-reply")])
def test_an_empty_or_long_reply_is_refused_beside_the_form_and_kept(
    sent: str, login: Any, owner: Any, reply: str, says: str, sent_from: str, reply_id: str
) -> None:
    """From the inbox the refusal comes back in the inbox, in the answer's card; from the
    answer's page, on that page."""
    response = login(owner).post(f"/answers/{sent}/owner-reply",
                                 {"reply": reply, "from": sent_from})
    assert response.status_code == 400
    page = response.content.decode()
    assert ('<h1>Owner inbox</h1>' in page) is (sent_from == "inbox")
    form = page.split("data-owner-reply-form>", 1)[1].split("</form>")[0]
    assert f'<p class="error" id="{reply_id}-error" role="alert">{says}' in form
    # What the owner wrote is still in the form, which takes the cursor; no maxlength cuts it.
    assert f' aria-invalid="true" autofocus>{reply}</textarea>' in form
    assert "maxlength" not in form
    assert ReviewItem.objects.get(answer__trace_id=sent).waiting_for_owner
    assert not AuditEvent.objects.filter(action="review_item.owner_replied").exists()


def test_only_an_owner_the_answer_was_sent_to_may_reply(
    sent: str, login: Any, make_user: Callable[..., Any], reviewer: Any
) -> None:
    # An owner of no cited document; the reviewer who asked is no owner at all.
    other = make_user("oscar", "owner")
    assert login(other).post(f"/answers/{sent}/owner-reply",
                             {"reply": "Me too"}).status_code == 403
    assert login(reviewer).post(f"/answers/{sent}/owner-reply",
                                {"reply": "Me"}).status_code == 403
    assert ReviewItem.objects.get(answer__trace_id=sent).waiting_for_owner
    assert "data-owner-reply-form" not in login(other).get(f"/answers/{sent}/").content.decode()


def refused(response: Any) -> tuple[int, str, str]:
    """(status, the reason said, the text kept to copy) of a reply that was not sent."""
    page = response.content.decode()
    said = page.split('<p class="error" id="unsent-reply-error" role="alert">', 1)[1]
    kept = page.split('id="unsent-reply"', 1)[1].split(">", 1)[1].split("</textarea>")[0]
    return response.status_code, said.split("</p>", 1)[0].replace("&#x27;", "'"), kept


def test_a_second_reply_from_the_same_owner_says_they_had_replied_already(
    sent: str, login: Any, owner: Any
) -> None:
    client = login(owner)
    assert client.post(f"/answers/{sent}/owner-reply", {"reply": "First"}).status_code == 302
    response = client.post(f"/answers/{sent}/owner-reply", {"reply": "Second thoughts"})
    said = ("Not sent: you had replied already, from another window or tab, and the answer is "
            "back with the reviewers. What you wrote is kept here to copy.")
    assert refused(response) == (409, said, "Second thoughts")
    # Also at the top of the page, where it lands: the kept text is far below.
    assert f'<p class="message warning">{said}</p>' in response.content.decode()
    assert OwnerQuestion.objects.get(answer__trace_id=sent).reply == "First"


def test_a_reply_after_a_decision_says_who_decided(
    sent: str, login: Any, owner: Any, reviewer: Any
) -> None:
    client = login(reviewer)
    client.post(f"/answers/{sent}/claim")
    client.post(f"/answers/{sent}/decide", {
        "action": "approve", "approve-verdict": current_verdict_id(sent), "approve-held": "True",
        "approve-despite": "on"})
    assert refused(login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Too late?"})) == (
        409, "Not sent: alice has decided this answer meanwhile. What you wrote is kept here "
        "to copy.", "Too late?")


def test_a_reply_after_a_new_verdict_says_the_wait_ended(
    sent: str, login: Any, owner: Any, publish: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # still in conflict: still held
        publish("pricing", revision="r2", facts=[fact("trial_days", 15)],
                passages=[{"span": "p1", "text": "The free trial lasts 15 days."}])
    assert ReviewItem.objects.get(answer__trace_id=sent).waiting_for_owner is False
    assert refused(login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Hm"})) == (
        409, "Not sent: a new revision gave this answer a new verdict, which ended the wait for "
        "the owners. What you wrote is kept here to copy.", "Hm")


def test_a_reply_after_the_reviewer_edited_the_answer_says_so_not_a_new_revision(
    sent: str, login: Any, owner: Any, reviewer: Any, token_client: Any
) -> None:
    from reviewqueue.reviews.models import Answer
    from tests.reviews.test_decisions import decide

    answer = Answer.objects.get(trace_id=sent)
    edited = decide(token_client(reviewer), sent, action="edit",
                    answer="The free trial lasts 14 days in the US [d1].",
                    claims=answer.current_version.claims, claims_checked=True)
    assert edited.status_code == 201, edited.content
    assert Answer.objects.get(trace_id=sent).status == "held"  # the sources still disagree
    assert refused(login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Hm"})) == (
        409, "Not sent: alice edited this answer meanwhile, which ended the wait for the owners; "
        "it is still held, with the edited text below. What you wrote is kept here to copy.",
        "Hm")


def test_a_reply_to_a_question_asked_again_meanwhile_is_not_sent_to_the_new_one(
    sent: str, login: Any, owner: Any, reviewer: Any
) -> None:
    first = OwnerQuestion.objects.get(answer__trace_id=sent)
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Right as it is."})
    login(reviewer).post(f"/answers/{sent}/send-to-owner", {"note": "And the support hours?"})
    # The owner replies from a page that still showed the first question.
    response = login(owner).post(f"/answers/{sent}/owner-reply",
                                 {"reply": "Also right.", "question": first.pk})
    assert response.status_code == 409
    form = response.content.decode().split("data-owner-reply-form>", 1)[1].split("</form>")[0]
    assert ("Not sent: alice has asked a new question since this page was shown. Read it below "
            "and reply to it.") in form.replace("&#x27;", "'")
    assert ">Also right.</textarea>" in form
    assert OwnerQuestion.objects.filter(answer__trace_id=sent, replied_at__isnull=True).count() == 1


def test_a_new_hand_off_keeps_the_old_question_and_its_reply(
    sent: str, login: Any, owner: Any, reviewer: Any
) -> None:
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": "Right as it is."})
    login(reviewer).post(f"/answers/{sent}/send-to-owner", {"note": "And the support hours?"})
    item = ReviewItem.objects.get(answer__trace_id=sent)
    assert item.waiting_for_owner and item.owner_question.note == "And the support hours?"
    page = login(reviewer).get(f"/answers/{sent}/").content.decode()
    old, new = questions_shown(page)
    assert QUESTION in old and "Right as it is." in old
    assert new.startswith("Waiting for the owner since ") and "And the support hours?" in new
    assert "data-owner-replied-link" not in page  # the latest question has no reply yet


def test_the_decide_box_says_the_owners_were_asked_until_one_replies(
    sent: str, login: Any, reviewer: Any, owner: Any,
) -> None:
    client = login(reviewer)
    page = client.get(f"/answers/{sent}/").content.decode()
    box = page.split('id="decide-h"', 1)[1].split('data-action="approve"', 1)[0]
    note = re.search(r"<p class=\"warn-text\" data-decide-waiting>(.*?)</p>", box, re.S)
    assert note is not None
    assert re.fullmatch(r"alice asked the owners on [-0-9: ]+UTC and no one has replied yet\. "
                        r"Deciding now ends the wait: a reply sent after it is refused\. "
                        r'<a href="#owners-h">The question</a>', note.group(1))
    login(owner).post(f"/answers/{sent}/owner-reply", {"reply": REPLY})
    assert "data-decide-waiting" not in client.get(f"/answers/{sent}/").content.decode()


def test_a_question_number_that_is_no_number_is_left_out_and_the_reply_is_sent(
    sent: str, login: Any, owner: Any
) -> None:
    # "²" is a digit to str.isdigit, but no number to int(): read as a form that names no
    # question, as "abc" is, not as a server error that loses the reply.
    response = login(owner).post(f"/answers/{sent}/owner-reply",
                                 {"reply": "Both are right.", "question": "²"})
    assert response.status_code == 302
    assert OwnerQuestion.objects.get(answer__trace_id=sent).reply == "Both are right."
