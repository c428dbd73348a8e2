"""A reviewer ticks "Then open the next answer" on the Decide box: approving one answer opens the
next unclaimed one, claimed for them, with what was just done said on top; the box stays ticked
there, and unticking it sends the next decision back to the queue."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_decide_in_sight import claim_from_the_queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ticking_the_box_moves_from_decision_to_the_next_answer(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    for trace in ("t-1", "t-2"):
        hold(trace)
    page = sign_in("alice")
    claim_from_the_queue(page, "t-1")
    box = page.get_by_label("Then open the next answer")
    expect(box).to_be_visible()
    expect(box).not_to_be_checked()
    box.check()
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url("**/answers/t-2/")
    expect(page.locator(".messages")).to_contain_text("Approved t-1")
    expect(page.locator(".lease-box.mine")).to_be_visible()  # claimed for her
    box = page.get_by_label("Then open the next answer")
    expect(box).to_be_checked()
    box.uncheck()
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url(lambda url: url.endswith("/"))
    expect(page.locator(".messages")).to_contain_text("Approved t-2")
    assert page.console_errors == []
