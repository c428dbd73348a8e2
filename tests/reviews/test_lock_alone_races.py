"""Races between a reviewer, a colleague and an owner over one held item: the item row is
locked alone and read with its relations afterwards. Locked joined to them, a statement that
waited for the lock read the item as the other transaction left it but the rows joined to it
as they were (a hand-off racing a claim gave a 500, a decision named the holder "?", and a
late owner reply was told the wrong reason the wait ended)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_verify
from reviewqueue.reviews.models import Answer, OwnerQuestion, ReviewItem
from reviewqueue.reviews.services import handoff, leases, transitions
from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
from reviewqueue.reviews.services.handoff import NotWaiting, review_item_owner_reply
from reviewqueue.reviews.services.leases import lease_claim
from tests.reviews.conftest import current_verdict_id
from tests.sources.test_conflict_lock_order import _run, interleave, pause  # noqa: F401


def _verified() -> None:
    run = audit_verify(trigger="command", requested_by="test", record=False)
    assert run.ok, run.detail
    assert run.sources_ok, run.sources_problems
    assert run.records_ok, run.records_problems


@pytest.fixture
def sent(hold: Callable[..., str], reviewer: Any) -> str:
    trace = hold()
    handoff.review_item_send_to_owner(trace_id=trace, user=reviewer, note="Which is right?",
                                      actor=Actor.of_user(reviewer))
    return trace


def _reply(trace: str, owner: Any, text: str) -> Callable[[], Any]:
    return lambda: review_item_owner_reply(trace_id=trace, user=owner, reply=text,
                                           actor=Actor.of_user(owner))


@pytest.mark.django_db(transaction=True)
def test_a_second_reply_racing_the_first_says_it_was_replied_already(
    sent: str, owner: Any, pause: Any  # noqa: F811
) -> None:
    """The same owner replies from two tabs at once: the second is told "you had replied
    already" (as when they come one after the other), not that a new verdict ended the wait."""
    paused, release = pause(handoff, "review_item.owner_replied")
    outcome = interleave(_reply(sent, owner, "First"), paused, release,
                         _reply(sent, owner, "Second thoughts"))

    assert isinstance(outcome["first"], OwnerQuestion), outcome["first"]
    assert isinstance(outcome["second"], NotWaiting), outcome["second"]
    assert OwnerQuestion.objects.get().reply == "First"
    assert (outcome["second"].why, outcome["second"].who) == ("replied", "olivia")
    _verified()


@pytest.mark.django_db(transaction=True)
def test_a_reply_racing_a_decision_says_who_decided(
    sent: str, owner: Any, reviewer: Any, pause: Any  # noqa: F811
) -> None:
    lease_claim(answer=Answer.objects.get(trace_id=sent), user=reviewer,
                actor=Actor.of_user(reviewer))
    verdict_id = current_verdict_id(sent)
    paused, release = pause(transitions, "decision.reject")
    outcome = interleave(
        lambda: answer_decide(trace_id=sent, user=reviewer, actor=Actor.of_user(reviewer),
                              data=DecisionInput(action="reject", verdict_id=verdict_id,
                                                 reject_reason="other", comment="wrong")),
        paused, release, _reply(sent, owner, "Too late?"))

    assert outcome["first"].status == "rejected", outcome["first"]
    assert isinstance(outcome["second"], NotWaiting), outcome["second"]
    assert not ReviewItem.objects.exists()
    assert (outcome["second"].why, outcome["second"].who) == ("decided", "alice")
    _verified()


@pytest.mark.django_db(transaction=True)
def test_a_hand_off_racing_a_colleagues_claim_says_who_holds_the_item(
    hold: Callable[..., str], reviewer: Any, bob: Any, pause: Any  # noqa: F811
) -> None:
    """Bob claims the free item while alice sends it to the owners: alice's hand-off waits
    for bob's claim and is refused naming bob (not a 500)."""
    from reviewqueue.reviews.services import leases
    from reviewqueue.reviews.services.leases import LeasedByOther

    trace = hold()
    paused, release = pause(leases, "lease.claimed")
    outcome = interleave(
        lambda: lease_claim(answer=Answer.objects.get(trace_id=trace), user=bob,
                            actor=Actor.of_user(bob)),
        paused, release,
        lambda: handoff.review_item_send_to_owner(trace_id=trace, user=reviewer,
                                                  note="Which is right?",
                                                  actor=Actor.of_user(reviewer)))

    assert outcome["first"].holder == "bob"
    assert isinstance(outcome["second"], LeasedByOther), repr(outcome["second"])
    assert outcome["second"].holder == "bob"
    assert ReviewItem.objects.get().waiting_for_owner is False
    _verified()


