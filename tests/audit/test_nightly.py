"""The nightly verification: scheduled with beat, records its result, raises alerts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reviewqueue.audit.models import AuditAlert, VerificationRun
from reviewqueue.audit.tasks import NIGHTLY_KEY, verify_chain


def test_the_nightly_verification_is_in_the_beat_schedule() -> None:
    from reviewqueue.celery import app

    entry = app.conf.beat_schedule[NIGHTLY_KEY]
    assert entry["task"] == "audit.verify_chain"
    assert entry["schedule"].hour == {2}


def test_the_schedule_of_other_areas_is_kept() -> None:
    from django.conf import settings

    from reviewqueue.celery import app

    for key in getattr(settings, "CELERY_BEAT_SCHEDULE", {}):
        assert key in app.conf.beat_schedule


@pytest.mark.django_db
def test_a_clean_night_records_a_run_and_no_alert(chain: Callable[..., Any]) -> None:
    chain(3)
    result = verify_chain.apply(kwargs={"trigger": "nightly"}).get()
    assert result == {"ok": True, "events": 3, "first_bad_seq": None}
    run = VerificationRun.objects.get()
    assert (run.trigger, run.ok) == ("nightly", True)
    assert not AuditAlert.objects.exists()


@pytest.mark.django_db
def test_a_broken_chain_raises_one_alert_however_many_nights_find_it(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(4)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 2")
    for _ in range(3):
        result = verify_chain.apply(kwargs={"trigger": "nightly"}).get()
        assert result["ok"] is False
    assert VerificationRun.objects.filter(ok=False).count() == 3
    alert = AuditAlert.objects.get()
    assert (alert.first_bad_seq, alert.problem) == (3, "missing")
    assert "Event #3 is the first bad event" in alert.message


@pytest.mark.django_db
def test_an_acknowledged_break_does_not_alert_again(
    chain: Callable[..., Any], tamper: Any
) -> None:
    from django.utils import timezone

    chain(4)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 2")
    verify_chain.apply(kwargs={"trigger": "nightly"})
    AuditAlert.objects.update(acknowledged_at=timezone.now())
    verify_chain.apply(kwargs={"trigger": "nightly"})
    assert AuditAlert.objects.count() == 1


@pytest.mark.django_db
def test_a_different_break_raises_a_new_alert(chain: Callable[..., Any], tamper: Any) -> None:
    chain(4)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 3")
    verify_chain.apply(kwargs={"trigger": "nightly"})
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    verify_chain.apply(kwargs={"trigger": "nightly"})
    assert sorted(AuditAlert.objects.values_list("first_bad_seq", flat=True)) == [2, 3]
