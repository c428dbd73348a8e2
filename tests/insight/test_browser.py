"""An admin opens the insight page in a real browser and sees its charts, on a laptop and on a
phone."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.audit.browsing import in_browser, screenshot_path, session_cookie
from tests.insight.conftest import Builder

# Each chart the page shows: which drawing it is, whether it has a size, and the height of its
# smallest text as the browser draws it.
CHARTS_JS = """() => [...document.querySelectorAll('svg.chart')]
  .filter(svg => getComputedStyle(svg).display !== 'none')
  .map(svg => {
    const r = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map(t => t.getBoundingClientRect().height);
    return {fit: svg.dataset.fit, drawn: r.width > 200 && r.height > 40,
            text_px: Math.min(...texts.filter(h => h > 0))};
  })"""


def shown_charts(page: Any) -> list[dict[str, Any]]:
    return page.evaluate(CHARTS_JS)


def the_matrix_fades_where_it_goes_on(page: Any) -> None:
    """The release matrix, wider than a phone, scrolled from its start to its end: the side with
    more to see fades out (data-more), so the reader can tell the table goes on."""
    matrix = page.locator("[data-testid=release-matrix]")
    expect(matrix).to_have_attribute("data-more", "right")
    matrix.evaluate("el => el.scrollLeft = (el.scrollWidth - el.clientWidth) / 2")
    expect(matrix).to_have_attribute("data-more", "both")
    matrix.evaluate("el => el.scrollLeft = el.scrollWidth")
    expect(matrix).to_have_attribute("data-more", "left")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_admin_reads_the_insight_page(
    live_server: Any, admin_user: Any, scenario: Builder
) -> None:
    from django.utils import timezone

    # Something in the queue, so the backlog chart has bars.
    for trace_id, hours in (("b2", 2), ("a3", 30)):
        scenario.queue(scenario.answers[trace_id],
                       entered=timezone.now() - timezone.timedelta(hours=hours))
    shot = screenshot_path("insight.png")

    def steps(page: Any) -> dict[str, Any]:
        page.goto(f"{live_server.url}/insight/?since=2026-10-01&until=2026-10-14")
        page.wait_for_selector("svg.chart")
        page.screenshot(path=str(shot), full_page=True)
        wide = shown_charts(page)
        seen = {
            "hold_rate": page.locator("[data-testid=hold-rate]").inner_text(),
            "body": page.locator("main").inner_text(),
            # Release ids are case-sensitive: their column names are not set in capitals.
            "heads": page.evaluate("""() => [...document.querySelectorAll(
                '[data-testid=release-matrix] thead th')].map(
                th => [th.textContent, getComputedStyle(th).textTransform])"""),
        }
        # On a laptop the matrix fits: no fade.
        expect(page.locator("[data-testid=release-matrix]")).not_to_have_attribute(
            "data-more", re.compile(".*"))
        page.set_viewport_size({"width": 390, "height": 844})
        the_matrix_fades_where_it_goes_on(page)
        return {**seen, "wide": wide, "phone": shown_charts(page),
                "scroll_width": page.evaluate("document.documentElement.scrollWidth")}

    seen = in_browser(session_cookie(admin_user, live_server.url), steps)
    # Each chart once, in the drawing for the screen: on a phone, text as large as on a
    # laptop (13 px drawn, scaled down a little at most), not the wide drawing shrunk.
    assert [(c["fit"], c["drawn"]) for c in seen["wide"]] == [("wide", True)] * 7
    assert [(c["fit"], c["drawn"]) for c in seen["phone"]] == [("phone", True)] * 7
    assert min(c["text_px"] for c in seen["wide"]) >= 12
    assert min(c["text_px"] for c in seen["phone"]) >= 11
    assert seen["scroll_width"] <= 390
    assert seen["heads"][0] == ["Reason held", "uppercase"]
    assert seen["heads"][1:] and {t for _, t in seen["heads"][1:]} == {"none"}, seen["heads"]
    assert seen["hold_rate"] == "46.2%"  # 6 of 13: "old" (1 October) is in this window
    assert "Secret" not in seen["body"]
    assert shot.stat().st_size > 10_000
