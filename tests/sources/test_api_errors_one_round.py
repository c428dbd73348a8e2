"""A bad revision body is answered with every error it holds in one 400: the bad fields, and
the checks across fields made on what did validate, never one that a bad field explains."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.sources.models import Document, Revision
from tests.conftest import revision_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents/pricing/revisions/r1"
FACT = {"key": "trial_days", "value": 14, "valid_from": "2026-10-01", "span": "p1"}


def errors(response: Any) -> dict[str, str]:
    assert response.status_code == 400, response.content
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_bad_fields_and_spans_that_name_no_passage_come_in_one_response(
    service_api: Any, owner: Any
) -> None:
    body = revision_body(
        passages=[{"span": "p1", "text": "The trial lasts 14 days."},
                  {"span": "p1", "text": "Support is open 24/7."}],
        facts=[{k: v for k, v in FACT.items() if k != "key"},
               {**FACT, "span": "p9"}, {**FACT, "valid_from": "2026-1-1"}])
    body.update(title=7, allowed_principals=["*", 5])
    response = service_api.put(URL, body, format="json")
    assert errors(response) == {
        "title": "Not a valid string.",
        "allowed_principals[1]": "Not a valid string.",
        "facts[0].key": "This field is required.",
        "facts[1].span": "No passage with span 'p9'.",
        "facts[2].valid_from": "Date has wrong format. Use one of these formats instead: "
                               "YYYY-MM-DD.",
        "passages[1].span": "Span 'p1' is already used by another passage.",
    }
    assert response.json()["detail"].endswith("; and 1 more in errors")
    assert not Document.objects.exists()
    assert len(QuarantinedPayload.objects.get().errors) == 6


def test_a_fact_is_not_blamed_for_naming_a_passage_refused_for_its_text(
    service_api: Any, owner: Any
) -> None:
    body = revision_body(facts=[FACT, {**FACT, "span": "p2"}])
    body["passages"][0]["text"] = None
    assert errors(service_api.put(URL, body, format="json")) == {
        "passages[0].text": "This field may not be null.",
        "facts[1].span": "No passage with span 'p2'.",
    }


def test_no_fact_is_blamed_while_a_passage_span_is_bad(service_api: Any, owner: Any) -> None:
    body = revision_body(passages=[{"span": " p1", "text": "The trial lasts 14 days."}],
                         facts=[FACT, {**FACT, "span": "p2"}])
    assert errors(service_api.put(URL, body, format="json")) == {
        "passages[0].span": "Must not start or end with whitespace."}


def test_a_span_used_twice_is_named_beside_the_passages_bad_text(
    service_api: Any, owner: Any
) -> None:
    body = revision_body()
    body["passages"].append({"span": "p1", "text": 14})
    assert errors(service_api.put(URL, body, format="json")) == {
        "passages[1].text": "Not a valid string.",
        "passages[1].span": "Span 'p1' is already used by another passage.",
    }


def test_a_fact_ending_before_it_starts_is_named_with_its_other_bad_fields(
    service_api: Any, owner: Any
) -> None:
    body = revision_body(facts=[{**FACT, "value": [14], "valid_until": "2026-09-30"}])
    assert errors(service_api.put(URL, body, format="json")) == {
        "facts[0].value": "Must be a string, number or boolean.",
        "facts[0].valid_until": "Must not be before valid_from.",
    }


def test_every_bad_principal_is_named_at_once(service_api: Any, owner: Any) -> None:
    body = revision_body()
    body["allowed_principals"] = ["*", 5, "root", "group:hr"]
    assert errors(service_api.put(URL, body, format="json")) == {
        "allowed_principals[1]": "Not a valid string.",
        "allowed_principals[2]": "Not a principal: 'root'; use user:<name>, group:<name> or *.",
    }


def test_an_owner_who_may_not_own_documents_is_named_with_the_bad_fields(
    service_api: Any, owner: Any, reviewer: Any
) -> None:
    body = revision_body(owner=reviewer.username)
    del body["title"]
    assert errors(service_api.put(URL, body, format="json")) == {
        "title": "This field is required.",
        "owner": "'alice' is not a document owner (nor an admin)",
    }
    assert not Document.objects.exists()


def test_the_owner_of_a_revision_already_received_is_not_looked_at(
    service_api: Any, owner: Any, reviewer: Any
) -> None:
    """Sent again, the revision is a replay or a conflict whoever it names: the owner is not
    what the caller has to fix."""
    assert service_api.put(URL, revision_body(), format="json").status_code == 201
    body = revision_body(owner=reviewer.username)
    del body["title"]
    assert errors(service_api.put(URL, body, format="json")) == {
        "title": "This field is required."}
    assert Revision.objects.count() == 1


def test_a_bad_address_is_named_with_the_bad_body(service_api: Any, owner: Any) -> None:
    body = revision_body()
    del body["title"]
    response = service_api.put("/api/v1/documents/%20pricing/revisions/r1", body, format="json")
    assert errors(response) == {"document_id": "Must not start or end with whitespace.",
                                "title": "This field is required."}
    assert not Document.objects.exists()


def test_a_principal_given_twice_is_named_with_the_other_errors(
    service_api: Any, owner: Any
) -> None:
    body = revision_body(principals=["group:sales", "*", "group:sales", "user:ann", "*"])
    body["title"] = ""
    assert errors(service_api.put(URL, body, format="json")) == {
        "title": "This field may not be blank.",
        "allowed_principals[2]": "'group:sales' is already in the list.",
        "allowed_principals[4]": "'*' is already in the list.",
    }


def test_the_owner_of_a_late_revision_is_not_looked_at(
    service_api: Any, owner: Any, reviewer: Any
) -> None:
    """A late revision changes no owner: whoever it names is not what the caller has to fix."""
    newer = dict(revision_body(), updated_at="2026-11-01T09:00:00Z")
    assert service_api.put("/api/v1/documents/pricing/revisions/r2", newer,
                           format="json").status_code == 201
    body = revision_body(owner=reviewer.username)
    del body["title"]
    assert errors(service_api.put(URL, body, format="json")) == {
        "title": "This field is required."}
    assert Revision.objects.count() == 1
