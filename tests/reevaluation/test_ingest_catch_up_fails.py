"""The check ingest makes once its answers have committed (did a cited document, or the facts
on a claimed key, change while the gate read them?) can fail on its own: the database drops
the connection a moment after the commit. The answer is stored by then. The sender is told
so, not given a server error, and the check is handed to a worker, which retries it: the
answer is not left for good on a verdict computed on the revision a publish replaced."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import OperationalError

from reviewqueue.reviews import tasks
from reviewqueue.reviews.services import reevaluation
from tests.conftest import answer_body
from tests.reevaluation.conftest import fact
from tests.reevaluation.test_ingest_race import publish_elsewhere, racing  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def check_fails_once(monkeypatch: Any) -> list[int]:
    """The first look at the sources after the commit loses its connection."""
    calls: list[int] = []
    original = reevaluation._sources_now

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return original(*args, **kwargs)

    monkeypatch.setattr(reevaluation, "_sources_now", failing_once)
    # The worker reads the check from a JSON message, as the broker carries it.
    task = tasks.catch_up_after_commit
    monkeypatch.setattr(task, "delay", lambda **kwargs: task.apply(
        kwargs=json.loads(json.dumps(kwargs)), throw=True))
    return calls


@pytest.mark.parametrize("path", ["/api/v1/answers", "/api/v1/answers/batch"])
def test_a_revision_published_during_ingest_still_re_evaluates_the_answer_when_the_check_fails(
    publish: Any, service_api: Any, racing: Any, check_fails_once: list[int],  # noqa: F811
    path: str,
) -> None:
    publish("pricing", "r1", facts=[fact(14)])
    racing(lambda: publish_elsewhere(service_api, "pricing", "r2", facts=[fact(21)]))
    body = answer_body("t-race", as_of=None)
    service_api.raise_request_exception = False
    response = service_api.post(path, {"answers": [body]} if path.endswith("batch") else body,
                                format="json")
    assert response.status_code in (200, 201), response.content
    assert response.json()["trace_id" if not path.endswith("batch") else "results"]
    read = service_api.get("/api/v1/answers/t-race").json()
    # Held: it claims 14 days, and r2, current since, says 21.
    assert read["status"] == "held"
    assert read["verdict"]["trigger"] == "revision"
    assert [r["current"] for r in read["verdict"]["revisions_used"]] == ["r2"]
    assert len(check_fails_once) == 2  # failed once in the request, done by the worker
