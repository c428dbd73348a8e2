"""A revision that contradicts itself: it states one (subject, key) twice, with different values
valid over a shared period. It is a conflict as two documents that disagree are (DESIGN: "current
facts with the same (subject, key) and different values"): its owner sees it in their inbox and
on its page, with each value beside the passage that states it, and a corrected revision closes
it."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.core import mail

from reviewqueue.audit.models import AuditEvent
from reviewqueue.sources.models import Conflict, Document
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

PASSAGES = [
    {"span": "p1", "text": "Refunds are accepted within 14 days of purchase."},
    {"span": "p2", "text": "You may ask for a refund up to 30 days after buying."},
]



def refunds(first: Any, second: Any, *, subject: str = "", second_subject: str | None = None,
            **second_dates: Any) -> dict[str, Any]:
    """A refunds policy stating refund_days twice: in passage p1 and again in p2."""
    return {
        "passages": PASSAGES,
        "facts": [
            fact("refund_days", first, span="p1", end=None, subject=subject),
            fact("refund_days", second, span="p2",
                 subject=subject if second_subject is None else second_subject,
                 **({"end": None} | second_dates)),
        ],
    }


def conflict_cards(page: str) -> list[str]:
    """The conflicts the inbox lists, each as the HTML of its card."""
    return re.findall(r'<section class="card conflict".*?</section>', page, re.S)


def source_cards(page: str) -> list[str]:
    return re.findall(r'<article class="source-card">.*?</article>', page, re.S)


def text_of(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_a_revision_stating_two_values_shows_in_its_owners_inbox(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    client.force_login(owner)
    cards = conflict_cards(client.get("/owner/").content.decode())
    assert len(cards) == 1
    card = text_of(cards[0])
    assert "refund_days" in card and "refunds@r1" in card
    # Both sides carry the same document and revision: where each value is stated tells them
    # apart, in the inbox as on the conflict's page.
    first, second = (text_of(side) for side in source_cards(cards[0]))
    assert "Fact 1 of this revision · passage p1" in first and "14" in first
    assert "Fact 2 of this revision · passage p2" in second and "30" in second


def test_sides_from_two_documents_need_no_place_in_the_revision(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", facts=[fact("refund_days", 14, span="p1", end=None)])
    publish("returns", facts=[fact("refund_days", 30, span="p1", end=None)])
    client.force_login(owner)
    [card] = conflict_cards(client.get("/owner/").content.decode())
    assert len(source_cards(card)) == 2
    assert "data-side-where" not in card and "of this revision" not in text_of(card)


def test_the_conflict_is_kept_as_those_between_documents_are(
    owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    conflict = Conflict.objects.get()
    assert (conflict.subject, conflict.key, conflict.status) == ("", "refund_days", "open")
    assert conflict.documents == ["refunds"]
    assert conflict.documents_ever == ["refunds"]
    assert [(p["document"], p["revision"], p["span"], p["value"])
            for p in conflict.participants] == [("refunds", "r1", "p1", 14),
                                                ("refunds", "r1", "p2", 30)]
    event = AuditEvent.objects.get(action="conflict.opened")
    assert event.document_id == "refunds"
    assert event.object_id == str(conflict.pk)
    assert event.after["revisions"] == [["refunds", "r1"], ["refunds", "r1"]]


def test_two_values_on_one_subject_conflict(owner: Any, publish: Any) -> None:
    publish("refunds", **refunds(14, 30, subject="plan basic"))
    conflict = Conflict.objects.get()
    assert (conflict.subject, conflict.key, conflict.status) == ("plan basic", "refund_days",
                                                                 "open")


def test_the_conflict_page_shows_each_value_beside_the_passage_stating_it(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    client.force_login(owner)
    response = client.get(f"/owner/conflicts/{Conflict.objects.get().pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Revision r1 of refunds states both values" in text_of(page)
    sides = source_cards(page)
    assert len(sides) == 2
    first, second = (text_of(side) for side in sides)
    assert "Fact 1 of this revision · passage p1" in first
    assert "14" in first and PASSAGES[0]["text"] in first
    assert "Fact 2 of this revision · passage p2" in second
    assert "30" in second and PASSAGES[1]["text"] in second


def test_the_owner_is_mailed_once_naming_each_passage(
    owner: Any, publish: Any, django_capture_on_commit_callbacks: Any
) -> None:
    owner.email = "olivia@example.test"
    owner.save(update_fields=["email"])
    with django_capture_on_commit_callbacks(execute=True):
        publish("refunds", **refunds(14, 30))
    assert [m.to for m in mail.outbox] == [["olivia@example.test"]]
    body = mail.outbox[0].body
    assert "- refunds (r1, passage p1): 14" in body
    assert "- refunds (r1, passage p2): 30" in body


def test_a_corrected_revision_from_the_api_closes_it(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    publish("refunds", revision="r2", **refunds(30, 30))
    conflict = Conflict.objects.get()
    assert conflict.status == "closed"
    closed = AuditEvent.objects.get(action="conflict.closed")
    assert closed.document_id == "refunds"
    client.force_login(owner)
    assert conflict_cards(client.get("/owner/").content.decode()) == []
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert ("after a new revision of <code>refunds</code>: it no longer states different "
            "values for any period") in page


def publish_from_the_owners_page(client: Any, owner: Any, **changes: str) -> str:
    """Post the owner's correction form for `refunds` r1 with its facts as they are, but for
    `changes` (form fields), and return the progress page it leads to."""
    facts = list(Document.objects.get(key="refunds").current_revision.facts.order_by("position"))
    form = {"facts-TOTAL_FORMS": str(len(facts)), "facts-INITIAL_FORMS": str(len(facts)),
            "revision": "r1", "passages_checked": "1"}
    for i, f in enumerate(facts):
        form |= {f"facts-{i}-fact_id": str(f.pk), f"facts-{i}-value": json.dumps(f.value),
                 f"facts-{i}-valid_from": str(f.valid_from),
                 f"facts-{i}-valid_until": str(f.valid_until or "")}
    client.force_login(owner)
    response = client.post("/owner/documents/refunds/publish", form | changes)
    assert response.status_code == 302
    return client.get(response["Location"]).content.decode()


def conflict_changes(progress: str) -> str:
    changes = re.search(r'<ul class="conflict-changes".*?</ul>', progress, re.S)
    assert changes is not None, progress
    return text_of(changes.group(0))


def test_a_corrected_revision_from_the_owners_page_closes_it(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    progress = publish_from_the_owners_page(client, owner, note="One refund period",
                                            **{"facts-1-value": "14"})
    assert Conflict.objects.get().status == "closed"
    assert conflict_changes(progress) == (
        "Closed refund_days The document no longer states different values for any period.")


def test_an_edit_on_the_owners_page_that_makes_the_periods_overlap_says_it_opened_one(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", passages=PASSAGES, facts=[
        fact("refund_days", 14, span="p1", start=-30, end=10),
        fact("refund_days", 30, span="p2", start=11, end=None),
    ])
    # 14 days with no end: it now overlaps the 30
    progress = publish_from_the_owners_page(client, owner, **{"facts-0-valid_until": ""})
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.documents) == ("open", ["refunds"])
    assert conflict_changes(progress) == (
        "Opened refund_days The document now states different values.")


def test_a_later_revision_still_stating_two_values_reopens_its_dismissal(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    conflict = Conflict.objects.get()
    client.force_login(owner)
    client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                {"reason": "different plans", "detail": "", "signature": conflict.signature})
    assert Conflict.objects.get().status == "dismissed"
    publish("refunds", revision="r2", **refunds(14, 45))
    conflict = Conflict.objects.get()
    assert conflict.status == "open"
    assert {(p["revision"], p["value"]) for p in conflict.participants} == {("r2", 14),
                                                                          ("r2", 45)}
    assert AuditEvent.objects.filter(action="conflict.reopened",
                                     document_id="refunds").count() == 1


def test_a_revision_stating_the_same_value_twice_opens_none(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("refunds", **refunds(14, 14))
    assert not Conflict.objects.exists()
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert conflict_cards(page) == []
    assert "No open conflicts involve your documents." in page


def test_values_for_periods_that_follow_each_other_do_not_conflict(
    owner: Any, publish: Any
) -> None:
    publish("refunds", passages=PASSAGES, facts=[
        fact("refund_days", 14, span="p1", start=-30, end=10),
        fact("refund_days", 30, span="p2", start=11, end=None),
    ])
    assert not Conflict.objects.exists()


def test_values_for_different_subjects_do_not_conflict(owner: Any, publish: Any) -> None:
    publish("refunds", **refunds(14, 30, subject="plan basic", second_subject="plan pro"))
    assert not Conflict.objects.exists()



def test_its_page_lists_the_answer_it_holds(
    client: Any, owner: Any, publish: Any, submit: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    body = submit(retrieved=[{"cite": "d1", "document_id": "refunds", "revision": "r1",
                              "span": "p1"}],
                  claims=[{"key": "refund_days", "value": 14, "cite": "d1"}],
                  answer="Refunds are accepted within 14 days [d1].", as_of=None).json()
    assert (body["status"], body["verdict"]["reason"]) == ("held", "conflicting_sources")
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{Conflict.objects.get().pk}/").content.decode()
    assert "This conflict is holding 1 answer you may read in the review queue." in page
    assert '<a href="/answers/t-1/">' in page


def test_a_dismissal_says_an_answer_citing_the_document_is_still_held(
    client: Any, owner: Any, publish: Any, submit: Any, django_capture_on_commit_callbacks: Any
) -> None:
    publish("refunds", **refunds(14, 30))
    submit(retrieved=[{"cite": "d1", "document_id": "refunds", "revision": "r1", "span": "p1"}],
           claims=[{"key": "refund_days", "value": 14, "cite": "d1"}],
           answer="Refunds are accepted within 14 days [d1].", as_of=None)
    conflict = Conflict.objects.get()
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                    {"reason": "different plans", "detail": "", "signature": conflict.signature})
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert "Dismissed by olivia" in page
    assert ("An answer that retrieved this document, even without citing it, still puts both "
            "values before its reader, so it stays held for a reviewer") in page


def test_a_japanese_owner_is_mailed_where_in_the_revision_each_value_is_in_japanese(
    owner: Any, publish: Any, client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    owner.email = "olivia@example.test"
    owner.save(update_fields=["email"])
    client.force_login(owner)
    assert client.post("/language", {"language": "ja", "next": "/"}).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        publish("refunds", **refunds(14, 30))
    body = mail.outbox[0].body
    assert "- refunds (r1、パッセージ p1): 14" in body
    assert "- refunds (r1、パッセージ p2): 30" in body
    assert "あなたの文書が異なる値を記載しています" in body
