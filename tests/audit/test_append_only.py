"""PostgreSQL itself refuses to change or remove audit events, whoever asks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from reviewqueue.audit.models import AuditEvent, VerificationRun
from reviewqueue.audit.services import WORKER, audit_record
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db


def _refused(action: Callable[[], Any]) -> str:
    with pytest.raises(DatabaseError) as refusal, transaction.atomic():
        action()
    return str(refusal.value)


def _raw(sql: str) -> Callable[[], None]:
    def run() -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)

    return run


def test_an_orm_update_is_refused(chain: Callable[..., Any]) -> None:
    chain(2)
    message = _refused(lambda: AuditEvent.objects.filter(seq=1).update(action="edited"))
    assert "append-only: UPDATE refused" in message
    assert AuditEvent.objects.get(seq=1).action == "verdict.created"


def test_saving_a_loaded_event_is_refused(chain: Callable[..., Any]) -> None:
    event = chain(1)[0]
    event.actor = "user:mallory"
    assert "UPDATE refused" in _refused(event.save)
    assert AuditEvent.objects.get(seq=1).actor == "worker"


def test_an_orm_delete_is_refused(chain: Callable[..., Any]) -> None:
    chain(2)
    assert "DELETE refused" in _refused(lambda: AuditEvent.objects.filter(seq=2).delete())
    assert AuditEvent.objects.count() == 2


def test_deleting_a_loaded_event_is_refused(chain: Callable[..., Any]) -> None:
    event = chain(1)[0]
    assert "DELETE refused" in _refused(event.delete)
    assert AuditEvent.objects.filter(seq=1).exists()


def test_a_raw_update_is_refused(chain: Callable[..., Any]) -> None:
    chain(2)
    message = _refused(_raw("UPDATE audit_auditevent SET after = '{}'"))
    assert "UPDATE refused" in message
    assert verify().ok


def test_a_raw_delete_is_refused(chain: Callable[..., Any]) -> None:
    chain(2)
    assert "DELETE refused" in _refused(_raw("DELETE FROM audit_auditevent"))
    assert AuditEvent.objects.count() == 2


@pytest.mark.parametrize("table", ["audit_auditevent", "audit_verificationrun, audit_auditalert"])
def test_truncate_is_refused_to_a_session_that_sets_the_switch_itself(
    chain: Callable[..., Any], table: str
) -> None:
    chain(2)
    verify()

    def truncate() -> None:
        with connection.cursor() as cursor:
            # The test database has the switch set on the database, so the runner can empty
            # tables; without it (undone when the test's transaction rolls back), setting it
            # in the session is not enough.
            name = connection.settings_dict["NAME"]
            cursor.execute(f'ALTER DATABASE "{name}" RESET reviewqueue.allow_audit_truncate')
            cursor.execute("SET LOCAL reviewqueue.allow_audit_truncate = 'on'")
            cursor.execute(f"TRUNCATE {table}")

    assert "TRUNCATE refused" in _refused(truncate)
    assert AuditEvent.objects.count() == 2
    assert VerificationRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_appending_outside_a_transaction_is_refused() -> None:
    with pytest.raises(RuntimeError, match="inside the transaction"):
        audit_record(actor=WORKER, action="x.y", object_type="answer", object_id="t")
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("after", [
    {"text": "The free trial lasts 14 days."},
    {"revisions": [{"passage_text": "The free trial lasts 14 days."}]},
    {"issued": "rq_" + "a" * 43},
])
def test_text_and_tokens_are_kept_out_of_the_log(db: Any, after: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="audit after"):
        audit_record(actor=WORKER, action="x.y", object_type="answer", object_id="t",
                     after=after)
    assert not AuditEvent.objects.exists()


def test_a_token_prefix_may_be_logged(db: Any) -> None:
    event = audit_record(actor=WORKER, action="token.issued", object_type="api_token",
                         object_id=1, after={"prefix": "rq_AbCdEfG"})
    assert event.after == {"prefix": "rq_AbCdEfG"}


def test_a_verification_run_cannot_be_changed_or_removed(chain: Callable[..., Any]) -> None:
    # The next verification trusts the last run's anchor; rewriting it would hide a truncation.
    chain(2)
    run = verify()
    assert "UPDATE refused" in _refused(
        lambda: VerificationRun.objects.filter(pk=run.pk).update(last_seq=1))
    assert "DELETE refused" in _refused(lambda: VerificationRun.objects.all().delete())
    assert VerificationRun.objects.get().last_seq == 2


def test_an_event_is_never_dated_before_the_one_it_follows(
    chain: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host whose clock runs behind appends after one whose clock runs ahead."""
    import datetime as dt

    from django.utils import timezone

    import reviewqueue.audit.services as services

    tail = chain(1)[0]
    behind = tail.created_at - dt.timedelta(minutes=5)

    class SlowClock:
        @staticmethod
        def now() -> dt.datetime:
            return behind

    monkeypatch.setattr(services, "timezone", SlowClock)
    with transaction.atomic():
        audit_record(actor=WORKER, action="verdict.created", object_type="verdict",
                     object_id=2)
    monkeypatch.undo()
    later = AuditEvent.objects.get(seq=tail.seq + 1)
    assert later.created_at == tail.created_at
    assert timezone.now() >= later.created_at
    assert verify().ok
