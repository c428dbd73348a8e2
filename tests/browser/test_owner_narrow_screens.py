"""The owner's correction form on a narrow phone (400 and 360 px): every field of it is in the
window, none behind a table that scrolls sideways, and each says what it is where it is seen."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_KEY = "trial-promo-autumn-campaign"

# Every field and button of the page's forms, where it is drawn.
CONTROLS_JS = """() => [...document.querySelectorAll(
    'main form :is(input:not([type=hidden]), textarea, select, button)')].map(el => {
  const r = el.getBoundingClientRect();
  return [el.name || el.textContent.trim(), Math.round(r.left), Math.round(r.right)];
})"""


@pytest.fixture
def long_document(publish: Any) -> str:
    """A document whose id, revision, key and value are each long and without spaces."""
    publish(LONG_KEY, revision="2026-12-02.4", title="Autumn campaign for the free trial",
            facts=[fact("customer_record_retention_days",
                        "https://docs.example.test/policies/retention-and-deletion-terms")])
    return LONG_KEY


def open_document(sign_in: Any, live_server: Any, key: str, width: int) -> Any:
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/owner/documents/{key}/")
    page.locator("table.facts-edit").wait_for()
    return page


@pytest.mark.parametrize("width", [400, 360])
@pytest.mark.parametrize("key", ["pricing", LONG_KEY])
def test_every_field_of_the_correction_form_is_in_the_window(
    sources: None, long_document: str, owner: Any, sign_in: Any, live_server: Any,
    key: str, width: int,
) -> None:
    page = open_document(sign_in, live_server, key, width)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    controls = page.evaluate(CONTROLS_JS)
    names = [name for name, _left, _right in controls]
    assert {"facts-0-value", "facts-0-valid_from", "facts-0-valid_until", "note"} <= set(names)
    outside = [c for c in controls if c[1] < 0 or c[2] > width]
    assert outside == [], outside
    # Nor is anything of the form out of sight in a box to scroll sideways.
    wrap = page.locator(".table-wrap:has(table.facts-edit)")
    scroll_width, client_width = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
    assert scroll_width <= client_width


def test_on_a_phone_each_correction_field_is_named_above_it(
    sources: None, owner: Any, sign_in: Any, live_server: Any,
) -> None:
    """The column headings are out of sight once each fact is a block of fields: each field
    has its column's name drawn above it instead."""
    page = open_document(sign_in, live_server, "pricing", 400)
    names = page.locator("table.facts-edit").evaluate("""table => {
      const heads = [...table.querySelectorAll('thead th')].map(th => th.textContent.trim());
      return [...table.tBodies[0].rows[0].cells].slice(1, 4).map((td, i) => {
        const field = td.querySelector('input').getBoundingClientRect();
        const before = getComputedStyle(td, '::before');
        // Its column's heading, drawn (the "/ ''" after it keeps it from a screen reader).
        const drawn = before.display !== 'none'
          && before.content.startsWith(JSON.stringify(heads[i + 1]));
        return [heads[i + 1], drawn && td.getBoundingClientRect().top < field.top - 5];
      });
    }""")
    assert names == [["Value", True], ["Valid from", True], ["Valid until", True]], names
