"""An approval refused for want of "Approve it all the same" puts the cursor on that box.

A claim marked ✗ takes a second, explicit yes. A reviewer working from the keyboard presses
`a`, Tab, Enter: the page comes back with the error under the box, and the cursor has to be on
the box (aria-invalid, described by the error), so that Space ticks it and a screen reader reads
why the approval was refused. It landed on the comment above instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from reviewqueue.reviews.models import Answer
from tests.reviews.conftest import fact

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_refused_approval_puts_the_cursor_on_approve_it_all_the_same(
    hold: Any, publish: Any, reviewer: Any, sign_in: Any
) -> None:
    # Generated from r1 (14 days); the current revision says 21: claim 1 is ✗.
    trace = hold("t-despite")
    publish("pricing", revision="r2", facts=[fact("trial_days", 21),
                                             fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 21 days."},
                      {"span": "p2", "text": "Support is available 24/7."}])
    page = sign_in("alice")
    page.locator(f"tr[data-trace='{trace}'] [data-open]").click()
    page.wait_for_url(f"**/answers/{trace}/")
    expect(page.locator("[data-contradicted]")).to_be_visible()

    # From the keyboard: `a` lands on the comment; Tab, Tab (past the unticked box), Enter.
    page.keyboard.press("a")
    page.keyboard.type("The 14 days still apply.")
    page.locator("#decide [data-action=approve] button[type=submit]").focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")

    despite = page.locator("#decide [data-action=approve] input[name=approve-despite]")
    expect(page.locator("#decide .errorlist")).to_contain_text("Tick the box")
    expect(despite).to_have_attribute("aria-invalid", "true")
    # The field whose error is shown has the cursor, not the comment above it.
    expect(despite).to_be_focused()
    assert Answer.objects.get(trace_id=trace).status == "held"
