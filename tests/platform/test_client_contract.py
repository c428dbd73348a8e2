"""The API as a client developer reads it from /api/schema/ alone: what a client polls for and
branches on is named there, with the values it can take and the type it is written in."""

from __future__ import annotations

from typing import Any

import pytest

from gating.engine import STEP_OF_CODE
from reviewqueue.reviews.labels import REASONS
from reviewqueue.reviews.models import Answer, Verdict


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    from django.test import Client

    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return response.json()["components"]["schemas"]  # type: ignore[no-any-return]


def enum_of(schemas: dict[str, Any], spec: dict[str, Any]) -> set[Any] | None:
    """The values a property may take, following a $ref (or allOf of one) to its enum."""
    if "enum" in spec:
        return set(spec["enum"])
    for ref in [spec.get("$ref"), *(part.get("$ref") for part in spec.get("allOf", []))]:
        if ref:
            return enum_of(schemas, schemas[ref.rsplit("/", 1)[1]])
    return None


# Every reply that gives an answer's status: a client polls it until a reviewer has decided.
@pytest.mark.parametrize("component", ["IngestOut", "AnswerOut", "BatchItemOut",
                                       "DecisionCreatedOut"])
def test_the_schema_names_every_status_an_answer_can_have(schemas: dict[str, Any],
                                                          component: str) -> None:
    status = schemas[component]["properties"]["status"]
    assert enum_of(schemas, status) == set(Answer.Status.values)


def test_the_schema_names_every_decision_and_reason_of_a_verdict(
    schemas: dict[str, Any]
) -> None:
    verdict = schemas["VerdictOut"]["properties"]
    assert enum_of(schemas, verdict["decision"]) == set(Verdict.Decision.values)
    # Every reason the gate gives: the first step that failed, or "supported".
    assert enum_of(schemas, verdict["reason"]) == {*STEP_OF_CODE, "supported"} == set(REASONS)
    # The reasons a reviewer rejects with are another list, under another name.
    reject = schemas["DecisionInRequest"]["properties"]["reason"]
    assert enum_of(schemas, reject) != set(REASONS)


# Every instant the API writes is RFC 3339 in UTC: a client generated from the schema reads
# each as a date and time, not as text it must parse itself.
@pytest.mark.parametrize(("component", "name", "nullable"), [
    ("JobOut", "created_at", False), ("JobOut", "finished_at", True),
])
def test_a_jobs_instants_are_dates_and_times_in_the_schema(
    schemas: dict[str, Any], component: str, name: str, nullable: bool
) -> None:
    spec = schemas[component]["properties"][name]
    assert (spec["type"], spec.get("format"), spec.get("nullable", False)) == (
        "string", "date-time", nullable)


def properties_of(schemas: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """The properties of an object, following a $ref (or allOf of one) to its component."""
    for ref in [spec.get("$ref"), *(part.get("$ref") for part in spec.get("allOf", []))]:
        if ref:
            return properties_of(schemas, schemas[ref.rsplit("/", 1)[1]])
    return spec.get("properties") or {}


def test_a_queue_rows_lease_is_described_as_a_claims_is(schemas: dict[str, Any]) -> None:
    lease = schemas["QueueRowOut"]["properties"]["lease"]
    assert lease.get("nullable") is True  # a free item has none
    assert properties_of(schemas, lease) == schemas["LeaseOut"]["properties"]


def test_a_documents_history_entries_are_described(schemas: dict[str, Any]) -> None:
    entry = properties_of(schemas, schemas["DocumentOut"]["properties"]["history"]["items"])
    assert {name: (spec["type"], spec.get("format"), spec.get("nullable", False))
            for name, spec in entry.items()} == {
        "revision": ("string", None, False), "seq": ("integer", None, False),
        # Null for a revision the caller may not read.
        "title": ("string", None, True),
        "updated_at": ("string", "date-time", False),
        "published_at": ("string", "date-time", False)}
