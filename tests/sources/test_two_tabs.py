"""Two editors of one document: the one refused because the other published first sends the
form again without undoing the other's work, and sees it where they typed too. One whose
document was withdrawn meanwhile is told so in their language, with what they typed kept."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.utils import timezone, translation

from reviewqueue.sources.models import Document
from tests.reviews.conftest import days, fact
from tests.sources.test_owner_fixes import PASSAGES_CHECKED, client_for, posted_back

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/pricing/"
PUBLISH = "/owner/documents/pricing/publish"
END = "/owner/documents/pricing/end-validity"
WITHDRAW = "/owner/documents/pricing/withdraw"
PASSAGES = [{"span": "p1", "text": "The free trial lasts 14 days."},
            {"span": "p2", "text": "Nothing here is a fact."}]


@pytest.fixture
def tabs(publish: Any, owner: Any) -> tuple[Any, Any]:
    """Tabs A and B of one owner on `pricing`, whose trial_days has no end."""
    publish("pricing", facts=[fact("trial_days", 14, end=None)], passages=PASSAGES)
    return client_for(owner), client_for(owner)


def current() -> Any:
    return Document.objects.get(key="pricing").current_revision


def refused_after(tabs: tuple[Any, Any], first: dict[str, str], then: dict[str, str]) -> Any:
    """Both tabs open the page; A publishes `first`; B, on its older page, sends `then` and is
    refused (409)."""
    a, b = tabs
    stale = b.get(PAGE).content.decode()
    page = a.get(PAGE).content.decode()
    assert a.post(PUBLISH, posted_back(page, PUBLISH, **first,
                                       **PASSAGES_CHECKED)).status_code == 302
    refused = b.post(PUBLISH, posted_back(stale, PUBLISH, **then, **PASSAGES_CHECKED))
    assert refused.status_code == 409
    return refused


def test_an_end_date_set_meanwhile_survives_sending_a_value_again(tabs: tuple[Any, Any]) -> None:
    a, b = tabs
    stale = b.get(PAGE).content.decode()
    ended = a.get(PAGE).content.decode()
    assert a.post(END, posted_back(ended, END, last_day=days(40))).status_code == 302
    refused = b.post(PUBLISH, posted_back(stale, PUBLISH, **{"facts-0-value": "30"},
                                          **PASSAGES_CHECKED))
    assert refused.status_code == 409
    page = refused.content.decode()
    # The form now holds the new end date, and what B typed.
    assert re.search(rf'name="facts-0-valid_until"[^>]*value="{days(40)}"', page)
    assert re.search(r'name="facts-0-value"[^>]*value="30"', page)
    assert "data-meanwhile" not in page  # B changed no field A changed
    assert b.post(PUBLISH, posted_back(page, PUBLISH, **PASSAGES_CHECKED)).status_code == 302
    [trial] = current().facts.all()
    assert (trial.value, str(trial.valid_until)) == (30, days(40))


def test_a_value_both_changed_keeps_what_was_typed_beside_what_was_published(
    tabs: tuple[Any, Any]
) -> None:
    refused = refused_after(tabs, {"facts-0-value": "20"}, {"facts-0-value": "30"})
    page = refused.content.decode()
    assert re.search(r'name="facts-0-value"[^>]*value="30"', page)
    shown = re.search(r'<div class="meanwhile" data-meanwhile>(.*?)</div>', page, re.S)
    assert shown is not None
    assert re.sub(r"<[^>]+>|\s+", " ", shown.group(1)).split() == [
        "Published", "meanwhile", "in", f"{current().revision}:", "20"]
    # As it would be typed: in quotes, 20 would read as text, which it is not.
    assert "<code>20</code>" in shown.group(1)


def test_a_passage_both_changed_shows_the_text_published_meanwhile(
    tabs: tuple[Any, Any]
) -> None:
    refused = refused_after(
        tabs, {"passage:p1": "The free trial lasts 14 days. Guests count as members.",
               "passage:p2": "Support answers by phone only."},
        {"passage:p1": "The free trial lasts 30 days."})
    page = html.unescape(refused.content.decode())
    box = page[page.index('data-passage="p1"'):page.index('data-passage="p2"')]
    assert "The free trial lasts 30 days.</textarea>" in box
    assert "<q>The free trial lasts 14 days. Guests count as members.</q>" in box
    # p2, which B left alone, simply holds A's text, with nothing to compare.
    other = page[page.index('data-passage="p2"'):]
    assert "Support answers by phone only.</textarea>" in other
    assert "data-meanwhile" not in other[:other.index("</div>")]


WITHDRAWN_MEANWHILE = ("This document was withdrawn since you opened it, so nothing was "
                       "published. What you typed is kept below: restore the document to "
                       "correct it again.")
API_ADVICE = "the document is withdrawn; publish a revision through the API"


def withdrawn_after_opening(tabs: tuple[Any, Any]) -> str:
    """B opens the page (in Japanese); A withdraws the document. B's page, now stale."""
    a, b = tabs
    stale = b.get(PAGE, HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert a.post(WITHDRAW, {"confirm": "pricing"}).status_code == 302
    return stale


def in_japanese(text: str) -> str:
    with translation.override("ja"):
        return html.escape(translation.gettext(text), quote=False)


def test_a_correction_sent_after_a_withdrawal_in_another_tab_keeps_what_was_typed(
    tabs: tuple[Any, Any]
) -> None:
    stale = withdrawn_after_opening(tabs)
    refused = tabs[1].post(PUBLISH, posted_back(
        stale, PUBLISH, **{"facts-0-value": "30", "passage:p1": "The free trial lasts 30 days.",
                           "note": "Trial is now a month"}, **PASSAGES_CHECKED),
        HTTP_ACCEPT_LANGUAGE="ja")
    assert refused.status_code == 409
    page = refused.content.decode()
    # Told, in their language, that it was withdrawn meanwhile and that restoring it lets
    # them correct it: not the API's English advice to publish through the API.
    assert in_japanese(WITHDRAWN_MEANWHILE) in page
    assert API_ADVICE not in page
    # What they typed is on the page, to send again once the document is restored.
    assert "<code>30</code>" in page
    assert "<q>The free trial lasts 30 days.</q>" in page
    assert "<q>Trial is now a month</q>" in page
    assert 'action="/owner/documents/pricing/restore"' in page
    document = Document.objects.get(key="pricing")
    assert document.withdrawn_at is not None and document.revisions.count() == 1


def test_ending_a_fact_after_a_withdrawal_in_another_tab_keeps_the_day_and_note(
    tabs: tuple[Any, Any]
) -> None:
    stale = withdrawn_after_opening(tabs)
    refused = tabs[1].post(END, posted_back(stale, END, last_day=days(10), note="Ends early"),
                           HTTP_ACCEPT_LANGUAGE="ja")
    assert refused.status_code == 409
    page = refused.content.decode()
    assert in_japanese(WITHDRAWN_MEANWHILE) in page
    assert API_ADVICE not in page
    assert days(10) in page and "Ends early" in page
    assert Document.objects.get(key="pricing").revisions.count() == 1


def banners(page: str) -> str:
    """The text of the page's banners, tags and runs of space taken out."""
    shown = re.findall(r'<div class="banner error"[^>]*>(.*?)</div>', page, re.S)
    return " ".join(" ".join(re.sub(r"<[^>]+>", " ", html.unescape(b)).split()) for b in shown)


def test_what_was_typed_on_a_document_withdrawn_meanwhile_is_not_said_to_be_of_a_revision(
    tabs: tuple[Any, Any]
) -> None:
    a, b = tabs
    stale = b.get(PAGE).content.decode()
    assert a.post(WITHDRAW, {"confirm": "pricing"}).status_code == 302
    refused = b.post(PUBLISH, posted_back(
        stale, PUBLISH, **{"facts-0-value": "30", "passage:p1": "The free trial lasts 30 days."},
        **PASSAGES_CHECKED))
    assert refused.status_code == 409
    shown = banners(refused.content.decode())
    # The whole document was withdrawn: no revision is there to have lost the fact.
    assert "revision" not in shown
    assert "The values you typed: trial_days = 30" in shown
    assert "The passage text you typed: p1 : The free trial lasts 30 days." in shown


def test_the_fact_being_ended_on_a_document_withdrawn_meanwhile_is_not_said_to_be_of_a_revision(
    tabs: tuple[Any, Any]
) -> None:
    a, b = tabs
    stale = b.get(PAGE).content.decode()
    assert a.post(WITHDRAW, {"confirm": "pricing"}).status_code == 302
    refused = b.post(END, posted_back(stale, END, last_day=days(10), note="Ends early"))
    assert refused.status_code == 409
    shown = banners(refused.content.decode())
    assert "revision" not in shown
    assert f"The fact you were ending: trial_days = 14 — Last valid day {days(10)}" in shown


ALREADY = "which you published, already says what this form asked for: nothing more was published."


def test_a_correction_sent_twice_by_a_double_click_is_not_said_to_be_someone_elses(
    tabs: tuple[Any, Any]
) -> None:
    a, _b = tabs
    page = a.get(PAGE).content.decode()
    typed = posted_back(page, PUBLISH, **{"facts-0-value": "30",
                                          "passage:p1": "The free trial lasts 30 days."})
    assert a.post(PUBLISH, typed).status_code == 302
    published = current().revision
    # The second click's request, sent from the same page: its reply is what the owner sees.
    response = a.post(PUBLISH, typed, follow=True)
    page = html.unescape(response.content.decode())
    assert response.redirect_chain[-1][0] == PAGE
    assert "This document changed since you opened it" not in page
    assert f"Revision {published}, {ALREADY}" in page
    assert current().revision == published


def test_a_fact_ended_twice_by_a_double_click_is_not_said_to_be_someone_elses(
    tabs: tuple[Any, Any]
) -> None:
    a, _b = tabs
    typed = posted_back(a.get(PAGE).content.decode(), END, last_day=days(10))
    assert a.post(END, typed).status_code == 302
    published = current().revision
    response = a.post(END, typed, follow=True)
    page = html.unescape(response.content.decode())
    assert response.redirect_chain[-1][0] == PAGE
    assert "This document changed since you opened it" not in page
    assert f"Revision {published}, {ALREADY}" in page


def test_other_values_sent_from_an_older_tab_of_the_same_owner_are_still_refused(
    tabs: tuple[Any, Any]
) -> None:
    a, _b = tabs
    page = a.get(PAGE).content.decode()
    assert a.post(PUBLISH, posted_back(page, PUBLISH, **{"facts-0-value": "30"},
                                       **PASSAGES_CHECKED)).status_code == 302
    refused = a.post(PUBLISH, posted_back(page, PUBLISH, **{"facts-0-value": "45"},
                                          **PASSAGES_CHECKED))
    assert refused.status_code == 409
    assert "This document changed since you opened it" in refused.content.decode()


def test_a_correction_takes_the_next_free_revision_id(
    client: Any, owner: Any, publish: Any
) -> None:
    today = f"{timezone.localdate():%Y-%m-%d}"
    publish("pricing", facts=[fact("trial_days", 14)], passages=PASSAGES)
    # The document system names its second revision the way the third correction is named.
    publish("pricing", revision=f"{today}.3", facts=[fact("trial_days", 15)], passages=PASSAGES)
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    response = client.post(PUBLISH, posted_back(page, PUBLISH, **{"facts-0-value": "30"},
                                                **PASSAGES_CHECKED))
    assert response.status_code == 302
    assert current().revision == f"{today}.4"
    assert [f.value for f in current().facts.all()] == [30]


def test_the_days_corrections_are_numbered_from_one(client: Any, owner: Any, publish: Any
                                                    ) -> None:
    """A document's fifth revision, its first correction today, is today's `.1`: the number
    counts today's corrections, not the revisions before them."""
    today = f"{timezone.localdate():%Y-%m-%d}"
    for n in range(1, 5):
        publish("pricing", revision=f"v{n}", facts=[fact("trial_days", 14)], passages=PASSAGES)
    publish("pricing", revision=f"{today}.x", facts=[fact("trial_days", 14)], passages=PASSAGES)
    client.force_login(owner)
    for expected, value in ((f"{today}.1", "30"), (f"{today}.2", "31")):
        page = client.get(PAGE).content.decode()
        response = client.post(PUBLISH, posted_back(page, PUBLISH, **{"facts-0-value": value},
                                                    **PASSAGES_CHECKED))
        assert response.status_code == 302
        assert current().revision == expected


def test_ending_a_fact_offers_no_day_and_the_days_it_may_end_on(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, start=10, end=None),
                              fact("seats", 5, start=-10, end=20)], passages=PASSAGES)
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    inputs = re.findall(r'<input[^>]*name="last_day"[^>]*>', page)
    assert len(inputs) == 2 and not any("value=" in i for i in inputs)
    assert all(" required" in i for i in inputs)
    # A fact that starts later ends no earlier than its first day, and none ends on or after
    # the day it ends now.
    assert [re.findall(r'(min|max)="([^"]*)"', i) for i in inputs] == [
        [("min", days(10))], [("min", days(-10)), ("max", days(19))]]
    assert "Ending it publishes a new revision at once" in page
    form = re.search(r'<form[^>]*action="/owner/documents/pricing/end-validity".*?</form>', page,
                     re.S)
    assert form is not None
    # Sent without a day (a browser would not send it), nothing is published.
    refused = client.post(END, posted_back(form.group(0), END))
    assert refused.status_code == 400
    assert "Choose the last valid day." in refused.content.decode()
    assert "YYYY-MM-DD" not in refused.content.decode()
    # A day that is not a date is told the format.
    garbled = client.post(END, posted_back(form.group(0), END, last_day="31/12/2026"))
    assert "Give the last valid day as YYYY-MM-DD." in garbled.content.decode()
    assert current().facts.get(key="trial_days").valid_until is None
    response = client.post(END, posted_back(form.group(0), END, last_day=days(10)))
    assert response.status_code == 302
    ended = current().facts.get(key="trial_days")
    assert (str(ended.valid_from), str(ended.valid_until)) == (days(10), days(10))


def test_each_end_form_names_its_fact_to_a_screen_reader(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5, subject="EU")],
            passages=PASSAGES)
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    names = re.findall(r'End validity<span class="visually-hidden">, ([^<]*)</span></button>',
                       page)
    assert names == ["trial_days", "EU · seats"]
    assert re.findall(r'Last valid day<span class="visually-hidden">, ([^<]*)</span>',
                      page) == names


def test_a_revision_without_facts_says_so_and_shows_its_passages(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[], passages=PASSAGES)
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    assert "This revision states no facts." in page
    assert "This revision states no facts to end." in page
    assert "has ended already" not in page
    assert '<details class="other-passages" data-other-passages open>' in page


def test_each_correct_link_of_a_conflict_names_its_document(
    client: Any, owner: Any, two_owners_disagree: Any, make_user: Any
) -> None:
    admin = make_user("ada", "admin")
    client.force_login(admin)
    page = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    named = re.findall(r'Correct this document<span class="visually-hidden">: ([^<]*)</span>',
                       page)
    assert sorted(named) == ["pricing", "trial-promo"]
