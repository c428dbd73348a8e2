"""Writers of conflicts take the audit chain's lock before the conflict rows, as a publish
does: a dismissal, a reopening or the daily close-by-date that runs alongside a publish waits
for it and then acts on what it committed, instead of deadlocking with it.

Each test holds one transaction still at a point where it holds a lock the other needs, starts the
other writer on its own connection, waits until PostgreSQL shows it waiting for a lock, and
lets the first one go on.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM, Actor
from reviewqueue.errors import Conflict as ConflictError
from reviewqueue.sources import conflicts as conflicts_module
from reviewqueue.sources import services
from reviewqueue.sources.models import Conflict

WAIT = 20  # seconds; only ever reached when something is stuck



def body(value: Any, owner: str) -> services.RevisionInput:
    today = timezone.localdate()
    return services.RevisionInput(
        title="Trial", owner=owner, updated_at=timezone.now(), allowed_principals=("*",),
        passages=(services.PassageInput("p1", f"The trial lasts {value} days."),),
        facts=(services.FactInput(key="trial_days", value=value,
                                  valid_from=today - dt.timedelta(days=10),
                                  valid_until=today + dt.timedelta(days=60), span="p1"),))


@pytest.fixture
def conflict(owner: Any, make_user: Any) -> Conflict:
    """pricing (olivia's) says 14 days, trial-promo (oscar's) 30, until 60 days from now."""
    make_user("oscar", "owner")
    services.revision_publish(document_key="pricing", revision="r1", data=body(14, "olivia"),
                              actor=SYSTEM)
    services.revision_publish(document_key="trial-promo", revision="r1",
                              data=body(30, "oscar"), actor=SYSTEM)
    return Conflict.objects.get()


def publish_promo_r2() -> services.PublishResult:
    """oscar's system publishes trial-promo r2, which still disagrees (31 days)."""
    return services.revision_publish(document_key="trial-promo", revision="r2",
                                     data=body(31, "oscar"), actor=SYSTEM)


def _waiting_for_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return int(cursor.fetchone()[0])


def _run(name: str, call: Callable[[], Any], outcome: dict[str, Any]) -> threading.Thread:
    def target() -> None:
        try:
            outcome[name] = call()
        except BaseException as exc:  # the test reports it
            outcome[name] = exc
        finally:
            connection.close()  # each thread has its own connection

    thread = threading.Thread(target=target)
    thread.start()
    return thread


@pytest.fixture
def pause(monkeypatch: Any) -> Iterator[Callable[..., tuple[threading.Event, threading.Event]]]:
    """pause(module, action, before=False): the first writer that records `action` through
    `module`'s audit_record stops right after it (or just before it), until released;
    (paused, release) events."""
    releases: list[threading.Event] = []

    def install(module: Any, action: str, *, before: bool = False
                ) -> tuple[threading.Event, threading.Event]:
        original = module.audit_record
        paused, release = threading.Event(), threading.Event()
        releases.append(release)

        def wait() -> None:
            if not paused.is_set():
                paused.set()
                release.wait(WAIT)

        def audit_and_wait(**kwargs: Any) -> Any:
            if kwargs.get("action") == action and before:
                wait()
            event = original(**kwargs)
            if kwargs.get("action") == action and not before:
                wait()
            return event

        monkeypatch.setattr(module, "audit_record", audit_and_wait)
        return paused, release

    yield install
    for release in releases:  # never leave a thread waiting, whatever failed
        release.set()


def interleave(first: Callable[[], Any], paused: threading.Event, release: threading.Event,
               second: Callable[[], Any]) -> dict[str, Any]:
    """Run `first` until it pauses holding its locks, `second` until it waits for one of
    them, then let both finish; what each returned or raised, by "first" and "second"."""
    outcome: dict[str, Any] = {}
    threads = [_run("first", first, outcome)]
    assert paused.wait(WAIT), outcome
    threads.append(_run("second", second, outcome))
    deadline = time.monotonic() + WAIT
    while not _waiting_for_a_lock() and "second" not in outcome:
        assert time.monotonic() < deadline, "the second writer never waited for a lock"
        time.sleep(0.05)
    release.set()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()
    return outcome


@pytest.mark.django_db(transaction=True)
def test_a_publish_waits_for_a_dismissal_then_reopens_the_conflict(
    conflict: Conflict, owner: Any, pause: Any,
) -> None:
    before = AuditEvent.objects.order_by("-seq").values_list("seq", flat=True)[0]
    # The dismissal has changed the conflict row and is about to record it.
    paused, release = pause(conflicts_module, "conflict.dismissed", before=True)
    outcome = interleave(
        lambda: conflicts_module.conflict_dismiss(
            conflict_id=conflict.pk, reason="both valid: the same rule", user=owner,
            actor=Actor.of_user(owner), signature=conflict.signature),
        paused, release, publish_promo_r2)

    assert outcome["first"].status == "dismissed"
    assert outcome["second"].created is True
    # The publish came after the dismissal and changed the revisions it covered.
    assert Conflict.objects.get().status == "open"
    assert list(AuditEvent.objects.filter(seq__gt=before, object_type__in=["conflict", "document"])
                .order_by("seq")
                .values_list("action", flat=True)) == [
        "conflict.dismissed", "revision.published", "conflict.reopened"]


