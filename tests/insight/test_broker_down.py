"""Redis, the broker, cannot be reached by a web process (the worker and beat may well be
fine on theirs): the insight page, GET /api/v1/metrics and /metrics still answer, saying the
figures are not there, rather than fail with the send of the task that would compute them.
The README: "while it cannot be reached ... the API and the pages go on answering rather than
fail with it"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from tests.reevaluation.conftest import celery_sending_to

# Nothing listens on port 1: the connection is refused, as by a Redis that is down.
DOWN_BROKER_URL = "redis://127.0.0.1:1/0"

# Autocommit, as under gunicorn: a send queued with on_commit runs inside the request.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def broker_down(settings: Any) -> Iterator[None]:
    with celery_sending_to(DOWN_BROKER_URL):
        settings.CELERY_TASK_ALWAYS_EAGER = False
        yield


@pytest.fixture
def ada(admin_user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


def test_the_insight_page_answers_while_the_broker_is_down(ada: Client, broker_down: None
                                                           ) -> None:
    response = ada.get("/insight/")
    assert response.status_code == 200


@pytest.mark.parametrize("url", ["/api/v1/metrics", "/metrics"])
def test_the_metrics_endpoints_answer_while_the_broker_is_down(
    url: str, admin_user: Any, token_client: Any, broker_down: None
) -> None:
    api = token_client(admin_user)
    api.raise_request_exception = False
    response = api.get(url)
    assert response.status_code != 500
