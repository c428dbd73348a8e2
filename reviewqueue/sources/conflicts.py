"""Conflicts between current facts, kept as records.

`conflicts_refresh` runs inside every publish and withdrawal: it recomputes the (subject, key)
pairs the document's old and new facts touch and opens, closes or reopens their conflicts.
Two facts disagree when they come from current revisions, have different values, and their
validity periods overlap on or after today: two documents that disagree, or one revision that
states the pair twice and contradicts itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, override

from reviewqueue import instants
from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.accounts.services import language_of
from reviewqueue.audit.services import WORKER, Actor, audit_chain_lock, audit_record
from reviewqueue.errors import Conflict as ConflictError
from reviewqueue.errors import FieldError, NotFound
from reviewqueue.mailing import mail_to_each, page_address, send_each
from reviewqueue.sources.models import Conflict, Document, Fact

log = logging.getLogger(__name__)

FAR_FUTURE = date(9999, 12, 31)

# A dismissal's reason is its code and the person's justification ("different periods: the
# promo ends in May"): the stored reason has room for the longest code before a justification
# of the most the owner's page takes, and a longer one is refused, never cut.
DISMISSAL_DETAIL_MAX_CHARS = 2000
# The codes a dismissal's reason starts with, in the order the owner's form offers them.
DISMISSAL_CODES = ("different plans", "both valid", "different periods", "other")
DISMISSAL_REASON_MAX_CHARS = DISMISSAL_DETAIL_MAX_CHARS + 100
# The code of a dismissal that says one value is an exception within the other's period.
EXCEPTION = "different periods"

# Lock order, the same for every writer of conflicts: the audit chain's lock first, then the
# conflict rows by id. A publish takes the chain's lock when it records the revision, before
# it refreshes the conflicts; a writer that locked a conflict first and then waited for the
# chain would deadlock with it.


@dataclass(frozen=True)
class ConflictChange:
    conflict: Conflict
    before: str | None
    after: str
    # The documents the conflict was between before the change (none when it was not open).
    was_between: tuple[str, ...] = ()


def _current_facts(pairs: set[tuple[str, str]], today: date) -> list[Fact]:
    """Facts of current revisions on these (subject, key) pairs that have not ended yet."""
    if not pairs:
        return []
    keys = {key for _, key in pairs}
    facts = (
        Fact.objects.filter(key__in=keys, revision__document__current_revision=F("revision"))
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gte=today))
        .select_related("revision", "revision__document")
        .order_by("revision__document__key", "position")
    )
    return [f for f in facts if (f.subject, f.key) in pairs]


def _overlap(a: Fact, b: Fact) -> bool:
    return a.valid_from <= (b.valid_until or FAR_FUTURE) and b.valid_from <= (
        a.valid_until or FAR_FUTURE
    )


def _disagreeing(facts: list[Fact]) -> list[Fact]:
    """The facts that disagree with another fact over an overlapping period: one of another
    document, or one of their own revision (which then states two values at once; the facts
    are all of current revisions, so two of one document are of one revision)."""
    involved: dict[int, Fact] = {}
    for i, a in enumerate(facts):
        for b in facts[i + 1 :]:
            if not same_value(a.value, b.value) and _overlap(a, b):
                involved[a.pk] = a
                involved[b.pk] = b
    return sorted(involved.values(), key=lambda f: (f.revision.document.key, f.position))


def same_value(a: Any, b: Any) -> bool:
    # Strict, as in the gate: 14 and "14" differ, and so do True and 1.
    return type(a) is type(b) and a == b


def _participants(facts: list[Fact]) -> list[dict[str, Any]]:
    return [
        {
            "document": f.revision.document.key,
            "revision": f.revision.revision,
            "fact": f.pk,
            "value": f.value,
            "valid_from": f.valid_from.isoformat(),
            "valid_until": f.valid_until.isoformat() if f.valid_until else None,
            "span": f.span,
        }
        for f in facts
    ]


def _period(participant: dict[str, Any]) -> tuple[str, str]:
    # ISO dates order as strings; no end is the far future.
    return participant["valid_from"], participant["valid_until"] or FAR_FUTURE.isoformat()


def exception_facts(participants: list[dict[str, Any]]) -> list[int]:
    """The facts of a conflict that are exceptions, or none when it is not one: each holds a
    value during part of the period of a fact with another value (a promotion within the
    standard rule's period), and prevails over it then. Every two values that disagree over
    a shared period must be such a pair, one strictly within the other's period, and no two
    exceptions may disagree: otherwise a dismissal as an exception would hide values that
    really conflict."""
    def inside(a: tuple[str, str], b: tuple[str, str]) -> bool:
        return a != b and b[0] <= a[0] and a[1] <= b[1]

    periods = [_period(p) for p in participants]
    disagreeing = [(i, j) for i in range(len(participants)) for j in range(i + 1, len(periods))
                   if not same_value(participants[i]["value"], participants[j]["value"])
                   and periods[i][0] <= periods[j][1] and periods[j][0] <= periods[i][1]]
    exceptions: set[int] = set()
    for i, j in disagreeing:
        if inside(periods[i], periods[j]):
            exceptions.add(i)
        elif inside(periods[j], periods[i]):
            exceptions.add(j)
        else:
            return []
    if any(i in exceptions and j in exceptions for i, j in disagreeing):
        return []  # exceptions that disagree: nested (which prevails?) or contradictory
    return sorted(participants[i]["fact"] for i in exceptions)


def _signature(facts: list[Fact]) -> str:
    revisions = sorted({f"{f.revision.document.key}@{f.revision.revision}" for f in facts})
    return hashlib.sha256(json.dumps(revisions).encode()).hexdigest()


def judged_revisions(participants: Iterable[dict[str, Any]]) -> list[list[str]]:
    """The (document, revision) pairs of a conflict's sides, sorted: what a dismissal of it
    judges."""
    return [list(pair) for pair in sorted({(p["document"], p["revision"])
                                           for p in participants})]


def _still_dismissed(conflict: Conflict, facts: list[Fact]) -> bool:
    """Whether the dismissal of `conflict` covers these disagreeing facts: they are all of
    revisions it was dismissed for. Revisions never change, so a withdrawal, which only takes
    some away, leaves the owner's judgement standing, and restoring them brings back what was
    judged; any other revision reopens it. A conflict that closed while dismissed is dismissed
    again when its documents come back to those revisions."""
    if conflict.status not in (Conflict.Status.DISMISSED, Conflict.Status.CLOSED):
        return False
    if conflict.dismissed_revisions:
        judged = {tuple(pair) for pair in conflict.dismissed_revisions}
        return {(f.revision.document.key, f.revision.revision) for f in facts} <= judged
    # Dismissed before the revisions were kept: the very same revisions only.
    return (conflict.status == Conflict.Status.DISMISSED
            and conflict.dismissed_signature == _signature(facts))


def conflicts_refresh(
    *, pairs: Iterable[tuple[str, str]], actor: Actor, cause: str, today: date | None = None,
    close_only: bool = False, by: str = "",
) -> list[ConflictChange]:
    """Open, close or reopen the conflicts on these (subject, key) pairs, after a change of
    the document `cause` (whose events name it). With `close_only`, no status but closed is
    given: those whose documents no longer disagree close, and those still disagreeing keep
    their status, without the documents whose facts have ended. Caller's transaction."""
    if today is None:
        # The gate's today: a date pinned for a drill (REEVALUATION_TODAY) holds here too, or
        # a publish would reopen what the daily close has just closed on the pinned day.
        today = instants.today()
    pairs = set(pairs)
    if pairs:
        audit_chain_lock()  # before the conflicts: see the lock order above
    # Locked before the facts are read: a refresh that waited for another one's lock reads
    # the facts that one committed.
    existing = {
        (c.subject, c.key): c
        for c in Conflict.objects.select_for_update()
        .filter(key__in={k for _, k in pairs}).order_by("pk")
        if (c.subject, c.key) in pairs
    }
    by_pair: dict[tuple[str, str], list[Fact]] = {}
    for fact in _current_facts(pairs, today):
        by_pair.setdefault((fact.subject, fact.key), []).append(fact)
    changes: list[ConflictChange] = []
    # The conflicts whose dismissal this change undoes: their owners had put them aside.
    undone: set[int] = set()
    now = timezone.now()
    for pair in sorted(pairs):
        disagreeing = _disagreeing(by_pair.get(pair, []))
        conflict = existing.get(pair)
        before = conflict.status if conflict else None
        was_between = tuple(conflict.documents) if before == Conflict.Status.OPEN else ()
        if disagreeing:
            signature = _signature(disagreeing)
            documents = sorted({f.revision.document.key for f in disagreeing})
            if conflict is None:
                conflict = Conflict(subject=pair[0], key=pair[1], opened_at=now)
            if close_only:
                # A document whose facts ended leaves the conflict, and the others still
                # disagree: it stays open, or dismissed, as after a withdrawal (what is left
                # is among the revisions the dismissal judged).
                after = conflict.status
            elif _still_dismissed(conflict, disagreeing):
                after = Conflict.Status.DISMISSED
            else:
                after = Conflict.Status.OPEN
            if before != after or conflict.signature != signature:
                if after == Conflict.Status.OPEN and (before == Conflict.Status.DISMISSED or (
                        before == Conflict.Status.CLOSED and conflict.dismissed_revisions)):
                    # Dismissed, or closed while dismissed (see _still_dismissed).
                    undone.add(conflict.pk)
                if before != Conflict.Status.OPEN and after == Conflict.Status.OPEN:
                    conflict.opened_at = now
                    conflict.closed_at = None
                if after == Conflict.Status.OPEN:
                    conflict.dismissed_revisions = []
                    conflict.exceptions = []
                else:
                    conflict.closed_at = None
                conflict.status = after
                conflict.documents = documents
                conflict.documents_ever = sorted({*conflict.documents_ever, *documents})
                conflict.participants = _participants(disagreeing)
                conflict.signature = signature
                conflict.save()
                changes.append(ConflictChange(conflict, before, after, was_between))
        elif conflict is not None and conflict.status != Conflict.Status.CLOSED:
            conflict.status = Conflict.Status.CLOSED
            conflict.closed_at = now
            conflict.save(update_fields=["status", "closed_at"])
            changes.append(ConflictChange(conflict, before, Conflict.Status.CLOSED))

    notices: list[Notice] = []
    for change in changes:
        c = change.conflict
        audit_record(
            actor=actor,
            action=f"conflict.{_verb(change)}",
            object_type="conflict",
            object_id=c.pk,
            document_id=cause,
            before={"status": change.before},
            after={
                "status": change.after,
                "subject": c.subject,
                "key": c.key,
                "revisions": [[p["document"], p["revision"]] for p in c.participants],
                # What changed `cause`: revision, withdrawal or restoration (the pages say
                # which); "validity" for the daily close, which names no document.
                **({"by": "validity"} if close_only else {"by": by} if by else {}),
            },
        )
        if change.after == Conflict.Status.OPEN and change.before != Conflict.Status.OPEN:
            notices.append(Notice(c.pk, undone_by=(cause, by or "revision")
                                  if c.pk in undone else None))
        elif change.after == Conflict.Status.OPEN and set(c.documents) - set(change.was_between):
            # A document joined a conflict already open: its owner hears of it as the first
            # owners did; they, who know of it already, are not mailed again.
            notices.append(Notice(c.pk, already_told=tuple(change.was_between)))
    if notices:
        transaction.on_commit(lambda: _notify_owners(notices))
    return changes


@transaction.atomic
def conflicts_close_ended(*, today: date | None = None) -> list[ConflictChange]:
    """Close the conflicts whose documents disagreed only over periods that have now ended:
    no document changed, so no publish closed them. Run daily by a beat task; the events
    name no document and say `"by": "validity"`. A conflict still disagreeing keeps its
    status (a dismissal is not reopened because one of its facts ended), but a document whose
    facts in it have all ended leaves it: its owner has nothing left to act on."""
    pairs = set(Conflict.objects.exclude(status=Conflict.Status.CLOSED)
                .values_list("subject", "key"))
    changes = conflicts_refresh(pairs=pairs, actor=WORKER, cause="", today=today,
                                close_only=True)
    # A dismissal hid the pair's facts from the gate; closed, they count again, and may still
    # disagree with an answer's claim (one naming no subject, say): re-evaluate, as a
    # reopening would. The validity sweep cannot see this: those facts gave no boundary.
    for change in changes:
        if (change.before == Conflict.Status.DISMISSED
                and change.after == Conflict.Status.CLOSED):
            reevaluate_documents(change.conflict.documents, trigger="validity", actor=WORKER)
    return changes


def reevaluate_documents(keys: Iterable[str], *, trigger: str, actor: Actor,
                         cause: str = "", cause_event: int | None = None) -> list[Any]:
    """Start the re-evaluation jobs of these documents in the caller's transaction: a change
    that commits has its jobs committed with it, and their fan-out is sent on commit. `cause`
    names the document whose change it is (see Verdict.Trigger.OTHER_DOCUMENT), `cause_event`
    the seq of its audit event. Returns the jobs, the changed document's first."""
    # Imported late: sources must not depend on reviews at import time.
    from reviewqueue.reviews.tasks import enqueue_documents_reevaluation

    return enqueue_documents_reevaluation(document_keys=keys, trigger=trigger, actor=actor,
                                          cause=cause, cause_event=cause_event)


def _verb(change: ConflictChange) -> str:
    if change.after == Conflict.Status.CLOSED:
        return "closed"
    if change.before is None:
        return "opened"
    if change.before == Conflict.Status.OPEN or change.after == Conflict.Status.DISMISSED:
        return "changed"  # a dismissal still covering it (see _still_dismissed)
    return "reopened"


# Control characters (line breaks among them) and Unicode's line and paragraph separators.
_NOT_IN_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str) -> str:
    """`text` fit for a mail's subject: a subject or key stored before such names were refused
    may hold a line break, which a mail header refuses (the mail would not go out at all), so
    each run of them is one space."""
    return _NOT_IN_ONE_LINE.sub(" ", text).strip()