@pytest.mark.django_db(transaction=True)
def test_a_dismissal_during_a_publish_is_refused_as_stale_not_deadlocked(
    conflict: Conflict, owner: Any, pause: Any,
) -> None:
    # The publish holds the chain's lock and has not locked the conflict yet.
    paused, release = pause(services, "revision.published")
    outcome = interleave(
        publish_promo_r2, paused, release,
        lambda: conflicts_module.conflict_dismiss(
            conflict_id=conflict.pk, reason="both valid: the same rule", user=owner,
            actor=Actor.of_user(owner), signature=conflict.signature))

    assert outcome["first"].created is True
    # What the owner's page turns into "a document has a new revision since you opened it".
    assert isinstance(outcome["second"], ConflictError), outcome["second"]
    assert "revisions involved changed" in str(outcome["second"])
    assert Conflict.objects.get().status == "open"


@pytest.mark.django_db(transaction=True)
def test_a_reopening_during_a_publish_finds_the_conflict_already_reopened(
    conflict: Conflict, owner: Any, pause: Any,
) -> None:
    conflicts_module.conflict_dismiss(conflict_id=conflict.pk, reason="both valid: x",
                                      user=owner, actor=Actor.of_user(owner))
    paused, release = pause(services, "revision.published")
    outcome = interleave(
        publish_promo_r2, paused, release,
        lambda: conflicts_module.conflict_reopen(conflict_id=conflict.pk,
                                                 actor=Actor.of_user(owner)))

    assert outcome["first"].created is True
    assert isinstance(outcome["second"], ConflictError), outcome["second"]
    assert "not dismissed" in str(outcome["second"])
    assert Conflict.objects.get().status == "open"


@pytest.mark.django_db(transaction=True)
def test_closing_by_date_during_a_publish_closes_the_conflict_after_it(
    conflict: Conflict, pause: Any,
) -> None:
    later = timezone.localdate() + dt.timedelta(days=90)  # both facts have ended by then
    paused, release = pause(services, "revision.published")
    outcome = interleave(publish_promo_r2, paused, release,
                         lambda: conflicts_module.conflicts_close_ended(today=later))

    assert outcome["first"].created is True
    assert [change.after for change in outcome["second"]] == ["closed"]
    assert Conflict.objects.get().status == "closed"
    assert list(AuditEvent.objects.filter(object_type="conflict").order_by("seq")
                .values_list("action", flat=True)) == [
        "conflict.opened", "conflict.changed", "conflict.closed"]


@pytest.mark.django_db(transaction=True)
def test_a_correction_waiting_for_a_publication_is_told_the_revision_changed(
    owner: Any, pause: Any
) -> None:
    """Not "the document is withdrawn", with the owner's input lost: the lock was taken with
    the current revision joined in, which the waiting statement's snapshot could not see."""
    from reviewqueue.sources.models import Document

    services.revision_publish(document_key="pricing", revision="r1", data=body(14, "olivia"),
                              actor=SYSTEM)
    document = Document.objects.get(key="pricing")
    fact = document.current_revision.facts.get()
    paused, release = pause(services, "revision.published")
    outcome = interleave(
        lambda: services.revision_publish(document_key="pricing", revision="r2",
                                          data=body(21, "olivia"), actor=SYSTEM),
        paused, release,
        lambda: services.revision_publish_corrected(
            document=document, note="", actor=Actor.of_user(owner), user=owner,
            based_on="r1", passages={"p1": "The trial lasts 15 days."},
            edits=[services.FactEdit(fact_id=fact.pk, value=15, valid_from=fact.valid_from,
                                     valid_until=fact.valid_until)]))

    assert outcome["first"].created is True
    assert isinstance(outcome["second"], services.RevisionChanged), repr(outcome["second"])
    assert outcome["second"].current == "r2"
    assert Document.objects.get(key="pricing").current_revision.revision == "r2"


@pytest.mark.django_db(transaction=True)
def test_a_withdrawal_waiting_for_a_publication_records_the_revision_it_withdrew(
    owner: Any, pause: Any
) -> None:
    services.revision_publish(document_key="pricing", revision="r1", data=body(14, "olivia"),
                              actor=SYSTEM)
    paused, release = pause(services, "revision.published")
    outcome = interleave(
        lambda: services.revision_publish(document_key="pricing", revision="r2",
                                          data=body(21, "olivia"), actor=SYSTEM),
        paused, release,
        lambda: services.document_withdraw(document_key="pricing", actor=Actor.of_user(owner)))

    assert not isinstance(outcome["second"], BaseException), repr(outcome["second"])
    event = AuditEvent.objects.filter(action="document.withdrawn").get()
    assert event.before == {"current_revision": "r2", "withdrawn": False}, event.before
