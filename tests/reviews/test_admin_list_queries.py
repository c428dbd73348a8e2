"""Admin lists run the same queries for one row as for several: every related row a column
shows is joined, never fetched row by row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Decision
from reviewqueue.sources.models import Document
from tests.reviews.conftest import current_verdict_id

pytestmark = pytest.mark.django_db

DECISIONS = "/admin/reviews/decision/"
DOCUMENTS = "/admin/sources/document/"
VERDICTS = "/admin/reviews/verdict/"


def queries_to_list(client: Client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries), response.content.decode()


@pytest.fixture
def approve(hold: Callable[..., str], reviewer: Any,
            token_client: Callable[..., Any]) -> Callable[[str], None]:
    api = token_client(reviewer)

    def do(trace_id: str) -> None:
        hold(trace_id)
        response = api.post(f"/api/v1/answers/{trace_id}/decisions",
                            {"action": "approve", "verdict": current_verdict_id(trace_id)},
                            format="json")
        assert response.status_code == 201, response.content

    return do


def test_the_decision_list_costs_the_same_for_one_row_as_for_four(
    admin_client: Client, approve: Callable[[str], None]
) -> None:
    approve("t-1")
    one, _page = queries_to_list(admin_client, DECISIONS)
    for trace_id in ("t-2", "t-3", "t-4"):
        approve(trace_id)
    assert Decision.objects.count() == 4
    four, page = queries_to_list(admin_client, DECISIONS)
    assert four == one
    # The verdict column is there, and read from the join.
    assert page.count("verdict ") >= 4


def test_the_document_list_costs_the_same_for_one_row_as_for_four(
    admin_client: Client, publish: Callable[..., Any]
) -> None:
    publish("pricing")
    one, _page = queries_to_list(admin_client, DOCUMENTS)
    for key in ("pricing-eu", "pricing-us", "pricing-jp"):
        publish(key)
    assert Document.objects.count() == 4
    four, page = queries_to_list(admin_client, DOCUMENTS)
    assert four == one
    # The current revision is named with its document's key.
    assert "pricing-jp@r1" in page


def test_the_verdict_list_does_not_read_every_verdict_for_its_reason_filter(
    admin_client: Client, hold: Callable[..., str]
) -> None:
    hold("t-1")
    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(VERDICTS)
    assert response.status_code == 200
    assert not [q["sql"] for q in captured.captured_queries if "DISTINCT" in q["sql"].upper()]
    # Every reason the gate can give is offered, whether or not a verdict has it yet.
    assert "?reason=uncited_answer" in response.content.decode()


def test_the_verdict_list_filters_by_reason(
    admin_client: Client, hold: Callable[..., str]
) -> None:
    hold("t-1")
    held = admin_client.get(f"{VERDICTS}?reason=conflicting_sources").context["cl"].result_list
    assert [v.answer.trace_id for v in held] == ["t-1"]
    assert list(admin_client.get(f"{VERDICTS}?reason=supported").context["cl"].result_list) == []
