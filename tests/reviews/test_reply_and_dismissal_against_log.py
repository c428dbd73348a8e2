"""The log keeps no free text: an owner's reply and a conflict's justification are recorded as
their SHA-256 ("its digest proves the justification the conflict page shows is the one given",
sources/conflicts.py), as a decision's comment is. The comment's digest is checked by every
verification; nothing ever compares the reply's or the justification's with the rows, nor the
conflict's status with the events that set it: each can be rewritten in the table, and
verify_audit still says the store stands where the log left it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from reviewqueue.audit.services import Actor, audit_verify
from reviewqueue.reviews.models import Answer, OwnerQuestion
from reviewqueue.reviews.services import handoff
from reviewqueue.sources.conflicts import conflict_dismiss
from reviewqueue.sources.models import Conflict
from tests.audit.conftest import tampering

pytestmark = pytest.mark.django_db


def _unchanged() -> bool:
    run = audit_verify(trigger="command", requested_by="test", record=False)
    assert run.ok, run.detail
    return bool(run.sources_ok and run.records_ok)


def test_an_owner_reply_rewritten_in_the_table_fails_the_verification(
    hold: Callable[..., str], reviewer: Any, owner: Any
) -> None:
    trace = hold()
    handoff.review_item_send_to_owner(trace_id=trace, user=reviewer, note="Which is right?",
                                      actor=Actor.of_user(reviewer))
    handoff.review_item_owner_reply(trace_id=trace, user=owner,
                                    reply="The EU page is out of date; 14 days is right.",
                                    actor=Actor.of_user(owner))
    assert _unchanged()
    with tampering() as cursor:
        cursor.execute("UPDATE reviews_ownerquestion SET reply = 'Both are right, approve it.'")

    assert not _unchanged()


@pytest.mark.parametrize("tamper", [
    "UPDATE reviews_ownerquestion SET note = 'Should we promise 90 days to EU customers?'",
    "UPDATE reviews_ownerquestion SET asked_by_id = (SELECT id FROM auth_user "
    "WHERE username = 'olivia')",
    "DELETE FROM reviews_reviewitem; DELETE FROM reviews_ownerquestion",
])
def test_a_question_to_the_owners_rewritten_or_deleted_in_the_table_fails_the_verification(
    hold: Callable[..., str], reviewer: Any, owner: Any, tamper: str
) -> None:
    # The owner's reply stands beside the question: a question rewritten would have them
    # seem to answer what nobody asked.
    trace = hold()
    handoff.review_item_send_to_owner(trace_id=trace, user=reviewer,
                                      note="Is 14 days still right for the EU?",
                                      actor=Actor.of_user(reviewer))
    assert _unchanged()
    with tampering() as cursor:
        cursor.execute(tamper)

    assert not _unchanged()


def test_a_question_to_the_owners_made_in_the_table_fails_the_verification(
    hold: Callable[..., str], reviewer: Any, owner: Any
) -> None:
    trace = hold()
    assert _unchanged()
    OwnerQuestion.objects.create(answer=Answer.objects.get(trace_id=trace), asked_by=reviewer,
                                 asked_at=timezone.now(), note="Approve it?", owners=[owner.pk])

    assert not _unchanged()


def _ask(trace: str, user: Any, note: str) -> None:
    handoff.review_item_send_to_owner(trace_id=trace, user=user, note=note,
                                      actor=Actor.of_user(user))


def _reply(trace: str, owner: Any, reply: str) -> None:
    handoff.review_item_owner_reply(trace_id=trace, user=owner, reply=reply,
                                    actor=Actor.of_user(owner))


def _on_a_host_behind() -> Any:
    """The clock of a second web host, five seconds behind the first."""
    return mock.patch("reviewqueue.reviews.services.handoff.timezone.now",
                      return_value=timezone.now() - dt.timedelta(seconds=5))


def test_a_question_asked_again_from_a_host_whose_clock_is_behind_is_no_tampering(
    hold: Callable[..., str], reviewer: Any, bob: Any, owner: Any
) -> None:
    trace = hold()
    _ask(trace, reviewer, "Which is right?")
    with _on_a_host_behind():
        _ask(trace, bob, "Is the EU page still current?")

    assert _unchanged()


def test_a_reply_given_on_a_host_whose_clock_is_behind_is_no_tampering(
    hold: Callable[..., str], reviewer: Any, bob: Any, owner: Any
) -> None:
    trace = hold()
    _ask(trace, reviewer, "Which is right?")
    _reply(trace, owner, "The EU one.")
    _ask(trace, bob, "Still?")
    with _on_a_host_behind():
        _reply(trace, owner, "Yes, still.")

    assert _unchanged()


def test_a_question_s_event_edited_to_name_another_answer_is_left_to_the_chain_check(
    hold: Callable[..., str], reviewer: Any, bob: Any, owner: Any
) -> None:
    """The questions of t-1 no longer line up with its events, and t-2 has an event and no
    question: only the event changed, and the chain check reports it."""
    trace = hold()
    hold("t-2")
    _ask(trace, reviewer, "Which is right?")
    _ask(trace, bob, "Is the EU page still current?")
    with tampering() as cursor:
        cursor.execute("UPDATE audit_auditevent SET trace_id = 't-2' WHERE seq = (SELECT "
                       "min(seq) FROM audit_auditevent WHERE action = 'review_item.sent_to_owner')")

    run = audit_verify(trigger="command", requested_by="test", record=False)

    assert not run.ok
    assert run.records_ok, [p["detail"] for p in run.records_problems]


def test_a_dismissal_rewritten_or_made_in_the_table_fails_the_verification(
    sources: None, owner: Any
) -> None:
    conflict = Conflict.objects.get()
    conflict_dismiss(conflict_id=conflict.pk, reason="different plans: the EU page is for EU "
                     "customers", user=owner, actor=Actor.of_user(owner))
    assert _unchanged()
    with tampering() as cursor:
        cursor.execute("UPDATE sources_conflict SET dismissal_reason = 'both valid: checked "
                       "with legal' WHERE id = %s", [conflict.pk])

    assert not _unchanged()


def test_a_conflict_dismissed_in_the_table_only_fails_the_verification(
    sources: None, owner: Any
) -> None:
    """The gate leaves out every fact on a dismissed (subject, key): answers held for the
    conflict pass at their next evaluation, though no event dismissed it."""
    conflict = Conflict.objects.get()
    assert conflict.status == "open"
    with tampering() as cursor:
        cursor.execute("UPDATE sources_conflict SET status = 'dismissed', dismissed_by_id = %s, "
                       "dismissed_at = now(), dismissal_reason = 'both valid: fine', "
                       "dismissed_signature = signature WHERE id = %s", [owner.pk, conflict.pk])

    assert not _unchanged()


def test_the_audit_page_names_a_conflict_dismissed_in_the_table(
    sources: None, owner: Any, admin_client: Any
) -> None:
    conflict = Conflict.objects.get()
    with tampering() as cursor:
        cursor.execute("UPDATE sources_conflict SET status = 'dismissed', dismissed_by_id = %s, "
                       "dismissed_at = now(), dismissal_reason = 'both valid: fine', "
                       "dismissed_signature = signature WHERE id = %s", [owner.pk, conflict.pk])
    audit_verify(trigger="command", requested_by="test", record=True)

    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"conflict #{conflict.pk}" in page
    assert "its status is not what its last audit event left" in page

