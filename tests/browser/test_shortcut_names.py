"""A button's name is what it does, not its shortcut: a screen reader said "Approve a" and
"Next n", the letter of the key drawn beside the word. The key is told by aria-keyshortcuts."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_queue_and_item_buttons_are_named_without_their_keys(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    trace = hold("t-names")
    page = sign_in("alice")

    expect(page.get_by_role("button", name="Next", exact=True)).to_have_attribute(
        "aria-keyshortcuts", "n")
    page.locator(f"tr[data-trace='{trace}'] [data-open]").click()
    page.wait_for_url(f"**/answers/{trace}/")

    expect(page.get_by_role("button", name="Approve", exact=True)).to_have_attribute(
        "aria-keyshortcuts", "a")
    expect(page.get_by_role("button", name="Expand all passages", exact=True)).to_have_attribute(
        "aria-keyshortcuts", "o")
    for name, key in (("Reject", "r"), ("Edit", "e")):
        summary = page.locator("#decide summary", has_text=name)
        expect(summary).to_have_attribute("aria-keyshortcuts", key)
        expect(summary.locator("kbd")).to_have_attribute("aria-hidden", "true")
