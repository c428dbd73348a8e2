"""A reviewer hands a held answer to the owners of its conflicting sources instead of deciding.

The item stays in the queue, marked as waiting for the owner, until a decision takes it out,
a new verdict that holds it for something else (after a re-evaluation, or an edit the gate
still holds) ends the wait, or one of the owners asked replies (when their documents are
right as they are, say, or the question needs an answer rather than a new revision). A new
verdict that keeps it waiting asks the owners behind the hold by then as well (a document
handed to another owner, or joining the conflict). Only owners who may read the answer in
full are asked: they are mailed the question and the note, and find it in their inbox; the
reviewer is mailed the reply. Each question and its reply are an OwnerQuestion, kept after
the answer leaves the queue: its page lists them. The audit log records who sent which item
to whom and who replied, never the note or the reply (only the reply's SHA-256).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import date
from typing import Any

from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.principals import user_principals
from reviewqueue.accounts.roles import has_role
from reviewqueue.accounts.services import language_of, languages_of
from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.errors import Conflict, FieldError, NotFound
from reviewqueue.mailing import mail_to_each, page_address, send_each
from reviewqueue.reviews.models import Answer, Decision, OwnerQuestion, ReviewItem, Verdict
from reviewqueue.reviews.selectors.answers import (
    owners_to_ask,
    owners_who_may_read,
    user_may_read_answer,
)
from reviewqueue.reviews.services.evaluation import day_passed_under
from reviewqueue.reviews.services.leases import LeasedByOther, NotHeld
from reviewqueue.reviews.services.transitions import says_the_same

log = logging.getLogger(__name__)


# The note's limit, as the page's text area counts it (a line break is one character).
MAX_OWNER_NOTE_CHARS = 5000


class NoteTooLong(FieldError):
    """A note (or an owner's reply, `field`) over MAX_OWNER_NOTE_CHARS: refused whole, never
    cut."""

    def __init__(self, length: int, field: str = "note") -> None:
        super().__init__(field, f"at most {MAX_OWNER_NOTE_CHARS} characters ({length} sent)")
        self.length = length


class NoOwnerToAsk(Conflict):
    """None of the owners of the answer's sources may read it in full, so nobody can be asked."""

    code = "no_owner_to_ask"

    def __init__(self) -> None:
        super().__init__("no owner of these sources may read this answer in full; "
                         "decide it here or ask an admin")


class AlreadyAsked(Conflict):
    """The owners are already asked (`question`), by a hand-off the sending page did not show:
    sent from a second tab, or again after the first went."""

    code = "already_asked"

    def __init__(self, question: OwnerQuestion) -> None:
        super().__init__("the owners are already asked about this answer")
        self.question = question


class VerdictChanged(Conflict):
    """The answer's verdict changed since the sending page showed it (`seen_verdict`), to one
    that tells something else: what the reviewer would ask the owners may no longer hold."""

    code = "stale_verdict"

    def __init__(self, day_passed: date | None = None) -> None:
        super().__init__("the sources changed while you were reviewing; read the current "
                         "verdict before asking the owners")
        # Nothing changed in the sources: a fact started or stopped holding on this day.
        self.day_passed = day_passed


class NotWaiting(Conflict):
    """A reply to a question that no longer waits for one. `why`: "decided" (by `who`),
    "left" (a new verdict took the answer out of the queue), "replied" (`who` replied first),
    "edited" (`who` edited the answer, which the gate still holds), "ended" (a new verdict
    ended the wait) or "asked_again" (`who` asked another question since the page was
    shown)."""

    code = "not_waiting_for_owner"

    def __init__(self, why: str, who: str = "") -> None:
        super().__init__(f"this answer is no longer waiting for its owners ({why})")
        self.why, self.who = why, who


class NotAsked(Conflict):
    """A reply from someone the hand-off did not ask."""

    code = "not_asked"
    status_code = 403

    def __init__(self) -> None:
        super().__init__("only an owner this answer was sent to may reply")


def _written(field: str, text: str, missing: str) -> str:
    """`text` as stored: a browser's two-character line breaks made one, trimmed, required and
    at most MAX_OWNER_NOTE_CHARS long (refused whole, never cut)."""
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise FieldError(field, missing)
    if len(text) > MAX_OWNER_NOTE_CHARS:
        raise NoteTooLong(len(text), field)
    return text


def _locked_item(trace_id: str) -> tuple[Answer, ReviewItem | None]:
    answer = Answer.objects.filter(trace_id=trace_id).first()
    if answer is None:
        raise NotFound(f"no answer {trace_id!r}")
    # Locked alone, then read with its relations: a row that waited for the lock is read again
    # as the other transaction left it, but the rows joined to it are not.
    locked = (ReviewItem.objects.select_for_update().filter(answer=answer)
              .values_list("pk", flat=True).first())
    item = None if locked is None else (
        ReviewItem.objects.select_related("leased_by", "owner_question__asked_by",
                                          "owner_question__replied_by").get(pk=locked))
    # The answer as whatever we waited for left it (a decision, a new verdict).
    answer = Answer.objects.get(pk=answer.pk)
    return answer, item


@transaction.atomic
def review_item_send_to_owner(*, trace_id: str, user: Any, note: str, actor: Actor,
                              seen_question: int | object | None = ...,
                              seen_verdict: int | None = None) -> ReviewItem:
    """`seen_question`: the latest question the sending page showed (None: none), when the
    page says it; a question asked since, still waiting, refuses the hand-off. `seen_verdict`:
    the verdict the page showed, when it says it; one made current since that tells something
    else refuses it too, as it would a decision."""
    answer, item = _locked_item(trace_id)
    if item is None:
        raise NotHeld(answer)
    if seen_verdict is not None and answer.current_verdict_id is not None \
            and not says_the_same(seen_verdict, answer.current_verdict):
        shown = Verdict.objects.filter(pk=seen_verdict, answer=answer).first()
        raise VerdictChanged(None if shown is None or shown.version_id != answer.current_version_id
                             else day_passed_under(answer, shown))
    # After the verdict: a note refused is typed again on the page drawn afresh, with the
    # verdict it shows now, which the reviewer must have been told has changed.
    note = _written("note", note, "say what the owner should look at")
    if (seen_question is not ... and item.waiting_for_owner
            and item.owner_question is not None and item.owner_question_id != seen_question):
        raise AlreadyAsked(item.owner_question)
    now = timezone.now()
    if item.leased_by_id not in (None, user.pk) and item.lease_until and item.lease_until > now:
        raise LeasedByOther(item.leased_by.get_username(), item.lease_until)
    owners = owners_who_may_read(answer, owners_to_ask(answer, user))
    if not owners:
        raise NoOwnerToAsk()
    was_waiting = item.waiting_for_owner
    item.waiting_for_owner = True
    item.owner_question = OwnerQuestion.objects.create(
        answer=answer, asked_by=user, asked_at=now, note=note,
        owners=sorted(o.pk for o in owners))
    item.save(update_fields=["waiting_for_owner", "owner_question"])
    audit_record(actor=actor, action="review_item.sent_to_owner", object_type="answer",
                 object_id=trace_id, trace_id=trace_id, before={"waiting_for_owner": was_waiting},
                 after={"waiting_for_owner": True,
                        "owners": sorted(o.get_username() for o in owners),
                        # Proves the question shown is the one asked, keeping no free text.
                        "note_sha256": hashlib.sha256(note.encode()).hexdigest()})
    _mail_owners_on_commit(owners, answer, note, user)
    return item


def ask_owners_now_behind(answer: Answer, item: ReviewItem, actor: Actor) -> list[Any]:
    """A new verdict that keeps the answer waiting for its owners (it holds the answer for what
    the question was about) asks, besides the owners asked, the owners of the documents behind
    the hold now, as the reviewer who asked would reach them: a document handed to another
    owner since (a revision naming a new owner), or one that joined the conflict, brings its
    owner in, mailed and with the answer in their inbox. The owners asked stay asked: they
    may still reply. Returns the owners added, and logs who is asked (never the note)."""
    question = item.owner_question
    if question is None or question.asked_by is None:
        return []
    added = [o for o in owners_who_may_read(answer, owners_to_ask(answer, question.asked_by))
             if o.pk not in question.owners]
    if not added:
        return []
    names = dict(get_user_model().objects.filter(pk__in=question.owners)
                 .values_list("pk", get_user_model().USERNAME_FIELD))
    before = sorted(names.values())
    question.owners = sorted({*question.owners, *(o.pk for o in added)})
    question.save(update_fields=["owners"])
    audit_record(actor=actor, action="review_item.owners_added", object_type="answer",
                 object_id=answer.trace_id, trace_id=answer.trace_id,
                 before={"owners": before},
                 after={"owners": sorted([*before, *(o.get_username() for o in added)])})
    _mail_owners_on_commit(added, answer, question.note, question.asked_by)
    return added


def _mail_owners_on_commit(owners: list[Any], answer: Answer, note: str, user: Any) -> None:
    """Once the transaction commits, the reviewer's question to each of `owners` who has an
    address, in their own language."""
    languages = languages_of([o for o in owners if o.email])
    recipients = sorted({(o.email, languages[o.pk]) for o in owners if o.email})
    if recipients:
        question, trace_id = _start_of(answer.question), answer.trace_id
        transaction.on_commit(lambda: _mail_owners(recipients, trace_id, question, note, user))


@transaction.atomic
def review_item_owner_reply(*, trace_id: str, user: Any, reply: str, actor: Actor,
                            question_id: int | None = None) -> OwnerQuestion:
    """One of the owners asked answers the reviewer's question (`question_id`, the one the
    owner was shown, when known): the wait ends and the item goes back to the reviewers (and
    to "Next"), the reply kept with the question."""
    answer, item = _locked_item(trace_id)
    # The owners the question asked, whatever the sources behind the hold became since; who
    # may no longer read the whole answer may not reply.
    question = (item.owner_question if item else None) or answer.owner_questions.order_by(
        "-asked_at", "-id").select_related("asked_by", "replied_by").first()
    if question is None or user.pk not in question.owners \
            or not owners_who_may_read(answer, [user]):
        raise NotAsked()
    if item is None or not item.waiting_for_owner:
        raise _why_not_waiting(answer, question)
    if question_id is not None and question_id != question.pk:
        raise NotWaiting("asked_again", _username(question.asked_by))
    reply = _written("reply", reply, "say what the reviewer should know")
    question.reply, question.replied_by, question.replied_at = reply, user, timezone.now()
    question.save(update_fields=["reply", "replied_by", "replied_at"])
    item.waiting_for_owner = False
    item.save(update_fields=["waiting_for_owner"])
    asked_by = question.asked_by
    audit_record(actor=actor, action="review_item.owner_replied", object_type="answer",
                 object_id=trace_id, trace_id=trace_id, before={"waiting_for_owner": True},
                 after={"waiting_for_owner": False, "asked_by": _username(asked_by) or None,
                        # Proves the reply shown is the one written, keeping no free text.
                        "reply_sha256": hashlib.sha256(reply.encode()).hexdigest()})
    # Mailed only to a reviewer who may still read the answer: not one deactivated since,
    # nor one who left the groups that let them read it, nor one whose roles no longer open
    # the answer's page the mail sends them to (the item view's rule).
    if asked_by is not None and asked_by.email \
            and has_role(asked_by, Role.REVIEWER, Role.ADMIN, Role.OWNER) \
            and user_may_read_answer(answer, user_principals(asked_by)):
        to = (asked_by.email, language_of(asked_by))
        asked = _start_of(answer.question)
        transaction.on_commit(lambda: _mail_reviewer(to, trace_id, asked, reply, user))
    return question


# How much of the answer's question a hand-off mail quotes; the answer's page has it whole.
MAILED_QUESTION_CHARS = 300


def _start_of(question: str) -> str:
    """The question as a mail quotes it: a long one cut, with an ellipsis that says so (cut
    bare, it read as a question that stops mid-word)."""
    if len(question) <= MAILED_QUESTION_CHARS:
        return question
    return question[:MAILED_QUESTION_CHARS] + "…"


def _username(user: Any) -> str:
    return user.get_username() if user is not None else ""


def _why_not_waiting(answer: Answer, question: OwnerQuestion | None) -> NotWaiting:
    """Why the wait for the owners is over, as NotWaiting says it."""
    if question is not None and question.replied_by_id is not None:
        return NotWaiting("replied", _username(question.replied_by))
    if answer.status in (Answer.Status.APPROVED, Answer.Status.REJECTED):
        decision = (Decision.objects.filter(answer=answer).select_related("reviewer")
                    .order_by("-id").first())
        return NotWaiting("decided", _username(decision.reviewer) if decision else "")
    if answer.status != Answer.Status.HELD:
        return NotWaiting("left")
    edit = (Decision.objects.filter(answer=answer, action=Decision.Action.EDIT,
                                    created_at__gte=question.asked_at)
            .select_related("reviewer").order_by("-id").first() if question else None)
    if edit is not None:  # the gate still holds the edited text: the wait ended with it
        return NotWaiting("edited", _username(edit.reviewer))
    return NotWaiting("ended")


def _mail_reviewer(to: tuple[str, str], trace_id: str, question: str, reply: str,
                   owner: Any) -> None:
    """The owner's reply, to the reviewer who asked, in their language."""
    email, language = to
    with translation.override(language):
        subject = _("[ReviewQueue] %(owner)s replied about %(trace)s") % {
            "owner": owner.get_username(), "trace": trace_id}
        message = _("%(owner)s replied to the held answer you sent them.\n\n"
                    "Question: %(question)s\n\nReply: %(reply)s\n\n"
                    "The answer is back in the queue; the reply is on its page (%(page)s).") % {
            "owner": owner.get_username(), "question": question, "reply": reply,
            "page": page_address(reverse("reviews:item", args=[trace_id]))}
    _mail(mail_to_each(subject, message, [email]), trace_id)


def _mail_owners(recipients: list[tuple[str, str]], trace_id: str, question: str, note: str,
                 user: Any) -> None:
    """The reviewer's question, to each owner asked (email, language) on their own."""
    mails = []
    for language in sorted({language for _email, language in recipients}):
        with translation.override(language):
            subject = _("[ReviewQueue] A reviewer asks you about %(trace)s") % {
                "trace": trace_id}
            message = _("%(reviewer)s sent you a held answer.\n\nQuestion: %(question)s\n\n"
                        "Note: %(note)s\n\nYou find it in ReviewQueue on your owner page "
                        "(%(page)s), under '%(section)s'.") % {
                "reviewer": user.get_username(), "question": question, "note": note,
                "page": page_address(reverse("sources:inbox")),
                "section": _("Answers reviewers sent to you")}
        mails += mail_to_each(subject, message,
                              [email for email, lang in recipients if lang == language])
    _mail(mails, trace_id)


def _mail(mails: list[EmailMessage], trace_id: str) -> None:
    """Best effort: the hand-off or the reply itself is recorded."""
    send_each([({"trace_id": trace_id}, mail) for mail in mails], "hand-off mail failed")
