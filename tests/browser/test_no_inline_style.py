"""Pages under a policy that allows no inline style: none of them needs one, and the API docs,
whose page alone does, still draw."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_no_page_is_refused_a_style_and_the_api_docs_still_draw(
        admin_user: Any, owner: Any, hold: Any, sign_in: Any, live_server: Any) -> None:
    trace = hold()
    page = sign_in("ada")
    for url in ["/", f"/answers/{trace}/", "/owner/", "/owner/documents/pricing/", "/audit/",
                f"/audit/answers/{trace}/", "/insight/", "/jobs/", "/webhooks/", "/admin/",
                "/admin/auth/user/", "/api/docs/"]:
        response = page.goto(f"{live_server.url}{url}")
        assert response is not None and response.status == 200, url
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_selector(".swagger-ui .opblock")
    assert [e for e in page.console_errors if "Content Security Policy" in e] == []
