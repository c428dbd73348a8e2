"""An admin finds an answer in the audit log and reads its timeline, in a real browser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.audit.browsing import in_browser, screenshot_path, session_cookie
from tests.audit.conftest import verify


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_admin_opens_the_timeline_of_an_answer_from_the_audit_log(
    live_server: Any, admin_user: Any, answer_story: Callable[..., Any]
) -> None:
    answer = answer_story("t-browser")
    verdicts = list(answer.verdicts.order_by("id").values_list("id", flat=True))
    decision = answer.decisions.get()
    verify()
    shot = screenshot_path("audit_timeline.png")

    def steps(page: Any) -> dict[str, Any]:
        page.goto(f"{live_server.url}/audit/")
        # The audit pages have no keyboard shortcuts, so no button for their help either.
        help_shown = page.locator("[data-help]").is_visible()
        page.fill("input[name=trace_id]", "t-browser")
        page.click("form.audit-search button[type=submit]")
        page.wait_for_url("**/audit/?*trace_id=t-browser*")
        rows = page.locator("table.audit-table tbody tr").count()
        # The hash is cut short on screen, but the text that is copied is the whole hash.
        hash_cell = page.locator("table.audit-table td.hash code").first
        hashed = {"copied": page.evaluate("""() => {
                      const code = document.querySelector('table.audit-table td.hash code');
                      getSelection().selectAllChildren(code);
                      return getSelection().toString();
                  }"""),
                  "width": hash_cell.bounding_box()["width"]}
        # On a phone the table scrolls inside the page; a change still reads as lines.
        wide = page.viewport_size
        page.set_viewport_size({"width": 390, "height": 844})
        phone = {"page": page.evaluate("document.documentElement.scrollWidth"),
                 "change": page.locator("table.audit-table td.change").first
                 .bounding_box()["width"],
                 # Every menu link in sight: the menu wraps rather than scrolling sideways.
                 "menu": page.evaluate("""Array.from(
                     document.querySelectorAll('header.topbar nav a'), a => {
                         const r = a.getBoundingClientRect();
                         return [a.textContent.trim(), r.left >= 0 && r.right <= 390];
                     })""")}
        page.set_viewport_size(wide)
        page.locator("table.audit-table a", has_text="t-browser").first.click()
        page.wait_for_url("**/audit/answers/t-browser/")
        page.wait_for_selector("[data-testid=timeline]")
        page.screenshot(path=str(shot), full_page=True)
        return {
            "rows": rows,
            "hash": hashed,
            "help_shown": help_shown,
            "phone": phone,
            "headings": page.locator(".timeline h3").all_inner_texts(),
            "status": page.locator("[data-testid=answer-status]").inner_text(),
            "verification": page.locator("[data-testid=verification-result]").inner_text(),
            "body": page.locator("main").inner_text(),
        }

    seen = in_browser(session_cookie(admin_user, live_server.url), steps)
    assert seen["rows"] >= 3  # ingested, re-evaluated, decided (and the lease claim)
    assert seen["help_shown"] is False
    assert len(seen["hash"]["copied"]) == 64 and seen["hash"]["width"] < 150, seen["hash"]
    assert seen["phone"]["page"] <= 390 and seen["phone"]["change"] >= 250, seen["phone"]
    assert seen["phone"]["menu"] == [[name, True] for name in (
        "Queue", "Owner inbox", "Audit", "Insight", "Jobs", "Webhooks")], seen["phone"]["menu"]
    headings = " | ".join(seen["headings"])
    assert f"Verdict #{verdicts[0]}" in headings
    assert f"Verdict #{verdicts[1]}" in headings
    assert f"Decision #{decision.pk}" in headings
    assert seen["status"] == "Approved"
    assert seen["verification"].startswith("Intact.")
    assert "Superseded" in seen["body"]
    assert "Secret" not in seen["body"]
    assert shot.stat().st_size > 10_000
