"""The page an owner lands on after a publish: the conflicts the change opened or closed, and
how many answers got a new verdict."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.jobs.models import Job
from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import days, fact
from tests.sources.test_owner_fixes import PASSAGES_CHECKED, posted_back

pytestmark = pytest.mark.django_db

PUBLISH = "/owner/documents/pricing/publish"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def publish_from_the_page(client: Any, value: str, on_commit: Any,
                          typed: dict[str, str] | None = None) -> str:
    """olivia changes pricing's trial_days to `value` (and what else is `typed`); the address
    of the progress page it leads to."""
    page = client.get("/owner/documents/pricing/").content.decode()
    typed = {"facts-0-value": value, **PASSAGES_CHECKED, **(typed or {})}
    with on_commit(execute=True):
        response = client.post(PUBLISH, posted_back(page, PUBLISH, **typed))
    assert response.status_code == 302, response.content.decode()
    assert "/owner/progress" in response["Location"]
    return response["Location"]


def publish_in_the_page(client: Any, value: str, on_commit: Any,
                        typed: dict[str, str] | None = None, **headers: str) -> str:
    """The progress page `publish_from_the_page` leads to."""
    location = publish_from_the_page(client, value, on_commit, typed)
    return client.get(location, **headers).content.decode()


def test_a_correction_says_which_conflict_it_closed(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-1")  # cites pricing r1, claims 14: held for the conflict
    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)

    section = re.search(r"<ul class=\"conflict-changes\".*?</ul>", page, re.S)
    assert section is not None, page
    assert f'href="/owner/conflicts/{two_owners_disagree.pk}/"' in section.group(0)
    assert text_of(section.group(0)).strip() == (
        "Closed trial_days The documents no longer disagree over any period they share.")
    assert "Conflicts this change touched" in page
    # The answer got a new verdict from pricing's job, which reached it first; trial-promo's
    # found nothing more to change.
    cards = [text_of(card).strip() for card in re.findall(r'<div class="card">(.*?)</div>\s*</div>',
                                                          page, re.S)]
    assert [card.split(" re-evaluated")[0].replace("100% ", "") for card in cards] == [
        "pricing the document you changed: the answers citing it or claiming one of its keys "
        "1 of 1",
        "trial-promo shares a conflict with pricing: the answers citing it or claiming one of "
        "its keys 1 of 1"]
    assert "1 of 1 re-evaluated, 1 with a new verdict, 0 failed" in cards[0]
    assert "1 of 1 re-evaluated, 0 with a new verdict, 0 failed" in cards[1]
    # It got a new verdict, but is held for the same reason as before: it did not move.
    assert re.search(r"Answers your change moved: "
                     r"<strong data-moved-total>0</strong>", page)


def test_a_value_that_starts_a_disagreement_says_the_conflict_opened(
    client: Any, owner: Any, publish: Any, make_user: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 30)])
    publish("terms", owner="oscar", facts=[fact("trial_days", 30)])
    client.force_login(owner)
    page = publish_in_the_page(client, "21", django_capture_on_commit_callbacks)

    conflict = Conflict.objects.get()
    assert re.search(rf'<li data-verb="opened">.*?href="/owner/conflicts/{conflict.pk}/"', page,
                     re.S)
    assert "The documents now disagree." in page


def test_a_change_that_touches_no_conflict_lists_none(
    client: Any, owner: Any, publish: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    page = publish_in_the_page(client, "21", django_capture_on_commit_callbacks)
    assert "data-conflict-changes" not in page
    assert "No re-evaluation was needed" not in page  # its own document's job


def test_only_the_owners_own_changes_are_listed(
    client: Any, owner: Any, two_owners_disagree: Conflict, publish: Any,
) -> None:
    # The document system closes the conflict through the API, not olivia.
    publish("trial-promo", revision="r2", owner="oscar", facts=[fact("trial_days", 14)])
    assert Conflict.objects.get().status == Conflict.Status.CLOSED
    client.force_login(owner)
    page = client.get("/owner/progress", {"documents": "pricing,trial-promo"}).content.decode()
    assert "data-conflict-changes" not in page


def test_a_conflict_the_owner_left_is_said_without_its_link_or_documents(
    client: Any, owner: Any, publish: Any, make_user: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("oscar", "owner")
    make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("terms", owner="oscar", facts=[fact("trial_days", 30)])
    publish("secret-hr-salary-plan", owner="hugo", principals=["group:hr"],
            facts=[fact("trial_days", 90)])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    # pricing's value now holds only after the others' have ended; terms and the HR document
    # still disagree, without her.
    page = publish_in_the_page(client, "14", django_capture_on_commit_callbacks, typed={
        "facts-0-valid_from": days(100), "facts-0-valid_until": days(200)})
    conflict.refresh_from_db()
    assert (conflict.status, conflict.documents) == ("open", ["secret-hr-salary-plan", "terms"])
    section = re.search(r"<ul class=\"conflict-changes\".*?</ul>", page, re.S)
    assert section is not None, page
    assert text_of(section.group(0)).strip() == (
        "Left trial_days Your documents no longer take part; other documents still disagree.")
    # Its page is no longer hers to open: no link, and no document of it named.
    assert f"/owner/conflicts/{conflict.pk}/" not in page
    assert client.get(f"/owner/conflicts/{conflict.pk}/").status_code == 404
    assert "secret-hr-salary-plan" not in page
    # The answers of the conflict she left were re-evaluated too: terms's job is hers to
    # follow; the HR document's is not, and is not named.
    assert re.findall(r'<div class="card">\s*<p><code>([^<]+)</code>', page) == [
        "pricing", "terms"]



def changes_on(page: str) -> list[tuple[str, str]]:
    """(verb, text) of each entry of the page's list of conflict changes."""
    return [(verb, text_of(body).strip()) for verb, body in
            re.findall(r'<li data-verb="(\w+)">(.*?)</li>', page, re.S)]