@dataclass(frozen=True)
class Notice:
    """A conflict its owners are to be mailed about: opened, joined by a document (the owners
    of `already_told`, the documents it was between, know of it), reopened by hand by
    `reopened_by`, who is not mailed, or reopened by a change to a document: `undone_by`, its
    id and the change (revision, withdrawal or restoration) that undid the dismissal."""

    conflict_id: int
    already_told: tuple[str, ...] = ()
    reopened_by: Actor | None = None
    undone_by: tuple[str, str] | None = None


def _notify_owners(notices: list[Notice]) -> None:
    """Best effort, as sending is (see reviewqueue.mailing): this runs once the change has
    committed, and the owners' pages list the conflicts, mailed or not. A mail that cannot
    be written is logged with its traceback, not a failure of the request."""
    try:
        _mail_owners(notices)
    except Exception:
        log.exception("conflict notification failed",
                      extra={"conflicts": sorted({n.conflict_id for n in notices})})


def _mail_owners(notices: list[Notice]) -> None:
    """Mail each owner of each conflict's documents, one mail per conflict: a side from a
    document the owner may not read is only said to exist, as on the owner's pages. The
    conflicts, their documents and each owner's sides are read once for all of them: a
    revision opening a dozen conflicts costs the queries of one."""
    from reviewqueue.sources.selectors import conflict_sides, may_see_document

    conflicts = {c.pk: c for c in Conflict.objects.filter(
        pk__in=[n.conflict_id for n in notices])}
    # The owners' groups come along: only an owner the owner's pages open for is mailed.
    documents = {d.key: d for d in Document.objects.filter(key__in={
        key for n in notices if n.conflict_id in conflicts
        for key in (*conflicts[n.conflict_id].documents, *n.already_told,
                    *(n.undone_by[:1] if n.undone_by else ()))})
        .select_related("owner__language_preference").prefetch_related("owner__groups")}
    mails: list[tuple[Conflict, Any, Notice]] = []
    for notice in notices:
        conflict = conflicts.get(notice.conflict_id)
        if conflict is None:
            continue
        told = {documents[k].owner_id for k in notice.already_told if k in documents}
        owners = {documents[k].owner for k in conflict.documents if k in documents}
        # The mail sends the owner to their owner page: one who may not open it (deactivated,
        # or no longer an owner nor an admin, though the document is still theirs) could do
        # nothing with it.
        owners = {o for o in owners if o.pk not in told and o.email
                  and has_role(o, Role.OWNER, Role.ADMIN)
                  and (notice.reopened_by is None or Actor.of_user(o) != notice.reopened_by)}
        mails += [(conflict, owner, notice) for owner in sorted(owners, key=lambda o: o.pk)]
    of_owner: dict[int, list[Conflict]] = {}
    owners_by_pk = {}
    for conflict, owner, _notice in mails:
        of_owner.setdefault(owner.pk, []).append(conflict)
        owners_by_pk[owner.pk] = owner
    sides = {pk: conflict_sides(of_owner[pk], owner) for pk, owner in owners_by_pk.items()}
    messages: list[tuple[dict[str, Any], EmailMessage]] = []
    for conflict, owner, notice in mails:
        # The document whose change undid a dismissal, named only to an owner who may see it.
        cause = documents.get(notice.undone_by[0]) if notice.undone_by else None
        seen = cause.key if cause is not None and may_see_document(owner, cause) else ""
        with override(language_of(owner)):
            subject, body = _conflict_mail(conflict, notice, sides[owner.pk][conflict.pk], seen)
        messages += [({"conflict": conflict.pk}, mail)
                     for mail in mail_to_each(subject, body, [owner.email])]
    send_each(messages, "conflict notification failed")


