"""`updated_at` is an RFC 3339 date-time, as the schema says (`format: date-time`), and nothing
else: Python's ISO parser alone would take a bare day (as midnight), an ISO week date, the
compact form, and a local time with no offset (read in the server's TIME_ZONE)."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.sources.models import Revision
from tests.conftest import revision_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents/pricing/revisions/r1"


@pytest.mark.parametrize("updated_at", [
    "2026-10-01",            # a day, not a date-time: becomes 2026-10-01T00:00:00Z
    "2026-W40-4",            # an ISO week date
    "20261001T090000Z",      # the basic (compact) form
    "2026-10-01T09:00:00",   # no offset: read as the server's local time
])
def test_an_updated_at_that_is_not_an_rfc3339_date_time_is_refused_naming_it(
    service_api: Any, owner: Any, updated_at: str
) -> None:
    body = revision_body()
    body["updated_at"] = updated_at
    response = service_api.put(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{
        "field": "updated_at",
        "message": "Give a date and time with its offset from UTC: "
                   "YYYY-MM-DDThh:mm[:ss[.ffffff]] then Z or +hh:mm / -hh:mm."}]
    assert not Revision.objects.exists()
