"""A day written exactly YYYY-MM-DD that does not exist (29 February of a common year) is
refused as no day of the calendar, not as a wrong format: the sender did use the format."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import answer_body, revision_body

pytestmark = pytest.mark.django_db


def test_a_day_that_does_not_exist_is_not_called_a_wrong_format(
    service_api: Any, owner: Any
) -> None:
    body = revision_body()
    body["facts"][0]["valid_until"] = "2027-02-29"
    response = service_api.put("/api/v1/documents/pricing/revisions/r1", body, format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error == {"field": "facts[0].valid_until",
                     "message": "2027-02-29 is written YYYY-MM-DD but is no day of the calendar."}


def test_an_as_of_that_does_not_exist_is_not_called_a_wrong_format(
    service_api: Any, owner: Any
) -> None:
    response = service_api.post("/api/v1/answers", answer_body(as_of="2027-02-29"),
                                format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error == {"field": "as_of",
                     "message": "2027-02-29 is written YYYY-MM-DD but is no day of the calendar."}
