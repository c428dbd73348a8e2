"""A reviewer hands a held answer to the owners of its conflicting sources instead of deciding.

The item stays in the queue, marked as waiting for the owner, until a decision takes it out
or a new verdict (after a re-evaluation, or an edit the gate still holds) ends the wait. Only
owners who may read the answer in full are asked: they are mailed the question and the note,
and find it in their inbox. The audit log records who sent which item to whom, never the note.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.errors import Conflict, FieldError, NotFound
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.reviews.selectors.answers import owners_to_ask, owners_who_may_read
from reviewqueue.reviews.services.leases import LeasedByOther, NotHeld

log = logging.getLogger(__name__)


# The note's limit, as the page's text area counts it (a line break is one character).
MAX_OWNER_NOTE_CHARS = 5000


class NoteTooLong(FieldError):
    """A note over MAX_OWNER_NOTE_CHARS: refused whole, never cut."""

    def __init__(self, length: int) -> None:
        super().__init__("note", f"at most {MAX_OWNER_NOTE_CHARS} characters ({length} sent)")
        self.length = length


class NoOwnerToAsk(Conflict):
    """None of the owners of the answer's sources may read it in full, so nobody can be asked."""

    code = "no_owner_to_ask"

    def __init__(self) -> None:
        super().__init__("no owner of these sources may read this answer in full; "
                         "decide it here or ask an admin")


@transaction.atomic
def review_item_send_to_owner(*, trace_id: str, user: Any, note: str, actor: Actor) -> ReviewItem:
    note = note.replace("\r\n", "\n").strip()  # a browser sends a line break as two
    if not note:
        raise FieldError("note", "say what the owner should look at")
    if len(note) > MAX_OWNER_NOTE_CHARS:
        raise NoteTooLong(len(note))
    answer = Answer.objects.filter(trace_id=trace_id).first()
    if answer is None:
        raise NotFound(f"no answer {trace_id!r}")
    item = (ReviewItem.objects.select_for_update(of=("self",)).select_related("leased_by")
            .filter(answer=answer).first())
    if item is None:
        raise NotHeld(answer)
    now = timezone.now()
    if item.leased_by_id not in (None, user.pk) and item.lease_until and item.lease_until > now:
        raise LeasedByOther(item.leased_by.get_username(), item.lease_until)
    owners = owners_who_may_read(answer, owners_to_ask(answer))
    if not owners:
        raise NoOwnerToAsk()
    was_waiting = item.waiting_for_owner
    item.waiting_for_owner = True
    item.owner_note = note
    item.sent_to_owner_by = user
    item.sent_to_owner_at = now
    item.save(update_fields=["waiting_for_owner", "owner_note", "sent_to_owner_by",
                             "sent_to_owner_at"])
    audit_record(actor=actor, action="review_item.sent_to_owner", object_type="answer",
                 object_id=trace_id, trace_id=trace_id, before={"waiting_for_owner": was_waiting},
                 after={"waiting_for_owner": True,
                        "owners": sorted(o.get_username() for o in owners)})
    emails = sorted({o.email for o in owners if o.email})
    if emails:
        question = answer.question[:300]
        transaction.on_commit(lambda: _mail_owners(emails, trace_id, question, note, user))
    return item


def _mail_owners(emails: list[str], trace_id: str, question: str, note: str, user: Any) -> None:
    try:
        send_mail(
            subject=f"[ReviewQueue] A reviewer asks you about {trace_id}",
            message=f"{user.get_username()} sent you a held answer.\n\nQuestion: {question}\n\n"
            f"Note: {note}\n\nYou find it in ReviewQueue on your owner page (/owner/, "
            "'My conflicts'), under 'Answers reviewers sent to you'.",
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=emails,
        )
    except Exception:  # mail is best effort; the hand-off itself is recorded
        log.exception("owner notification failed", extra={"trace_id": trace_id})
