"""Every instant the API writes is written one way: UTC with a "Z", as DRF's serializers write
theirs, never "+00:00" in one body and "Z" in the next."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.django_db

INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def instants(body: Any) -> list[str]:
    """Every string in `body` that is an ISO 8601 instant."""
    if isinstance(body, dict):
        return [s for value in body.values() for s in instants(value)]
    if isinstance(body, list):
        return [s for value in body for s in instants(value)]
    return [body] if isinstance(body, str) and INSTANT.fullmatch(body) else []


def test_bodies_that_mix_serializer_and_hand_written_instants_write_them_alike(
    hold: Any, bob: Any, reviewer: Any, token_client: Any, service_api: Any
) -> None:
    trace = hold()
    bodies = [service_api.get("/api/v1/documents/pricing").json()]  # its history
    claimed = token_client(bob).post(f"/api/v1/answers/{trace}/claim")
    bodies.append(claimed.json())
    refused = token_client(reviewer).post(f"/api/v1/answers/{trace}/claim")
    assert refused.status_code == 409
    bodies.append(refused.json())  # who holds it, until when
    bodies.append(token_client(reviewer).get("/api/v1/queue").json())  # each row's lease
    job = service_api.post("/api/v1/jobs", {"trace_ids": [trace]}, format="json")
    bodies.append(job.json())
    found = [stamp for body in bodies for stamp in instants(body)]
    assert len(found) >= 6, bodies
    assert [stamp for stamp in found if not stamp.endswith("Z")] == [], bodies


def test_instants_are_written_in_utc_whatever_time_zone_the_server_keeps(
    service_api: Any, publish: Any, settings: Any
) -> None:
    """TIME_ZONE sets which day it is (the owner's days, the sweep's midnight), not how an
    instant is written: in Tokyo the bodies wrote "+09:00"."""
    from tests.conftest import answer_body

    settings.TIME_ZONE = "Asia/Tokyo"
    bodies = [publish().json(),
              service_api.post("/api/v1/answers", answer_body("t-1"), format="json").json(),
              service_api.post("/api/v1/answers/batch", {"answers": [answer_body("t-2")]},
                               format="json").json(),
              service_api.get("/api/v1/answers/t-1").json(),
              service_api.get("/api/v1/documents/pricing").json()]
    found = [stamp for body in bodies for stamp in instants(body)]
    assert len(found) >= 8, bodies
    assert [stamp for stamp in found if not stamp.endswith("Z")] == []


def test_a_webhook_writes_its_instant_in_utc_whatever_time_zone_the_server_keeps(
    settings: Any
) -> None:
    import datetime as dt
    import uuid
    from types import SimpleNamespace

    from reviewqueue.webhooks.services import status_changed_payload

    settings.TIME_ZONE = "Asia/Tokyo"
    payload = status_changed_payload(
        event_id=uuid.uuid4(), answer=SimpleNamespace(trace_id="t-1"), status="held",
        verdict=SimpleNamespace(pk=1, decision="review", reason="conflicting_sources"),
        occurred_at=dt.datetime(2026, 10, 1, 18, 0, tzinfo=dt.timezone(dt.timedelta(hours=9))))
    assert payload["occurred_at"] == "2026-10-01T09:00:00Z"
