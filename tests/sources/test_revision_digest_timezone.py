"""The replay digest of a revision does not depend on the server's TIME_ZONE: the very same
body sent again after TIME_ZONE changed (an operator moving beat's midnight, say) is a replay
(200), not "a different body" (409, quarantined)."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.sources.models import Revision
from tests.conftest import revision_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents/pricing/revisions/r1"


def test_the_same_body_again_is_a_replay_whatever_the_servers_time_zone(
    service_api: Any, owner: Any, settings: Any
) -> None:
    assert service_api.put(URL, revision_body(), format="json").status_code == 201
    settings.TIME_ZONE = "Asia/Tokyo"
    response = service_api.put(URL, revision_body(), format="json")
    assert response.status_code == 200, response.content
    assert Revision.objects.count() == 1
    assert not QuarantinedPayload.objects.exists()


def test_the_same_instant_written_with_another_offset_is_a_replay_in_any_time_zone(
    service_api: Any, owner: Any, settings: Any
) -> None:
    settings.TIME_ZONE = "Europe/Berlin"
    assert service_api.put(URL, revision_body(), format="json").status_code == 201
    settings.TIME_ZONE = "UTC"
    body = revision_body()
    body["updated_at"] = "2026-10-01T11:00:00+02:00"  # the same instant as 09:00Z
    assert service_api.put(URL, body, format="json").status_code == 200
