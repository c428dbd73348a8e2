"""The audit log on a phone: each event reads as a card, its action, answer and document in
sight without scrolling sideways; on a laptop the log stays the table it was."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from tests.browser.conftest import table_layout

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 900}

# Where `selector` (in the newest event) is drawn once the window is scrolled down to it, and
# only down, never sideways: whether it lies within the window's width, and whether it is what
# the browser shows there (not hidden in a box that would have to be scrolled sideways).
SEEN_JS = """selector => {
  const el = document.querySelector('table.audit-table tbody tr:first-child ' + selector);
  if (!el) return null;
  // Mid-window: the page's sticky top bar covers the top of a phone's window.
  window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - window.innerHeight / 2);
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + Math.min(r.width / 2, 20), r.top + r.height / 2);
  return {text: el.textContent.trim(), left: Math.round(r.left), right: Math.round(r.right),
          within: r.left >= 0 && r.right <= window.innerWidth && r.width > 0,
          shown: !!hit && (hit === el || el.contains(hit))};
}"""


@pytest.fixture
def decided(publish: Any, admin_user: Any) -> dict[str, Any]:
    """The newest event: a reviewer's approval of answer t-phone citing the pricing page."""
    from reviewqueue.audit.services import Actor, audit_record

    publish("pricing", title="Pricing and plans")
    with transaction.atomic():
        event = audit_record(
            actor=Actor("user", "user:alice"), action="decision.approved",
            object_type="answer", object_id="t-phone", trace_id="t-phone",
            document_id="pricing", before={"status": "held"},
            after={"status": "approved", "comment_sha256": "0" * 64})
    return {"seq": event.seq}


def test_on_a_phone_an_events_action_answer_and_document_are_in_sight(
    decided: dict[str, Any], sign_in: Any, live_server: Any,
) -> None:
    page = sign_in("ada")
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/audit/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    seen = {name: page.evaluate(SEEN_JS, selector) for name, selector in (
        ("number", "td:nth-child(1) a"),
        ("action", "td:nth-child(4) code"),
        ("actor", "td:nth-child(3) a"),
        ("answer", "td:nth-child(6) a[href*='/audit/answers/t-phone/']"),
        ("document", "td:nth-child(6) a[href*='document=pricing']"),
        ("title", "td:nth-child(6) .doc-title"),
        ("change", "td.change"),
        ("time", "td:nth-child(2)"),
    )}
    # The header row, which names the time zone, is not shown on a phone: the time says it.
    time = page.locator("table.audit-table tbody tr:first-child td:nth-child(2)").inner_text()
    assert time.endswith(" UTC") and seen["time"]["within"], (time, seen["time"])
    assert seen["number"]["text"] == f"#{decided['seq']}"
    assert seen["action"]["text"] == "decision.approved"
    assert seen["answer"]["text"] == "t-phone"
    assert seen["document"]["text"] == "pricing"
    assert seen["title"]["text"] == "· Pricing and plans"
    for name, where in seen.items():
        assert where["within"] and where["shown"], (name, where)
    # The change reads as lines across the card, not a column of fragments.
    change = page.locator("table.audit-table tbody tr:first-child td.change").bounding_box()
    assert change["width"] >= 300, change


def test_on_a_laptop_the_audit_log_stays_a_table_with_its_header_row(
    decided: dict[str, Any], sign_in: Any, live_server: Any,
) -> None:
    page = sign_in("ada")
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/audit/")
    layout = table_layout(page, "table.audit-table")
    assert layout == {"row": "table-row", "heads": 8, "headsShown": True,
                      "oneHeaderLine": True, "oneRowLine": True, "labels": 0}, layout
    # The header names the zone; the times do not repeat it.
    time = page.locator("table.audit-table tbody tr:first-child td:nth-child(2)").inner_text()
    assert not time.endswith("UTC"), time
