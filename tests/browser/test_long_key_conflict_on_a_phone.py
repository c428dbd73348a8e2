"""A conflict on a long fact key, seen by its owner on a phone (390 px).

Keys are snake_case without a break opportunity. The owner's inbox names each conflict by its
key in the card's heading, and the conflict's page in its h1: on a phone the key has to wrap
there, as ids and URLs do everywhere else, rather than widen the page and cut the heading off
at the window's edge.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_small_screens import PHONE, fits_the_window
from tests.reviews.conftest import fact

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_FACT_KEY = "refund_window_days_for_annual_business_plans"


@pytest.fixture
def long_key_conflict(publish: Any) -> int:
    from reviewqueue.sources.models import Conflict

    publish("refunds", title="Refund policy", facts=[fact(LONG_FACT_KEY, 30)],
            passages=[{"span": "p1", "text": "Annual plans can be refunded within 30 days."}])
    publish("refunds-annual", title="Annual plan terms", facts=[fact(LONG_FACT_KEY, 14)],
            passages=[{"span": "p1", "text": "Annual plans can be refunded within 14 days."}])
    return Conflict.objects.get(key=LONG_FACT_KEY, status="open").pk


def test_the_owner_inbox_wraps_a_long_conflict_key_on_a_phone(
    long_key_conflict: int, owner: Any, sign_in: Any,
) -> None:
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size(PHONE)
    page.reload()
    expect(page.locator(f"[data-conflict='{long_key_conflict}'] h3")).to_contain_text(
        LONG_FACT_KEY)
    fits_the_window(page)


def test_the_conflict_page_wraps_a_long_key_in_its_heading_on_a_phone(
    long_key_conflict: int, owner: Any, sign_in: Any, live_server: Any,
) -> None:
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/owner/conflicts/{long_key_conflict}/")
    heading = page.locator("h1")
    expect(heading).to_have_text(LONG_FACT_KEY)
    box = heading.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"], box
    fits_the_window(page)
