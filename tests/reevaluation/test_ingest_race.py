"""An answer ingested while one of its sources changes is re-evaluated on the new revision.

The job a publish starts looks, at its commit, for the answers citing the document; an answer
whose ingest read the old revision but had not committed yet is not among them. Ingest checks
its documents again once it has committed, and re-evaluates what changed.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import ingest
from tests.conftest import answer_body, revision_body
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db(transaction=True)


def publish_elsewhere(service_api: Any, document: str, revision: str, **body: Any) -> None:
    """Publish and commit on another connection, as a concurrent request would."""

    def run() -> None:
        try:
            response = service_api.put(f"/api/v1/documents/{document}/revisions/{revision}",
                                       revision_body(**body), format="json")
            assert response.status_code in (200, 201), response.content
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


@pytest.fixture
def racing(monkeypatch: Any) -> Any:
    """Run `change` right after ingest has read the sources, before it commits."""

    def arm(change: Any) -> None:
        original = ingest.load_sources

        def read_then_change(*args: Any, **kwargs: Any) -> Any:
            sources = original(*args, **kwargs)
            change()
            return sources

        monkeypatch.setattr(ingest, "load_sources", read_then_change)

    return arm


@pytest.mark.parametrize("path", ["/api/v1/answers", "/api/v1/answers/batch"])
def test_a_revision_published_during_ingest_re_evaluates_the_answer(
    publish: Any, service_api: Any, racing: Any, path: str
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    racing(lambda: publish_elsewhere(service_api, "pricing", "r2", facts=[fact(21)]))
    body = answer_body("t-race", as_of=None)
    response = service_api.post(path, {"answers": [body]} if path.endswith("batch") else body,
                                format="json")
    assert response.status_code in (200, 201), response.content
    answer = Answer.objects.select_related("current_verdict").get(trace_id="t-race")
    assert answer.current_verdict.trigger == "revision"
    assert [r["current"] for r in answer.current_verdict.revisions_used] == ["r2"]
    assert answer.status == "held"  # it claims 14 days; r2 says 21


def test_a_late_revision_received_during_ingest_re_evaluates_the_answer(
    publish: Any, service_api: Any, racing: Any
) -> None:
    """The answer quotes r1, which the store has not received (r2 is current). r1 arrives
    late while the answer is being ingested: nothing current changes, but the answer's
    citation now resolves, and the answer is checked again against r2 ("Source revised")
    instead of staying held for a revision never received."""
    publish("pricing", "r2", facts=[fact(21)], updated_at="2026-11-01T09:00:00Z")
    racing(lambda: publish_elsewhere(service_api, "pricing", "r1", facts=[fact(14)],
                                     updated_at="2026-10-01T09:00:00Z"))
    response = service_api.post("/api/v1/answers", answer_body("t-late", as_of=None),
                                format="json")
    assert response.status_code == 201, response.content
    answer = Answer.objects.select_related("current_verdict").get(trace_id="t-late")
    assert answer.current_verdict.reason == "superseded_revision"
    assert answer.current_verdict.revisions_used[0]["current"] == "r2"


def test_an_answer_whose_sources_did_not_change_is_left_alone(
    publish: Any, service_api: Any, racing: Any
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    publish("other", "r1", facts=[fact(30, key="seats")])
    racing(lambda: publish_elsewhere(service_api, "other", "r2",
                                     facts=[fact(31, key="seats")]))
    response = service_api.post("/api/v1/answers", answer_body("t-calm", as_of=None),
                                format="json")
    assert response.status_code == 201, response.content
    answer = Answer.objects.select_related("current_verdict").get(trace_id="t-calm")
    assert (answer.current_verdict.trigger, answer.status) == ("ingest", "candidate")
