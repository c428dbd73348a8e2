"""What was just done ("Approved t-1") is said to a screen reader, not only drawn. A live region
is read out when its text changes; one that holds the message when the page loads is not read
at all, so the message is put into it once the page has loaded."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_decide_in_sight import claim_from_the_queue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_approval_is_announced_on_the_page_it_lands_on(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-1")
    page = sign_in("alice")
    claim_from_the_queue(page, "t-1")
    served: list[str] = []
    page.on("response", lambda response: served.append(response.text())
            if response.request.resource_type == "document" else None)
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url(lambda url: url.endswith("/"))

    live = page.get_by_role("status")
    expect(live).to_have_count(1)
    expect(live).to_have_text("Approved t-1: “How long is the free trial?”.")
    # Empty as served: the text arrives after the page loads, which is what is read out.
    assert served and 'role="status"></div>' in served[-1], served[-1][:200]
    expect(page.locator(".messages")).to_contain_text("Approved t-1")
    assert page.console_errors == []
