"""A refused body the quarantine cannot read as one JSON object with each key once (a form, a
key given twice, a body cut short) shows an admin only its size when it may hold text of a
document they may not read; a revision's note is hidden as its title is. What is stored stays
whole."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from reviewqueue.audit.models import QuarantinedPayload
from tests.audit.conftest import body_shown
from tests.conftest import revision_body

SECRET = "SECRET-SALARY-BANDS are 90k"


def _shown(client: Client) -> str:
    return body_shown(client, QuarantinedPayload.objects.latest("pk"))


@pytest.mark.django_db
def test_a_form_encoded_revision_shows_only_its_size(service_api: Any,
                                                     admin_client: Client) -> None:
    body = urlencode({"title": "HR pay", "allowed_principals": "group:hr", "passages": SECRET})
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", body,
                               content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415, response.content

    shown = _shown(admin_client)

    assert "SECRET" not in shown
    assert f"[{len(body)} characters not shown" in shown
    assert "SECRET-SALARY-BANDS" in QuarantinedPayload.objects.get().body  # kept whole


@pytest.mark.django_db
def test_a_revision_giving_its_readers_twice_shows_only_its_size(
        service_api: Any, admin_client: Client) -> None:
    # The API cannot tell which `allowed_principals` was meant; a reader keeping the last one
    # would take the revision for a public one and show its passages.
    body = json.dumps(revision_body(principals=["group:hr"],
                                    passages=[{"span": "p1", "text": SECRET}]))
    body = body[:-1] + ', "allowed_principals": ["*"]}'
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", body,
                               content_type="application/json")
    assert response.status_code == 400, response.content

    shown = _shown(admin_client)

    assert SECRET not in shown
    assert f"[{len(body)} characters not shown" in shown


@pytest.mark.django_db
def test_an_answer_naming_a_document_twice_in_one_item_shows_only_its_size(
        publish: Any, service_api: Any, admin_client: Client) -> None:
    publish("hr-pay", principals=["group:hr"])
    body = ('{"trace_id": "t-hr", "question": "q", "answer": "' + SECRET + ' [d1].", '
            '"asked_by": ["group:hr"], "index_release": "r", '
            '"retrieved": [{"cite": "d1", "document_id": "hr-pay", "revision": "r1", '
            '"document_id": "pricing"}], "claims": []}')
    response = service_api.post("/api/v1/answers", body, content_type="application/json")
    assert response.status_code == 400, response.content

    assert SECRET not in _shown(admin_client)


@pytest.mark.django_db
def test_a_revision_note_is_hidden_as_its_title_is(service_api: Any,
                                                   admin_client: Client) -> None:
    body = {"allowed_principals": ["group:hr"], "note": SECRET}
    response = service_api.put("/api/v1/documents/hr-pay/revisions/r1", body,
                               content_type="application/json")
    assert response.status_code == 400, response.content

    shown = _shown(admin_client)

    assert SECRET not in shown
    assert f"[{len(SECRET)} characters not shown: a revision you may not read]" in shown


@pytest.mark.django_db
def test_broken_json_naming_no_hidden_field_is_shown_as_it_came(
        service_api: Any, admin_client: Client) -> None:
    body = '{"trace_id": "t-broken", "asked_by": ["user:ann"'
    response = service_api.post("/api/v1/answers", body, content_type="application/json")
    assert response.status_code == 400, response.content

    assert "t-broken" in _shown(admin_client)


@pytest.mark.django_db
@pytest.mark.parametrize("depth", [900, 100_000])
def test_a_body_nested_too_deeply_shows_its_size(depth: int, service_api: Any,
                                                 admin_client: Client) -> None:
    body = '{"claims": ' + "[" * depth + "]" * depth + ', "document_id": "hr-pay"}'
    response = service_api.post("/api/v1/answers", body, content_type="application/json")
    assert response.status_code == 400, response.content

    assert f"[{len(body)} characters not shown" in _shown(admin_client)
