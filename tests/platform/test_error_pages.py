"""A refused or missing page is a page of the product, in the reader's language, with a way
back, never the framework's bare one."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("url", "status", "heading"), [
    ("/jobs/", 403, "This page is not for your role"),  # a reviewer at an admin page
    ("/answers/no-such-answer/", 404, "Nothing here"),
])
def test_a_refused_or_missing_page_says_so_and_leads_back(
    reviewer: Any, client: Any, url: str, status: int, heading: str
) -> None:
    client.force_login(reviewer)
    response = client.get(url)
    assert response.status_code == status
    page = response.content.decode()
    assert heading in page
    assert 'href="/">Go to your start page</a>' in page
    assert 'class="topbar' in page  # the product's own layout, with its menu


def test_an_api_address_that_does_not_exist_stays_json(service_api: Any) -> None:
    response = service_api.get("/api/v1/nowhere")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
