"""Leases on review items: who is working on a held answer, until when.

A lease is two columns on the review item (`leased_by`, `lease_until`); an expired lease is free.
Every change is a conditional UPDATE whose row count says who won, so two reviewers racing for
one item can never both get it, whatever the isolation level.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.principals import user_principals
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.errors import Conflict, DomainError
from reviewqueue.instants import instant_text
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.reviews.selectors.queue import NEXT_CANDIDATES, QueueFilters, next_unclaimed


class NotHeld(Conflict):
    """The answer is not (or no longer) waiting in the queue."""

    code = "not_held"

    def __init__(self, answer: Answer | None = None, status: str | None = None,
                 decided: Any = None) -> None:
        status = status or (answer.status if answer is not None else None)
        extra: dict[str, Any] = {"status": status}
        if decided is not None:  # the decision that took it out of the queue, and whose
            extra["decision"] = {"id": decided.pk, "action": decided.action,
                                 "reviewer": decided.reviewer.get_username(),
                                 "created_at": instant_text(decided.created_at)}
        super().__init__("the answer is not held for review", extra=extra)
        self.status = status
        self.decided = decided


class LeasedByOther(Conflict):
    """Someone else holds an active lease on the item."""

    code = "leased_by_other"

    def __init__(self, holder: str, until: datetime) -> None:
        super().__init__(
            f"{holder} is working on this answer until {instant_text(until)}",
            extra={"holder": holder, "until": instant_text(until)},
        )
        self.holder = holder
        self.until = until


class LeaseLost(Conflict):
    """The user's lease ended and nobody holds the item now. `why`, when known: "released"
    (by the user, from another tab or window), "broken" (by an admin) or "expired"."""

    code = "lease_lost"

    def __init__(self, why: str | None = None) -> None:
        super().__init__("your lease on this answer has ended")
        self.why = why


class AdminOnly(DomainError):
    status_code = 403
    code = "permission_denied"


@dataclass(frozen=True)
class LeaseState:
    """What a page or API response says about the lease of one item."""

    holder: str | None
    until: datetime | None
    mine: bool

    @property
    def active(self) -> bool:
        return self.holder is not None

    def as_dict(self) -> dict[str, Any]:
        return {"holder": self.holder,
                "until": instant_text(self.until) if self.until else None}


FREE = LeaseState(None, None, False)


def lease_state(item: ReviewItem | None, user: Any, now: datetime | None = None) -> LeaseState:
    """The lease as it stands; an expired lease reads as free."""
    now = now or timezone.now()
    if item is None or item.leased_by_id is None or item.lease_until is None:
        return FREE
    if item.lease_until <= now:
        return FREE
    holder = item.leased_by.get_username() if item.leased_by is not None else "?"
    return LeaseState(holder, item.lease_until, item.leased_by_id == user.pk)


def lease_seconds() -> int:
    return int(settings.REVIEW_LEASE_SECONDS)


def _free_or_mine(user: Any, now: datetime) -> Q:
    return Q(leased_by__isnull=True) | Q(lease_until__lte=now) | Q(leased_by=user)


def _holder(item_id: int) -> tuple[str, datetime] | None:
    row = (
        ReviewItem.objects.filter(pk=item_id)
        .values_list("leased_by__username", "lease_until")
        .first()
    )
    if row is None:
        return None
    return row[0] or "?", row[1]


def _locked_lease(items: Any) -> dict[str, Any] | None:
    """The item's lease, its row locked until the transaction ends, so that what a claim or
    a release decides on does not change under it: another tab of the same user claiming the
    same free item is waited for, and then seen as this user's lease, to renew (its claim is
    logged once); a renewal racing an admin's break waits, and finds the lease ended."""
    return (items.select_for_update(of=("self",))
            .values("pk", "leased_by_id", "leased_by__username", "lease_until").first())


@transaction.atomic
def lease_claim(*, answer: Answer, user: Any, actor: Actor) -> LeaseState:
    """Claim the answer's review item for `REVIEW_LEASE_SECONDS`, or renew one's own lease.

    Raises NotHeld when the answer left the queue and LeasedByOther when a colleague holds an
    active lease. A renewal of an active lease is not audited (pages renew every few minutes);
    every claim, including taking over an expired lease, is.
    """
    now = timezone.now()
    until = now + timedelta(seconds=lease_seconds())
    items = ReviewItem.objects.filter(answer=answer)
    # The common case while a page stays open: extend one's own active lease.
    if items.filter(leased_by=user, lease_until__gt=now).update(lease_until=until):
        return LeaseState(user.get_username(), until, True)

    seen = _locked_lease(items)
    if seen is None:
        raise NotHeld(answer)
    if seen["leased_by_id"] == user.pk and seen["lease_until"] and seen["lease_until"] > now:
        ReviewItem.objects.filter(pk=seen["pk"]).update(lease_until=until)
        return LeaseState(user.get_username(), until, True)
    # Under the row lock: the condition holds unless a colleague holds an active lease.
    won = (
        ReviewItem.objects.filter(pk=seen["pk"])
        .filter(_free_or_mine(user, now))
        .update(leased_by=user, lease_until=until)
    )
    if not won:
        holder = _holder(seen["pk"])
        if holder is None:
            raise NotHeld(answer)
        raise LeasedByOther(*holder)
    before: dict[str, Any] = {"holder": None}
    if seen["leased_by__username"]:
        # The previous lease had expired (or was this user's own, lapsed one).
        before = {"holder": seen["leased_by__username"],
                  "until": seen["lease_until"].isoformat() if seen["lease_until"] else None,
                  "expired": True}
    audit_record(
        actor=actor, action="lease.claimed", object_type="answer", object_id=answer.trace_id,
        trace_id=answer.trace_id, before=before,
        after={"holder": user.get_username(), "until": until.isoformat()},
    )
    return LeaseState(user.get_username(), until, True)


