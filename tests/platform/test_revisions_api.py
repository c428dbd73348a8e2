from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent, QuarantinedPayload
from reviewqueue.sources.models import Document, Revision
from tests.conftest import revision_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents/pricing/revisions/r1"


def test_first_publish_creates_the_revision_and_makes_it_current(
    service_api: Any, owner: Any
) -> None:
    response = service_api.put(URL, revision_body(), format="json")
    assert response.status_code == 201
    assert response.json()["revision"] == "r1"
    assert response.json()["current"] is True
    document = Document.objects.get(key="pricing")
    assert document.current_revision.revision == "r1"
    assert document.owner == owner
    assert AuditEvent.objects.filter(action="revision.published", object_id="pricing").count() == 1


def test_the_same_body_again_is_200_and_changes_nothing(service_api: Any, owner: Any) -> None:
    service_api.put(URL, revision_body(), format="json")
    events = AuditEvent.objects.count()
    response = service_api.put(URL, revision_body(), format="json")
    assert response.status_code == 200
    assert Revision.objects.count() == 1
    assert AuditEvent.objects.count() == events


def test_a_different_body_for_an_existing_revision_is_409(service_api: Any, owner: Any) -> None:
    service_api.put(URL, revision_body(), format="json")
    response = service_api.put(URL, revision_body(title="Changed title"), format="json")
    assert response.status_code == 409
    assert response.json()["error"] == "conflict"
    assert Revision.objects.get().title == "Pricing and plans"
    assert QuarantinedPayload.objects.filter(status_code=409).count() == 1


@pytest.mark.parametrize(("changes", "fields"), [
    ({"title": "Changed title"}, ["title"]),
    ({"facts": [{"key": "trial_days", "value": 14.0, "valid_from": "2026-10-01",
                 "valid_until": "2026-10-31", "span": "p1"}]}, ["facts"]),
    ({"principals": ["group:hr"], "updated_at": "2026-10-01T10:00:00+01:00"},
     ["allowed_principals"]),  # the same moment, written in another zone, is the same
    ({"updated_at": "2026-10-02T09:00:00Z",
      "passages": [{"span": "p1", "text": "The free trial lasts 15 days."}]},
     ["updated_at", "passages"]),
    ({"owner": "oscar"}, ["owner"]),
    ({"owner": "oscar", "title": "Changed title"}, ["title", "owner"]),
])
def test_a_409_names_the_fields_that_differ(service_api: Any, owner: Any, make_user: Any,
                                            changes: dict[str, Any], fields: list[str]) -> None:
    make_user("oscar", "owner")
    service_api.put(URL, revision_body(), format="json")

    response = service_api.put(URL, revision_body(**changes), format="json")

    assert response.status_code == 409
    body = response.json()
    assert [e["field"] for e in body["errors"]] == fields
    assert f"(it differs in {', '.join(fields)})" in body["detail"]


def test_the_principals_in_another_order_are_the_same_body(
    service_api: Any, owner: Any
) -> None:
    """A client sending its body again may list who may read it in another order: the
    data is the same, and so is the reply (14.0 for 14 is not: see the 409s above)."""
    first = service_api.put(URL, revision_body(principals=["group:sales", "group:support"]),
                            format="json")
    again = service_api.put(URL, revision_body(principals=["group:support", "group:sales"]),
                            format="json")

    assert first.status_code == 201
    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    assert Revision.objects.count() == 1
    assert QuarantinedPayload.objects.count() == 0


def test_a_new_revision_becomes_current_and_history_lists_both(
    service_api: Any, owner: Any
) -> None:
    service_api.put(URL, revision_body(), format="json")
    service_api.put(
        "/api/v1/documents/pricing/revisions/r2", revision_body(title="v2"), format="json"
    )
    body = service_api.get("/api/v1/documents/pricing").json()
    assert body["current_revision"] == "r2"
    assert [r["revision"] for r in body["history"]] == ["r2", "r1"]


def test_withdrawing_leaves_no_current_revision(service_api: Any, owner: Any) -> None:
    service_api.put(URL, revision_body(), format="json")
    response = service_api.delete("/api/v1/documents/pricing")
    assert response.status_code == 200
    assert response.json()["withdrawn"] is True
    assert response.json()["current_revision"] is None
    assert AuditEvent.objects.filter(action="document.withdrawn").count() == 1


def test_withdrawing_an_unknown_document_is_404(service_api: Any) -> None:
    assert service_api.delete("/api/v1/documents/nope").status_code == 404