def _conflict_mail(conflict: Conflict, notice: Notice, sides: list[Any],
                   cause: str = "") -> tuple[str, str]:
    """Subject and body of one owner's mail about a conflict, in the active language; `cause`
    the document whose change undid its dismissal, when the owner may see it."""
    from reviewqueue.sources.forms import as_input

    name = one_line(f"{conflict.subject + ' / ' if conflict.subject else ''}{conflict.key}")
    opening = ""
    if notice.reopened_by is not None:
        subject = gettext("[ReviewQueue] Conflict reopened on %(name)s") % {"name": name}
        opening = gettext("%(who)s reopened this conflict, which had been dismissed as "
                          "expected. ") % {"who": notice.reopened_by.name.removeprefix("user:")}
    elif notice.undone_by is not None:
        subject = gettext("[ReviewQueue] Conflict reopened on %(name)s") % {"name": name}
        change = notice.undone_by[1]
        if not cause:
            opening = gettext("A change to a document you may not read changed the values this "
                              "conflict had been dismissed for, so it is open again. ")
        elif change == "withdrawal":
            opening = gettext("%(document)s was withdrawn, and the values left are not those "
                              "this conflict had been dismissed for, so it is open again. ")
        elif change == "restoration":
            opening = gettext("%(document)s was restored, and the values are not those this "
                              "conflict had been dismissed for, so it is open again. ")
        else:
            opening = gettext("A new revision of %(document)s changed the values this "
                              "conflict had been dismissed for, so it is open again. ")
        opening = opening % {"document": cause} if cause else opening
    elif notice.already_told:
        subject = gettext("[ReviewQueue] Your document joined the conflict on %(name)s") % {
            "name": name}
    else:
        subject = gettext("[ReviewQueue] Conflict opened on %(name)s") % {"name": name}
    # Each value as the owner's pages write it (text as typed, `true`, `"14"` for text that
    # reads as a number), not as Python does ('14 days', True).
    lines = [
        "- " + gettext("a document you may not read") if side.restricted else
        f"- {side.document.key} ({side.revision.revision}{_where(side)}): "
        f"{as_input(side.fact.value)}"
        for side in sides
    ]
    # A conflict within one document is between values its own revision states.
    what = (gettext("Documents disagree, at least one of them yours")
            if len(conflict.documents) > 1 else gettext("Your document states different values"))
    resolve = gettext("Resolve it in ReviewQueue on your owner page (%(page)s), under "
                      "'%(section)s'.") % {"page": page_address(reverse("sources:inbox")),
                                           "section": gettext("Conflicts in your documents")}
    return subject, f"{opening}{what}:\n" + "\n".join(lines) + f"\n\n{resolve}"


