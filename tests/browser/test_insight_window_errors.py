"""The insight window's refusal is said at its field: the field keeps its own name, and the
error is its description."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_window_ending_before_it_starts_names_the_error_at_the_to_field(
    admin_user: Any, sign_in: Any, live_server: Any
) -> None:
    page = sign_in("ada")
    page.goto(f"{live_server.url}/insight/")
    page.get_by_label("From", exact=True).fill("2026-10-09")
    page.get_by_label("To", exact=True).fill("2026-10-01")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**/insight/?since=2026-10-09*")

    field = page.locator("input[name=until]")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_accessible_name("To")
    expect(field).to_have_accessible_description("Must not be before the first day.")
