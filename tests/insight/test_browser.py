"""An admin opens the insight page in a real browser and sees its charts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.audit.browsing import in_browser, screenshot_path, session_cookie
from tests.insight.conftest import Builder


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
        boxes = [page.locator("svg.chart").nth(i).bounding_box()
                 for i in range(page.locator("svg.chart").count())]
        return {
            "charts": len(boxes),
            "drawn": all(box is not None and box["width"] > 200 and box["height"] > 40
                         for box in boxes),
            "hold_rate": page.locator("[data-testid=hold-rate]").inner_text(),
            "body": page.locator("main").inner_text(),
        }

    seen = in_browser(session_cookie(admin_user, live_server.url), steps)
    assert seen["charts"] == 7
    assert seen["drawn"]
    assert seen["hold_rate"] == "46.2%"  # 6 of 13: "old" (1 October) is in this window
    assert "Secret" not in seen["body"]
    assert shot.stat().st_size > 10_000
