"""The item page tells the reviewer the truth: which revision a passage comes from, on which date
a fact is in force, which claim a finding is about; and what a refused reviewer wrote is kept."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from reviewqueue.reviews.models import Answer, ReviewItem
from tests.browser.conftest import browser, sign_in  # noqa: F401
from tests.reviews.conftest import current_verdict_id, days, fact

pytestmark = pytest.mark.django_db


def text_of(response: Any) -> str:
    # Relative times keep their number and unit together with a no-break space.
    return response.content.decode().replace("\xa0", " ")


def card(html: str, cite: str) -> str:
    start = html.index(f'<details class="cite" data-cite="{cite}">')
    return html[start:html.index("</details>", start)]


def claims_table(html: str) -> str:
    start = html.index('<table class="claims')
    return html[start:html.index("</table>", start)]


def unsaved(html: str) -> str:
    start = html.index("data-unsaved")
    return html[start:html.index("</div>", start)]


# --- A cited revision the store never received ---------------------------------------------------

@pytest.fixture
def not_received_html(publish: Any, submit: Any, reviewer: Any, login: Any) -> str:
    """The answer cites pricing@r9; only r1 was ever published."""
    publish("pricing", "r1", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."}])
    response = submit("nr", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r9", "span": "p1"}])
    assert response.json()["status"] == "held"
    return text_of(login(reviewer).get("/answers/nr/"))


def test_a_revision_never_received_is_not_dated_with_the_current_ones_date(
    not_received_html: str,
) -> None:
    shown = card(not_received_html, "d1")
    assert "Revision r9" in shown
    assert "updated" not in shown
    assert "The store never received the revision the answer was taken from." in shown


def test_the_current_passage_and_facts_are_labelled_as_what_the_current_revision_states(
    not_received_html: str,
) -> None:
    shown = card(not_received_html, "d1")
    label = shown.index("What revision r1 states now:")
    assert label < shown.index("<mark>The free trial lasts 14 days.</mark>")
    assert label < shown.index("trial_days = 14")
    assert shown.count("states now:") == 1


def test_a_claim_citing_a_revision_never_received_cannot_be_checked(
    not_received_html: str,
) -> None:
    table = claims_table(not_received_html)
    assert "✓" not in table
    assert "? Cannot be checked. The store has not received the cited revision r9." in table


def test_the_decide_box_says_a_claim_on_a_revision_never_received_cannot_be_checked(
    not_received_html: str, publish: Any, submit: Any, reviewer: Any, token_client: Any,
) -> None:
    """Nobody knows whether the claim holds: the box does not call it contradicted. A second
    answer states 30 days against r1's 14: that claim does not hold, and is said so."""
    assert ("? Claim 1 cannot be checked: what it cites could not be read (see the claims "
            "table).") in not_received_html
    assert "does not hold against its source" not in not_received_html
    body = {"cite": "d2", "document_id": "pricing", "revision": "r1", "span": "p1"}
    submit("nr-2", as_of=None, answer="14 days [d1], or 30 [d2].",
           retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r9", "span": "p1"},
                      body],
           claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                   {"key": "trial_days", "value": 30, "cite": "d2"}])
    refused = token_client(reviewer).post("/api/v1/answers/nr-2/decisions", {
        "action": "approve", "verdict": current_verdict_id("nr-2")}, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"field": "despite", "message": (
        "claims[1] does not hold against what it cites; claims[0] cannot be checked: what it "
        "cites could not be read: send true to approve the answer all the same, or edit or "
        "reject it")}]


# --- Validity on the verdict's date --------------------------------------------------------------

def test_validity_is_shown_on_the_verdicts_as_of_not_today(
    publish: Any, submit: Any, reviewer: Any, login: Any
) -> None:
    # Asked about a day 40 days ago, 10 days before the fact came into force.
    publish("pricing", "r1", facts=[fact("trial_days", 14, start=-30, end=60)])
    response = submit("old", as_of=days(-40))
    assert response.json()["verdict"]["reason"] == "noncurrent_citation"
    html = text_of(login(reviewer).get("/answers/old/"))
    assert "Source not in force" in html
    table = claims_table(html)
    assert "✓" not in table
    assert "The value matches, but the fact is not in force (starts in 10 days)." in table
    assert "starts in 10 days" in card(html, "d1")
    assert "days left" not in html
    assert re.search(rf"Validity is shown as on {days(-40)}, the date this verdict was checked "
                     rf"for, not as on today \({days(0)}\)", " ".join(html.split()))


def test_a_verdict_for_today_needs_no_date_banner(hold: Any, reviewer: Any, login: Any) -> None:
    html = text_of(login(reviewer).get(f"/answers/{hold()}/"))
    assert "data-as-of" not in html
    assert "current, 60 days left" in html


def test_days_left_count_from_today_when_the_verdict_was_computed_days_ago(
    hold: Any, reviewer: Any, login: Any
) -> None:
    """A verdict stays current while no fact crosses a boundary, so an answer gated five days
    ago still shows it; its facts, valid 60 days from now, have 60 days left, not 65."""
    ingested = timezone.now() - dt.timedelta(days=5)
    with mock.patch("django.utils.timezone.now", return_value=ingested):
        trace_id = hold()
    html = text_of(login(reviewer).get(f"/answers/{trace_id}/"))
    assert "current, 60 days left" in html
    assert "65 days left" not in html


