"""A reviewer triaging the queue on a laptop decides without scrolling: once they have claimed
an answer, Approve and Reject are in the window, beside why the gate held it. On a phone the
decision comes last, after the answer and why it was held."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import held_citing_retention
from tests.browser.test_small_screens import PHONE, fits_the_window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1280, "height": 900}


def inside(box: dict[str, float] | None, viewport: dict[str, int]) -> bool:
    return box is not None and (
        box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= viewport["width"]
        and box["y"] + box["height"] <= viewport["height"])


def claim_from_the_queue(page: Any, trace_id: str) -> None:
    page.locator(f"tr[data-trace='{trace_id}'] [data-open]").click()
    page.wait_for_url(f"**/answers/{trace_id}/")
    expect(page.locator(".lease-box.mine")).to_be_visible()


@pytest.fixture
def busy_answer(hold: Any, publish: Any) -> str:
    """A held answer with two findings, three sources and two claims: a full side column."""
    return held_citing_retention(hold, publish, [
        {"key": "trial_days", "value": 14, "cite": "d1"},
        {"key": "data_retention_days", "value": 30, "cite": "d3"}])


@pytest.fixture
def claimed_on_a_laptop(busy_answer: str, reviewer: Any, sign_in: Any) -> Any:
    """alice's page of the busy answer, claimed from the queue at 1280x900."""
    page = sign_in("alice")
    page.set_viewport_size(LAPTOP)
    claim_from_the_queue(page, busy_answer)
    return page


def test_on_a_laptop_approve_and_reject_are_in_sight_once_claimed(
    claimed_on_a_laptop: Any,
) -> None:
    page = claimed_on_a_laptop
    assert page.evaluate("window.scrollY") == 0
    expect(page.locator("[data-jump-to-decide]")).to_be_hidden()  # Decide is in sight already
    approve = page.locator("#decide [data-action=approve] button[type=submit]")
    reject = page.locator("#decide [data-action=reject] > summary")
    for control in (approve, reject):
        expect(control).to_be_visible()
        assert inside(control.bounding_box(), LAPTOP), control.bounding_box()
    # Why it was held is still in sight: its heading and its first finding.
    for shown in (page.get_by_role("heading", name="Why it was held"),
                  page.locator("ul.findings > li").first):
        assert inside(shown.bounding_box(), LAPTOP), shown.bounding_box()


def test_on_a_laptop_the_a_key_lands_on_the_approve_comment_in_sight(
    claimed_on_a_laptop: Any,
) -> None:
    page = claimed_on_a_laptop
    ask = page.locator("[data-ask-owners-link]")
    expect(ask.locator(".where-below")).to_be_visible()
    expect(ask.locator(".where-above")).to_be_hidden()
    page.keyboard.press("a")
    comment = page.locator("#decide [data-action=approve] textarea")
    expect(comment).to_be_focused()
    assert inside(comment.bounding_box(), LAPTOP)
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("r")
    reason = page.locator("#decide [data-action=reject] select")
    expect(reason).to_be_focused()
    assert inside(reason.bounding_box(), LAPTOP)


def test_on_a_phone_decide_comes_after_why_it_was_held_and_fits_the_window(
    busy_answer: str, reviewer: Any, sign_in: Any,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size(PHONE)
    claim_from_the_queue(page, busy_answer)
    fits_the_window(page)
    tops = [page.locator(selector).bounding_box()["y"] for selector in (
        "section[aria-labelledby=answer-h]", "section[aria-labelledby=findings-h]",
        "section[aria-labelledby=owners-h]", "#decide")]
    assert tops == sorted(tops), tops
    # The hand-off lies above Decide here, and its link says so.
    ask = page.locator("[data-ask-owners-link]")
    expect(ask.locator(".where-above")).to_be_visible()
    expect(ask.locator(".where-below")).to_be_hidden()
    # Far down on a phone: the lease box leads straight to it.
    page.locator("[data-jump-to-decide]").click()
    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_be_in_viewport()
    page.evaluate("window.scrollTo(0, 0)")
    page.keyboard.press("a")
    comment = page.locator("#decide [data-action=approve] textarea")
    expect(comment).to_be_focused()
    expect(comment).to_be_in_viewport()


def test_on_a_phone_an_answer_nobody_holds_leads_to_decide_too(
    busy_answer: str, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/answers/{busy_answer}/")
    expect(page.get_by_text("Nobody is working on this answer.")).to_be_visible()
    page.locator("[data-jump-to-decide]").click()
    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_be_in_viewport()