def _where(side: Any) -> str:
    """Where in its revision a side's fact is stated, when another side is of that revision
    too: the revision alone does not tell the two apart."""
    if not side.shares_revision:
        return ""
    if side.fact.span:
        return gettext(", passage %(span)s") % {"span": side.fact.span}
    return gettext(", fact %(number)s") % {"number": side.fact.position + 1}


@transaction.atomic
def conflict_dismiss(
    *, conflict_id: int, reason: str, user: Any, actor: Actor, signature: str | None = None
) -> Conflict:
    """Record that the disagreement is expected. Tied to the revisions involved right now,
    which must be those of `signature` when given: the revisions the person judged."""
    reason = reason.strip()
    if not reason:
        raise FieldError("reason", "a justification is required")
    if len(reason) > DISMISSAL_REASON_MAX_CHARS:
        raise FieldError("reason", f"at most {DISMISSAL_REASON_MAX_CHARS} characters "
                                   f"(it has {len(reason)})")
    audit_chain_lock()  # before the conflict: see the lock order above
    conflict = Conflict.objects.select_for_update().filter(pk=conflict_id).first()
    if conflict is None:
        raise NotFound("no such conflict")
    if conflict.status != Conflict.Status.OPEN:
        raise ConflictError(f"the conflict is {conflict.status}, not open")
    if signature is not None and signature != conflict.signature:
        raise ConflictError("the revisions involved changed since the conflict was shown")
    code = reason.partition(": ")[0]
    # An exception's facts stay before the gate, which then holds an answer stating the
    # standard value on a day the exception holds; the standard's facts are left out.
    exceptions = exception_facts(conflict.participants) if code == EXCEPTION else []
    if code == EXCEPTION and not exceptions:
        raise NotAnException("reason", "neither value holds during only part of the other's "
                             "period; choose another reason, or correct the validity dates")
    conflict.status = Conflict.Status.DISMISSED
    conflict.dismissed_by = user
    conflict.dismissed_at = timezone.now()
    conflict.dismissal_reason = reason
    conflict.dismissed_signature = conflict.signature
    conflict.dismissed_revisions = judged_revisions(conflict.participants)
    conflict.exceptions = exceptions
    conflict.save()
    event = audit_record(
        actor=actor,
        action="conflict.dismissed",
        object_type="conflict",
        object_id=conflict.pk,
        before={"status": "open"},
        after={
            "status": "dismissed",
            "subject": conflict.subject,
            "key": conflict.key,
            "revisions": [[p["document"], p["revision"]] for p in conflict.participants],
            # The reason's code, one of a few fixed words ("both valid"); never free text.
            **({"dismissal_reason": code} if code in DISMISSAL_CODES else {}),
            **({"exceptions": exceptions} if exceptions else {}),
            # The log keeps no free text (it can never be purged); its digest proves the
            # justification the conflict page shows is the one given (the sources check
            # compares them).
            "reason_sha256": hashlib.sha256(conflict.dismissal_reason.encode()).hexdigest(),
        },
    )
    # The jobs name the event, as a publish's do: the dismissal's progress page counts what
    # all of them moved, those on documents the person may not read as well.
    reevaluate_documents(conflict.documents, trigger="dismissal", actor=actor,
                         cause_event=event.seq)
    return conflict


