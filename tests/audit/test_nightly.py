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
    # Every hour from 02:30, so a broker down at 02:30 does not lose the night; the first ask
    # that arrives runs, the others find the night's run and do nothing.
    assert (entry["schedule"].hour, entry["schedule"].minute) == (set(range(2, 24)), {30})
    assert entry["kwargs"] == {"trigger": "nightly", "once_a_day": True}


@pytest.mark.django_db
def test_only_the_first_of_the_days_hourly_asks_walks_the_chain(chain: Callable[..., Any]) -> None:
    chain(3)
    verify_chain.apply(kwargs={"trigger": "manual"})  # an admin's run is not the night's
    first = verify_chain.apply(kwargs={"trigger": "nightly", "once_a_day": True}).get()
    again = verify_chain.apply(kwargs={"trigger": "nightly", "once_a_day": True}).get()
    assert first["ok"] is True
    assert again == {"skipped": "a nightly verification already ran today"}
    assert list(VerificationRun.objects.order_by("id").values_list("trigger", flat=True)) == [
        "manual", "nightly"]


def test_the_schedule_of_other_areas_is_kept() -> None:
    from django.conf import settings

    from reviewqueue.celery import app

    for key in getattr(settings, "CELERY_BEAT_SCHEDULE", {}):
        assert key in app.conf.beat_schedule


@pytest.mark.django_db
def test_a_clean_night_records_a_run_and_no_alert(chain: Callable[..., Any]) -> None:
    chain(3)
    result = verify_chain.apply(kwargs={"trigger": "nightly"}).get()
    assert result == {"ok": True, "events": 3, "first_bad_seq": None, "problems": 0}
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


def _night() -> dict[str, Any]:
    return verify_chain.apply(kwargs={"trigger": "nightly"}).get()


def _acknowledge_all() -> None:
    from django.utils import timezone

    AuditAlert.objects.update(acknowledged_at=timezone.now())


@pytest.mark.django_db
def test_a_night_reports_every_problem_it_finds(chain: Callable[..., Any], tamper: Any) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 2")
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 5")
    result = _night()
    assert result == {"ok": False, "events": 5, "first_bad_seq": 3, "problems": 2}


@pytest.mark.django_db
def test_a_new_tamper_after_an_acknowledged_alert_raises_a_new_open_alert(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(6)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 2")
    _night()
    _acknowledge_all()
    _night()
    assert not AuditAlert.objects.filter(acknowledged_at__isnull=True).exists()
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'other' WHERE seq = 5")
    _night()
    alert = AuditAlert.objects.get(acknowledged_at__isnull=True)
    # Still the chain's first bad event, with what is new first in the message.
    assert (alert.first_bad_seq, alert.problem) == (3, "missing")
    assert alert.message.startswith("New since the verification of ")
    assert ": event #5: its content no longer matches its hash" in alert.message
    assert "Event #3 is the first bad event" in alert.message
    assert "2 problems in all" in alert.message


@pytest.mark.django_db
def test_the_audit_page_says_an_alert_in_the_readers_language_one_problem_a_line(
    chain: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """What is new comes as a list, each problem with its label, then the run's summary; in
    Japanese, none of it is left in English."""
    import re

    chain(8)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 2")
    _night()
    _acknowledge_all()
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = 'other' WHERE seq = 5")
        cursor.execute("UPDATE audit_auditevent SET object_id = 'other' WHERE seq = 7")
    _night()
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    alert = page[page.index('data-alert="new"'):page.index("Acknowledge</button>")]
    assert "New since the verification of " in alert
    items = [re.sub(r"\s+", " ", i) for i in re.findall(r"<li>(.*?)</li>", alert, re.S)]
    edited = "Content changed: its content no longer matches its hash: the event was edited."
    assert items == [f"#5 {edited}", f"#7 {edited}"]
    assert ".;" not in alert and "Event #3 is the first bad event" in alert
    japanese = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    alert = japanese[japanese.index('data-alert="new"'):japanese.index("</form>",
                                                                     japanese.index('data-alert'))]
    for english in ("New since", "Content changed", "its content", "first bad event"):
        assert english not in alert, english


@pytest.mark.django_db
def test_an_event_already_known_to_be_bad_edited_again_raises_a_new_alert(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(4)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 3")
    _night()
    _acknowledge_all()
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:eve' WHERE seq = 3")
    _night()
    alert = AuditAlert.objects.get(acknowledged_at__isnull=True)
    assert alert.message.startswith("The problems differ from those found on ")
    assert "(1 then, 1 now): the log was written to again" in alert.message


@pytest.mark.django_db
def test_a_deletion_past_the_first_break_raises_a_new_alert(
    chain: Callable[..., Any], tamper: Any
) -> None:
    chain(8)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    _night()
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 6")
    result = _night()
    assert (result["first_bad_seq"], result["problems"]) == (2, 2)
    assert AuditAlert.objects.count() == 2
    newest = AuditAlert.objects.order_by("-id").first()
    assert "event #7: event #6 is missing before it" in newest.message


@pytest.mark.django_db
def test_a_break_already_alerted_on_before_runs_listed_their_problems_is_not_news(
    chain: Callable[..., Any], tamper: Any
) -> None:
    """A run recorded before this version knew only the first problem: the same single
    problem found now is the same break."""
    from django.utils import timezone

    chain(4)
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 2")
    old = VerificationRun.objects.create(
        started_at=timezone.now(), finished_at=timezone.now(), trigger="nightly", ok=False,
        events_checked=1, first_bad_seq=3, problem="missing", detail="Event #3 ...")
    AuditAlert.objects.create(run=old, first_bad_seq=3, problem="missing", message="...")
    _night()
    assert AuditAlert.objects.count() == 1


@pytest.mark.django_db
def test_the_audit_page_reads_its_open_alerts_in_queries_that_do_not_grow_with_them(
    chain: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    chain(14)

    def night_edits(seq: int) -> None:
        with tamper() as cursor:
            cursor.execute("UPDATE audit_auditevent SET object_id = 'x' WHERE seq = %s", [seq])
        _night()

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get("/audit/").status_code == 200
        return len(captured)

    for seq in (2, 3):
        night_edits(seq)
    two = queries()
    for seq in range(4, 12):
        night_edits(seq)
    assert AuditAlert.objects.filter(acknowledged_at__isnull=True).count() == 10
    assert queries() == two


@pytest.mark.django_db
def test_an_alert_on_a_run_stored_before_runs_listed_their_problems_keeps_its_message(
    admin_client: Any,
) -> None:
    from django.utils import timezone

    now = timezone.now()
    older = VerificationRun.objects.create(
        started_at=now, finished_at=now, trigger="nightly", ok=False, events_checked=4,
        first_bad_seq=3, problem="changed", detail="Event #3 is the first bad event.")
    run = VerificationRun.objects.create(
        started_at=now, finished_at=now, trigger="nightly", ok=False, events_checked=6,
        first_bad_seq=3, problem="changed", detail="Event #3 is the first bad event.")
    assert older.pk < run.pk
    AuditAlert.objects.create(run=run, first_bad_seq=3, problem="changed",
                              message="New since the verification of before: event #5.")
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    alert = page[page.index('data-alert="summary"'):]
    assert "New since the verification of before: event #5." in alert
    assert "0 now" not in alert
