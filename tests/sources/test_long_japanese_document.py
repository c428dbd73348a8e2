"""A document the API took can be corrected from its owner's page, whatever its language.

The form posts every passage back URL-encoded: a Japanese character, three bytes in the API's
JSON, is nine there. Sized at the API's limit, the form of a long Japanese document was refused
by Django with a bare "Bad Request (400)", and all the owner had typed was lost. The API keeps
its own limit."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings

from reviewqueue.sources.models import Document
from tests.reviews.conftest import fact
from tests.sources.test_owner_fixes import posted_back

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/handbook/"
PUBLISH = "/owner/documents/handbook/publish"


def test_a_long_japanese_handbook_the_api_took_can_be_corrected_from_its_page(
    client: Any, owner: Any, publish: Any,
) -> None:
    # 1,000 passages of 600 characters: about 1.8 MB as the API received it (UTF-8 JSON),
    # well under its limit.
    chunk = "従業員の試用期間は十四日間です。" * 37 + "あいうえおかきく"
    passages = [{"span": "p1", "text": "試用期間は 14 日間です。"},
                *({"span": f"p{n}", "text": chunk} for n in range(2, 1001))]
    publish("handbook", facts=[fact("trial_days", 14)], passages=passages)
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    data = posted_back(page, PUBLISH, **{"facts-0-value": "30",
                                         "passage:p1": "試用期間は 30 日間です。"})
    body = urlencode(data)
    assert len(body) > settings.API_MAX_BODY_BYTES  # the form is larger than the API's body
    # As a browser sends a form with no enctype: application/x-www-form-urlencoded, where
    # each byte of a Japanese character is written %XX.
    response = client.post(PUBLISH, body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 302
    [trial] = Document.objects.get(key="handbook").current_revision.facts.all()
    assert trial.value == 30


def test_the_api_still_refuses_a_body_over_its_own_limit(service_api: Any) -> None:
    """The form's larger limit is not the API's: one byte over API_MAX_BODY_BYTES is a 413."""
    response = service_api.put("/api/v1/documents/handbook/revisions/r1",
                               b"x" * (settings.API_MAX_BODY_BYTES + 1),
                               content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    assert not Document.objects.filter(key="handbook").exists()
