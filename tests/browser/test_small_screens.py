"""What a reviewer and an owner see on a phone, and the claim editor at every width: each
control shows its whole text (no menu choice cut to "true/fals"), each field says what it is,
and no page scrolls sideways."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import held_citing_retention
from tests.reviews.conftest import fact

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}

# What is cut in a form's controls: a text field scrolled inside itself, or a menu narrower
# than one of its choices needs. A menu's text is drawn by the browser, out of reach of the
# page, so each choice is measured on a copy of the menu holding only that choice, sized to
# fit it, beside the original (the same rules apply to both).
CUT_CONTROLS_JS = """root => {
  const cut = [];
  for (const el of root.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden' || el.type === 'checkbox' || el.type === 'radio') continue;
    const name = el.name || el.id;
    if (el.tagName !== 'SELECT') {
      if (el.scrollWidth > el.clientWidth)
        cut.push([name, el.value, el.scrollWidth, el.clientWidth]);
      continue;
    }
    for (const option of el.options) {
      const probe = el.cloneNode(false);
      probe.removeAttribute('id'); probe.removeAttribute('name');
      probe.append(new Option(option.text));
      for (const [p, v] of [['width', 'auto'], ['min-width', '0'], ['max-width', 'none'],
                            ['position', 'absolute'], ['visibility', 'hidden']])
        probe.style.setProperty(p, v, 'important');
      el.after(probe);
      const needs = probe.getBoundingClientRect().width;
      probe.remove();
      const has = el.getBoundingClientRect().width;
      if (needs > has + 0.5) cut.push([name, option.text, Math.ceil(needs), Math.floor(has)]);
    }
  }
  return cut;
}"""

# Whatever sticks out of the window (not counting what scrolls inside a box of its own).
OUTSIDE_JS = """() => [...document.querySelectorAll('body *')].filter(el => {
    const r = el.getBoundingClientRect();
    if (!r.width || el.closest('.visually-hidden')) return false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== 'visible') return false;
    return r.left < -0.5 || r.right > window.innerWidth + 0.5;
  }).slice(0, 6).map(el => `${el.tagName}.${el.className} ${el.textContent.trim().slice(0, 30)}`)"""


def fits_the_window(page: Any) -> None:
    width = page.viewport_size["width"]
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, (page.url, scroll_width, page.evaluate(OUTSIDE_JS))


@pytest.fixture
def long_claims(hold: Any, publish: Any) -> str:
    """A held answer whose edit form opens with the longest choice of each menu selected
    ("true/false", "[d3]"), a long key and a value of two words."""
    return held_citing_retention(hold, publish, [
        {"key": "trial_days", "value": "fourteen days", "cite": "d1"},
        {"key": "data_retention_days", "value": True, "cite": "d3"}])


def open_claim_editor(page: Any, url: str, width: int) -> Any:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    page.locator("details[data-action=edit] > summary").click()
    editor = page.locator("table.claim-edit")
    expect(editor).to_be_visible()
    return editor


@pytest.mark.parametrize("width", [390, 768, 1024, 1280])
def test_every_control_of_the_claim_editor_shows_its_whole_text(
    long_claims: str, reviewer: Any, sign_in: Any, live_server: Any, width: int,
) -> None:
    page = sign_in("alice")
    editor = open_claim_editor(page, f"{live_server.url}/answers/{long_claims}/", width)
    expect(editor.locator("select[name=claims-1-value_type]")).to_have_value("boolean")
    expect(editor.locator("input[name=claims-1-key]")).to_have_value("data_retention_days")
    assert editor.evaluate(CUT_CONTROLS_JS) == []
    fits_the_window(page)
    # Every control lies inside the Decide card, none under its neighbour.
    card = page.locator("#decide").bounding_box()
    boxes = editor.locator("tr[data-claim-row] >> nth=1").locator(
        "input:not([type=hidden]), select").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom]; })")
    assert len(boxes) == 6
    for left, _top, right, _bottom in boxes:
        assert card["x"] <= left and right <= card["x"] + card["width"], (boxes, card)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)


@pytest.mark.parametrize("width", [390, 768, 1024, 1280])
def test_each_field_of_the_claim_editor_is_named_where_it_is_seen(
    long_claims: str, reviewer: Any, sign_in: Any, live_server: Any, width: int,
) -> None:
    """Under its column's heading, or where the claims are blocks of fields, above it."""
    page = sign_in("alice")
    editor = open_claim_editor(page, f"{live_server.url}/answers/{long_claims}/", width)
    names = editor.evaluate("""table => {
      const heads = [...table.querySelectorAll('thead th')];
      const row = table.querySelectorAll('tr[data-claim-row]')[1];
      return [...row.cells].map((td, i) => {
        const field = td.querySelector('input:not([type=hidden]), select').getBoundingClientRect();
        const before = getComputedStyle(td, '::before');
        if (before.content !== 'none' && before.display !== 'none') {
          // Drawn above the field, whole: the cell is as wide as what it holds.
          return [td.dataset.label, td.getBoundingClientRect().top < field.top - 5
                  && td.scrollWidth <= td.clientWidth];
        }
        const th = heads[i].getBoundingClientRect();
        return [heads[i].textContent.trim(), th.width > 10 && th.bottom <= field.top
                && th.left < field.right && field.left < th.right];
      });
    }""")
    assert names == [[name, True] for name in
                     ("Subject", "Key", "Value", "Type", "Cited", "Remove")], names


