"""A bad answer body is answered with every error it holds in one 400, alone or in a batch:
the bad fields, and the checks across fields made on what did validate."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.reviews.models import Answer
from tests.conftest import answer_body

pytestmark = pytest.mark.django_db

ITEM = {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}


def errors(response: Any) -> dict[str, str]:
    assert response.status_code == 400, response.content
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_a_cite_used_twice_is_named_with_another_items_bad_field(service_api: Any) -> None:
    body = answer_body(retrieved=[ITEM, {**ITEM, "span": "p2"},
                                  {"cite": "d2", "document_id": "faq"}])
    assert errors(service_api.post("/api/v1/answers", body, format="json")) == {
        "retrieved[1].cite": "Duplicate cite 'd1'.",
        "retrieved[2].revision": "This field is required.",
    }
    assert not Answer.objects.exists()
    assert QuarantinedPayload.objects.get().status_code == 400


def test_an_item_whose_cite_is_bad_is_not_called_a_duplicate(service_api: Any) -> None:
    body = answer_body(retrieved=[ITEM, {**ITEM, "cite": ["d1"]}])
    assert errors(service_api.post("/api/v1/answers", body, format="json")) == {
        "retrieved[1].cite": "Not a valid string."}


def test_every_bad_asker_is_named_at_once(service_api: Any) -> None:
    body = answer_body(asked_by=["nobody", 5, "user:customer-7", "group:"])
    assert errors(service_api.post("/api/v1/answers", body, format="json")) == {
        "asked_by[0]": "Not a principal: 'nobody'; use user:<name>, group:<name> or *.",
        "asked_by[1]": "Not a valid string.",
        "asked_by[3]": "Not a principal: 'group:'; use user:<name>, group:<name> or *.",
    }


def test_a_batch_item_gets_every_error_and_the_count_of_those_left_out(
    service_api: Any
) -> None:
    body = answer_body(retrieved=[ITEM, ITEM], asked_by=["nobody"])
    body.update(question=1, index_release=2, as_of="tomorrow", surprise=True)
    response = service_api.post("/api/v1/answers/batch", {"answers": [body]}, format="json")
    [result] = response.json()["results"]
    assert result["status_code"] == 400
    assert sorted(e["field"] for e in result["errors"]) == [
        "as_of", "asked_by[0]", "index_release", "question", "retrieved[1].cite", "surprise"]
    assert result["detail"].endswith("; and 1 more in errors")
    assert not Answer.objects.exists()
