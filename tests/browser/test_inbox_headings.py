"""The owner inbox's headings nest: each conflict is a heading under "Conflicts in your
documents", so a screen reader's list of headings shows where one section ends."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_each_conflict_of_the_inbox_is_a_heading_under_its_section(
    hold: Any, owner: Any, sign_in: Any
) -> None:
    hold("t-1")
    page = sign_in("olivia", lands="/owner/")
    expect(page.get_by_role("heading", name="Conflicts in your documents", level=2)).to_be_visible()
    expect(page.get_by_role("heading", name="trial_days", level=3)).to_be_visible()
    expect(page.get_by_role("heading", name="trial_days", level=2)).to_have_count(0)
