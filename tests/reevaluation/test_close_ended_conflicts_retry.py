"""The daily close of conflicts whose periods have ended survives a database that is briefly
gone: the task is retried, and when it fails for good an admin finds it among the dead letters
and sends it again. However often it runs, a conflict is closed once."""

from __future__ import annotations

import datetime as dt
from typing import Any
from unittest import mock

import pytest
from django.db import OperationalError

from reviewqueue.audit.models import AuditEvent
from reviewqueue.jobs.models import DeadLetter
from reviewqueue.sources import conflicts
from reviewqueue.sources.models import Conflict
from reviewqueue.sources.tasks import close_ended_conflicts
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def ended_conflict(publish_doc: Any, settings: Any) -> Conflict:
    """Two documents that disagreed until 2027-06-30; today is 1 July."""
    settings.REEVALUATION_TODAY = dt.date(2027, 3, 1)
    publish_doc("pricing", "r1", facts=[fact(14)])
    publish_doc("promo", "r1", facts=[fact(30, valid_until="2027-06-30")])
    conflict = Conflict.objects.get(key="trial_days")
    assert conflict.status == "open"
    settings.REEVALUATION_TODAY = dt.date(2027, 7, 1)
    return conflict


def database_gone(times: int) -> Any:
    """The close fails with a lost connection its first `times` times."""
    real = conflicts.conflicts_close_ended
    calls: list[int] = []

    def close(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) <= times:
            raise OperationalError("server closed the connection unexpectedly")
        return real(**kwargs)

    return mock.patch.object(conflicts, "conflicts_close_ended", side_effect=close)


def test_a_lost_connection_is_retried_and_the_day_is_closed(
    ended_conflict: Conflict, on_commit: Any
) -> None:
    with database_gone(times=1), on_commit():
        close_ended_conflicts.delay()

    assert Conflict.objects.get(pk=ended_conflict.pk).status == "closed"
    assert not DeadLetter.objects.exists()


def test_a_close_that_keeps_failing_is_dead_lettered_and_an_admin_can_send_it_again(
    ended_conflict: Conflict, admin_client: Any, on_commit: Any
) -> None:
    with database_gone(times=99), on_commit():
        close_ended_conflicts.delay()

    assert Conflict.objects.get(pk=ended_conflict.pk).status == "open"
    page = admin_client.get("/admin/jobs/deadletter/?task_name=sources.close_ended_conflicts")
    assert "django.db.utils.OperationalError" in page.content.decode()
    letter = DeadLetter.objects.get(task_name="sources.close_ended_conflicts")

    with on_commit():  # the database is back
        admin_client.post("/admin/jobs/deadletter/",
                          {"action": "retry_selected", "_selected_action": [letter.pk]})

    assert Conflict.objects.get(pk=ended_conflict.pk).status == "closed"


def test_running_the_close_again_closes_nothing_twice(
    ended_conflict: Conflict, on_commit: Any
) -> None:
    for _ in range(2):  # a retry after the close went through, or beat and a rerun
        with on_commit():
            close_ended_conflicts.delay()

    assert Conflict.objects.get(pk=ended_conflict.pk).status == "closed"
    assert AuditEvent.objects.filter(action="conflict.closed").count() == 1
