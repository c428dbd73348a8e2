"""The dead-letter list stays cheap however many letters pile up: its task filter offers the
worker's registered tasks instead of reading every row for the values it holds."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviewqueue.jobs.models import DeadLetter

pytestmark = pytest.mark.django_db


def _letter(task: str, error: str) -> DeadLetter:
    return DeadLetter.objects.create(task_name=task, args=[[1], "manual"], kwargs={},
                                     error_type=error, attempts=1, failed_at=timezone.now())


def test_the_list_reads_no_distinct_values_and_filters_by_task(admin_client: Any) -> None:
    _letter("reviews.reevaluate_answers", "ValueError")
    _letter("webhooks.deliver", "KeyError")

    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get("/admin/jobs/deadletter/")
    filtered = admin_client.get("/admin/jobs/deadletter/?task_name=webhooks.deliver")
    searched = admin_client.get("/admin/jobs/deadletter/?q=ValueError")

    assert page.status_code == 200
    assert not [q["sql"] for q in queries if "DISTINCT" in q["sql"].upper()]
    html = page.content.decode()
    for task in ("reviews.reevaluate_answers", "jobs.fan_out_job", "webhooks.deliver"):
        assert f"?task_name={task}" in html
    assert "?task_name=celery." not in html
    assert "KeyError" in filtered.content.decode()
    assert "ValueError" not in filtered.content.decode()
    assert "ValueError" in searched.content.decode()
    assert "KeyError" not in searched.content.decode()
