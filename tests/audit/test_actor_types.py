"""Who the audit log says acted: a person stays a person through their own API token, a service
is a service; both name the token."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from tests.reviews.conftest import (  # noqa: F401
    current_verdict_id,
    hold,
    sources,
)

pytestmark = pytest.mark.django_db


def test_a_reviewer_deciding_through_a_token_is_audited_as_a_user(
    hold: Any, reviewer: Any, token_client: Any,  # noqa: F811
) -> None:
    trace = hold()
    response = token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions", {
        "action": "approve", "verdict": current_verdict_id(trace)}, format="json")
    assert response.status_code == 201
    decided = AuditEvent.objects.get(action="decision.approve")
    assert decided.actor_type == "user"
    assert decided.actor.startswith("user:alice token:rq_")
    published = AuditEvent.objects.filter(action="revision.published").first()
    assert published is not None
    assert published.actor_type == "service"
    assert " token:rq_" in published.actor
