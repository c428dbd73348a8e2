"""A reviewer who comes back to the queue from an answer finds it as they left it: the same
filters and order, and the selection where they were.

The queue kept its filters (they travel with the answer's page), but not the row the reviewer
had moved to with j/k: back from an answer, with Back or after deciding it, nothing was
selected and the focus was at the top of the page, so the next `j` started again from the
first row. The selection is now on the answer opened last, or, when it has left the queue
(decided), on the row that came after it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SELECTED = re.compile(r"\bselected\b")


def row(page: Any, trace_id: str) -> Any:
    return page.locator(f"tr[data-trace='{trace_id}']")


def expect_selected(page: Any, trace_id: str) -> None:
    expect(row(page, trace_id)).to_have_class(SELECTED)
    expect(row(page, trace_id).locator("[data-open]")).to_be_focused()
    expect(page.locator("tr.selected")).to_have_count(1)


@pytest.fixture
def newest_first(hold: Any, reviewer: Any, sign_in: Any, live_server: Any) -> Any:
    """alice's queue of t-1, t-2, t-3 (held in that order), newest first."""
    for trace in ("t-1", "t-2", "t-3"):
        hold(trace)
    page = sign_in("alice")
    page.goto(f"{live_server.url}/?order=newest")
    expect(page.locator("[data-row]")).to_have_count(3)
    return page


def approve(page: Any) -> None:
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url("**/?order=newest")
    expect(page.locator(".messages")).to_contain_text("Approved")


def test_after_a_decision_the_queue_selects_the_answer_after_the_one_decided(
    newest_first: Any,
) -> None:
    page = newest_first
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")  # t-2, the second newest
    page.wait_for_url("**/answers/t-2/**")
    approve(page)
    expect(row(page, "t-2")).to_have_count(0)
    expect_selected(page, "t-1")
    page.keyboard.press("Enter")
    page.wait_for_url("**/answers/t-1/**")


def test_after_next_and_a_decision_the_queue_selects_the_answer_after_it(
    newest_first: Any,
) -> None:
    page = newest_first
    page.keyboard.press("n")  # the newest unclaimed: t-3
    page.wait_for_url("**/answers/t-3/**")
    approve(page)
    expect_selected(page, "t-2")


def test_back_from_an_answer_the_queue_selects_it_again(newest_first: Any) -> None:
    page = newest_first
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/answers/t-2/**")
    expect(page.locator(".lease-box.mine")).to_be_visible()
    page.go_back()
    page.wait_for_url("**/?order=newest")
    expect_selected(page, "t-2")
    page.keyboard.press("j")
    expect_selected(page, "t-1")


def test_after_deciding_the_last_row_of_a_page_the_row_that_moved_up_is_selected(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    for trace in ("t-1", "t-2", "t-3"):
        hold(trace)
    page = sign_in("alice")
    page.goto(f"{live_server.url}/?limit=2")  # t-1 and t-2; t-3 is on the next page
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/answers/t-2/**")
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url("**/?limit=2")
    expect(row(page, "t-3")).to_be_visible()  # it moved up into the page
    expect_selected(page, "t-3")


def test_the_top_bar_queue_link_leads_back_to_the_same_queue_view(newest_first: Any) -> None:
    page = newest_first
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/answers/t-2/**")
    page.locator("header.topbar nav").get_by_role("link", name="Queue").click()
    page.wait_for_url("**/?order=newest")
    expect(page.locator("[data-row]").first).to_have_attribute("data-trace", "t-3")
    expect_selected(page, "t-2")
