"""Step 0 for a cited revision the store never received.

The gate cannot have the facts of a revision that never arrived, but the store knows the
document and who may read its current revision: an asker who may not read it gets an
abstention (unauthorized_evidence), not a held answer a reviewer could approve. The finding
that the revision was never received is kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer

pytestmark = pytest.mark.django_db

UNRECEIVED = [{"cite": "d1", "document_id": "pricing", "revision": "r9", "span": "p1"}]


def _codes(verdict: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in verdict["findings"]]


def test_an_unreceived_revision_of_a_document_the_asker_may_not_read_abstains(
    publish: Any, submit: Any
) -> None:
    publish("pricing", "r1", principals=["group:hr"])

    body = submit("t-hr", retrieved=UNRECEIVED, asked_by=["user:customer-7"]).json()

    assert body["status"] == "abstained"
    assert body["verdict"]["reason"] == "unauthorized_evidence"
    assert "invalid_metadata" in _codes(body["verdict"])
    assert "never received" in str(body["verdict"]["findings"])


def test_an_unreceived_revision_the_asker_may_read_is_still_held(
    publish: Any, submit: Any
) -> None:
    publish("pricing", "r1", principals=["group:hr"])

    body = submit("t-hr", retrieved=UNRECEIVED, asked_by=["user:customer-7", "group:hr"]).json()

    assert body["status"] == "held"
    assert body["verdict"]["reason"] == "invalid_metadata"
    assert "unauthorized_evidence" not in _codes(body["verdict"])


def test_a_document_the_store_does_not_know_is_still_held(submit: Any) -> None:
    body = submit("t-unknown", retrieved=UNRECEIVED, asked_by=["user:customer-7"]).json()

    assert body["status"] == "held"
    assert body["verdict"]["reason"] == "invalid_metadata"


def test_restricting_the_current_revision_makes_a_held_answer_abstain(
    publish_doc: Any, submit: Any
) -> None:
    publish_doc("pricing", "r1")
    body = submit("t-later", retrieved=UNRECEIVED, asked_by=["user:customer-7"]).json()
    assert (body["status"], body["verdict"]["reason"]) == ("held", "invalid_metadata")

    publish_doc("pricing", "r2", principals=["group:hr"])

    answer = Answer.objects.get(trace_id="t-later")
    assert answer.status == Answer.Status.ABSTAINED
    assert answer.current_verdict.reason == "unauthorized_evidence"
    assert answer.current_verdict.trigger == "revision"


def test_a_withdrawn_document_still_gives_unknown_citation(
    publish: Any, submit: Any, service_api: Any
) -> None:
    publish("pricing", "r1", principals=["group:hr"])
    service_api.delete("/api/v1/documents/pricing")

    body = submit("t-gone", asked_by=["user:customer-7"]).json()

    assert (body["status"], body["verdict"]["reason"]) == ("abstained", "unknown_citation")
