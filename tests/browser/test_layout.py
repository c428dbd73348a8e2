"""What a reviewer sees at phone, tablet and laptop widths: the queue's columns labelled on
narrow screens, the claims table inside its card, edit headings whole, text readable."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import held_citing_retention

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = ("Reasons", "Cited documents", "Held for", "Lease", "Index release")

# WCAG relative luminance and contrast of two computed colours ("rgb(…)" / "rgba(…)"),
# prepended to the page functions that use it (the CSP refuses an injected script tag).
CONTRAST_JS = """
const contrastOf = (fg, bg) => {
  const parse = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = parse(c).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const [a, b] = [lum(fg), lum(bg)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
};
"""


# The text of an element line by line, as the browser laid it out.
LINES_JS = """el => {
  const lines = []; let top = null;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;
      if (top === null || rect.top > top + 2) { lines.push(""); top = rect.top; }
      lines[lines.length - 1] += node.data[i];
    }
  }
  return lines;
}"""


@pytest.fixture
def long_key_answer(hold: Any, publish: Any) -> str:
    """A held answer whose second claim has a long key the cited source contradicts."""
    return held_citing_retention(hold, publish, [
        {"key": "trial_days", "value": 14, "cite": "d1"},
        {"key": "data_retention_days", "value": 30, "cite": "d3"}])


def cells(page: Any, trace: str) -> list[dict[str, Any]]:
    """Each labelled cell of a queue row: its label as drawn before it, its text, its box."""
    return page.evaluate("""trace => [...document.querySelectorAll(
        `tr[data-trace='${trace}'] td[data-label]`)].map(td => {
          const before = getComputedStyle(td, '::before');
          const r = td.getBoundingClientRect();
          return {label: td.dataset.label, drawn: before.content, display: before.display,
                  text: td.innerText.trim(), left: r.left, right: r.right, width: r.width};
        })""", trace)


@pytest.mark.parametrize("width", [390, 800])
def test_on_a_phone_or_tablet_every_queue_column_shows_under_its_name(
    long_key_answer: str, reviewer: Any, sign_in: Any, live_server: Any, width: int,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    seen = {c["label"]: c for c in cells(page, long_key_answer)}
    assert sorted(seen) == sorted(LABELS)
    for label, cell in seen.items():
        assert cell["drawn"] == f'"{label}"' and cell["display"] != "none", cell
        assert cell["width"] > 0 and cell["left"] >= 0 and cell["right"] <= width, cell
    # Held moments ago (a minute or so when the machine is slow).
    assert re.fullmatch(r"less than a minute|\d+\s+minutes?", seen["Held for"]["text"])
    assert seen["Lease"]["text"].endswith("Free")
    assert seen["Index release"]["text"].endswith("2026.10")
    row = page.locator(f"tr[data-trace='{long_key_answer}']")
    document = row.locator(".documents a", has_text="Data retention policy")
    expect(document).to_be_visible()
    expect(row.locator(".release a")).to_be_visible()
    document.click()  # the filter link the narrow layout used to hide
    page.wait_for_url("**/?document=retention")
    expect(page.locator(f"tr[data-trace='{long_key_answer}']")).to_be_visible()


def test_on_a_laptop_the_queue_stays_a_table_with_its_header_row(
    long_key_answer: str, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("columnheader", name="Cited documents")).to_be_visible()
    row = page.locator(f"tr[data-trace='{long_key_answer}']")
    assert row.evaluate("r => getComputedStyle(r).display") == "table-row"
    # The labels are the header's job here: none is drawn in the cells.
    assert {c["drawn"] for c in cells(page, long_key_answer)} == {"none"}


@pytest.mark.parametrize("width", [1024, 1280])
@pytest.mark.parametrize("editing", [False, True], ids=["reading", "editing"])
def test_the_claims_table_fits_its_card_with_a_long_key(
    long_key_answer: str, reviewer: Any, sign_in: Any, live_server: Any, width: int,
    editing: bool,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/answers/{long_key_answer}/")
    if editing:  # the side column widens for the claim editor
        page.locator("details[data-action=edit] > summary").click()
        expect(page.locator("table.claim-edit")).to_be_visible()
    table = page.locator("table.claims")
    wrap = page.locator(".table-wrap:has(> table.claims)")
    expect(table.get_by_text("✗ The source says 90.")).to_be_visible()
    sizes = wrap.evaluate("w => ({scroll: w.scrollWidth, client: w.clientWidth})")
    assert sizes["scroll"] <= sizes["client"], sizes  # nothing to scroll to, nothing faded
    box = wrap.bounding_box()
    right = box["x"] + box["width"]
    for cell in (table.locator("tr.fails td").last,
                 table.get_by_role("columnheader", name="Holds?"),
                 table.get_by_role("columnheader", name="Cited"),
                 table.locator("code", has_text="data_retention_days").first):
        cell_box = cell.bounding_box()
        assert cell_box["x"] >= box["x"] and cell_box["x"] + cell_box["width"] <= right + 0.5, (
            cell_box, box)
    # Where the key wraps, it wraps between its words: "data_retention_ / days", never
    # "data_retention_da / ys".
    for code in table.locator("code", has_text="data_retention").all():
        lines = code.evaluate(LINES_JS)
        assert "".join(lines).replace(" ", "").startswith("data_retention_days"), lines
        assert all(line.endswith(("_", " ", "=")) for line in lines[:-1]), lines


@pytest.mark.parametrize(("width", "side"), [(1024, 380), (1280, 540)])
def test_the_editor_widens_the_side_column_only_where_the_answer_keeps_its_room(
    long_key_answer: str, reviewer: Any, sign_in: Any, live_server: Any, width: int, side: int,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/answers/{long_key_answer}/")
    page.locator("details[data-action=edit] > summary").click()
    expect(page.locator("table.claim-edit")).to_be_visible()
    assert page.locator("aside.side-col").bounding_box()["width"] == side
    # The answer's column keeps more than half the room beside it for its tables.
    assert page.locator("section[aria-labelledby=claims-h]").bounding_box()["width"] >= 530
    # On a laptop each claim of the editor is a block of fields, two to a line.
    row = page.locator("table.claim-edit tr[data-claim-row]").first
    columns = row.evaluate("r => getComputedStyle(r).gridTemplateColumns.split(' ').length")
    assert columns == (2 if width == 1024 else 3)


@pytest.mark.parametrize("width", [390, 1024, 1280])
def test_the_claim_editor_headings_are_whole_words(
    long_key_answer: str, reviewer: Any, sign_in: Any, live_server: Any, width: int,
) -> None:
    page = sign_in("alice")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/answers/{long_key_answer}/")
    page.locator("details[data-action=edit] > summary").click()
    headings = page.locator("table.claim-edit th")
    expect(headings).to_have_count(6)
    lines = headings.evaluate_all("""ths => ths.map(th => {
        const range = document.createRange(); range.selectNodeContents(th);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        return [th.textContent.trim(), tops.size, th.scrollWidth <= th.clientWidth];
      })""")
    # One-word headings on one line, none spilling over its neighbour ("Subjec/t").
    assert lines == [[name, 1, True] for name in
                     ("Subject", "Key", "Value", "Type", "Cited", "Remove")], lines
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_help_button_is_named_and_small_green_and_key_text_is_readable(
    long_key_answer: str, reviewer: Any, admin_user: Any, sign_in: Any, live_server: Any,
) -> None:
    page = sign_in("alice")
    expect(page.get_by_role("button", name="Keyboard shortcuts")).to_be_visible()
    # The key drawn in the Next button is read at full strength against the button.
    next_key = page.locator("[data-next] kbd")
    contrast = next_key.evaluate("k => {" + CONTRAST_JS + """const s = getComputedStyle(k);
        return s.opacity === '1' ? contrastOf(s.color,
            getComputedStyle(k.closest('button')).backgroundColor) : 0; }""")
    assert contrast >= 4.5, contrast

    admin = sign_in("ada")
    admin.goto(f"{live_server.url}/audit/")
    # audit.css's "ok" green, as drawn on the audit pages' white cards.
    contrast = admin.locator("form.audit-search").evaluate("form => {" + CONTRAST_JS + """
        const ok = document.createElement('span'); ok.className = 'ok'; ok.textContent = '✓';
        form.append(ok);
        return contrastOf(getComputedStyle(ok).color, getComputedStyle(form).backgroundColor);
      }""")
    assert contrast >= 4.5, contrast
    # Each search field is described by its help text, which is on the page.
    expect(admin.get_by_label("Actor")).to_have_accessible_description(
        "A username (alice), or as logged: user:alice, service:rag-service, worker, system")
    expect(admin.get_by_label("Action")).to_have_accessible_description(
        "Exact, or a prefix ending in * (revision.*)")
