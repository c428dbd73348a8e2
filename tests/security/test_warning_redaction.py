"""Gate warnings are redacted like findings: a reviewer who may not read a knowledge-base
document learns neither its id nor its value, from the API, the decision 409 or the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.selectors.answers import RESTRICTED_WARNING, UNREADABLE_REVISION_MESSAGE
from tests.conftest import answer_body
from tests.security.conftest import fact

pytestmark = pytest.mark.django_db

SECRET = "layoff-plan-2027"


@pytest.fixture
def held(publish: Callable[..., Any], service_api: Any) -> str:
    """Claim 0 says 30, which only the exec-only document states: a conflict with the public
    pricing document, and a single-source warning naming the restricted one."""
    publish("pricing", facts=[fact("trial_days", 14)])
    publish(SECRET, principals=["group:exec"], facts=[fact("trial_days", 30)])
    response = service_api.post("/api/v1/answers", answer_body(
        "t", as_of=None, asked_by=["group:exec"],
        claims=[{"key": "trial_days", "value": 30, "cite": "d1"}]), format="json")
    assert response.status_code == 201, response.content
    warnings = response.json()["verdict"]["warnings"]
    assert {"code": "single_source", "claim": 0, "evidence": [],
            "message": f"claim 0 (trial_days = 30) rests on a single source: "
                       f"knowledge-base document {SECRET}",
            "kb_documents": [SECRET]} in warnings
    return "t"


def _single_source(body: dict[str, Any]) -> dict[str, Any]:
    return next(w for w in body["warnings"] if w["code"] == "single_source")


def test_the_answer_api_redacts_the_warning_for_a_reviewer_who_may_not_read_the_document(
    held: str, token_client: Any, reviewer: Any
) -> None:
    response = token_client(reviewer).get(f"/api/v1/answers/{held}")
    assert response.status_code == 200
    assert SECRET.encode() not in response.content
    body = response.json()
    for verdict in (body["verdict"], *body["verdicts"]):
        assert _single_source(verdict) == {
            "code": "single_source", "claim": 0, "evidence": [],
            "message": RESTRICTED_WARNING.format(claim=0), "kb_documents": []}


def test_readers_of_the_document_and_the_service_see_the_whole_warning(
    held: str, token_client: Any, make_user: Callable[..., Any], service_api: Any
) -> None:
    executive = make_user("erin", "reviewer", groups=("exec",))
    for client in (token_client(executive), service_api):
        body = client.get(f"/api/v1/answers/{held}").json()
        assert _single_source(body["verdict"])["kb_documents"] == [SECRET]


def test_a_stale_verdict_409_redacts_the_warning(
    held: str, token_client: Any, reviewer: Any
) -> None:
    # A verdict of this answer that is not its current one, as a reviewer may hold open: one
    # that told them something else (one telling the same would be decided on, as current).
    seen = Verdict.objects.get(pk=Answer.objects.get(trace_id=held).current_verdict_id)
    seen.pk, seen.fingerprint, seen.warnings = None, "0" * 64, []
    seen.save()
    response = token_client(reviewer).post(f"/api/v1/answers/{held}/decisions",
                                           {"action": "approve", "verdict": seen.pk},
                                           format="json")
    assert response.status_code == 409
    assert response.json()["error"] == "stale_verdict"
    assert SECRET.encode() not in response.content
    assert _single_source(response.json()["verdict"])["message"] == \
        RESTRICTED_WARNING.format(claim=0)


def test_a_warning_stored_before_warnings_had_kb_documents_is_redacted_too(
    held: str, token_client: Any, reviewer: Any
) -> None:
    # Verdicts stored by the gate before this field keep their fingerprint, so they are never
    # recomputed: the document is then named only in the message.
    verdict = Verdict.objects.get(answer__trace_id=held)
    verdict.warnings = [{k: v for k, v in w.items() if k != "kb_documents"}
                        for w in verdict.warnings]
    # Verdicts are append-only in the database: the old row is made as a migration would.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        verdict.save(update_fields=["warnings"])
        cursor.execute("SET LOCAL session_replication_role = origin")
    response = token_client(reviewer).get(f"/api/v1/answers/{held}")
    assert SECRET.encode() not in response.content
    assert _single_source(response.json()["verdict"])["message"] == \
        RESTRICTED_WARNING.format(claim=0)


def test_the_item_page_does_not_name_the_document_either(
    held: str, client: Any, reviewer: Any
) -> None:
    # The page explains warnings from their evidence ids, never from the gate's message.
    client.force_login(reviewer)
    page = client.get(f"/answers/{held}/")
    assert page.status_code == 200
    assert SECRET.encode() not in page.content


def test_the_answer_api_reads_the_documents_once_however_many_verdicts(
    held: str, token_client: Any, reviewer: Any
) -> None:
    api = token_client(reviewer)
    api.get(f"/api/v1/answers/{held}")
    with CaptureQueriesContext(connection) as one:
        assert len(api.get(f"/api/v1/answers/{held}").json()["verdicts"]) == 1
    verdict = Verdict.objects.get(answer__trace_id=held)
    for n in range(30):
        verdict.pk = None
        verdict.fingerprint = f"{n:064x}"
        verdict.save()
    with CaptureQueriesContext(connection) as thirty_one:
        response = api.get(f"/api/v1/answers/{held}")
    assert len(response.json()["verdicts"]) == 31
    assert SECRET.encode() not in response.content
    assert len(thirty_one.captured_queries) == len(one.captured_queries)


def test_an_older_verdict_computed_on_a_revision_the_reader_may_not_read_says_only_that(
    publish: Callable[..., Any], service_api: Any, token_client: Any, reviewer: Any
) -> None:
    """policy@r1 was HR-only; r2 is public, so the reviewer may now read the answer, but the
    verdict computed on r1 must not tell them what r1 said."""
    publish("policy", revision="r1", principals=["group:hr"], facts=[fact("k", 777001)])
    body = answer_body("t-old", as_of=None, asked_by=["group:hr"],
                       claims=[{"key": "k", "value": 5, "cite": "d1"}],
                       retrieved=[{"cite": "d1", "document_id": "policy", "revision": "r1",
                                   "span": "p1"}])
    assert service_api.post("/api/v1/answers", body, format="json").status_code == 201
    publish("policy", revision="r2", principals=["*"], facts=[fact("k", 5)])
    response = token_client(reviewer).get("/api/v1/answers/t-old")
    assert response.status_code == 200
    assert b"777001" not in response.content
    old = response.json()["verdicts"][-1]
    assert old["findings"] and {f["message"] for f in old["findings"]} == {
        UNREADABLE_REVISION_MESSAGE}
    assert old["reason"] == "unsupported_claim"  # the reason itself is kept
    # The service sent r1 itself: it sees every message.
    assert b"777001" in service_api.get("/api/v1/answers/t-old").content
