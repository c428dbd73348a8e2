"""Lists of records on a phone: each re-evaluation job, webhook endpoint and webhook delivery
reads as a card, every column of it in sight under its name, nothing to scroll sideways to; on
a laptop each list stays a table."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import table_layout

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 900}

# Each cell of the newest job: its text, its column's name as drawn above it (none for the
# cells across the top), and whether it lies within the window's width.
CELLS_JS = """table => [...document.querySelector(table + ' tbody tr').cells].map(td => {
  const r = td.getBoundingClientRect();
  const label = getComputedStyle(td, '::before').content;
  return {text: td.innerText.replace(/\\s+/g, ' ').trim(),
          label: label === 'none' ? null : label.split(' / ')[0].replace(/"/g, ''),
          within: r.left >= 0 && r.right <= window.innerWidth && r.width > 0};
})"""


def open_as_admin(sign_in: Any, url: str, size: dict[str, int]) -> Any:
    page = sign_in("ada")
    page.set_viewport_size(size)
    page.goto(url)
    return page


@pytest.fixture
def job(publish: Any, admin_user: Any) -> None:
    """A finished job: the re-evaluation of what cites the pricing page, once it was published."""
    publish("pricing", title="Pricing and plans")


def test_on_a_phone_each_job_is_a_card_with_every_column_named_and_in_sight(
    job: None, sign_in: Any, live_server: Any,
) -> None:
    page = open_as_admin(sign_in, f"{live_server.url}/jobs/", PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    cells = page.evaluate(CELLS_JS, "table.jobs")
    assert [(c["label"], c["within"]) for c in cells] == [
        (None, True), (None, True), ("Trigger", True), ("By", True), ("Progress", True),
        ("Changed", True)]
    assert cells[1]["text"].endswith("pricing · Pricing and plans")
    assert cells[2]["text"] == "Revision published"
    assert "Finished" in cells[4]["text"]
    # The progress reads across the card, not as a column of fragments.
    progress = page.locator("table.jobs tbody tr:first-child td").nth(4).bounding_box()
    assert progress["width"] >= 300, progress


def test_on_a_laptop_the_jobs_list_stays_a_table_with_its_header_row(
    job: None, sign_in: Any, live_server: Any,
) -> None:
    page = open_as_admin(sign_in, f"{live_server.url}/jobs/", LAPTOP)
    assert table_layout(page, "table.jobs") == {
        "row": "table-row", "heads": 6, "headsShown": True, "oneHeaderLine": True,
        "oneRowLine": True, "labels": 0}

def test_on_a_phone_each_webhook_endpoint_and_delivery_is_a_card(
    admin_user: Any, sign_in: Any, live_server: Any,
) -> None:
    from django.utils import timezone

    from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint

    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.test/review-status",
                                              secret="s" * 32, description="CRM")
    WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", trace_id="t-hook",
        payload={}, state=WebhookDelivery.State.DELIVERED, attempts=1,
        next_attempt_at=timezone.now(), delivered_at=timezone.now())
    page = open_as_admin(sign_in, f"{live_server.url}/webhooks/", PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    cells = page.evaluate(CELLS_JS, "table[data-endpoints]")
    assert [(c["label"], c["text"], c["within"]) for c in cells] == [
        (None, "https://hooks.example.test/review-status — CRM", True), ("Active", "yes", True),
        ("Delivered", "1", True), ("Waiting", "0", True), ("Given up", "0", True)]

    page.goto(f"{live_server.url}/webhooks/{endpoint.pk}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    cells = page.evaluate(CELLS_JS, "table[data-deliveries]")
    assert [(c["label"], c["within"]) for c in cells] == [
        (None, True), ("Event", True), ("Answer", True), ("State", True), ("Attempts", True)]
    assert (cells[2]["text"], cells[3]["text"]) == ("t-hook", "Delivered")


def test_the_changed_column_follows_a_running_job(admin_user: Any, sign_in: Any,
                                                  live_server: Any) -> None:
    """The progress text and the Changed column say the same, without a reload."""
    from playwright.sync_api import expect

    from reviewqueue.jobs.models import Job

    job = Job.objects.create(scope=Job.Scope.DOCUMENT, document_key="pricing", trigger="manual",
                             actor_type="user", actor="user:ada", requested_by=admin_user,
                             state=Job.State.RUNNING, total=5)
    page = open_as_admin(sign_in, f"{live_server.url}/jobs/", LAPTOP)
    cell = page.locator("table.jobs tbody tr:first-child [data-changed-cell]")
    assert cell.inner_text() == "0"

    Job.objects.filter(pk=job.pk).update(done=5, changed=3, state=Job.State.FINISHED)

    expect(cell).to_have_text("3", timeout=10_000)
    assert "3 with a new verdict" in page.locator(".job-progress-text").first.inner_text()
