"""Japanese in narrow table columns breaks between phrases, not between any two characters: a
heading such as 対象 or a cell such as 要レビュー never stands one character a line."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The line boxes an element's text is drawn on.
LINES_JS = """el => {
  const range = document.createRange(); range.selectNodeContents(el);
  return new Set([...range.getClientRects()].filter(r => r.width)
                  .map(r => Math.round(r.top))).size;
}"""


# 700 px: the claims table's headings wrap; 1024 px with the claim editor open: the main
# column beside the side column, with the verdict history's columns narrow in it.
@pytest.mark.parametrize(("width", "editing"), [(700, False), (1024, True)])
def test_in_japanese_a_short_heading_or_cell_is_not_split_across_lines(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any, width: int, editing: bool,
) -> None:
    hold("t-ja")
    page = sign_in("alice", locale="ja-JP")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/answers/t-ja/")
    # Phrases are found only in text the page says is Japanese.
    assert page.evaluate("document.documentElement.lang") == "ja"
    if editing:
        page.locator("details[data-action=edit] > summary").click()
        expect(page.locator("table.claim-edit")).to_be_visible()
    subject = page.locator("table.claims th", has_text="対象")
    decision = page.locator("table.history tbody tr >> nth=0 >> td:nth-child(3)")
    reason = page.locator("table.history tbody tr >> nth=0 >> td:nth-child(4)")
    expect(decision).to_have_text("要レビュー")
    expect(reason).to_have_text("矛盾する情報源")
    lines = {"対象": subject.evaluate(LINES_JS), "要レビュー": decision.evaluate(LINES_JS),
             "矛盾する情報源": reason.evaluate(LINES_JS)}
    # One phrase each on one line; 矛盾する / 情報源, two phrases, on one line or two.
    assert lines["対象"] == 1 and lines["要レビュー"] == 1, lines
    assert lines["矛盾する情報源"] <= 2, lines
