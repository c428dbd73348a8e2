"""A reviewer who takes an answer from the keyboard starts on it, not on the top bar.

From the queue, `n` ("Next") claims the oldest unclaimed answer and opens it; on an answer read
without claiming it, "Start reviewing" claims it. Either way the page that opens had the focus
nowhere: the first Tab went to "Skip to content", then the brand, the menu, the language, the
help and "Sign out" before anything of the answer. The focus now starts on the question, the
page's heading, which a screen reader reads out, and Tab goes on into the answer.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

IN_MAIN_JS = "() => !!document.activeElement.closest('main')"


def starts_on_the_question(page: Any) -> None:
    expect(page.locator(".lease-box.mine")).to_be_visible()
    question = page.get_by_role("heading", level=1)
    expect(question).to_be_focused()
    # No control, it draws no focus ring: opened with the mouse, it looked like one.
    expect(question).to_have_css("outline-style", "none")
    page.keyboard.press("Tab")
    assert page.evaluate(IN_MAIN_JS), page.evaluate("document.activeElement.outerHTML")


def test_next_from_the_queue_puts_the_focus_on_the_question(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-1", question="How long is the free trial?")
    page = sign_in("alice")
    page.keyboard.press("n")
    page.wait_for_url("**/answers/t-1/")
    starts_on_the_question(page)


def test_start_reviewing_puts_the_focus_on_the_question(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-1", question="How long is the free trial?")
    page = sign_in("alice")
    page.goto(f"{live_server.url}/answers/t-1/")
    start = page.get_by_role("button", name="Start reviewing")
    start.focus()
    page.keyboard.press("Enter")
    starts_on_the_question(page)