def test_a_fact_that_ended_since_the_verdict_is_shown_as_ended(
    publish: Any, submit: Any, reviewer: Any, login: Any
) -> None:
    """Gated three days ago on a fact that ended yesterday: until the day's sweep has run, the
    page must not call the fact current: a decision made on the page is checked on today."""
    publish("pricing", "r1", facts=[fact("trial_days", 14, start=-30, end=-1)])
    with mock.patch("django.utils.timezone.now",
                    return_value=timezone.now() - dt.timedelta(days=3)):
        assert submit("ended", as_of=None).json()["verdict"]["decision"] == "candidate"
    html = text_of(login(reviewer).get("/answers/ended/"))
    assert "expired 1 day ago" in card(html, "d1")
    assert "current, 2 days left" not in html


# --- Claims numbered one way ---------------------------------------------------------------------

def test_the_gates_own_message_numbers_claims_as_the_claims_table(
    hold: Any, reviewer: Any, login: Any
) -> None:
    page = login(reviewer).get(f"/answers/{hold()}/").context["page"]
    (finding,) = page.findings
    assert finding.sentence.startswith("For claim 1 (trial_days = 14)")
    assert finding.detail.startswith("claim 1 (trial_days): sources in force disagree")
    assert [row.number for row in page.claims] == [1]


# --- What a refused reviewer wrote ----------------------------------------------------------------

def test_an_edit_refused_because_a_colleague_claimed_the_item_keeps_the_claims(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    login(bob).post(f"/answers/{trace}/claim")
    response = login(reviewer).post(f"/answers/{trace}/decide", {
        "action": "edit", "edit-verdict": current_verdict_id(trace),
        "edit-answer": "New text [d1].", "edit-comment": "my comment",
        "claims-TOTAL_FORMS": "2", "claims-INITIAL_FORMS": "0", "claims-MIN_NUM_FORMS": "0",
        "claims-MAX_NUM_FORMS": "200",
        "claims-0-key": "trial_days", "claims-0-value": "77", "claims-0-value_type": "number",
        "claims-0-cite": "d1",
        "claims-1-subject": "eu", "claims-1-key": "plan", "claims-1-value": "pro",
        "claims-1-value_type": "text", "claims-1-cite": "d2",
    })
    assert response.status_code == 409
    kept = unsaved(text_of(response))
    assert "New text [d1]." in kept and "my comment" in kept
    assert 'trial_days = 77 [d1]\neu.plan = &quot;pro&quot; [d2]' in kept


def test_a_rejection_refused_because_a_colleague_claimed_the_item_keeps_the_reason(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    login(bob).post(f"/answers/{trace}/claim")
    response = login(reviewer).post(f"/answers/{trace}/decide", {
        "action": "reject", "reject-verdict": current_verdict_id(trace),
        "reject-reason": "outdated", "reject-comment": "",
    })
    assert response.status_code == 409
    kept = unsaved(text_of(response))
    assert "It relies on outdated sources" in kept
    assert "Comment" not in kept
    # Why, said again beside it: the message at the top may be scrolled out of sight.
    assert ('<p class="hint" data-unsaved-why>Not recorded: another reviewer is working on '
            'this answer.</p>') in kept


def test_a_decision_refused_because_a_colleague_decided_first_says_so_beside_what_was_kept(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    verdict = current_verdict_id(trace)
    assert login(bob).post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": verdict}).status_code == 302
    response = login(reviewer).post(f"/answers/{trace}/decide", {
        "action": "reject", "reject-verdict": verdict, "reject-reason": "outdated",
        "reject-comment": "too old"})
    kept = unsaved(text_of(response))
    why = re.search(r'<p class="hint" data-unsaved-why>(.*?)</p>', kept)
    assert why is not None and why.group(1).startswith(
        "This answer is no longer waiting for review: bob approved it at"), kept
    assert "too old" in kept


def test_a_note_to_the_owner_refused_because_a_colleague_claimed_the_item_is_kept(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold()
    login(bob).post(f"/answers/{trace}/claim")
    response = login(reviewer).post(f"/answers/{trace}/send-to-owner",
                                    {"note": "Which trial length is right for the EU?"})
    assert response.status_code == 409
    html = text_of(response)
    assert "Not recorded: another reviewer is working on this answer." in html
    # Who holds it, and until when, is said once: in the lease box.
    assert html.count("bob is working on this") == 1
    assert "Which trial length is right for the EU?" in unsaved(html)
    assert not ReviewItem.objects.get(answer__trace_id=trace).waiting_for_owner


# --- In a browser: the queue's Enter key and long words ----------------------------------------

@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_enter_on_the_more_link_follows_it_instead_of_claiming_the_selected_row(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any  # noqa: F811
) -> None:
    for trace in ("t-a", "t-b", "t-c"):
        hold(trace)
    page = sign_in("alice")
    page.goto(f"{live_server.url}/?limit=2")
    page.keyboard.press("j")  # selects the first row
    page.locator("a[rel=next]").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/?*cursor=*")
    assert not ReviewItem.objects.filter(leased_by__isnull=False).exists()
    assert page.console_errors == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_long_url_in_the_answer_wraps_inside_its_card(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any  # noqa: F811
) -> None:
    url = "https://example.test/" + "a" * 400
    hold("t-long", answer=f"See {url} for the trial of 14 days [d1].")
    assert Answer.objects.filter(trace_id="t-long").exists()
    page = sign_in("alice")
    page.goto(f"{live_server.url}/answers/t-long/")
    overflow = page.locator("li.sentence").first.evaluate(
        "el => { const card = el.closest('.card').getBoundingClientRect();"
        " return el.getBoundingClientRect().right - card.right"
        " + (el.scrollWidth - el.clientWidth); }")
    assert overflow <= 0