class NotAnException(FieldError):
    """A dismissal as an exception, of values none of which holds within another's period."""


class DismissedAgain(ConflictError):
    """The dismissal the person saw is not the conflict's dismissal any more."""


@transaction.atomic
def conflict_reopen(*, conflict_id: int, actor: Actor,
                    dismissed_at: datetime | None = None) -> Conflict:
    """Open a dismissed conflict again. It counts as open from now, as when a new revision
    reopens it: the inbox says since when it has been waiting, not when it first opened. The
    documents' other owners are mailed on commit, as when a conflict opens.

    With `dismissed_at`, only the dismissal of that moment, the one the person read: a
    dismissal made since (reopened and dismissed again meanwhile) is not undone unread."""
    audit_chain_lock()  # before the conflict: see the lock order above
    conflict = Conflict.objects.select_for_update().filter(pk=conflict_id).first()
    if conflict is None:
        raise NotFound("no such conflict")
    if conflict.status != Conflict.Status.DISMISSED:
        raise ConflictError(f"the conflict is {conflict.status}, not dismissed")
    if dismissed_at is not None and conflict.dismissed_at != dismissed_at:
        raise DismissedAgain("the conflict was dismissed again since you opened it")
    conflict.status = Conflict.Status.OPEN
    conflict.dismissed_signature = ""
    conflict.dismissed_revisions = []
    conflict.exceptions = []
    conflict.opened_at = timezone.now()
    conflict.save(update_fields=["status", "dismissed_signature", "dismissed_revisions",
                                 "exceptions", "opened_at"])
    event = audit_record(
        actor=actor,
        action="conflict.reopened",
        object_type="conflict",
        object_id=conflict.pk,
        before={"status": "dismissed"},
        # Named as every other conflict event names them: the row then says which documents.
        after={"status": "open", "subject": conflict.subject, "key": conflict.key,
               "revisions": [[p["document"], p["revision"]] for p in conflict.participants]},
    )
    transaction.on_commit(lambda: _notify_owners([Notice(conflict.pk, reopened_by=actor)]))
    reevaluate_documents(conflict.documents, trigger="reopening", actor=actor,
                         cause_event=event.seq)
    return conflict
