"""An owner resolves a conflict from the browser and the answers it held leave the queue."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from reviewqueue.reviews.models import Answer, ReviewItem
from tests.browser.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_publishes_a_corrected_revision_and_the_held_answers_leave_the_queue(
    hold: Any, owner: Any, reviewer: Any, browser: Any, live_server: Any, screenshots: Any
) -> None:
    held = [hold("t-1"), hold("t-2", question="Is the trial longer in the EU?")]
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))

    page.goto(f"{live_server.url}/accounts/login/?next=/owner/")
    page.fill("input[name=username]", owner.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit].primary")
    page.wait_for_url(f"{live_server.url}/owner/")

    conflict = page.locator("[data-conflict]").first
    assert "trial_days" in conflict.inner_text()
    assert "holding 2 answers you may read" in conflict.inner_text()
    page.screenshot(path=str(screenshots / "owner_inbox.png"), full_page=True)

    page.click("text=Correct this document >> nth=1")
    page.wait_for_url(f"{live_server.url}/owner/documents/pricing-eu/")
    page.fill("input[name=facts-0-value]", "14")
    page.fill("textarea[name=note]", "The EU trial is 14 days as well.")
    page.click("button:has-text('Publish corrected revision')")
    # The passage the fact quotes still says 30: nothing is published until it says 14 too.
    left = page.locator("[data-passages-left-behind]")
    expect(left).to_contain_text("Passage p1 still says 30, not 14 (trial_days).")
    expect(page.locator("textarea[name=note]")).to_have_value("The EU trial is 14 days as well.")
    assert errors == ["Failed to load resource: the server responded with a status of 400 "
                      "(Bad Request)"]  # the refusal itself, and nothing else
    errors.clear()
    page.fill("textarea[name='passage:p1']", "In the EU the free trial lasts 14 days.")
    page.click("button:has-text('Publish corrected revision')")

    page.wait_for_url("**/owner/progress**")
    # Once every job has ended (the page reloads itself when one does), it says where the
    # answers stand: both released, both since the change.
    standing = page.locator("[data-standing] tbody tr")
    expect(standing).to_have_count(1)
    assert standing.first.inner_text().split("\t") == ["Candidate", "—", "2", "2"]
    assert "2 of 2 re-evaluated, 2 with a new verdict, 0 failed" in page.inner_text("body")
    changes = page.locator("[data-conflict-changes] li")
    assert changes.count() == 1
    assert " ".join(changes.first.inner_text().split()) == (
        "Closed trial_days The documents no longer disagree over any period they share.")
    assert page.locator("[data-moved-total]").inner_text() == "2"
    assert errors == []

    for trace in held:
        assert Answer.objects.get(trace_id=trace).status == Answer.Status.CANDIDATE
    assert not ReviewItem.objects.exists()
    context.close()


def test_a_note_pasted_over_its_limit_is_not_cut_and_is_refused_whole(
    hold: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-1")
    page = sign_in(owner.username, lands="/owner/")
    page.goto(f"{live_server.url}/owner/documents/pricing-eu/")
    note = page.locator("textarea[name=note]")
    counter = page.locator("#id_note-count")
    note.fill("short")
    expect(counter).to_be_hidden()  # far from the limit, nothing is said
    note.fill("n" * 5003)
    expect(note).to_have_value("n" * 5003)
    expect(counter).to_be_visible()
    expect(counter).to_have_text("5,003 / 5,000")
    expect(counter).to_have_class(re.compile(r"\bover\b"))
    page.fill("input[name=facts-0-value]", "14")
    page.fill("textarea[name='passage:p1']", "In the EU the free trial lasts 14 days.")
    page.click("button:has-text('Publish corrected revision')")
    page.wait_for_url("**/publish")
    expect(page.locator("body")).to_contain_text(
        "At most 5,000 characters: this text has 5,003.")
    assert len(page.locator("textarea[name=note]").input_value()) == 5003
    page.console_errors.clear()  # the refusal's 400, expected


def test_a_refused_correction_names_its_bad_fields_and_puts_the_cursor_in_the_first(
    hold: Any, owner: Any, browser: Any, live_server: Any
) -> None:
    hold("t-1")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/owner/documents/pricing-eu/")
    page.fill("input[name=username]", owner.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit].primary")
    page.wait_for_url(f"{live_server.url}/owner/documents/pricing-eu/")
    page.fill("input[name=facts-0-value]", "thirty")
    page.click("button:has-text('Publish corrected revision')")
    page.wait_for_url("**/publish")

    summary = page.locator("[data-error-summary]")
    assert " ".join(summary.inner_text().split()) == "Some values need fixing. trial_days: Value"
    assert page.evaluate("document.activeElement.name") == "facts-0-value"
    assert page.evaluate("document.activeElement.value") == "thirty"
    # The link leads to the field, as the page's own message beside it says.
    page.fill("input[name=facts-0-value]", "x")
    page.focus("body")
    summary.locator("a").click()
    assert page.evaluate("location.hash") == "#id_facts-0-value"
    assert "This fact is a number" in page.inner_text("body")
    context.close()


def test_an_owner_replies_from_the_inbox_and_the_reviewer_is_taken_to_the_reply(
    hold: Any, owner: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    trace = hold("t-ask")
    alice = sign_in(reviewer.username)
    alice.goto(f"{live_server.url}/answers/{trace}/")
    # From the Decide card, the link opens the hand-off at the end of the side column.
    alice.click("[data-ask-owners-link]")
    expect(alice.locator("#owner-note")).to_be_in_viewport()
    alice.fill("#owner-note", "Which trial length is right for the EU?")
    alice.click("button:has-text('Send to the owner')")
    expect(alice.locator(".messages")).to_contain_text("Sent to the owners.")

    olivia = sign_in(owner.username, lands="/owner/")
    card = olivia.locator(".sent-to-owner")
    expect(card).to_contain_text("Which trial length is right for the EU?")
    # A paste over the limit is not cut: the counter says so, and the server refuses it whole,
    # beside the form, which gets the cursor and still holds every character.
    box = card.get_by_label("Your reply to the reviewer")
    box.fill("y" * 5003)
    expect(card.locator(".counter")).to_have_text("5,003 / 5,000")
    expect(card.locator(".counter")).to_have_class(re.compile(r"\bover\b"))
    card.get_by_role("button", name="Reply and send it back to the reviewers").click()
    refused = olivia.get_by_label("Your reply to the reviewer")
    expect(olivia.locator("h1")).to_have_text("Owner inbox")  # still in the inbox
    expect(olivia.get_by_role("alert")).to_contain_text("the reply is 5,003 characters long")
    expect(refused).to_be_focused()
    expect(refused).to_be_in_viewport()
    assert len(refused.input_value()) == 5003
    olivia.console_errors.clear()  # the refusal's 400, expected

    olivia.goto(f"{live_server.url}/owner/")
    card.get_by_label("Your reply to the reviewer").fill("30 days in the EU, 14 elsewhere.")
    card.get_by_role("button", name="Reply and send it back to the reviewers").click()
    expect(olivia.locator(".messages")).to_contain_text("Your reply about t-ask was sent to alice.")
    expect(olivia.locator(".sent-to-owner")).to_have_count(0)

    # The reviewer's page says so at the top; the link brings the reply itself into view.
    alice.goto(f"{live_server.url}/answers/{trace}/")
    alice.click("[data-owner-replied-link]")
    reply = alice.locator("[data-owner-reply]")
    expect(reply).to_contain_text("30 days in the EU, 14 elsewhere.")
    expect(reply).to_be_in_viewport()

    # In the queue, the row's badge narrows the list to the answers the owners replied to.
    hold("t-other")
    alice.goto(f"{live_server.url}/")
    expect(alice.locator("[data-read]")).to_have_count(2)
    alice.click("[data-owner-replied]")
    expect(alice.locator("[data-read]")).to_have_text([trace])
    expect(alice.get_by_label("Sent to the owners")).to_have_value("replied")
    alice.get_by_label("Sent to the owners").select_option("waiting")
    alice.get_by_role("button", name="Filter").click()
    expect(alice.locator("[data-empty]")).to_contain_text("No held answer matches these filters")
    assert olivia.console_errors == [] and alice.console_errors == []


def test_a_fact_values_counter_counts_the_value_not_its_json_quotes(
    publish: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    """A text with line breaks is shown JSON-quoted, each break as two characters: the
    counter counts the value, as the server does, so an untouched long text is not "over"."""
    terms = ("Refunds are granted within 30 days of purchase for annual plans.\n" * 31)[:1990]
    publish("terms", passages=[{"span": "p1", "text": "Refund terms."}], facts=[
        {"key": "refund_terms", "value": terms, "valid_from": "2026-01-01",
         "valid_until": None, "span": "p1"}])
    page = sign_in(owner.username, lands="/owner/")
    page.goto(f"{live_server.url}/owner/documents/terms/")
    value = page.locator("[name=facts-0-value]")
    assert len(value.input_value()) > 2000  # as shown: quoted, with \n escapes
    counter = page.locator("#id_facts-0-value-count")
    expect(counter).to_have_text("1,990 / 2,000")
    expect(counter).not_to_have_class(re.compile(r"\bover\b"))
    value.fill('"' + "x" * 2001 + '"')
    expect(counter).to_have_text("2,001 / 2,000")
    expect(counter).to_have_class(re.compile(r"\bover\b"))
    value.fill("plain " * 400)  # unquoted text is counted as typed
    expect(counter).to_have_text("2,400 / 2,000")
