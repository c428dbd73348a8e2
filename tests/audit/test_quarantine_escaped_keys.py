"""A refused revision whose keys are written with JSON escapes (valid JSON, read as the same
keys by the API) is redacted in the quarantine for an admin who may not read it, as one whose
keys are written plainly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from reviewqueue.audit.models import QuarantinedPayload
from tests.conftest import revision_body

QUARANTINE = "/admin/audit/quarantinedpayload/"
SECRET = "SECRET-SALARY-BANDS are 90k"


@pytest.mark.django_db
def test_escaped_keys_do_not_reveal_a_hidden_revisions_passages(
    service_api: Any, admin_client: Client
) -> None:
    body = revision_body(principals=["group:hr"], passages=[{"span": "p1", "text": SECRET}])
    body["updated_at"] = "not a date"
    raw = json.dumps(body).replace('"passages"', '"p\\u0061ssages"') \
        .replace('"title"', '"t\\u0069tle"').replace('"facts"', '"f\\u0061cts"')
    assert json.loads(raw) == body  # the same body to any JSON reader
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", raw,
                               content_type="application/json")
    assert response.status_code == 400, response.content
    payload = QuarantinedPayload.objects.get()

    html = admin_client.get(f"{QUARANTINE}{payload.pk}/change/").content.decode()

    assert SECRET not in html
    assert "[27 characters not shown: a revision you may not read]" in html  # the passage
