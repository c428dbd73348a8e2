"""A lease lost while the item page is open: said once, over nothing the reviewer was using,
and what they wrote stays to copy but can no longer be changed."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from reviewqueue.reviews.models import ReviewItem

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOST = "Your lease on this answer has ended"
COMMENT = "#decide [data-action=approve] textarea"
EDIT_ANSWER = "#decide [data-action=edit] textarea[name=edit-answer]"


def open_long_item(page: Any, trace_id: str) -> None:
    page.locator(f"tr[data-trace='{trace_id}'] [data-open]").click()
    page.wait_for_url(f"**/answers/{trace_id}/")
    expect(page.locator(".lease-box.mine")).to_be_visible()


def break_lease(page: Any, trace_id: str) -> None:
    """An admin breaks the lease; the page learns it at its next renewal (asked for at once by
    the reviewer coming back to the tab, or by the 10 s timer of a 30 s lease)."""
    ReviewItem.objects.filter(answer__trace_id=trace_id).update(lease_until=None,
                                                                leased_by=None)
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(page.locator(".lease-box.lost")).to_be_visible(timeout=20_000)


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def test_a_lost_lease_is_said_once_and_covers_no_field(
    hold: Any, reviewer: Any, sign_in: Any, settings: Any
) -> None:
    settings.REVIEW_LEASE_SECONDS = 30
    hold("t-once", answer=" ".join(f"Sentence {i} of a long answer [d1]." for i in range(80)))
    page = sign_in("alice")
    open_long_item(page, "t-once")
    page.fill(COMMENT, "Checked against the EU terms.")
    page.mouse.wheel(0, 4000)  # down the answer, the Decide card beside it
    break_lease(page, "t-once")

    # One notice, not the lease box and a banner saying the same sentence.
    said = page.get_by_text(LOST)
    expect(said).to_have_count(1)
    expect(said).to_be_in_viewport()
    notice = page.locator("[data-lease-lost]")
    expect(notice).to_have_count(1)
    expect(notice).to_be_visible()
    box = notice.bounding_box()
    top_bar = page.locator("header.topbar").bounding_box()
    assert box is not None and top_bar is not None
    assert box["y"] >= top_bar["y"] + top_bar["height"]  # its first line not under the top bar

    # The comment box at the bottom of the side column, where the reviewer was writing: the
    # notice is over none of it, nor over any other field or button.
    page.locator(COMMENT).evaluate("el => el.scrollIntoView({block: 'end'})")
    box = notice.bounding_box()
    assert box is not None
    fields = page.locator("main textarea:visible, main input:visible, main select:visible, "
                          "main button:visible")
    for i in range(fields.count()):
        field = fields.nth(i)
        field_box = field.bounding_box()
        if field_box is None or field.evaluate("el => el.closest('[data-lease-lost]') !== null"):
            continue  # the lease box's own (disabled) Release button
        assert not overlaps(box, field_box), field.evaluate("el => el.outerHTML")
    on_top = page.locator(COMMENT).evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === el; }")
    assert on_top, "something covers the comment box"


def test_what_the_reviewer_wrote_stays_to_copy_but_can_no_longer_be_changed(
    hold: Any, reviewer: Any, sign_in: Any, settings: Any
) -> None:
    settings.REVIEW_LEASE_SECONDS = 30
    hold("t-typed")
    page = sign_in("alice")
    open_long_item(page, "t-typed")
    page.fill(COMMENT, "Checked against the EU terms.")
    page.keyboard.press("Escape")
    page.locator("#decide [data-action=edit] > summary").click()
    page.fill(EDIT_ANSWER, "The free trial lasts 14 days, 30 in the EU [d1].")
    break_lease(page, "t-typed")

    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_be_disabled()
    for selector, text in ((COMMENT, "Checked against the EU terms."),
                           (EDIT_ANSWER, "The free trial lasts 14 days, 30 in the EU [d1].")):
        field = page.locator(selector)
        expect(field).to_have_value(text)  # nothing typed is lost
        expect(field).not_to_be_editable()
        field.click()
        page.keyboard.press("End")
        page.keyboard.type(" more")
        expect(field).to_have_value(text)
        # Still there to select and copy.
        assert field.evaluate("el => { el.select();"
                              " return el.value.substring(el.selectionStart, el.selectionEnd); }"
                              ) == text
    expect(page.locator("#decide [data-action=reject] select")).to_be_disabled()
    expect(page.locator("header select[name=language]")).to_be_enabled()  # not the page's
