"""Who a hand-off reaches, and when the wait for the owner ends.

Only owners who may read the answer in full are asked; a new verdict ends the wait.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.reviews.services.handoff import NoOwnerToAsk, review_item_send_to_owner
from reviewqueue.sources.selectors import answers_sent_to
from tests.reviews.conftest import HR_MARKER, current_verdict_id, fact

pytestmark = pytest.mark.django_db

ASKS = "[ReviewQueue] A reviewer asks you about"
HR_CITATIONS = [
    {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
    {"cite": "d2", "document_id": "hr-handbook", "revision": "r1", "span": "p1"},
]


def with_email(user: Any, address: str) -> Any:
    user.email = address
    user.save()
    return user


def mails_to(address: str) -> list[Any]:
    return [m for m in mail.outbox if address in m.to]


def publish_corrections(publish: Callable[..., Any], on_commit: Any) -> None:
    """The owner publishes r2 of both pricing documents, now agreeing: the conflict is gone,
    and the answer, citing r1 of both, is held again for superseded revisions."""
    with on_commit(execute=True):
        publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
                passages=[{"span": "p1", "text": "The free trial lasts 14 days."}])
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 14)],
                passages=[{"span": "p1", "text": "In the EU the free trial lasts 14 days."}])


@pytest.fixture
def paul(make_user: Callable[..., Any]) -> Any:
    """Owns the public pricing document; may not read the HR handbook."""
    return with_email(make_user("paul", "owner"), "paul@example.test")


@pytest.fixture
def hr_held(publish: Callable[..., Any], hr_sources: None, paul: Any, submit: Callable[..., Any]
            ) -> str:
    """An answer for HR citing paul's pricing and olivia's HR handbook, which disagree."""
    publish("pricing", owner="paul", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."}])
    response = submit("hr-1", as_of=None, asked_by=["group:hr"], retrieved=HR_CITATIONS)
    assert response.json()["status"] == "held", response.json()
    return "hr-1"


def test_an_owner_who_may_not_read_the_answer_is_neither_mailed_nor_listed(
    hr_held: str, paul: Any, make_user: Callable[..., Any], login: Any, hr_reviewer: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    olivia = with_email(make_user("olivia", "owner", groups=("hr",)), "olivia@example.test")
    with django_capture_on_commit_callbacks(execute=True):
        response = login(hr_reviewer).post(f"/answers/{hr_held}/send-to-owner",
                                           {"note": f"handbook says {HR_MARKER}"})
    assert response.status_code == 302

    for message in mails_to("paul@example.test"):
        assert HR_MARKER not in message.body
        assert "How long is the free trial?" not in message.body
        assert not message.subject.startswith(ASKS)
    [asked] = [m for m in mails_to("olivia@example.test") if m.subject.startswith(ASKS)]
    assert asked.to == ["olivia@example.test"]
    assert HR_MARKER in asked.body
    assert "/owner/" in asked.body
    assert "Answers reviewers sent to you" in asked.body

    paul_page = login(paul).get("/owner/").content.decode()
    assert HR_MARKER not in paul_page
    assert "No reviewer is waiting for you." in paul_page
    olivia_page = login(olivia).get("/owner/").content.decode()
    assert HR_MARKER in olivia_page
    assert f"/answers/{hr_held}/" in olivia_page

    event = AuditEvent.objects.get(action="review_item.sent_to_owner")
    assert event.after["owners"] == ["olivia"]
    assert HR_MARKER not in str(event.before) + str(event.after)


def test_when_no_owner_may_read_the_answer_nothing_is_sent(
    hr_held: str, hr_reviewer: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    # olivia owns the HR handbook but is not in group:hr; paul may not read it either.
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(NoOwnerToAsk):
        review_item_send_to_owner(trace_id=hr_held, user=hr_reviewer,
                                  note=f"handbook says {HR_MARKER}",
                                  actor=Actor.of_user(hr_reviewer))
    assert not any(HR_MARKER in m.body for m in mail.outbox)
    assert not any(m.subject.startswith(ASKS) for m in mail.outbox)
    assert not ReviewItem.objects.get(answer__trace_id=hr_held).waiting_for_owner
    assert not AuditEvent.objects.filter(action="review_item.sent_to_owner").exists()


def test_the_reviewer_is_told_when_no_owner_may_read_the_answer(
    hr_held: str, login: Any, hr_reviewer: Any,
) -> None:
    response = login(hr_reviewer).post(f"/answers/{hr_held}/send-to-owner",
                                       {"note": "which trial length?"})
    assert response.status_code == 409
    assert "None of the owners of these sources may read this answer" in (
        response.content.decode())
    assert not ReviewItem.objects.get(answer__trace_id=hr_held).waiting_for_owner


def owners_line(page: str) -> str:
    [line] = re.findall(r"<p class=\"muted small\" data-owners>(.*?)</p>", page, re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", line)).strip()


def test_the_item_page_says_which_owners_would_not_be_asked(
    hr_held: str, paul: Any, make_user: Callable[..., Any], login: Any, hr_reviewer: Any,
) -> None:
    make_user("olivia", "owner", groups=("hr",))
    page = login(hr_reviewer).get(f"/answers/{hr_held}/").content.decode()
    assert owners_line(page) == (
        "Owners: olivia, paul (may not read this answer, so would not be asked)")
    assert 'data-action="send-to-owner"' in page
    assert "data-no-owner-to-ask" not in page


def test_the_item_page_offers_no_hand_off_when_no_owner_may_read_the_answer(
    hr_held: str, paul: Any, login: Any, hr_reviewer: Any,
) -> None:
    page = login(hr_reviewer).get(f"/answers/{hr_held}/").content.decode()
    assert owners_line(page) == (
        "Owners: olivia (may not read this answer, so would not be asked), "
        "paul (may not read this answer, so would not be asked)")
    assert 'data-action="send-to-owner"' not in page
    assert "None of the owners of these sources may read this answer in full" in page


def test_a_new_verdict_ends_the_wait_for_the_owner(
    hold: Any, publish: Callable[..., Any], login: Any, reviewer: Any, owner: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/send-to-owner", {"note": "Which trial length is right?"})
    assert "Which trial length is right?" in login(owner).get("/owner/").content.decode()

    publish_corrections(publish, django_capture_on_commit_callbacks)

    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.reasons == ["superseded_revision"]
    page = client.get(f"/answers/{trace}/").content.decode()
    assert "Waiting for the owner" not in page
    # The question stays on the page, answered by the new revision rather than by a reply.
    assert "Which trial length is right?</blockquote>" in page
    # What ended it is named: the verdict, and what caused it.
    ending = item.answer.current_verdict_id
    assert re.search(rf"No owner replied before verdict #{ending} \(Revision published, "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\) held the answer for something else, "
                     r"which ended the wait\.", page), page
    assert "Send to the owner instead of deciding" in page
    assert "data-owner-waiting" not in client.get("/").content.decode()
    inbox = login(owner).get("/owner/").content.decode()
    assert "Which trial length is right?" not in inbox
    assert "No reviewer is waiting for you." in inbox

    ended = AuditEvent.objects.filter(action="verdict.created",
                                      trace_id=trace).order_by("seq").last()
    assert ended.before["waiting_for_owner"] is True
    assert ended.after["waiting_for_owner"] is False
    assert not any("Which trial length" in str(e.before) + str(e.after)
                   for e in AuditEvent.objects.filter(trace_id=trace))


def test_a_hand_off_after_the_wait_ended_reaches_the_owner_again(
    hold: Any, publish: Callable[..., Any], login: Any, reviewer: Any, owner: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_email(owner, "olivia@example.test")
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/send-to-owner", {"note": "first question"})
    publish_corrections(publish, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/answers/{trace}/send-to-owner", {"note": "second question"})
    assert "second question" in mail.outbox[-1].body
    inbox = login(owner).get("/owner/").content.decode()
    assert "second question" in inbox
    assert "first question" not in inbox


def test_an_edit_the_gate_still_holds_ends_the_wait_for_the_owner(
    hold: Any, login: Any, reviewer: Any, owner: Any, token_client: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/send-to-owner", {"note": "Which trial length is right?"})
    assert "Waiting for the owner" in client.get(f"/answers/{trace}/").content.decode()

    edited = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions", {
        "verdict": current_verdict_id(trace), "action": "edit",
        "answer": "The free trial lasts 14 days in most countries [d1].",
        "claims": [{"key": "trial_days", "value": 14, "cite": "d1"}],
    }, format="json")
    assert edited.status_code == 201, edited.content
    assert edited.json()["status"] == "held"

    # The owner was asked about the version before the edit: the reviewer has it back.
    page = client.get(f"/answers/{trace}/").content.decode()
    assert "Waiting for the owner" not in page
    # The question stays on the page, answered by the new revision rather than by a reply.
    assert "Which trial length is right?</blockquote>" in page
    assert re.search(r"No owner replied before alice edited the answer on "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\.", page), page
    assert "Send to the owner instead of deciding" in page
    inbox = login(owner).get("/owner/").content.decode()
    assert "Which trial length is right?" not in inbox
    assert "No reviewer is waiting for you." in inbox
    event = AuditEvent.objects.get(action="decision.edit", trace_id=trace)
    assert event.before["waiting_for_owner"] is True
    assert event.after["waiting_for_owner"] is False


def test_the_page_names_the_newer_question_or_the_decision_that_ended_a_wait(
    hold: Any, login: Any, reviewer: Any, token_client: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/send-to-owner", {"note": "first question"})
    client.post(f"/answers/{trace}/send-to-owner", {"note": "second question"})
    rejected = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions", {
        "verdict": current_verdict_id(trace), "action": "reject", "reason": "incorrect"},
        format="json")
    assert rejected.status_code == 201, rejected.content
    page = client.get(f"/answers/{trace}/").content.decode()
    ends = [" ".join(p.split()) for p in re.findall(r"<p class=\"muted\" data-wait-ended>(.*?)</p>",
                                                   page, re.S)]
    moment = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"
    assert len(ends) == 2, ends
    assert re.fullmatch(rf"No owner replied before alice asked a newer question on {moment}\.",
                        ends[0]), ends
    assert re.fullmatch(rf"No owner replied before alice rejected the answer on {moment}\.",
                        ends[1]), ends


def test_a_wait_a_release_ended_is_said_to_have_ended_so_once_the_answer_is_back(
    hold: Any, login: Any, reviewer: Any, owner: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/send-to-owner", {"note": "Which trial length is right?"})
    owner_client = login(owner)
    with django_capture_on_commit_callbacks(execute=True):  # retrieved, not cited: released
        owner_client.post("/owner/documents/pricing-eu/withdraw", {"confirm": "pricing-eu"})
    answer = Answer.objects.get(trace_id=trace)
    assert answer.status == "candidate"
    released = answer.current_verdict_id
    event = AuditEvent.objects.filter(trace_id=trace, action="verdict.created").latest("seq")
    assert (event.before["waiting_for_owner"], event.after["waiting_for_owner"]) == (True, False)
    with django_capture_on_commit_callbacks(execute=True):  # the conflict is back
        owner_client.post("/owner/documents/pricing-eu/restore")
    assert Answer.objects.get(trace_id=trace).status == "held"
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    [said] = re.findall(r"<p class=\"muted\" data-wait-ended>(.*?)</p>", page, re.S)
    assert re.fullmatch(rf"No owner replied before verdict #{released} \(Document withdrawn, "
                        r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\) took the answer out of the queue, "
                        r"which ended the wait\.", " ".join(said.split())), said


def test_the_owner_of_a_revised_source_is_asked_beside_those_of_the_conflict(
    hold: Callable[..., str], publish: Callable[..., Any], make_user: Callable[..., Any],
    login: Any, reviewer: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    """The answer cites olivia's two pricing documents, which disagree, and oscar's status
    page, which has since been revised: he is behind the hold too."""
    oscar = with_email(make_user("oscar", "owner"), "oscar@example.test")
    publish("status-page", owner="oscar", title="Status", facts=[fact("response_minutes", 30)])
    trace = hold(
        retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                   {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
                   {"cite": "s1", "document_id": "status-page", "revision": "r1", "span": "p1"}],
        claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                {"key": "response_minutes", "value": 30, "cite": "s1"}],
        answer="The trial lasts 14 days [d1]. We respond in 30 minutes [s1].")
    with django_capture_on_commit_callbacks(execute=True):
        publish("status-page", revision="r2", owner="oscar", title="Status",
                facts=[fact("response_minutes", 15)])
    client = login(reviewer)
    assert owners_line(client.get(f"/answers/{trace}/").content.decode()) == (
        "Owners: olivia, oscar")
    client.post(f"/answers/{trace}/claim")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/answers/{trace}/send-to-owner", {"note": "Which response time holds?"})
    assert len(mails_to(oscar.email)) == 1
    # The mail sends him to his inbox, which lists it.
    assert [i.answer.trace_id for i in answers_sent_to(oscar).cards] == [trace]


def test_an_owner_not_asked_does_not_find_the_answer_in_her_inbox(
    sources: None, submit: Callable[..., Any], publish: Callable[..., Any], owner: Any,
    make_user: Callable[..., Any], login: Any, reviewer: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """No conflict: the answer is held because oscar's status page was revised. He is asked;
    olivia, whose pricing it also cites, is not, and her inbox does not offer her a reply."""
    oscar = with_email(make_user("oscar", "owner"), "oscar@example.test")
    publish("status-page", owner="oscar", title="Status", facts=[fact("response_minutes", 30)])
    retrieved = [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                 {"cite": "s1", "document_id": "status-page", "revision": "r1", "span": "p1"}]
    submit("t-2", as_of=None, retrieved=retrieved,
           claims=[{"key": "response_minutes", "value": 30, "cite": "s1"}],
           answer="We respond in 30 minutes [s1]. Details [d1].")
    with django_capture_on_commit_callbacks(execute=True):
        publish("status-page", revision="r2", owner="oscar", title="Status",
                facts=[fact("response_minutes", 15)])
    assert Answer.objects.get(trace_id="t-2").status == "held"
    client = login(reviewer)
    client.post("/answers/t-2/claim")
    client.post("/answers/t-2/send-to-owner", {"note": "Which response time holds?"})
    assert [i.answer.trace_id for i in answers_sent_to(oscar).cards] == ["t-2"]
    assert answers_sent_to(owner).cards == []


def held_by_the_knowledge_base(publish: Callable[..., Any], submit: Callable[..., Any],
                               trace_id: str) -> None:
    """An answer that retrieved only olivia's pricing (14 days), held because oscar's EU
    pricing, elsewhere in the knowledge base, says 30."""
    publish("pricing", owner="olivia", facts=[fact("trial_days", 14)])
    publish("pricing-eu", owner="oscar", title="Pricing in the EU",
            facts=[fact("trial_days", 30)])
    response = submit(trace_id, as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}])
    assert response.json()["status"] == "held", response.json()


def test_the_owner_of_a_knowledge_base_document_the_answer_did_not_retrieve_is_asked(
    publish: Callable[..., Any], make_user: Callable[..., Any], submit: Callable[..., Any],
    login: Any, reviewer: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    """The answer retrieved only olivia's pricing; oscar's EU pricing, elsewhere in the knowledge
    base, disagrees on the claimed key and holds it. The reviewer can ask oscar, who finds the
    answer in his inbox beside the document to correct."""
    make_user("olivia", "owner")
    oscar = with_email(make_user("oscar", "owner"), "oscar@example.test")
    held_by_the_knowledge_base(publish, submit, "kb-1")

    page = login(reviewer).get("/answers/kb-1/").content.decode()
    assert owners_line(page) == "Owners: olivia, oscar"
    with django_capture_on_commit_callbacks(execute=True):
        response = login(reviewer).post("/answers/kb-1/send-to-owner",
                                        {"note": "The EU page says 30 days"})
    assert response.status_code == 302
    assert [m.subject for m in mails_to("oscar@example.test") if m.subject.startswith(ASKS)]
    assert AuditEvent.objects.get(action="review_item.sent_to_owner").after["owners"] == [
        "olivia", "oscar"]

    [item] = answers_sent_to(oscar).cards
    assert item.answer.trace_id == "kb-1"
    assert item.my_documents == ["pricing-eu"]
    inbox = login(oscar).get("/owner/").content.decode()
    assert "The EU page says 30 days" in inbox
    assert "/owner/documents/pricing-eu/" in inbox
    assert "The EU page says 30 days" in login(oscar).get("/answers/kb-1/").content.decode()


def test_the_owners_asked_stay_those_asked_while_the_sources_behind_the_hold_change(
    publish: Callable[..., Any], make_user: Callable[..., Any], submit: Callable[..., Any],
    login: Any, reviewer: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    """olivia and oscar were asked. pat's document then joins the conflict: the question
    stands, and pat is asked too (his inbox lists it, and the event says so). oscar's document
    then leaves it (he withdraws it): he was asked, so he still sees the question and may
    answer it."""
    from importlib import import_module

    from django.apps import apps

    from reviewqueue.reviews.models import OwnerQuestion

    make_user("olivia", "owner")
    oscar = make_user("oscar", "owner")
    pat = make_user("pat", "owner")
    held_by_the_knowledge_base(publish, submit, "kb-2")
    login(reviewer).post("/answers/kb-2/send-to-owner", {"note": "Which trial length?"})
    question = OwnerQuestion.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        publish("partner-terms", owner="pat", facts=[fact("trial_days", 21)])
    assert ReviewItem.objects.get(answer__trace_id="kb-2").waiting_for_owner
    assert "Which trial length?" in login(pat).get("/owner/").content.decode()
    question.refresh_from_db()
    assert question.owners == sorted(u.pk for u in get_user_model().objects.filter(
        username__in=["olivia", "oscar", "pat"]))
    assert AuditEvent.objects.get(action="review_item.owners_added").after == {
        "owners": ["olivia", "oscar", "pat"]}

    with django_capture_on_commit_callbacks(execute=True):
        login(oscar).post("/owner/documents/pricing-eu/withdraw", {"confirm": "pricing-eu"})
    assert ReviewItem.objects.get(answer__trace_id="kb-2").waiting_for_owner
    inbox = login(oscar).get("/owner/").content.decode()
    assert "Which trial length?" in inbox
    assert "None of your documents is behind the hold any more" in inbox
    replied = login(oscar).post("/answers/kb-2/owner-reply", {"reply": "Withdrawn: 14 applies"})
    assert replied.status_code == 302
    assert not ReviewItem.objects.get(answer__trace_id="kb-2").waiting_for_owner

    # Asked again: pat's document is behind the hold now, oscar's no longer.
    login(reviewer).post("/answers/kb-2/send-to-owner", {"note": "And now?"})
    again = OwnerQuestion.objects.latest("id")
    assert again.owners == sorted([pat.pk, get_user_model().objects.get(username="olivia").pk])

    # Questions asked before the owners were kept get them from their first audit event, even
    # where an earlier question of the answer is gone (reviews 0014 kept only the latest).
    OwnerQuestion.objects.update(owners=[])
    migration = import_module("reviewqueue.reviews.migrations.0016_owner_question_owners")
    migration.owners_from_the_log(apps, None)
    question.refresh_from_db()
    assert question.owners == sorted(
        u.pk for u in get_user_model().objects.filter(username__in=["olivia", "oscar"]))
    expected = sorted(again.owners)
    question.delete()
    OwnerQuestion.objects.update(owners=[])
    migration.owners_from_the_log(apps, None)
    again.refresh_from_db()
    assert again.owners == expected


def test_the_owner_of_a_knowledge_base_document_a_reviewer_may_not_read_is_not_named_to_them(
    publish: Callable[..., Any], hr_sources: None, paul: Any, submit: Callable[..., Any],
    login: Any, reviewer: Any, hr_reviewer: Any, make_user: Callable[..., Any],
) -> None:
    """The answer, for HR, retrieved only paul's public pricing; olivia's HR-only handbook
    disagrees. alice may not read the handbook: its card says another source disagrees, never
    which, and neither does the owners line. hana, in HR, sees olivia there."""
    make_user("olivia", "owner", groups=("hr",))
    publish("pricing", owner="paul", facts=[fact("trial_days", 14)])
    publish("pricing-eu", owner="paul", facts=[fact("trial_days", 21, subject="EU")])
    assert submit("hr-kb", as_of=None, asked_by=["group:hr"], retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
    ]).json()["status"] == "held"
    alice_page = login(reviewer).get("/answers/hr-kb/").content.decode()
    assert owners_line(alice_page) == "Owners: paul"
    # Nor whether it is a matter of subjects: a source she may not read disagrees.
    assert "because they speak of different subjects" not in alice_page
    assert owners_line(login(hr_reviewer).get("/answers/hr-kb/").content.decode()) == (
        "Owners: olivia, paul")


def test_an_owner_asked_before_the_answer_came_back_to_the_queue_is_told_the_wait_ended(
    publish: Callable[..., Any], make_user: Callable[..., Any], submit: Callable[..., Any],
    login: Any, reviewer: Any,
) -> None:
    """The answer left the queue and came back: its new queue entry has no question. oscar,
    who was asked, replies to the old question: he is told the wait is over, and keeps his
    text, as when the answer is not in the queue at all."""
    from reviewqueue.reviews.models import OwnerQuestion

    make_user("olivia", "owner")
    oscar = make_user("oscar", "owner")
    held_by_the_knowledge_base(publish, submit, "kb-3")
    login(reviewer).post("/answers/kb-3/send-to-owner", {"note": "Which one?"})
    question = OwnerQuestion.objects.get()
    ReviewItem.objects.filter(answer__trace_id="kb-3").update(owner_question=None,
                                                               waiting_for_owner=False)
    response = login(oscar).post("/answers/kb-3/owner-reply",
                                 {"reply": "30 in the EU only", "question": question.pk})
    assert response.status_code == 409
    assert "30 in the EU only" in response.content.decode()


def test_answers_an_owner_may_not_read_do_not_crowd_her_inbox_list(
    sources: None, hr_sources: None, owner: Any, reviewer: Any, login: Any, monkeypatch: Any,
) -> None:
    """Three questions about HR answers reached olivia before she lost (or never had) the
    right to read them; two public ones came after. Listing two at most, the inbox still shows
    the two she may read, and says when more are waiting than it lists."""
    import datetime as dt

    from django.utils import timezone

    from reviewqueue.reviews.models import OwnerQuestion
    from reviewqueue.sources.views import INBOX_SENT
    from tests.reviews.conftest import bulk_held

    start = timezone.now() - dt.timedelta(hours=1)
    items = (bulk_held(3, documents=("hr-handbook",), prefix="hr", start=start)
             + bulk_held(2, documents=("pricing",), prefix="pub", start=start))
    for minutes, item in enumerate(items):
        item.owner_question = OwnerQuestion.objects.create(
            answer_id=item.answer_id, asked_by=reviewer, note="Which is right?",
            asked_at=start + dt.timedelta(minutes=minutes), owners=[owner.pk])
        item.waiting_for_owner = True
        item.save(update_fields=["owner_question", "waiting_for_owner"])

    two = answers_sent_to(owner, limit=2)
    assert ([i.answer.trace_id for i in two.cards], two.more) == (["pub-0", "pub-1"], False)
    one = answers_sent_to(owner, limit=1)
    assert ([i.answer.trace_id for i in one.cards], one.more) == (["pub-0"], True)
    # However many she may not read, the reads stop: the list says more are waiting.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reviewqueue.sources import selectors

    monkeypatch.setattr(selectors, "SENT_READS", 2)
    with CaptureQueriesContext(connection) as captured:
        capped = answers_sent_to(owner, limit=1)
    assert (capped.cards, capped.more) == ([], True)  # 3 HR answers first, 1 a read, 2 reads
    assert len(captured) <= 1 + 2 * 5
    # The inbox then lists none, but does not say that nobody waits.
    monkeypatch.setattr("reviewqueue.sources.views.INBOX_SENT", 1)
    page = login(owner).get("/owner/").content.decode()
    assert "No reviewer is waiting for you." not in page
    assert "More answers wait for you than are listed here" in page
    monkeypatch.undo()

    page = login(owner).get("/owner/").content.decode()
    assert "pub-0" in page and "pub-1" in page and "hr-0" not in page
    assert "data-more-sent" not in page
    bulk = bulk_held(INBOX_SENT, documents=("pricing",), prefix="more", start=start)
    for item in bulk:
        item.owner_question = OwnerQuestion.objects.create(
            answer_id=item.answer_id, asked_by=reviewer, note="And this?",
            asked_at=start + dt.timedelta(minutes=10), owners=[owner.pk])
        item.waiting_for_owner = True
        item.save(update_fields=["owner_question", "waiting_for_owner"])
    page = login(owner).get("/owner/").content.decode()
    assert "More answers wait for you than are listed here" in page
    assert page.count('class="card sent-to-owner"') == INBOX_SENT


def test_a_document_handed_to_another_owner_while_the_owners_are_asked_brings_them_in(
    sources: None, hold: Callable[..., str], publish: Callable[..., Any], login: Any,
    reviewer: Any, owner: Any, make_user: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The answer cites pricing alone; pricing-eu, in the knowledge base, disagrees with it.
    A revision of pricing-eu that only names a new owner keeps the answer held for the same
    conflict (the wait goes on), and the new owner is asked too: mailed, with the answer in
    their inbox, free to reply. The owners asked first stay asked."""
    olivia = with_email(owner, "olivia@example.test")
    quinn = with_email(make_user("quinn", "owner"), "quinn@example.test")
    trace = hold(retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                             "span": "p1"}])
    with django_capture_on_commit_callbacks(execute=True):
        login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which is right?"})
    assert len(mails_to("olivia@example.test")) == 1
    assert "No reviewer is waiting for you." in login(quinn).get("/owner/").content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU", owner="quinn",
                facts=[fact("trial_days", 30)],
                passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 days."}])

    item = ReviewItem.objects.select_related("owner_question").get(answer__trace_id=trace)
    assert item.waiting_for_owner
    assert item.owner_question.owners == sorted([olivia.pk, quinn.pk])
    [asked] = [m for m in mails_to("quinn@example.test") if m.subject.startswith(ASKS)]
    assert "Which is right?" in asked.body and "alice sent you a held answer" in asked.body
    assert len(mails_to("olivia@example.test")) == 1  # asked once, not again
    inbox = login(quinn).get("/owner/").content.decode()
    assert f"/answers/{trace}/" in inbox and "Which is right?" in inbox
    assert '<a href="/owner/documents/pricing-eu/">pricing-eu</a>' in inbox
    event = AuditEvent.objects.get(action="review_item.owners_added")
    assert (event.before, event.after) == ({"owners": ["olivia"]},
                                           {"owners": ["olivia", "quinn"]})
    assert event.actor.startswith("worker")

    reply = login(quinn).post(f"/answers/{trace}/owner-reply",
                              {"reply": "The EU page is right.",
                               "question": item.owner_question_id})
    assert reply.status_code == 302, reply.content
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner
