"""A form sent back refused puts the cursor in its first bad field, in sight: a keyboard or
screen reader user is not left at the top of the page with nothing said."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from reviewqueue.sources.models import Conflict

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_refused_withdrawal_puts_the_cursor_in_the_document_id(
    hold: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-1")
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{live_server.url}/owner/documents/pricing-eu/")
    page.fill("#withdraw-confirm", "pricing")  # another document's id
    page.click("button:has-text('Withdraw')")
    page.wait_for_url("**/withdraw")

    field = page.get_by_label("Document id")
    expect(field).to_be_focused()
    expect(field).to_be_in_viewport()
    expect(field).to_have_accessible_description(
        "Type the document id to confirm the withdrawal.")


def test_a_refused_dismissal_puts_the_cursor_in_the_justification(
    hold: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-1")
    conflict = Conflict.objects.get(key="trial_days")
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{live_server.url}/owner/conflicts/{conflict.pk}/")
    page.get_by_label("Why these values do not conflict").select_option("other")
    page.click("button:has-text('Dismiss the conflict')")  # with no justification
    page.wait_for_url("**/dismiss")

    field = page.get_by_label("Justification")
    expect(field).to_be_focused()
    expect(field).to_be_in_viewport()
    expect(field).to_have_accessible_description(
        re.compile(r"^Explain why the values do not conflict\."))


def test_a_refused_webhook_endpoint_puts_the_cursor_in_the_bad_field(
    admin_user: Any, sign_in: Any, live_server: Any
) -> None:
    page = sign_in("ada")
    page.goto(f"{live_server.url}/webhooks/")
    page.get_by_label("URL").fill("https://receiver.example/hooks")
    page.get_by_label("Description").fill("x" * 201)
    page.get_by_role("button", name="Register").click()
    page.wait_for_load_state()

    field = page.get_by_label("Description")
    expect(field).to_be_focused()
    expect(field).to_have_value("x" * 201)