LINES_JS = """el => {
  const range = document.createRange(); range.selectNodeContents(el);
  return new Set([...range.getClientRects()].filter(r => r.width)
                  .map(r => Math.round(r.bottom))).size;
}"""


def test_on_a_phone_the_claims_table_reads_a_few_lines_a_claim(
    long_claims: str, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    """Each claim is a card: every column under its name, none squeezed to a word a line and
    none behind a sideways scroll."""
    page = sign_in("alice")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/answers/{long_claims}/")
    fits_the_window(page)
    rows = page.locator("table.claims tbody tr")
    expect(rows).to_have_count(2)
    assert page.locator(".table-wrap:has(table.claims)").evaluate(
        "el => el.scrollWidth <= el.clientWidth")
    for i in range(2):
        supporting = rows.nth(i).locator("td").nth(5)
        holds = rows.nth(i).locator("td").last
        # The fact, then its period and state; the verdict ("✗ The source says 90.").
        assert supporting.evaluate(LINES_JS) <= 3, supporting.inner_text()
        assert holds.evaluate(LINES_JS) <= 2, holds.inner_text()
    expect(rows.last.locator("td").last).to_have_text("✗ The source says 90.")


def test_on_a_phone_an_owner_reads_and_corrects_each_fact_whole(
    hold: Any, owner: Any, sign_in: Any, live_server: Any,
) -> None:
    hold("t-owner")
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/owner/documents/pricing/")
    fits_the_window(page)
    correction = page.locator("form:has(table.facts-edit)")
    expect(correction.locator("input[name=facts-1-value]")).to_have_value("24/7")
    assert correction.evaluate(CUT_CONTROLS_JS) == []
    # The table scrolls as one box: scrolled to its end, its last column is in sight, not
    # blank space past it.
    wrap = page.locator(".table-wrap:has(table.facts-edit)")
    wrap.evaluate("w => { w.scrollLeft = w.scrollWidth; }")
    passage = page.locator("table.facts-edit th").last.bounding_box()
    box = wrap.bounding_box()
    assert box["x"] <= passage["x"], (passage, box)
    assert passage["x"] + passage["width"] <= box["x"] + box["width"] + 1, (passage, box)
    # Each fact's period of validity on one line (not "2027-" / "02-01"), and each "End
    # validity" form set apart from the next.
    periods = page.locator(".inline-form [data-valid]")
    expect(periods).to_have_count(2)
    assert [p.evaluate(LINES_JS) for p in periods.all()] == [1, 1]
    forms = page.locator(".inline-form")
    assert forms.nth(1).evaluate("f => getComputedStyle(f).borderTopStyle") == "solid"

    page.fill("input[name=facts-0-valid_until]", "2027-12-31")
    page.fill("textarea[name=note]", "No change to the value: the trial runs on in 2027.")
    page.click("button:has-text('Publish corrected revision')")
    page.wait_for_url("**/owner/progress**")
    # The message of what was done lines up with the page under it.
    message = page.locator(".messages .message").bounding_box()
    heading = page.locator("main h1").bounding_box()
    assert abs(message["x"] - heading["x"]) <= 1, (message, heading)
    fits_the_window(page)


def test_on_a_phone_each_fact_that_ends_is_a_card_with_its_end_and_answers_in_sight(
    publish: Any, submit: Any, owner: Any, sign_in: Any,
) -> None:
    publish("pricing", title="Plans and pricing", facts=[fact("trial_days", 14, end=5)])
    for n in range(3):
        assert submit(f"t-{n}", as_of=None).status_code == 201
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size(PHONE)
    page.reload()
    fits_the_window(page)
    wrap = page.locator(".table-wrap:has(table[data-expiring])")
    # Nothing in it to scroll to: the card holds every column of the row.
    assert wrap.evaluate("w => w.scrollWidth - w.clientWidth") <= 0
    card = page.locator("table[data-expiring] tbody tr").first
    # The document by its title, then the fact, then each further column under its name.
    ends = fact(end=5)["valid_until"]
    assert card.inner_text().split("\n")[:4] == [
        "Plans and pricing pricing", "trial_days = 14", f"{ends} (in 5 days)", "3"]
    window = page.viewport_size["width"]
    for link in card.locator("a[href^='/answers/']").all():
        box = link.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= window, box
    # Each of those columns is named above its value, for the eye (assistive technology reads
    # the table's own header).
    labels = card.locator("td[data-label]").evaluate_all(
        "tds => tds.map(td => [getComputedStyle(td, '::before').content,"
        " getComputedStyle(td, '::before').display])")
    assert labels == [['"Ends" / ""', "block"], ['"Answers resting on it" / ""', "block"]]


def test_on_a_phone_the_queue_folds_its_filter_form_unless_it_is_in_use(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-1")
    page = sign_in("alice")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/")
    form = page.locator("form.filters")
    # The first row is in sight below the reason chips; the form opens from its summary.
    expect(form).to_be_hidden()
    assert page.locator("[data-row]").first.bounding_box()["y"] < PHONE["height"]
    page.locator("details[data-filters] > summary").click()
    expect(form).to_be_visible()
    assert form.evaluate(CUT_CONTROLS_JS) == []
    fits_the_window(page)
    # A list narrowed by the form shows the form that narrowed it.
    page.goto(f"{live_server.url}/?claim=unclaimed")
    expect(form).to_be_visible()
    # An order narrows nothing: the form stays folded, its summary saying the order.
    page.goto(f"{live_server.url}/?order=newest")
    expect(form).to_be_hidden()
    expect(page.locator("details[data-filters] > summary")).to_have_text(
        "More filters · newest first")
    # On a wide screen it is always open, with no summary to fold it.
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/")
    expect(form).to_be_visible()
    expect(page.locator("details[data-filters] > summary")).to_be_hidden()


def test_on_a_phone_the_top_bar_scrolls_away_with_the_page(
    long_claims: str, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    """Three lines on a phone: kept on screen, it would cover a seventh of it on every page."""
    page = sign_in("alice")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/answers/{long_claims}/")
    page.evaluate("window.scrollTo(0, 600)")
    bar = page.locator("header.topbar").bounding_box()
    assert bar is not None and bar["y"] + bar["height"] <= 0, bar
    # j brings a sentence to the top of the window, with no bar left to stop below.
    assert page.evaluate("document.documentElement.style.scrollPaddingTop") == ""
    page.set_viewport_size({"width": 1280, "height": 900})
    page.evaluate("window.scrollTo(0, 600)")
    bar = page.locator("header.topbar").bounding_box()
    assert bar is not None and bar["y"] == 0, bar  # on a laptop it stays in sight
    # Set by the page's resize handler, which runs when the browser gets to it. Polled from
    # here: wait_for_function polls with a string evaluated in the page, which its CSP forbids.
    padding = ""
    for _ in range(100):
        padding = page.evaluate("document.documentElement.style.scrollPaddingTop")
        if padding.endswith("px"):
            break
        page.wait_for_timeout(50)
    assert padding.endswith("px"), padding
