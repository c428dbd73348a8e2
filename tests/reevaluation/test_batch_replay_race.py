"""Two batches carrying the same trace_ids at once, as a client retrying after a timeout
sends them: each gets its results, one stores the answers and the other reads them back as
replays. No 500, no deadlock, nothing stored twice."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from reviewqueue.audit.models import QuarantinedPayload
from reviewqueue.copying import FEW
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import ingest
from tests.conftest import answer_body

pytestmark = pytest.mark.django_db(transaction=True)


def post_batch(raw_token: str, bodies: list[dict[str, Any]]) -> Any:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw_token}")
    return client.post("/api/v1/answers/batch", {"answers": bodies}, format="json")


def test_a_batch_whose_answers_another_request_stored_first_answers_as_replays(
    publish: Any, service_api: Any, monkeypatch: Any
) -> None:
    """The other request commits after this one has looked for stored answers and before
    its COPY: the COPY then meets the trace_ids in the unique index."""
    publish()
    bodies = [answer_body(f"t-{i}") for i in range(FEW)]  # enough to be written with COPY
    original = ingest.load_sources

    def read_then_other_request_stores(*args: Any, **kwargs: Any) -> Any:
        sources = original(*args, **kwargs)
        monkeypatch.setattr(ingest, "load_sources", original)  # the other request's own read

        def other() -> None:
            try:
                assert post_batch(service_api.raw_token, bodies).status_code == 200
            finally:
                connection.close()

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        return sources

    monkeypatch.setattr(ingest, "load_sources", read_then_other_request_stores)
    response = post_batch(service_api.raw_token, bodies)
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [r["status_code"] for r in results] == [200] * FEW
    assert [r["trace_id"] for r in results] == [f"t-{i}" for i in range(FEW)]
    assert Answer.objects.count() == FEW
    assert not QuarantinedPayload.objects.exists()


def test_two_batches_of_the_same_answers_in_opposite_orders_both_succeed(
    publish: Any, service_api: Any
) -> None:
    publish()
    bodies = [answer_body(f"t-{i:03d}") for i in range(200)]
    start = threading.Barrier(2)
    outcomes: dict[str, Any] = {}

    def run(name: str, batch: list[dict[str, Any]]) -> None:
        try:
            start.wait()
            response = post_batch(service_api.raw_token, batch)
            outcomes[name] = (response.status_code,
                              [r["status_code"] for r in response.json()["results"]])
        except Exception as exc:  # reported below, not lost in the thread
            outcomes[name] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=("forward", bodies)),
               threading.Thread(target=run, args=("backward", bodies[::-1]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert set(outcomes) == {"forward", "backward"}, outcomes
    assert not any(isinstance(o, Exception) for o in outcomes.values()), outcomes
    for status, codes in outcomes.values():
        assert status == 200
        assert set(codes) <= {200, 201}
    # Every answer stored once, by one of the two: created there, a replay in the other.
    created = [codes.count(201) for _, codes in outcomes.values()]
    assert sum(created) == 200, created
    assert Answer.objects.count() == 200
