"""Reads for the review queue: what a reviewer may see, filtered, a keyset page at a time.

Visibility (Invariant 5) is part of the SQL: an item is visible only when NO retrieved item of
its answer lacks a readable document. So pages, cursors and counts all agree, and nothing the
reviewer may not read is ever loaded to be filtered out in Python.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan
from django.db.models.functions import Coalesce
from django.utils import timezone

from reviewqueue.accounts.principals import EVERYONE
from reviewqueue.counting import COUNT_CAP, AtLeast
from reviewqueue.reviews.labels import REASONS, reason_label
from reviewqueue.reviews.models import Answer, RetrievedItem, ReviewItem
from reviewqueue.sources.models import Document
from reviewqueue.sources.selectors import document_titles, titles_read_by

CLAIM_FILTERS = ("all", "unclaimed", "mine")
# The order of the queue, by when each answer was held: oldest first (the default, so that no
# answer waits for ever) or newest first.
ORDERS = ("oldest", "newest")
# Answers a reviewer sent to the owners: still waiting for them, or answered by one of them.
HANDOFF_FILTERS = ("waiting", "replied")
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
# Counts per reason stop here: the badge says "1000+" instead of counting a huge backlog.


class BadCursor(ValueError):
    pass


@dataclass(frozen=True)
class QueueFilters:
    reason: str = ""
    document: str = ""
    release: str = ""
    claim: str = "all"
    handoff: str = ""
    order: str = "oldest"

    def as_params(self) -> dict[str, str]:
        params = {"reason": self.reason, "document": self.document, "release": self.release,
                  "handoff": self.handoff}
        if self.claim != "all":
            params["claim"] = self.claim
        if self.order != "oldest":
            params["order"] = self.order
        return {k: v for k, v in params.items() if v}

    @property
    def newest_first(self) -> bool:
        return self.order == "newest"


@dataclass(frozen=True)
class Cursor:
    """A position in the queue order (entered_at, id) and the direction to read from it."""

    entered_at: datetime
    item_id: int
    backwards: bool = False

    def encode(self) -> str:
        raw = json.dumps([self.entered_at.isoformat(), self.item_id, int(self.backwards)],
                         separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            padded = token + "=" * (-len(token) % 4)
            entered, item_id, backwards = json.loads(base64.urlsafe_b64decode(padded))
            when = datetime.fromisoformat(entered)
        except (ValueError, TypeError, binascii.Error, UnicodeDecodeError, RecursionError) as exc:
            raise BadCursor("not a queue cursor") from exc
        if (not isinstance(item_id, int) or isinstance(item_id, bool)
                or backwards not in (0, 1) or when.tzinfo is None):
            raise BadCursor("not a queue cursor")
        return cls(when, item_id, bool(backwards))


@dataclass(frozen=True)
class DocumentRef:
    key: str
    title: str


@dataclass
class QueueRow:
    item: ReviewItem
    documents: list[DocumentRef]
    lease_holder: str | None
    lease_until: datetime | None
    lease_mine: bool

    @property
    def answer(self) -> Answer:
        return self.item.answer

    @property
    def other_reasons(self) -> list[str]:
        return [r for r in self.item.reasons if r != self.item.primary_reason]


@dataclass(frozen=True)
class ReasonCount:
    reason: str
    count: AtLeast

    @property
    def label(self) -> str:
        return reason_label(self.reason)

    @property
    def capped(self) -> bool:
        return self.count.capped

    @property
    def shown(self) -> str:
        return str(self.count)


@dataclass
class QueuePage:
    rows: list[QueueRow]
    next_cursor: str | None
    previous_cursor: str | None
    counts: list[ReasonCount] = field(default_factory=list)

    @property
    def total(self) -> ReasonCount:
        return ReasonCount("", AtLeast(sum(c.count for c in self.counts),
                                       capped=any(c.capped for c in self.counts)))


def readable_documents(principals: Iterable[str]) -> QuerySet[Document]:
    return Document.objects.filter(allowed_principals__overlap=[*principals, EVERYONE])


def _titled(text: str, user: Any) -> Q:
    """Documents whose title is `text`, any case: their current revision's, or a withdrawn
    one's last revision's as `user` may read it (titles_read_by), as its row and its item page
    name it.

    The current title is matched through the join, which PostgreSQL estimates from the title
    index's statistics; the subquery only where there is no current revision. Alone, the
    subquery is guessed to match half the documents, and a filtered count then reads every
    retrieved item."""
    withdrawn = titles_read_by(user).filter(title__iexact=text).values("document_id")
    return (Q(current_revision__title__iexact=text)
            | Q(current_revision__isnull=True, pk__in=withdrawn))


def documents_like(text: str, principals: Iterable[str], user: Any, limit: int = 10
                   ) -> list[tuple[str, str]] | None:
    """For a document filter that names no document: up to `limit` readable documents whose
    id or title (a withdrawn one's last, as the queue names it) contains `text` (any case), as
    (id, title), none when nothing does. None when `text` is a document's id or title: the
    filter then found it."""
    readable = readable_documents(principals)
    if readable.filter(Q(key__iexact=text) | _titled(text, user)).exists():
        return None
    return list(titles_read_by(user).filter(document__in=readable)
                .filter(Q(document__key__icontains=text) | Q(title__icontains=text))
                .order_by("title", "document__key")
                .values_list("document__key", "title")[:limit])


def visible_items(principals: Iterable[str]) -> QuerySet[ReviewItem]:
    """Review items whose every retrieved document the holder of `principals` may read.

    A retrieved document_key without a Document row counts as unreadable (only the services
    may see what the store has not received).
    """
    return readable_rows(ReviewItem.objects.all(), principals, "answer_id")


def readable_rows(rows: QuerySet[Any], principals: Iterable[str], answer: str) -> QuerySet[Any]:
    """`rows` (of answers, or of rows naming one by `answer`: "pk", "answer_id") whose answer
    retrieved only documents the holder of `principals` may read, as visible_items."""
    readable = readable_documents(principals).filter(key=OuterRef("document_key"))
    unreadable = RetrievedItem.objects.filter(answer_id=OuterRef(answer)).exclude(
        Exists(readable)
    )
    # Not `~Exists(unreadable)`: PostgreSQL turns NOT EXISTS into an anti join and, for a
    # count or a filtered page, often hashes every retrieved item of every stored answer (a
    # full scan that grows with all answers, held or not) to check a few hundred queue
    # entries. A scalar subquery stays a per-row probe of the retrieved items' answer index,
    # so the cost follows the rows actually read, which LIMIT and the count cap bound. It is
    # written "COALESCE(...) <> 1" because the planner guesses a NOT-equal holds for 99.5% of
    # rows (most items are visible) where it would guess 0.5% for "IS NULL", and walk or
    # JIT-compile for a few visible rows among thousands.
    blocked = Coalesce(Subquery(unreadable.order_by().values(one=Value(1))[:1]), Value(0))
    return rows.alias(_blocked=blocked).filter(~Q(_blocked=1))


def _filtered(qs: QuerySet[ReviewItem], filters: QueueFilters, user: Any,
              principals: Iterable[str], now: datetime, *, with_reason: bool = True
              ) -> QuerySet[ReviewItem]:
    if with_reason and filters.reason:
        qs = qs.filter(primary_reason=filters.reason)
    if filters.release:
        qs = qs.filter(index_release=filters.release)
    if filters.document:
        # A document id or a title as the queue shows it, in any case: reviewers know
        # documents by title. An id written exactly is that document alone, though another
        # id differs from it only in case. One subquery, run once; visibility is checked as
        # for any row. Only documents the reader may read are matched: a hidden one's id,
        # written as a readable one's title, would otherwise take the filter from it and tell
        # the reader that the hidden id exists.
        readable = readable_documents(principals)
        exact = readable.filter(key=filters.document)
        named = readable.filter(
            Q(key=filters.document)
            | ~Exists(exact) & (Q(key__iexact=filters.document)
                                | _titled(filters.document, user))
        ).values("key")
        qs = qs.filter(Exists(RetrievedItem.objects.filter(answer_id=OuterRef("answer_id"),
                                                           document_key__in=named)))
    if filters.claim == "unclaimed":
        qs = qs.filter(Q(leased_by__isnull=True) | Q(lease_until__lte=now))
    elif filters.claim == "mine":
        qs = qs.filter(leased_by=user, lease_until__gt=now)
    if filters.handoff:
        # Spelled out although "waiting" implies it (a check constraint): PostgreSQL then reads
        # the few items ever sent to the owners through the question's index and sorts them.
        qs = qs.filter(owner_question__isnull=False)
        if filters.handoff == "waiting":
            qs = qs.filter(waiting_for_owner=True)
        else:
            qs = qs.filter(waiting_for_owner=False, owner_question__replied_at__isnull=False)
    return qs


def queue_queryset(*, principals: Iterable[str], filters: QueueFilters, user: Any,
                   now: datetime | None = None) -> QuerySet[ReviewItem]:
    """The filtered, visible queue, in the filters' order."""
    now = now or timezone.now()
    principals = list(principals)
    return _in_order(_filtered(visible_items(principals), filters, user, principals, now),
                     newest_first=filters.newest_first)


def _in_order(qs: QuerySet[ReviewItem], *, newest_first: bool) -> QuerySet[ReviewItem]:
    return qs.order_by("-entered_at", "-id") if newest_first else qs.order_by("entered_at", "id")


def page_queryset(*, principals: Iterable[str], filters: QueueFilters, user: Any,
                  cursor: Cursor | None = None, now: datetime | None = None
                  ) -> QuerySet[ReviewItem]:
    """The rows after (or, backwards, before) `cursor` in the filters' order, in reading order
    for that direction.

    The row comparison `(entered_at, id) > cursor` walks the age index from the cursor on (in
    either direction), so page 1000 costs what page 1 costs; OFFSET would read and drop every
    earlier row.
    """
    now = now or timezone.now()
    principals = list(principals)
    qs = _filtered(visible_items(principals), filters, user, principals, now)
    qs = qs.select_related("answer", "leased_by", "owner_question")
    if cursor is None:
        return _in_order(qs, newest_first=filters.newest_first)
    # Read towards older rows: newest first going forward, or oldest first going back.
    descending = filters.newest_first != cursor.backwards
    position = Tuple(F("entered_at"), F("id"))
    beyond = (TupleLessThan if descending else TupleGreaterThan)(
        position, (cursor.entered_at, cursor.item_id))
    return _in_order(qs.filter(beyond), newest_first=descending)


def queue_page(*, principals: Iterable[str], filters: QueueFilters, user: Any,
               cursor: Cursor | None = None, limit: int = DEFAULT_LIMIT,
               with_counts: bool = True) -> QueuePage:
    """One keyset page of the queue. Queries: the rows, their documents (2), the counts (1)."""
    principals = list(principals)
    now = timezone.now()
    limit = max(1, min(limit, MAX_LIMIT))
    qs = page_queryset(principals=principals, filters=filters, user=user, cursor=cursor,
                       now=now)
    items = list(qs[: limit + 1])
    more = len(items) > limit
    items = items[:limit]
    if cursor is not None and cursor.backwards:
        items.reverse()
        previous_cursor = _cursor(items[0], backwards=True) if more and items else None
        next_cursor = _cursor(items[-1]) if items else None
    else:
        next_cursor = _cursor(items[-1]) if more else None
        previous_cursor = (_cursor(items[0], backwards=True)
                           if cursor is not None and items else None)
    rows = _rows(items, user, now)
    counts = (reason_counts(principals=principals, filters=filters, user=user, now=now)
              if with_counts else [])
    return QueuePage(rows=rows, next_cursor=next_cursor, previous_cursor=previous_cursor,
                     counts=counts)


def _cursor(item: ReviewItem, *, backwards: bool = False) -> str:
    return Cursor(item.entered_at, item.pk, backwards).encode()


def _rows(items: list[ReviewItem], user: Any, now: datetime) -> list[QueueRow]:
    """Attach the cited documents (two queries for the whole page, whatever its size)."""
    keys_by_answer: dict[int, list[str]] = {}
    for answer_id, key in (
        RetrievedItem.objects.filter(answer_id__in=[i.answer_id for i in items])
        .order_by("answer_id", "id")
        .values_list("answer_id", "document_key")
    ):
        keys = keys_by_answer.setdefault(answer_id, [])
        if key not in keys:
            keys.append(key)
    all_keys = {k for keys in keys_by_answer.values() for k in keys}
    # A withdrawn document keeps the title of its last revision, as on its item page.
    titles = document_titles(user, all_keys)
    rows = []
    for item in items:
        active = (item.leased_by_id is not None and item.lease_until is not None
                  and item.lease_until > now)
        rows.append(QueueRow(
            item=item,
            documents=[DocumentRef(k, titles.get(k) or k)
                       for k in keys_by_answer.get(item.answer_id, [])],
            lease_holder=item.leased_by.get_username() if active and item.leased_by else None,
            lease_until=item.lease_until if active else None,
            lease_mine=active and item.leased_by_id == user.pk,
        ))
    return rows


def reason_counts(*, principals: Iterable[str], filters: QueueFilters, user: Any,
                  now: datetime | None = None) -> list[ReasonCount]:
    """How many visible items wait per primary reason, under the other filters.

    One statement: per reason, a count over at most COUNT_CAP + 1 rows read through the
    (primary_reason, answer_id) index, so a backlog of millions costs what 1001 costs.
    """
    now = now or timezone.now()
    principals = list(principals)
    base = _filtered(visible_items(principals), filters, user, principals, now,
                     with_reason=False)
    parts: list[str] = []
    params: list[Any] = []
    for reason in REASONS:
        # Any order gives the same capped count; answer order walks the reason index and
        # stops at the cap, and makes each visibility probe land next to the previous one in
        # the retrieved items' answer index. In queue order the probes jump across that whole
        # index (a working set that grows with the backlog) and cost a third more at 100,000.
        limited = (base.filter(primary_reason=reason).order_by("answer_id")
                   .values("id")[: COUNT_CAP + 1])
        sql, sub_params = limited.query.sql_with_params()
        parts.append(f"SELECT %s::text, (SELECT count(*) FROM ({sql}) AS limited)")
        params += [reason, *sub_params]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        found = dict(cursor.fetchall())
    return [
        ReasonCount(reason, AtLeast.of(found.get(reason, 0), COUNT_CAP)) for reason in REASONS
    ]


# How many of the oldest unclaimed answers "Next" tries in one round.
NEXT_CANDIDATES = 5


def next_unclaimed(*, principals: Iterable[str], filters: QueueFilters, user: Any,
                   how_many: int = NEXT_CANDIDATES) -> list[Answer]:
    """The first visible unclaimed answers in the queue's order (oldest first unless the
    filters say newest), for "Next" to try in order. An answer a reviewer
    sent to its owners waits for them: it is opened from the queue, not handed out."""
    unclaimed = replace(filters, claim="unclaimed")
    qs = queue_queryset(principals=principals, filters=unclaimed, user=user).filter(
        waiting_for_owner=False)
    return [item.answer for item in qs.select_related("answer")[:how_many]]
