"""Redis, the cache, cannot be reached: the API and the sign-in page still answer, and the
sign-in throttle still counts (in the process's memory), instead of every request failing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.conftest import answer_body

pytestmark = pytest.mark.django_db

NOBODY_LISTENS = "redis://127.0.0.1:1/0"


@pytest.fixture(autouse=True)
def _redis_down(settings: Any) -> None:
    settings.CACHES = {"default": {"BACKEND": "reviewqueue.cache.RedisOrLocalCache",
                                   "LOCATION": NOBODY_LISTENS}}
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_FAILURE_ADDRESS_LIMIT = 3


def test_the_api_answers_while_the_cache_is_unreachable(
    publish: Any, service_api: Any, caplog: Any
) -> None:
    publish("pricing", facts=[{"key": "trial_days", "value": 14, "valid_from": "2026-01-01",
                               "valid_until": None, "span": "p1"}])
    response = service_api.post("/api/v1/answers", answer_body("t-down"), format="json")
    assert response.status_code == 201, response.content
    assert service_api.get("/api/v1/answers/t-down").status_code == 200
    assert "cache unreachable: this process keeps it in memory" in caplog.text


def test_the_sign_in_throttle_still_counts_while_the_cache_is_unreachable(
    client: Client, admin_user: Any
) -> None:
    for _ in range(3):
        assert client.post("/accounts/login/", {"username": "ada",
                                                "password": "wrong"}).status_code == 200
    response = client.post("/accounts/login/", {"username": "ada",
                                                "password": "pw-for-tests-only"})
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()


def test_a_redis_that_never_answers_costs_one_timeout_not_one_a_request(
    settings: Any, publish: Any, service_api: Any
) -> None:
    """It accepts connections and says nothing: after the first call waits out its timeout,
    the next requests go straight to the process's memory for a while."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(50)
    held: list[Any] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    settings.CACHES = {"default": {
        "BACKEND": "reviewqueue.cache.RedisOrLocalCache",
        "LOCATION": f"redis://127.0.0.1:{server.getsockname()[1]}/0"}}
    try:
        publish("pricing")  # its first cache call waits out the timeout
        tried = len(held)
        for _ in range(3):
            assert service_api.get("/api/v1/documents/pricing").status_code == 200
        assert len(held) == tried  # no call went to Redis again
    finally:
        server.close()
