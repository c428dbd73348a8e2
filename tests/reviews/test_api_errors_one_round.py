"""A bad answer body is answered with every error it holds in one 400, alone or in a batch:
the bad fields, and the checks across fields made on what did validate."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.reviews.models import Answer
from tests.conftest import answer_body, revision_body

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


def test_a_principal_with_a_space_after_its_colon_is_refused_with_what_to_send(
    service_api: Any, publish: Any
) -> None:
    """`user: customer-7` names no user, and `group: hr` only a group whose name starts with a
    space: taken, they made an answer or a document readable by nobody it was meant for."""
    body = answer_body(asked_by=["user: customer-7", "group:hr"])
    assert errors(service_api.post("/api/v1/answers", body, format="json")) == {
        "asked_by[0]": "Not a principal: 'user: customer-7'; use user:<name>, group:<name> or * "
                       "(no spaces around the name: user:customer-7)."}
    response = service_api.put("/api/v1/documents/pricing/revisions/r1",
                               revision_body(principals=["group: hr"]), format="json")
    assert errors(response) == {
        "allowed_principals[0]": "Not a principal: 'group: hr'; use user:<name>, "
                                 "group:<name> or * (no spaces around the name: group:hr)."}


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


def test_ids_and_askers_that_read_like_others_are_refused(
    service_api: Any, publish: Any,
) -> None:
    """A zero-width space or a right-to-left override makes a name that reads as another."""
    publish()
    body = answer_body(asked_by=["user:alice\u200b", "group:sales"], retrieved=[
        {**ITEM, "document_id": "pric\u202eing"}])
    for api_path in ("/api/v1/answers", "/api/v1/answers/batch"):
        sent = body if api_path.endswith("answers") else {"answers": [body]}
        response = service_api.post(api_path, sent, format="json")
        found = (errors(response) if api_path.endswith("answers")
                 else {e["field"]: e["message"] for e in response.json()["results"][0]["errors"]})
        assert found == {
            "asked_by[0]": "Not a principal: 'user:alice\\u200b'; use user:<name>, "
                           "group:<name> or *.",
            "retrieved[0].document_id": "Must not contain control characters, zero-width "
                                        "characters or bidirectional marks: they make ids that "
                                        "read alike.",
        }
    refused = service_api.put("/api/v1/documents/pricing\u200b/revisions/r1",
                              {"title": "T"}, format="json")
    assert refused.status_code == 400
    assert "document_id" in {e["field"] for e in refused.json()["errors"]}
    # "été" written as e and a combining accent reads as the NFC "été", one character each.
    decomposed = service_api.put("/api/v1/documents/e\u0301te\u0301/revisions/r1",
                                 {"title": "T"}, format="json")
    assert decomposed.status_code == 400
    assert {e["field"]: e["message"] for e in decomposed.json()["errors"]}["document_id"] == (
        "Must be in Unicode normal form C (NFC): write each accented letter as one.")
    assert not Answer.objects.exists()