def test_a_service_restores_a_withdrawn_document(
    service_api: Any, owner: Any, token_client: Any, reviewer: Any,
) -> None:
    service_api.put(URL, revision_body(principals=["group:sales"]), format="json")
    # Putting the same revision again replays it: it does not undo a withdrawal.
    service_api.delete("/api/v1/documents/pricing")
    assert service_api.put(URL, revision_body(principals=["group:sales"]),
                           format="json").status_code == 200
    assert service_api.get("/api/v1/documents/pricing").json()["withdrawn"] is True

    assert token_client(reviewer).post("/api/v1/documents/pricing/restore").status_code == 403
    response = service_api.post("/api/v1/documents/pricing/restore")
    assert response.status_code == 200, response.content
    assert (response.json()["withdrawn"], response.json()["current_revision"]) == (False, "r1")
    document = Document.objects.get(key="pricing")
    assert document.allowed_principals == ["group:sales"]
    # Again: nothing to undo, nothing audited.
    assert service_api.post("/api/v1/documents/pricing/restore").json()["withdrawn"] is False
    assert AuditEvent.objects.filter(action="document.restored").count() == 1
    assert service_api.post("/api/v1/documents/nope/restore").status_code == 404
    refused = service_api.post("/api/v1/documents/pricing/restore", {"revision": "r0"},
                               format="json")
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["body"]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b.pop("title"), "title"),
        (lambda b: b.update(owner="nobody"), "owner"),
        (lambda b: b.update(allowed_principals=["*", "root"]), "allowed_principals[1]"),
        (lambda b: b["facts"][0].update(valid_from="2026-13-01"), "facts[0].valid_from"),
        (lambda b: b["facts"][0].update(valid_until="2026-09-01"), "facts[0].valid_until"),
        (lambda b: b["facts"][0].update(value={"nested": 1}), "facts[0].value"),
        (lambda b: b["facts"][0].update(span="p9"), "facts[0].span"),
        (lambda b: b["facts"][0].update(colour="red"), "facts[0].colour"),
        (lambda b: b.update(surprise=True), "surprise"),
        (lambda b: b["passages"].append({"span": "p1", "text": "again"}), "passages[1].span"),
    ],
)
def test_bad_revision_bodies_name_the_field_and_are_quarantined(
    service_api: Any, owner: Any, mutate: Any, field: str
) -> None:
    body = revision_body()
    mutate(body)
    response = service_api.put(URL, body, format="json")
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not Revision.objects.exists()
    kept = QuarantinedPayload.objects.get()
    assert kept.endpoint == URL
    assert kept.sent_by.username == "rag-service"
    assert field in [e["field"] for e in kept.errors]


def test_every_bad_field_of_a_revision_is_named_at_once(service_api: Any, owner: Any) -> None:
    body = revision_body(principals=["*", 5])  # a number where a string belongs, checked first
    body.update(url="not a url", title=7)
    body["facts"][0].update(valid_from="2026-1-1", colour="red")
    body["passages"][0]["text"] = None
    response = service_api.put(URL, body, format="json")
    assert response.status_code == 400
    assert sorted(e["field"] for e in response.json()["errors"]) == [
        "allowed_principals[1]", "facts[0].colour", "facts[0].valid_from", "passages[0].text",
        "title", "url"]
    assert response.json()["detail"].endswith("; and 1 more in errors")


def test_the_owner_named_must_be_a_document_owner(service_api: Any, owner: Any,
                                                  reviewer: Any) -> None:
    response = service_api.put(URL, revision_body(owner=reviewer.username), format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{
        "field": "owner", "message": f"{reviewer.username!r} is not a document owner (nor an "
                                     "admin)"}]
    assert not Revision.objects.exists()


def test_a_reviewer_token_cannot_publish(token_client: Any, reviewer: Any, owner: Any) -> None:
    response = token_client(reviewer).put(URL, revision_body(), format="json")
    assert response.status_code == 403
    assert not Revision.objects.exists()


def test_a_service_token_without_the_publish_scope_cannot_publish(
    token_client: Any, service: Any, owner: Any
) -> None:
    response = token_client(service, scopes=["submit", "read"]).put(
        URL, revision_body(), format="json"
    )
    assert response.status_code == 403


def test_anonymous_requests_are_refused(client: Any, owner: Any) -> None:
    response = client.put(URL, revision_body(), content_type="application/json")
    assert response.status_code == 401


def test_a_revoked_token_is_refused(token_client: Any, service: Any, owner: Any) -> None:
    from django.utils import timezone

    api = token_client(service)
    service.api_tokens.update(revoked_at=timezone.now())
    assert api.put(URL, revision_body(), format="json").status_code == 401


def test_a_document_readable_by_hr_only_is_hidden_from_other_reviewers(
    service_api: Any, owner: Any, token_client: Any, reviewer: Any, hr_reviewer: Any
) -> None:
    service_api.put(
        "/api/v1/documents/hr-leave/revisions/r1",
        revision_body(principals=["group:hr"]),
        format="json",
    )
    assert token_client(reviewer).get("/api/v1/documents/hr-leave").status_code == 404
    assert token_client(hr_reviewer).get("/api/v1/documents/hr-leave").status_code == 200


def test_a_fact_without_a_subject_may_say_so_with_null_as_a_claim_may(
    service_api: Any, owner: Any
) -> None:
    from reviewqueue.sources.models import Fact

    body = revision_body()
    body["facts"][0]["subject"] = None
    response = service_api.put(URL, body, format="json")
    assert response.status_code == 201, response.content
    assert Fact.objects.get().subject == ""
    # The same body with the subject left out, or "", is the same revision: a replay.
    del body["facts"][0]["subject"]
    assert service_api.put(URL, body, format="json").status_code == 200