def test_each_change_has_its_own_page_which_says_where_the_conflict_is_now(
    client: Any, owner: Any, two_owners_disagree: Conflict, django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    first = publish_from_the_page(client, "30", django_capture_on_commit_callbacks)
    page = publish_in_the_page(client, "21", django_capture_on_commit_callbacks)
    # A closed conflict that opens again is the same conflict: not "reopened", which is said
    # of a dismissed one.
    assert changes_on(page) == [
        ("again", "Opened again trial_days It had closed; the documents disagree again.")]
    # The first change's page, opened again, shows that change alone, and where it is now.
    page = client.get(first).content.decode()
    assert changes_on(page) == [
        ("closed", "Closed trial_days The documents no longer disagree over any period they "
                   "share. now: Open")]
    assert page.count('<div class="card">') == 2  # its own two jobs, not the second change's


def test_a_conflict_that_stays_open_says_changed_and_a_reopened_one_says_so(
    client: Any, owner: Any, two_owners_disagree: Conflict, make_user: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("hugo", "owner")
    publish("faq", owner="hugo", facts=[fact("trial_days", 45)])
    client.force_login(owner)
    changed = publish_from_the_page(client, "21", django_capture_on_commit_callbacks)
    assert changes_on(client.get(changed).content.decode()) == [
        ("changed", "Changed trial_days Still open: the documents or revisions in it changed.")]
    conflict = Conflict.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                    {"reason": "different plans", "signature": conflict.signature,
                     "detail": "faq is for partners"})
    # Not "still open" once dismissed.
    assert changes_on(client.get(changed).content.decode()) == [
        ("changed", "Changed trial_days Still open: the documents or revisions in it changed. "
                    "now: Dismissed")]
    page = publish_in_the_page(client, "22", django_capture_on_commit_callbacks)
    assert changes_on(page) == [("reopened", "Reopened trial_days It had been dismissed, but "
                                             "the documents in it changed, so it is open again.")]


def test_changes_before_the_pages_since_are_not_listed(
    client: Any, owner: Any, two_owners_disagree: Conflict, django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    assert "data-conflict-changes" in page
    later = (timezone.now() + dt.timedelta(minutes=1)).isoformat()
    page = client.get("/owner/progress", {"documents": "pricing", "since": later})
    assert "data-conflict-changes" not in page.content.decode()


def test_without_a_change_to_follow_the_page_says_what_it_is_for(client: Any, owner: Any) -> None:
    client.force_login(owner)
    page = client.get("/owner/progress").content.decode()
    assert "This page follows what a change of yours set off." in page
    assert "No re-evaluation was needed" not in page



def test_withdrawing_one_of_two_documents_in_a_conflict_says_the_other_is_still_in_it(
    client: Any, owner: Any, publish: Any, make_user: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", facts=[fact("trial_days", 21)])
    publish("terms", owner="oscar", facts=[fact("trial_days", 30)])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-promo"})
    assert response.status_code == 302, response.content.decode()
    page = client.get(response["Location"]).content.decode()
    conflict.refresh_from_db()
    assert (conflict.status, conflict.documents) == ("open", ["pricing", "terms"])
    # Not "Your documents no longer take part": pricing is hers, and still in it.
    assert changes_on(page) == [(
        "left", "Left trial_days The changed document no longer takes part; the conflict goes "
                "on, with other documents of yours still in it.")]
    assert f'href="/owner/conflicts/{conflict.pk}/"' in page


def test_a_conflict_a_withdrawal_closed_is_said_to_have_closed_with_it(
    client: Any, owner: Any, publish: Any, make_user: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("oscar", "owner")
    publish("terms", owner="oscar", facts=[fact("trial_days", 30)])
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    page = client.get(response["Location"]).content.decode()
    assert Conflict.objects.get().status == "closed"
    # Not "The documents no longer disagree over any period they share": nothing was corrected.
    said = [("closed", "Closed trial_days It closed with the withdrawal: the documents left in "
                       "it do not disagree.")]
    assert changes_on(page) == said
    # The link opened again after the document was restored still says what the change did,
    # and where the conflict is now.
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/pricing/restore")
    assert Conflict.objects.get().status == "open"
    assert changes_on(client.get(response["Location"]).content.decode()) == [
        ("closed", f"{said[0][1]} now: Open")]


@pytest.mark.parametrize("conflicts", [2, 12])
def test_reading_the_changes_takes_five_queries_however_many(
    owner: Any, make_user: Any, publish: Any, django_assert_num_queries: Any, conflicts: int,
) -> None:
    from reviewqueue.audit.services import Actor
    from reviewqueue.sources.selectors import conflict_changes_by
    from reviewqueue.sources.services import document_withdraw

    make_user("oscar", "owner")
    since = timezone.now()
    keys = [f"k{n}" for n in range(conflicts)]
    publish("terms", owner="oscar", facts=[fact(k, 30) for k in keys])
    publish("pricing", facts=[fact(k, 14) for k in keys])
    document_withdraw(document_key="pricing", actor=Actor.of_user(owner))
    reader = type(owner).objects.get(pk=owner.pk)  # as a request reads them: nothing cached
    with django_assert_num_queries(5):
        changes, cut = conflict_changes_by(reader, ["pricing"], since)
    assert ([c.verb for c in changes], cut) == (["closed"] * conflicts, False)
    assert all(c.by_withdrawal for c in changes)


def test_more_changes_than_are_read_are_said_to_be_cut(
    owner: Any, make_user: Any, publish: Any, monkeypatch: Any,
) -> None:
    from reviewqueue.audit.services import Actor
    from reviewqueue.sources import selectors
    from reviewqueue.sources.services import document_withdraw

    make_user("oscar", "owner")
    since = timezone.now()
    publish("terms", owner="oscar", facts=[fact(f"k{n}", 30) for n in range(4)])
    publish("pricing", facts=[fact(f"k{n}", 14) for n in range(4)])
    document_withdraw(document_key="pricing", actor=Actor.of_user(owner))
    for read, cut in ((4, False), (3, True)):
        monkeypatch.setattr(selectors, "CONFLICT_CHANGES_READ", read)
        changes, was_cut = selectors.conflict_changes_by(owner, ["pricing"], since)
        assert (len(changes), was_cut) == (read, cut)


def test_an_old_page_keeps_what_the_change_did_after_others_changed_the_conflict(
    client: Any, owner: Any, two_owners_disagree: Conflict, publish: Any, make_user: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    first = publish_from_the_page(client, "30", django_capture_on_commit_callbacks)
    # Then the document system moves pricing's value past the others', and hugo's faq
    # disagrees with trial-promo, without pricing (a revision newer than her correction).
    publish("pricing", revision="r9", facts=[fact("trial_days", 30, start=100, end=200)],
            updated_at=timezone.now().isoformat())
    make_user("hugo", "owner")
    publish("faq", owner="hugo", facts=[fact("trial_days", 45)])
    assert Conflict.objects.get().documents == ["faq", "trial-promo"]
    page = client.get(first).content.decode()
    assert changes_on(page) == [
        ("closed", "Closed trial_days The documents no longer disagree over any period they "
                   "share.")]  # not "Left": her change closed it; it is no longer hers to open
    assert f"/owner/conflicts/{two_owners_disagree.pk}/" not in page


def test_an_until_before_the_since_is_a_clear_400(client: Any, owner: Any) -> None:
    client.force_login(owner)
    response = client.get("/owner/progress", {"documents": "pricing",
                                              "since": "2026-12-02T10:00:00+00:00",
                                              "until": "2026-12-02T09:00:00+00:00"})
    assert response.status_code == 400
    assert "<li><code>until</code>: must not be before since.</li>" in response.content.decode()


def test_the_section_is_in_japanese(
    client: Any, owner: Any, two_owners_disagree: Conflict, django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks,
                               HTTP_ACCEPT_LANGUAGE="ja")
    section = re.search(r"<ul class=\"conflict-changes\".*?</ul>", page, re.S)
    assert section is not None
    assert "Closed" not in section.group(0) and "disagree" not in section.group(0)


def test_answers_not_citing_the_changed_document_say_another_document_changed(
    client: Any, owner: Any, reviewer: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-pricing", as_of=None)
    submit("t-terms", as_of=None, answer="The free trial lasts 30 days [d1].",
           retrieved=[{"cite": "d1", "document_id": "trial-promo", "revision": "r1", "span": "p1"}],
           claims=[{"key": "trial_days", "value": 30, "cite": "d1"}])
    assert Answer.objects.get(trace_id="t-terms").status == Answer.Status.HELD
    Job.objects.all().delete()  # those of the publishes above
    client.force_login(owner)
    publish_in_the_page(client, "30", django_capture_on_commit_callbacks)

    pricing, terms = (Answer.objects.get(trace_id=t) for t in ("t-pricing", "t-terms"))
    assert pricing.current_verdict.trigger == "revision"
    # trial-promo did not change: its answer was released because pricing's conflict with it closed,
    # whichever of the two documents' jobs reached it first.
    assert (terms.status, terms.current_verdict.trigger) == (
        Answer.Status.CANDIDATE, "other_document")
    assert set(Job.objects.values_list("document_key", "cause", "trigger")) == {
        ("pricing", "pricing", "revision"), ("trial-promo", "pricing", "revision")}
    client.force_login(reviewer)
    page = client.get("/answers/t-terms/").content.decode()
    assert re.search(r"current</span><br>.*?</td>\s*<td[^>]*>Another document changed</td>",
                     page, re.S)
    assert "Revision published" not in page


def test_the_changed_documents_own_job_goes_first_and_is_credited(
    two_owners_disagree: Conflict, submit: Any, publish: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """trial-promo sorts after pricing, and its change is what released the answer citing both:
    its job is sent first and counts the answer, not pricing's."""
    submit("t-both", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "trial-promo", "revision": "r1", "span": "p1"}])
    assert Answer.objects.get(trace_id="t-both").status == Answer.Status.HELD
    Job.objects.all().delete()  # those of the publishes above
    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-promo", revision="r2", owner="oscar", facts=[fact("trial_days", 14)])
    jobs = list(Job.objects.order_by("created_at", "pk").values_list("document_key", "changed"))
    assert jobs == [("trial-promo", 1), ("pricing", 0)]


WORDS = {
    "opened": ("Opened", "The documents now disagree."),
    "again": ("Opened again", "It had closed; the documents disagree again."),
    "changed": ("Changed", "Still open: the documents or revisions in it changed."),
    "reopened": ("Reopened", "It had been dismissed, but the documents in it changed, so it "
                             "is open again."),
    "dismissed": ("Dismissed", "Its revisions are again among those it was dismissed for, "
                               "so it is dismissed as before."),
    "closed": ("Closed", "The documents no longer disagree over any period they share."),
}


@pytest.mark.parametrize(("before", "after", "verb"), [
    (None, "open", "opened"), ("closed", "open", "again"), ("open", "open", "changed"),
    ("dismissed", "open", "reopened"), ("closed", "dismissed", "dismissed"),
    ("open", "closed", "closed"), ("dismissed", "closed", "closed"),
])
def test_each_status_change_has_its_own_words(before: str | None, after: str, verb: str) -> None:
    from reviewqueue.sources.selectors import ConflictChangeSeen, _seen_verb

    assert _seen_verb(before, after) == verb
    badge, _tone, sentence = ConflictChangeSeen(Conflict(key="k"), verb, after).words
    assert (str(badge), str(sentence)) == WORDS[verb]
