"""A reviewer sends a held answer to the owners of its sources instead of deciding it."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import ReviewItem, Verdict

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_with_mail(owner: Any) -> Any:
    owner.email = "olivia@example.test"
    owner.save()
    return owner


def test_the_item_page_shows_the_open_conflict_and_its_owner(
    hold: Any, login: Any, reviewer: Any
) -> None:
    trace = hold()
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert "Open conflict" in page
    assert "trial_days" in page
    assert "olivia" in page


def test_sending_to_the_owner_keeps_the_item_held_and_marks_it_waiting(
    hold: Any, login: Any, reviewer: Any, owner_with_mail: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    trace = hold()
    client = login(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/answers/{trace}/send-to-owner",
                               {"note": "Which trial length is right for the EU?"})
    assert response.status_code == 302
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.waiting_for_owner
    assert item.owner_question.note == "Which trial length is right for the EU?"
    assert item.owner_question.asked_by == reviewer
    assert mail.outbox[-1].to == ["olivia@example.test"]
    event = AuditEvent.objects.get(action="review_item.sent_to_owner")
    assert "trial length" not in str(event.after)
    assert "Waiting for the owner" in client.get(f"/answers/{trace}/").content.decode()
    assert "data-owner-waiting>Waiting for the owner</a>" in client.get("/").content.decode()


def test_the_owner_sees_the_answer_and_the_note_in_the_inbox(
    hold: Any, login: Any, reviewer: Any, owner: Any
) -> None:
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Please check the EU"})
    page = login(owner).get("/owner/").content.decode()
    assert "Please check the EU" in page
    assert f"/answers/{trace}/" in page
    # And where to correct it: the owner's documents in the conflict, linked.
    card = page.split("data-sent-documents", 1)[1].split("</p>", 1)[0]
    assert ('<a href="/owner/documents/pricing/">pricing</a>, '
            '<a href="/owner/documents/pricing-eu/">pricing-eu</a>') in card


def test_a_publish_tells_the_owner_the_answers_sent_to_them_go_back_to_the_reviewers(
    hold: Any, login: Any, reviewer: Any, owner: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    from tests.sources.test_owner_fixes import PASSAGES_CHECKED, posted_back

    trace = hold()
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Please check the EU"})
    client = login(owner)
    action = "/owner/documents/pricing/publish"
    page = client.get("/owner/documents/pricing/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(action, posted_back(page, action, **{"facts-0-value": "30"},
                                                    **PASSAGES_CHECKED), follow=True)
    assert ("1 held answer citing this document waits for an owner&#x27;s reply: with its "
            "new verdict it goes back to the reviewers, and the hand-off ends.") in (
        response.content.decode())
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner


@pytest.mark.parametrize(("language", "says"), [
    ("en", "Say what the owner should look at."),
    ("ja", "所有者に確認してほしい点を書いてください。"),
])
def test_a_hand_off_without_a_note_is_refused_in_the_reviewers_language(
    hold: Any, login: Any, reviewer: Any, language: str, says: str
) -> None:
    trace = hold()
    client = login(reviewer, HTTP_ACCEPT_LANGUAGE=language)
    response = client.post(f"/answers/{trace}/send-to-owner", {"note": "  "})
    assert response.status_code == 400
    assert says in response.content.decode()
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner


@pytest.mark.parametrize(("language", "says"), [
    ("en", "Not recorded: another reviewer is working on this answer."),
    ("ja", "記録されていません"),
])
def test_a_reviewer_cannot_hand_off_an_item_another_reviewer_holds(
    hold: Any, login: Any, reviewer: Any, bob: Any, language: str, says: str
) -> None:
    trace = hold()
    login(bob).post(f"/answers/{trace}/claim")
    response = login(reviewer, HTTP_ACCEPT_LANGUAGE=language).post(
        f"/answers/{trace}/send-to-owner", {"note": "mine now?"})
    assert response.status_code == 409
    assert says in response.content.decode()
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner


def test_a_hand_off_of_an_answer_no_longer_held_says_so(
    hold: Any, login: Any, reviewer: Any
) -> None:
    trace = hold()
    ReviewItem.objects.filter(answer__trace_id=trace).delete()
    response = login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "still?"})
    assert response.status_code == 409
    assert "This answer is no longer waiting for review." in response.content.decode()


def test_re_evaluate_now_starts_a_job_and_shows_its_progress(
    hold: Any, login: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from reviewqueue.jobs.models import Job

    trace = hold()
    client = login(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/answers/{trace}/reevaluate")
    job = Job.objects.get(requested_by=reviewer)
    assert response["Location"] == f"{job.get_absolute_url()}?answer={trace}"
    assert job.trigger == Verdict.Trigger.MANUAL
    assert job.total == 1
    page = client.get(response["Location"]).content.decode()
    # Finished (no broker here): said without "so far", with the way back to the answer.
    changed = Job.objects.get(pk=job.pk).changed
    said = ("1 answer got a new verdict." if changed == 1
            else f"{changed} answers got a new verdict.")
    assert said in page and "so far" not in page
    assert f'href="/answers/{trace}/" data-back-to-answer>' in page
    # What the answer rests on now, said where the job's figures leave it unsaid.
    assert (f"<p data-answer-now>{trace} now: Held for review. The gate's verdict: "
            f'Needs review (Conflicting sources). <a href="/answers/{trace}/">Back to the '
            "answer</a></p>") in page
    # An answer the reader may not read gets no link.
    other = client.get(f"{job.get_absolute_url()}?answer=no-such").content.decode()
    assert "data-back-to-answer" not in other and "data-answer-now" not in other


def test_the_job_page_names_a_candidates_verdict_as_supported_not_as_an_audit_sample(
    publish: Any, service_api: Any, login: Any, reviewer: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """An answer the gate let through (no audit sample: none is drawn here) re-evaluated from
    its page: the job's page says what its verdict is, not the queue's word for a sample."""
    from tests.conftest import answer_body
    from tests.reviews.conftest import fact

    publish("pricing", facts=[fact("trial_days", 14)])
    body = answer_body("t-free", as_of=None)
    assert service_api.post("/api/v1/answers", body, format="json").json()["status"] == (
        "candidate")
    client = login(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/answers/t-free/reevaluate")
    page = client.get(response["Location"]).content.decode()
    assert ("<p data-answer-now>t-free now: Candidate. The gate's verdict: Candidate "
            "(Supported).") in page
    assert "Audit sample" not in page


def test_a_note_the_browser_let_through_reaches_the_owner_whole(
    hold: Any, login: Any, reviewer: Any, owner: Any
) -> None:
    """The page's counter counts a line break as one character, as the server does; the
    browser sends two."""
    trace = hold()
    typed = "Check line.\n" * 400 + "The question at the end?"
    sent = typed.replace("\n", "\r\n")
    assert len(typed) <= 5000 < len(sent)
    response = login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": sent})
    assert response.status_code == 302
    assert ReviewItem.objects.get(answer__trace_id=trace).owner_question.note == typed


def test_a_note_over_the_limit_is_refused_whole_and_kept_on_the_page(
    hold: Any, login: Any, reviewer: Any
) -> None:
    trace = hold()
    note = "x" * 5001 + " the end"
    response = login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": note})
    assert response.status_code == 400
    page = response.content.decode()
    assert ("Nothing was sent: the note is 5,009 characters long, over the limit of 5,000. "
            "Shorten it and send it again.") in page
    assert note in page  # what the reviewer wrote is still in the form
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert not item.waiting_for_owner and item.owner_question is None


@pytest.mark.parametrize("listed", [["d1", "d2"], ["d2", "d1"]])
def test_a_document_that_only_agrees_with_the_answer_does_not_end_the_wait(
    hold: Any, login: Any, reviewer: Any, publish: Any, django_capture_on_commit_callbacks: Any,
    listed: list[str],
) -> None:
    from tests.reviews.conftest import fact

    # In either order: re-evaluation lists the revisions used in its own.
    documents = {"d1": "pricing", "d2": "pricing-eu"}
    trace = hold(retrieved=[{"cite": cite, "document_id": documents[cite], "revision": "r1",
                             "span": "p1"} for cite in listed],
                 claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "support_hours", "value": "24/7", "cite": "d1"}],
                 answer="The free trial lasts 14 days [d1]. Support is open 24/7 [d1].")
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which trial length?"})
    held_on = ReviewItem.objects.get(answer__trace_id=trace).answer.current_verdict_id
    # A help page the answer does not cite states the support hours it claims: the gate
    # sees one more source that agrees (a new verdict), but holds it for the same conflict.
    with django_capture_on_commit_callbacks(execute=True):
        publish("support-faq", facts=[fact("support_hours", "24/7")])
    item = ReviewItem.objects.select_related("answer").get(answer__trace_id=trace)
    newer = Verdict.objects.filter(answer=item.answer).latest("id")
    assert newer.pk != held_on and newer.trigger == "other_document"
    assert item.answer.current_verdict_id == newer.pk
    assert item.waiting_for_owner
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert "Waiting for the owner" in page
    # Nor does one more document in the conflict, on the cited side: the question stands.
    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-faq", facts=[fact("trial_days", 14)])
    assert Verdict.objects.filter(answer=item.answer).latest("id").pk != newer.pk
    assert ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner
    # A new revision of a document in the conflict changes what the answer is held for.
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing-eu", revision="r2", title="Pricing in the EU",
                facts=[fact("trial_days", 31)])
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner


def test_a_new_revision_of_a_document_the_answer_only_retrieved_does_not_end_the_wait(
    hold: Any, login: Any, reviewer: Any, publish: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    """No claim or marker cites the glossary, and no finding names it: its new revision
    gives the answer a new verdict, held for exactly what it was, and the owner's question
    stands."""
    from tests.reviews.conftest import fact

    publish("glossary", facts=[fact("seats", 5)])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
        {"cite": "g1", "document_id": "glossary", "revision": "r1", "span": "p1"}])
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which trial length?"})
    held_on = ReviewItem.objects.get(answer__trace_id=trace).answer.current_verdict_id
    with django_capture_on_commit_callbacks(execute=True):
        publish("glossary", revision="r2", facts=[fact("seats", 6)])
    item = ReviewItem.objects.select_related("answer").get(answer__trace_id=trace)
    assert item.answer.current_verdict_id != held_on
    assert item.waiting_for_owner


def test_a_long_question_is_mailed_cut_with_a_sign_that_it_goes_on(
    hold: Any, login: Any, reviewer: Any, owner_with_mail: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    question = "How long is the free trial for a team that signed up in the EU? " * 10
    trace = hold(question=question.strip())
    with django_capture_on_commit_callbacks(execute=True):
        login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which is right?"})
    body = mail.outbox[-1].body
    # The mail quotes the question's start; the owner's page has it whole.
    shown = body.split("Question: ", 1)[1].split("\n", 1)[0]
    assert shown == question[:300] + "…"


def test_a_hand_off_from_a_page_whose_verdict_changed_is_not_sent_and_the_note_is_kept(
    hold: Any, login: Any, reviewer: Any, owner_with_mail: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.reviews.models import Answer
    from tests.reviews.conftest import owner_corrects

    trace = hold()  # held on 14 days against 30
    client = login(reviewer)
    page = client.get(f"/answers/{trace}/").content.decode()
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    assert f'name="verdict" value="{seen}"' in page
    # Meanwhile the owner makes the EU trial 45 days: the question the page invites is moot.
    with django_capture_on_commit_callbacks(execute=True):
        owner_corrects("pricing-eu", owner_with_mail, 45,
                       "In the EU the free trial lasts 45 days.", "new EU offer")
    sent = len(mail.outbox)
    assert Answer.objects.get(trace_id=trace).current_verdict_id != seen

    response = client.post(f"/answers/{trace}/send-to-owner",
                           {"note": "Is it 14 or 30 days?", "asked": "", "verdict": seen})

    assert response.status_code == 409
    html = response.content.decode()
    assert "Not sent: the sources changed while you were reviewing" in html
    assert "Is it 14 or 30 days?" in html  # kept to copy
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert not item.waiting_for_owner and item.owner_question is None
    assert len(mail.outbox) == sent
    # Sent again from the page as it now is, it goes.
    current = Answer.objects.get(trace_id=trace).current_verdict_id
    again = client.post(f"/answers/{trace}/send-to-owner",
                        {"note": "Is it 14 or 45 days?", "asked": "", "verdict": current})
    assert again.status_code == 302
    assert ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner


def test_a_hand_off_without_a_note_from_a_page_whose_verdict_changed_says_the_sources_changed(
    hold: Any, login: Any, reviewer: Any, owner_with_mail: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.reviews.models import Answer
    from tests.reviews.conftest import owner_corrects

    trace = hold()  # held on 14 days against 30
    client = login(reviewer)
    seen = Answer.objects.get(trace_id=trace).current_verdict_id
    with django_capture_on_commit_callbacks(execute=True):
        owner_corrects("pricing-eu", owner_with_mail, 45,
                       "In the EU the free trial lasts 45 days.", "new EU offer")

    # Sent with its note left empty: the page drawn again holds the new verdict, so the note
    # typed there next would go on it; the reviewer must hear the verdict changed first.
    response = client.post(f"/answers/{trace}/send-to-owner",
                           {"note": " ", "asked": "", "verdict": seen})

    assert response.status_code == 409
    assert "Not sent: the sources changed while you were reviewing" in response.content.decode()
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner
