"""The queue's reason chip for the filter in force shows the keyboard focus like any control.

A reviewer tabs from "Next" onto the chips above the queue. The chip of the filter in force
("All reasons" when none is) is drawn with an outline of its own, which took the place of the
focus ring: focused or not, it looked exactly the same, so the reviewer lost track of where the
focus was on the first stop after "Next".
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# What the eye can tell a focused control by.
LOOK_JS = """el => {
  const s = getComputedStyle(el);
  return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.outlineOffset, s.boxShadow,
          s.backgroundColor, s.borderColor, s.textDecorationLine, s.color].join(' | ');
}"""


@pytest.mark.parametrize("query", ["", "?reason=conflicting_sources"])
def test_the_active_reason_chip_looks_different_when_it_has_the_focus(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any, query: str
) -> None:
    hold("t-1")
    page = sign_in("alice")
    page.goto(f"{live_server.url}/{query}")
    chip = page.locator(".reason-counts .count-chip.active")
    expect(chip).to_have_count(1)
    resting = chip.evaluate(LOOK_JS)
    # From the keyboard: Next, then Tab along the chips to the one in force.
    page.locator("[data-next]").focus()
    for _ in range(5):
        page.keyboard.press("Tab")
        if chip.evaluate("el => el === document.activeElement"):
            break
    expect(chip).to_be_focused()
    assert chip.evaluate("el => el.matches(':focus-visible')")
    focused = chip.evaluate(LOOK_JS)
    assert focused != resting, focused