@pytest.mark.django_db(transaction=True)
def test_a_decision_racing_a_colleagues_claim_says_who_holds_the_item(
    hold: Callable[..., str], reviewer: Any, bob: Any, pause: Any  # noqa: F811
) -> None:
    from reviewqueue.reviews.services import leases
    from reviewqueue.reviews.services.leases import LeasedByOther

    trace = hold()
    verdict_id = current_verdict_id(trace)
    paused, release = pause(leases, "lease.claimed")
    outcome = interleave(
        lambda: lease_claim(answer=Answer.objects.get(trace_id=trace), user=bob,
                            actor=Actor.of_user(bob)),
        paused, release,
        lambda: answer_decide(trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                              data=DecisionInput(action="reject", verdict_id=verdict_id,
                                                 reject_reason="other", comment="wrong")))

    assert isinstance(outcome["second"], LeasedByOther), repr(outcome["second"])
    assert outcome["second"].holder == "bob"
    assert Answer.objects.get().status == "held"
    _verified()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first", ["publish", "restore"])
def test_a_restore_racing_a_publish(owner: Any, pause: Any, first: str) -> None:  # noqa: F811
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.sources import services
    from reviewqueue.sources.models import Document
    from tests.sources.test_conflict_lock_order import body

    services.revision_publish(document_key="pricing", revision="r1", data=body(14, "olivia"),
                              actor=SYSTEM)
    services.document_withdraw(document_key="pricing", actor=SYSTEM)
    publish = lambda: services.revision_publish(  # noqa: E731
        document_key="pricing", revision="r2", data=body(21, "olivia"), actor=SYSTEM)
    restore = lambda: services.document_restore(document_key="pricing", actor=SYSTEM)  # noqa: E731
    if first == "publish":
        paused, release = pause(services, "revision.published")
        outcome = interleave(publish, paused, release, restore)
        assert outcome["second"] is None, outcome["second"]
    else:
        paused, release = pause(services, "document.restored")
        outcome = interleave(restore, paused, release, publish)
        assert outcome["second"].created is True, outcome["second"]
    document = Document.objects.get(key="pricing")
    assert document.current_revision.revision == "r2" and document.withdrawn_at is None
    _verified()


@pytest.mark.django_db(transaction=True)
def test_one_reviewer_claiming_a_free_item_from_two_tabs_at_once_logs_one_claim(
    hold: Any, reviewer: Any, monkeypatch: Any
) -> None:
    """Each page load claims the lease. Both tabs find the item free; the second then waits
    for the first's lock and finds its own active lease: a renewal, which is not logged. It
    logged a second claim from a free item (the item seemed free twice)."""
    trace = hold()
    # Both tabs have found the item free (no lease of theirs to renew) before either locks it.
    both_read = threading.Barrier(2, timeout=30)
    real = leases._locked_lease

    def after_reading(*args: Any, **kwargs: Any) -> Any:
        both_read.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(leases, "_locked_lease", after_reading)
    answer = Answer.objects.get(trace_id=trace)
    outcome: dict[str, Any] = {}
    tabs = [_run(name, lambda: lease_claim(answer=answer, user=reviewer,
                                           actor=Actor.of_user(reviewer)), outcome)
            for name in ("first tab", "second tab")]
    for t in tabs:
        t.join(timeout=60)
    results = list(outcome.values())

    assert len(results) == 2 and all(not isinstance(r, Exception) for r in results), results
    claims = list(AuditEvent.objects.filter(action="lease.claimed", trace_id=trace)
                  .order_by("seq").values_list("before", "after"))
    # The item went from free to alice once; the second tab found it hers already (a
    # renewal, which is not audited). Two events say it was free twice.
    assert len(claims) == 1, claims
    _verified()


@pytest.mark.django_db(transaction=True)
def test_a_renewal_racing_an_admins_break_waits_and_the_break_logs_the_lease_it_ended(
    hold: Any, reviewer: Any, admin_user: Any, monkeypatch: Any
) -> None:
    """The admin's break has read the lease; the holder's page renews it before the break
    ends it. The renewal waits for the break, and finds the lease ended. Read unlocked, the
    renewal slipped in between, and the break's event gave the lease's earlier end."""
    trace = hold()
    answer = Answer.objects.get(trace_id=trace)
    claimed = lease_claim(answer=answer, user=reviewer, actor=Actor.of_user(reviewer))
    paused, release = threading.Event(), threading.Event()
    read = leases._locked_lease

    def read_then_wait(items: Any) -> Any:
        seen = read(items)
        paused.set()
        release.wait(20)
        return seen

    monkeypatch.setattr(leases, "_locked_lease", read_then_wait)
    outcome = interleave(
        lambda: leases.lease_release(answer=answer, user=admin_user,
                                     actor=Actor.of_user(admin_user), force=True),
        paused, release,
        lambda: leases.lease_renew(answer=answer, user=reviewer))
    assert outcome["first"] is True, outcome
    assert isinstance(outcome["second"], leases.LeaseLost), outcome
    event = AuditEvent.objects.get(action="lease.broken", trace_id=trace)
    assert event.before == {"holder": "alice", "until": claimed.until.isoformat()}
    assert ReviewItem.objects.get(answer=answer).leased_by_id is None
    _verified()
