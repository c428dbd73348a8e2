"""A reviewer's lease ends while they type an edit, and nobody has taken the answer since: they
take it back from the notice and send the edit they typed.

The page said the lease had ended and made every field read-only, so that nothing is sent
under a lease the reviewer no longer holds; the only way on was "Reload the page and start
reviewing again", and a reload drops what the form held: the edited text and every claim row,
to be copied out one field at a time first. The notice now has a button that starts reviewing
again in place: the fields come back as they were, and the edit can be sent.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from reviewqueue.reviews.models import Answer, ReviewItem
from tests.browser.test_lease_lost_notice import EDIT_ANSWER, break_lease, open_long_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EDITED = "The free trial lasts 14 days; in the EU, see the local terms [d1]."


def test_a_reviewer_takes_the_answer_back_and_sends_the_edit_typed_meanwhile(
    hold: Any, reviewer: Any, sign_in: Any, settings: Any
) -> None:
    settings.REVIEW_LEASE_SECONDS = 30
    hold("t-typed")
    page = sign_in("alice")
    open_long_item(page, "t-typed")
    page.locator("#decide [data-action=edit] > summary").click()
    page.fill(EDIT_ANSWER, EDITED)
    break_lease(page, "t-typed")  # as a lease that ran out: nobody holds the answer now
    expect(page.locator(EDIT_ANSWER)).not_to_be_editable()

    page.locator("[data-lease-lost]").get_by_role(
        "button", name="Start reviewing again, keeping what you wrote").click()
    expect(page.locator(".lease-box.mine")).to_contain_text("You are working on this until")
    expect(page.locator("[data-lease-lost]")).to_be_hidden()
    field = page.locator(EDIT_ANSWER)
    expect(field).to_be_editable()
    expect(field).to_have_value(EDITED)
    assert ReviewItem.objects.get(answer__trace_id="t-typed").leased_by == reviewer

    page.locator("#decide [data-action=edit] button[type=submit]").click()
    expect(page.locator(".messages")).to_contain_text("Saved the edit as version 2")
    assert Answer.objects.get(trace_id="t-typed").current_version.text == EDITED


def test_an_answer_someone_else_took_offers_no_way_back(
    hold: Any, reviewer: Any, bob: Any, sign_in: Any, settings: Any
) -> None:
    settings.REVIEW_LEASE_SECONDS = 30
    hold("t-taken")
    page = sign_in("alice")
    open_long_item(page, "t-taken")
    ReviewItem.objects.filter(answer__trace_id="t-taken").update(leased_by=bob)
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(page.locator("[data-lease-lost]")).to_contain_text("bob is working on this answer")
    expect(page.locator("[data-lease-lost] button:enabled")).to_have_count(0)