def lease_renew(*, answer: Answer, user: Any) -> LeaseState:
    """Extend the user's own active lease by `REVIEW_LEASE_SECONDS`; never claim a free item.

    A page left open renews every few minutes, so a lease that ended (broken by an admin,
    released from another tab, or expired) must stay ended: the reviewer claims again on
    purpose. Raises NotHeld when the answer left the queue, LeasedByOther when a colleague holds
    it now and LeaseLost when it is free. Not audited, as renewals by a claim are not.
    """
    now = timezone.now()
    until = now + timedelta(seconds=lease_seconds())
    items = ReviewItem.objects.filter(answer=answer)
    if items.filter(leased_by=user, lease_until__gt=now).update(lease_until=until):
        return LeaseState(user.get_username(), until, True)
    seen = items.values_list("pk", flat=True).first()
    holder = _holder(seen) if seen is not None else None
    if holder is None:
        raise NotHeld(answer)
    if holder[1] is not None and holder[1] > now:
        raise LeasedByOther(*holder)
    raise LeaseLost(_why_lost(answer, user))


def _why_lost(answer: Answer, user: Any) -> str:
    """How the user's lease on the free item ended, by the last lease event of its answer:
    released by them, broken by an admin, or else it expired (which records nothing)."""
    last = (AuditEvent.objects.filter(trace_id=answer.trace_id, action__in=[
        "lease.claimed", "lease.released", "lease.broken"]).order_by("-seq")
        .values_list("action", "actor").first())
    if last is None:
        return "expired"
    action, actor = last
    if action == "lease.released" and actor.split(" ")[0] == f"user:{user.get_username()}":
        return "released"
    return "broken" if action == "lease.broken" else "expired"


def lease_leave(*, answer: Answer, user: Any, seen_until: datetime) -> bool:
    """The reviewer's item page is going away (tab closed, link followed, page reloaded): let the
    user's own lease lapse after `REVIEW_LEASE_LEAVE_SECONDS` instead of its full term, so a
    colleague is not kept waiting by a page nobody looks at.

    `seen_until` is the lease end the leaving page last knew. The lease is shortened only while
    it still ends then: a page that opened since (a reload) and renewed has moved the end, and
    its renewal is never undone by the page it replaced, whichever request the server reads
    first. Other pages of the same item still open in the browser are told by the leaving one
    and renew at once (item.js). Returns whether the lease was shortened. Not audited: the
    holder does not change, as with renewals.
    """
    until = timezone.now() + timedelta(seconds=int(settings.REVIEW_LEASE_LEAVE_SECONDS))
    return bool(
        ReviewItem.objects.filter(answer=answer, leased_by=user, lease_until=seen_until,
                                  lease_until__gt=until)
        .update(lease_until=until)
    )


@transaction.atomic
def lease_release(*, answer: Answer, user: Any, actor: Actor, force: bool = False) -> bool:
    """Give up one's lease. With `force`, an admin breaks whoever's active lease it is.

    Returns False when there was nothing to release (the lease was already free). Raises
    LeasedByOther when someone else holds it and this is not an admin's break, NotHeld when
    the answer has left the queue.
    """
    now = timezone.now()
    # Locked: a renewal cannot slip in between this read and the break, which would then log
    # the lease's earlier end.
    seen = _locked_lease(ReviewItem.objects.filter(answer=answer))
    if seen is None:
        raise NotHeld(answer)
    if force and seen["leased_by_id"] not in (None, user.pk):
        if not has_role(user, Role.ADMIN):
            raise AdminOnly("only an admin can break a colleague's lease")
        broken = (
            ReviewItem.objects.filter(pk=seen["pk"], leased_by_id=seen["leased_by_id"],
                                      lease_until__gt=now)
            .update(leased_by=None, lease_until=None)
        )
        if broken:
            audit_record(
                actor=actor, action="lease.broken", object_type="answer",
                object_id=answer.trace_id, trace_id=answer.trace_id,
                before={"holder": seen["leased_by__username"],
                        "until": seen["lease_until"].isoformat()},
                after={"holder": None},
            )
            return True
        # It had expired: look again below.
    released = (
        ReviewItem.objects.filter(pk=seen["pk"], leased_by=user)
        .update(leased_by=None, lease_until=None)
    )
    if released:
        audit_record(
            actor=actor, action="lease.released", object_type="answer",
            object_id=answer.trace_id, trace_id=answer.trace_id,
            before={"holder": user.get_username()}, after={"holder": None},
        )
        return True
    holder = _holder(seen["pk"])
    if holder is not None and holder[1] is not None and holder[1] > now:
        raise LeasedByOther(*holder)
    return False


def lease_claim_next(*, candidates: list[Answer], user: Any, actor: Actor) -> Answer | None:
    """Claim the first of `candidates` (oldest first) that nobody else got to first."""
    for answer in candidates:
        try:
            lease_claim(answer=answer, user=user, actor=actor)
        except (LeasedByOther, NotHeld):
            continue  # a colleague (or a decision) got there first; try the next one
        return answer
    return None


def lease_claim_oldest(*, filters: QueueFilters, user: Any, actor: Actor) -> Answer | None:
    """"Next": claim the oldest free answer the queue's filters show the user, or None. Tried
    a few at a time; when colleagues took every one of them meanwhile, the next few may still
    be free, so up to three rounds."""
    for _round in range(3):
        candidates = next_unclaimed(principals=user_principals(user), filters=filters,
                                    user=user)
        answer = lease_claim_next(candidates=candidates, user=user, actor=actor)
        if answer is not None or len(candidates) < NEXT_CANDIDATES:
            return answer
    return None
