"""item.js reports an expanded passage and a page left with a JSON body. The same request sent
as a form (by hand, or by a tool) is refused with a 400, not a 500: the NUL check reads a form
body as a form before the view reads it raw."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("endpoint", "form"), [
    ("expanded", {"cite": "d1", "verdict": "1"}),
    ("leave", {"until": "2026-12-06T10:00:00+00:00"}),
])
def test_a_beacon_sent_as_a_form_is_refused_with_a_400(
    hold: Any, reviewer: Any, login: Any, endpoint: str, form: dict[str, str]
) -> None:
    trace = hold()
    client = login(reviewer)
    response = client.post(f"/answers/{trace}/{endpoint}", form)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
