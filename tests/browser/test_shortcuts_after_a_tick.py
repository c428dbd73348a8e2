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


@pytest.mark.parametrize(("key", "form", "focused"), [
    ("a", "approve", "textarea"),
    ("r", "reject", "select"),
])
def test_a_shortcut_works_after_ticking_then_open_the_next_answer(
    hold: Any, reviewer: Any, sign_in: Any, key: str, form: str, focused: str
) -> None:
    hold("t-1")
    page = sign_in("alice")
    claim_from_the_queue(page, "t-1")
    box = page.get_by_label("Then open the next answer")
    box.focus()
    page.keyboard.press("Space")
    expect(box).to_be_checked()

    page.keyboard.press(key)
    # Reject's form opens to take the focus (a closed one's fields cannot have it).
    expect(page.locator(f"#decide [data-action={form}] {focused}")).to_be_focused()
