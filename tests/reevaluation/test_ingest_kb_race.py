"""An answer ingested while the knowledge base changes on a key it claims is re-evaluated.

The gate compares each claim with the facts on its key in every document the asker may read,
cited or not. A publish (or withdrawal) of such a document that commits while an answer is
being ingested fans out at its own commit, when the answer cannot be seen yet; ingest looks at
the claimed keys again once it has committed and re-evaluates the answers whose keys changed.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.jobs.models import Job
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import reevaluation
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from tests.conftest import answer_body
from tests.reevaluation import test_ingest_race
from tests.reevaluation.conftest import fact
from tests.reevaluation.test_ingest_race import publish_elsewhere

pytestmark = pytest.mark.django_db(transaction=True)

PATHS = ["/api/v1/answers", "/api/v1/answers/batch"]
racing = test_ingest_race.racing


def withdraw_elsewhere(document: str) -> None:
    """Withdraw and commit on another connection, as a concurrent request would."""
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.sources.services import document_withdraw

    def run() -> None:
        try:
            document_withdraw(document_key=document, actor=SYSTEM)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def post_answer(service_api: Any, path: str, trace_id: str) -> Answer:
    """Ingest an answer citing `pricing` r1 and claiming trial_days = 14."""
    body = answer_body(trace_id, as_of=None)
    response = service_api.post(path, {"answers": [body]} if path.endswith("batch") else body,
                                format="json")
    assert response.status_code in (200, 201), response.content
    if path.endswith("batch"):
        assert response.json()["results"][0]["status_code"] == 201, response.content
    return Answer.objects.select_related("current_verdict", "review_item").get(
        trace_id=trace_id)


def answer_jobs() -> int:
    return Job.objects.filter(scope=Job.Scope.ANSWERS).count()


def assert_held_for_the_conflict_on_a_fresh_verdict(answer: Any) -> None:
    """Held for the disagreement the publish brought, on a verdict computed after it."""
    assert answer.status == "held"
    assert "conflicting_sources" in answer.review_item.reasons
    assert answer.current_verdict.trigger == "revision"
    assert verdict_is_fresh(answer, answer.current_verdict)


@pytest.mark.parametrize("path", PATHS)
def test_a_new_document_disagreeing_on_a_claimed_key_during_ingest_holds_the_answer(
    publish: Any, service_api: Any, racing: Any, path: str
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    # A document the answer does not cite, carrying trial_days for the first time.
    racing(lambda: publish_elsewhere(service_api, "kb-terms", "r1", facts=[fact(30)]))
    answer = post_answer(service_api, path, "t-new-kb")
    assert_held_for_the_conflict_on_a_fresh_verdict(answer)


@pytest.mark.parametrize("path", PATHS)
def test_a_known_document_changing_its_value_during_ingest_holds_the_answer(
    publish: Any, service_api: Any, racing: Any, path: str
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    publish("kb-terms", "r1", facts=[fact(14)])  # agrees at first
    racing(lambda: publish_elsewhere(service_api, "kb-terms", "r2", facts=[fact(30)]))
    answer = post_answer(service_api, path, "t-known-kb")
    assert_held_for_the_conflict_on_a_fresh_verdict(answer)


def test_a_disagreeing_document_withdrawn_during_ingest_releases_the_answer(
    publish: Any, service_api: Any, racing: Any
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    publish("kb-terms", "r1", facts=[fact(30)])
    racing(lambda: withdraw_elsewhere("kb-terms"))
    answer = post_answer(service_api, PATHS[0], "t-withdrawn-kb")
    assert (answer.status, answer.current_verdict.trigger) == ("candidate", "revision")
    assert verdict_is_fresh(answer, answer.current_verdict)


@pytest.mark.parametrize("path", PATHS)
def test_a_change_on_a_key_nobody_claims_adds_no_job(
    publish: Any, service_api: Any, racing: Any, path: str
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    racing(lambda: publish_elsewhere(service_api, "kb-terms", "r1",
                                     facts=[fact(30, key="seats")]))
    answer = post_answer(service_api, path, "t-other-key")
    assert (answer.status, answer.current_verdict.trigger) == ("candidate", "ingest")
    assert answer_jobs() == 0


@pytest.mark.parametrize("path", PATHS)
def test_an_ingest_while_nothing_changes_adds_no_job(
    publish: Any, service_api: Any, path: str
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    publish("kb-terms", "r1", facts=[fact(14)])
    jobs = Job.objects.count()
    answer = post_answer(service_api, path, "t-calm-kb")
    assert (answer.status, answer.current_verdict.trigger) == ("candidate", "ingest")
    assert Job.objects.count() == jobs


def test_the_check_after_commit_costs_one_query_when_nothing_changed(
    publish: Any, service_api: Any, monkeypatch: Any
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    publish("kb-terms", "r1", facts=[fact(14)])
    counted: list[int] = []
    original = reevaluation._catch_up

    def counting(*args: Any) -> None:
        with CaptureQueriesContext(connection) as queries:
            original(*args)
        counted.append(len(queries))

    monkeypatch.setattr(reevaluation, "_catch_up", counting)
    post_answer(service_api, PATHS[0], "t-one-query")
    assert counted == [1]


def test_an_answer_without_claims_is_checked_on_its_documents_alone(
    publish: Any, service_api: Any
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    body = answer_body("t-no-claims", as_of=None, claims=[], answer="See the pricing page [d1].")
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 201, response.content
    assert answer_jobs() == 0
