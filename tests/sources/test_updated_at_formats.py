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


FORMAT = ("Give a date and time with its offset from UTC: "
          "YYYY-MM-DDThh:mm[:ss[.ffffff]] then Z or +hh:mm / -hh:mm.")
NO_MOMENT = "{} is written as a date and time but is no moment of the calendar."


@pytest.mark.parametrize(("updated_at", "message"), [
    ("2026-10-01", FORMAT),            # a day, not a date-time: becomes 2026-10-01T00:00:00Z
    ("2026-W40-4", FORMAT),            # an ISO week date
    ("20261001T090000Z", FORMAT),      # the basic (compact) form
    ("2026-10-01T09:00:00", FORMAT),   # no offset: read as the server's local time
    # Written right, but no moment: told so, not that the format (the one it has) is wrong.
    ("2026-02-30T09:00:00Z", NO_MOMENT),  # no 30 February
    ("2026-10-01T24:00:00Z", NO_MOMENT),  # no hour 24
    ("2026-10-01T09:60:00Z", NO_MOMENT),  # no minute 60
    ("2026-10-01T09:00:00+24:00", NO_MOMENT),  # no offset of a whole day
])
def test_an_updated_at_that_is_not_an_rfc3339_date_time_is_refused_naming_it(
    service_api: Any, owner: Any, updated_at: str, message: str
) -> None:
    body = revision_body()
    body["updated_at"] = updated_at
    response = service_api.put(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [{"field": "updated_at",
                                          "message": message.format(updated_at)}]
    assert not Revision.objects.exists()


def test_an_updated_at_years_ahead_is_refused_and_later_revisions_still_become_current(
    service_api: Any, owner: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from reviewqueue.instants import instant_text

    body = revision_body()
    body["updated_at"] = "2099-11-01T09:00:00Z"  # 2026 mistyped
    response = service_api.put(URL, body, format="json")
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["field"] == "updated_at"
    assert error["message"].startswith("Must not be later than ")
    assert error["message"].endswith(
        ", a day after this server's clock: 2099-11-01T09:00:00Z has not come yet.")
    assert not Revision.objects.exists()
    # A few hours ahead (a clock that drifts) is taken, and a revision dated after it is
    # current in its turn.
    body["updated_at"] = instant_text(timezone.now() + timedelta(hours=3))
    assert service_api.put(URL, body, format="json").status_code == 201
    body["updated_at"] = instant_text(timezone.now() + timedelta(hours=4))
    reply = service_api.put("/api/v1/documents/pricing/revisions/r2", body, format="json")
    assert reply.status_code == 201, reply.content
    assert reply.json()["current"] is True
