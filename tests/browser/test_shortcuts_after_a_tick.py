"""The item page's shortcuts work after a box is ticked from the keyboard.

A reviewer tabs to "Then open the next answer", ticks it with Space, and presses `a` to go to
Approve. A checkbox takes no text, so the shortcut is the reviewer's; it did nothing instead
(the shortcuts treated every <input> as a field being typed in), and the cursor stayed on the
box with no word as to why.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_decide_in_sight import claim_from_the_queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_goes_to_approve_after_ticking_then_open_the_next_answer(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-1")
    page = sign_in("alice")
    claim_from_the_queue(page, "t-1")
    box = page.get_by_label("Then open the next answer")
    box.focus()
    page.keyboard.press("Space")
    expect(box).to_be_checked()

    page.keyboard.press("a")
    expect(page.locator("#decide [data-action=approve] textarea")).to_be_focused()


def test_r_goes_to_reject_after_ticking_then_open_the_next_answer(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-1")
    page = sign_in("alice")
    claim_from_the_queue(page, "t-1")
    box = page.get_by_label("Then open the next answer")
    box.focus()
    page.keyboard.press("Space")

    page.keyboard.press("r")
    expect(page.locator("#decide [data-action=reject]")).to_have_attribute("open", "")
    expect(page.locator("#decide [data-action=reject] select")).to_be_focused()
