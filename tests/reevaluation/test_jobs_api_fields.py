"""Starting a job through the API: a body that names neither scope, or both, is refused by
field, as every other refusal is."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.jobs.models import Job

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("body", "field"), [
    ({}, "trace_ids"),
    ({"trace_ids": []}, "trace_ids"),
    ({"trace_ids": ["t-1"], "document_id": "pricing"}, "document_id"),
])
def test_a_job_body_without_exactly_one_scope_names_the_field(
    admin_user: Any, token_client: Any, body: dict[str, Any], field: str
) -> None:
    response = token_client(admin_user).post("/api/v1/jobs", body, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == [field]
    assert "trace_ids" in errors[0]["message"] and "document_id" in errors[0]["message"]
    assert not Job.objects.exists()
