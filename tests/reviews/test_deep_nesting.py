"""Brackets nested thousands deep, where the pages read JSON, are bad input and never a 500."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.reviews.conftest import current_verdict_id

pytestmark = pytest.mark.django_db

DEEP = "[" * 5000 + "]" * 5000


def test_a_deeply_nested_queue_cursor_is_a_bad_cursor(login: Any, reviewer: Any) -> None:
    cursor = base64.urlsafe_b64encode(DEEP.encode()).decode().rstrip("=")
    response = login(reviewer).get("/", {"cursor": cursor})
    assert response.status_code == 200
    assert "That page link was not valid; here is the first page." in response.content.decode()


def test_a_deeply_nested_passage_report_is_invalid(hold: Any, login: Any,
                                                   reviewer: Any) -> None:
    trace = hold()
    client = login(reviewer)
    response = client.post(f"/answers/{trace}/expanded", DEEP, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {"error": "invalid"})
    # A well-formed report still works.
    response = client.post(f"/answers/{trace}/expanded",
                           json.dumps({"cite": "d1", "verdict": current_verdict_id(trace)}),
                           content_type="application/json")
    assert response.status_code == 204




@pytest.mark.parametrize("cite", ["\\u0000", "d1\\u0000", "\\ud800"])
def test_a_passage_report_with_a_cite_postgresql_cannot_hold_is_invalid(
    hold: Any, login: Any, reviewer: Any, cite: str
) -> None:
    trace = hold()
    # Written as the JSON escapes a browser or a script would send.
    body = '{"cite": "' + cite + '", "verdict": ' + str(current_verdict_id(trace)) + "}"
    response = login(reviewer).post(f"/answers/{trace}/expanded", body,
                                    content_type="application/json")
    assert (response.status_code, response.json()) == (400, {"error": "invalid"})
