"""The progress page's link names each document in a `documents` parameter of its own, so a
document id holding a comma is followed like any other; links that joined ids with commas
still work."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from reviewqueue.sources.models import Fact
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db



def test_a_change_to_a_document_whose_id_holds_a_comma_shows_its_job(
    client: Any, publish: Any, owner: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    publish("pricing,eu", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    fact_ = Fact.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/owner/documents/pricing,eu/end-validity", {
            "fact_id": fact_.pk, "last_day": fact_.valid_from.isoformat(), "note": ""})
    assert response.status_code == 302
    assert parse_qs(urlsplit(response["Location"]).query)["documents"] == ["pricing,eu"]

    page = client.get(response["Location"]).content.decode()
    assert "<code>pricing,eu</code>" in page
    assert "No re-evaluation was needed" not in page


def _dismiss(client: Any, owner: Any, conflict: Any, on_commit: Any) -> Any:
    """The owner dismisses the conflict; what it queues runs on commit."""
    client.force_login(owner)
    with on_commit(execute=True):
        return client.post(f"/owner/conflicts/{conflict.pk}/dismiss", {
            "reason": "both valid", "signature": conflict.signature})


def test_a_change_to_documents_in_conflict_names_each_in_its_own_parameter(
    client: Any, owner: Any, two_owners_disagree: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    response = _dismiss(client, owner, two_owners_disagree, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["documents"] == ["pricing", "trial-promo"]

    page = client.get(response["Location"])
    assert page.status_code == 200
    assert "<code>pricing</code>" in page.content.decode()
    assert "<code>trial-promo</code>" in page.content.decode()


def test_a_link_joining_ids_with_commas_still_shows_them(
    client: Any, owner: Any, two_owners_disagree: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    response = _dismiss(client, owner, two_owners_disagree, django_capture_on_commit_callbacks)
    query = parse_qs(urlsplit(response["Location"]).query)
    old_link = (f"/owner/progress?documents=pricing,trial-promo&since={query['since'][0]}"
                f"&until={query['until'][0]}").replace("+", "%2B")

    page = client.get(old_link).content.decode()
    assert "<code>pricing</code>" in page and "<code>trial-promo</code>" in page


@pytest.mark.parametrize("query", ["documents=pricing&since=2026-01-01&since=2026-01-02",
                                   "documents=pricing&sort=key"])
def test_other_parameters_are_still_checked(client: Any, owner: Any, query: str) -> None:
    client.force_login(owner)
    response = client.get(f"/owner/progress?{query}")
    assert response.status_code == 400
    page = response.content.decode()
    assert "This page does not take these parameters" in page
    # Only the bad one is named, and the page offers the link without it.
    assert "<code>documents</code>" not in page
    assert 'href="/owner/progress?documents=pricing' in page
