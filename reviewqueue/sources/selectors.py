"""Reads for documents and revisions."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    DateField,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import MD5
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from reviewqueue.audit.services import actor_username
from reviewqueue.counting import COUNT_CAP, AtLeast, bounded_count
from reviewqueue.prepared import prepared_cursor
from reviewqueue.sources.models import Conflict, Document, Fact, Passage, Revision
from reviewqueue.textdiff import Segment, diff_segments


def document_get(document_key: str) -> Document | None:
    return (
        Document.objects.select_related("owner", "current_revision")
        .filter(key=document_key)
        .first()
    )


def document_history(document: Document) -> QuerySet[Revision]:
    return document.revisions.order_by("-seq").select_related("published_by")


def document_history_seen_by(user: Any, document: Document, *, limit: int = 20
                             ) -> list[Revision]:
    """The newest `limit` revisions of `document`, each with its note blanked unless `user`
    may read that very revision: the note says what changed in it ("trial now 21 days"), and
    an older revision may have been more restricted than the current one, or the document is
    withdrawn and has none. Each has `late_behind`: the revision received before it that it is
    older than (so it was never made current), or "". The revisions are for showing, never for
    saving."""
    revisions = list(document_history(document)[:limit])
    late = _received_late(document)
    for revision in revisions:
        revision.late_behind = late.get(revision.seq, "")
        if not may_read_revision(user, document, revision):
            revision.note = ""
    return revisions


def _received_late(document: Document) -> dict[int, str]:
    """By seq, the revisions whose `updated_at` is older than that of one received before
    them, each with the newest such revision's id, as publishing judged them (1 query)."""
    late: dict[int, str] = {}
    newest: tuple[datetime, str] | None = None
    for seq, revision, updated_at in (document.revisions.order_by("seq")
                                      .values_list("seq", "revision", "updated_at")):
        if newest is not None and updated_at < newest[0]:
            late[seq] = newest[1]
        else:
            newest = (updated_at, revision)
    return late


# A fact as a revision's changes list it: value, first and last valid day (None: no end).
Stated = tuple[Any, date, date | None]


@dataclass(frozen=True)
class FactChange:
    """The facts on one (subject, key) before and after a revision: none before, it is new;
    none after, it was removed."""

    subject: str
    key: str
    before: tuple[Stated, ...]
    after: tuple[Stated, ...]


@dataclass(frozen=True)
class PassageChange:
    """A passage whose text a revision changed, word by word; None on the side that lacks it
    (a passage added or removed)."""

    span: str
    before: list[Segment] | None
    after: list[Segment] | None


@dataclass(frozen=True)
class RevisionChanges:
    """What a revision changed from the one before it (by `updated_at`: what the document
    said until then)."""

    previous: str  # that revision's id
    facts: list[FactChange]
    passages: list[PassageChange]
    title: tuple[str, str] | None  # before and after, when it changed
    readers: tuple[list[str], list[str]] | None  # likewise, each sorted

    def __bool__(self) -> bool:
        return bool(self.facts or self.passages or self.title or self.readers)


def attach_changes(user: Any, document: Document, revisions: list[Revision]) -> None:
    """Set `changes` on each of `revisions`: a RevisionChanges from the revision before it,
    or None for the first revision, or when `user` may not read both (what a fact said before
    is as restricted as the revision that said it). 5 queries, whatever the number."""
    for revision in revisions:
        revision.changes = None  # type: ignore[attr-defined]
    # Oldest first by what each says it is (Revision.NEWEST_FIRST, reversed).
    order = list(document.revisions.order_by("updated_at", "seq").values_list("pk", flat=True))
    before = {pk: order[i - 1] for i, pk in enumerate(order) if i}
    shown = {r.pk: r for r in revisions if r.pk in before}
    missing = {before[pk] for pk in shown} - shown.keys()
    previous = {**shown, **Revision.objects.in_bulk(list(missing))}
    pairs = {pk: previous[before[pk]] for pk in shown
             if may_read_revision(user, document, shown[pk])
             and may_read_revision(user, document, previous[before[pk]])}
    if not pairs:
        return
    ids = {*pairs, *(p.pk for p in pairs.values())}
    facts: dict[int, dict[tuple[str, str], list[Stated]]] = {pk: {} for pk in ids}
    for revision_id, subject, key, value, valid_from, valid_until in (
            Fact.objects.filter(revision_id__in=ids).order_by("position").values_list(
                "revision_id", "subject", "key", "value", "valid_from", "valid_until")):
        facts[revision_id].setdefault((subject, key), []).append(
            (value, valid_from, valid_until))
    texts: dict[int, dict[str, str]] = {pk: {} for pk in ids}
    for revision_id, span, digest in (Passage.objects.filter(revision_id__in=ids)
                                      .annotate(digest=MD5("text"))
                                      .values_list("revision_id", "span", "digest")):
        texts[revision_id][span] = digest
    spans = {pk: sorted(span for span in texts[earlier.pk].keys() | texts[pk].keys()
                        if texts[earlier.pk].get(span) != texts[pk].get(span))
             for pk, earlier in pairs.items()}
    # The texts themselves only of the passages that changed.
    changed_texts = {(revision_id, span): text for revision_id, span, text in (
        Passage.objects.filter(revision_id__in=ids,
                               span__in={span for each in spans.values() for span in each})
        .values_list("revision_id", "span", "text"))}
    for pk, earlier in pairs.items():
        old, new = facts[earlier.pk], facts[pk]
        changed = [FactChange(subject, key, tuple(old.get((subject, key), ())),
                              tuple(new.get((subject, key), ())))
                   for subject, key in sorted(old.keys() | new.keys())
                   if not _same_facts(old.get((subject, key), []), new.get((subject, key), []))]
        revision = shown[pk]
        revision.changes = RevisionChanges(  # type: ignore[attr-defined]
            previous=earlier.revision, facts=changed,
            passages=[_passage_change(span, changed_texts.get((earlier.pk, span)),
                                      changed_texts.get((pk, span))) for span in spans[pk]],
            title=(earlier.title, revision.title) if earlier.title != revision.title else None,
            readers=_readers_change(earlier, revision))


def _passage_change(span: str, before: str | None, after: str | None) -> PassageChange:
    if before is None or after is None:
        return PassageChange(span, before and [Segment("removed", before)],
                             after and [Segment("added", after)])
    return PassageChange(span, *diff_segments(before, after))


def _readers_change(earlier: Revision, revision: Revision
                    ) -> tuple[list[str], list[str]] | None:
    before, after = sorted(earlier.allowed_principals), sorted(revision.allowed_principals)
    return (before, after) if before != after else None


def _same_facts(old: list[Stated], new: list[Stated]) -> bool:
    """Whether two revisions state the same facts on a key, in any order: each value compared
    as the gate and the conflicts compare it (`same_value`: 1, true and "1" differ)."""
    from reviewqueue.sources.conflicts import same_value

    left = list(new)
    for value, first, last in old:
        match = next((i for i, (v, f, u) in enumerate(left)
                      if (f, u) == (first, last) and same_value(v, value)), None)
        if match is None:
            return False
        left.pop(match)
    return not left


@dataclass(frozen=True)
class Withdrawal:
    """A document's withdrawal or restoration, as its page's history lists it."""

    restored: bool
    at: Any
    by: str  # the username, or the actor as the audit log names it when not a user


def history_with_withdrawals(document: Document, revisions: list[Revision], *, cut: bool,
                             limit: int = 20) -> list[tuple[Any, Revision | Withdrawal]]:
    """`revisions` (newest first) with the newest `limit` withdrawals and restorations of
    `document` among them, each with its time, newest first; when older revisions were `cut`
    from the list, none older than those listed. The withdrawals are read from the audit log
    (1 query, on its object index)."""
    from reviewqueue.audit.models import AuditEvent

    events = AuditEvent.objects.filter(
        object_type="document", object_id=document.key,
        action__in=["document.withdrawn", "document.restored"])
    if cut and revisions:
        events = events.filter(created_at__gte=revisions[-1].published_at)
    withdrawals = [Withdrawal(action == "document.restored", at, actor_username(actor))
                   for action, at, actor in events.order_by("-seq")
                   .values_list("action", "created_at", "actor")[:limit]]
    entries: list[tuple[Any, Revision | Withdrawal]] = [
        *((r.published_at, r) for r in revisions), *((w.at, w) for w in withdrawals)]
    return sorted(entries, key=lambda entry: entry[0], reverse=True)


CHANGES_MADE_SHOWN = 20


def changes_made_by(user: Any, documents: list[str], since: Any, until: Any = None
                    ) -> list[tuple[Any, Document, Revision | Withdrawal]]:
    """What `user` did to `documents` from `since` (to `until`), oldest first: each revision
    they published, with what it changed (`attach_changes`), and each withdrawal or
    restoration. The progress page says it first, whenever the link is opened again. At most
    3 queries, and 5 for each document with a revision listed."""
    from reviewqueue.audit.models import AuditEvent
    from reviewqueue.audit.services import Actor

    revisions = (Revision.objects.filter(document__key__in=documents, published_by=user,
                                         published_at__gte=since)
                 .select_related("document").order_by("published_at"))
    events = AuditEvent.objects.filter(
        document_id__in=documents, object_type="document", created_at__gte=since,
        actor=Actor.of_user(user).name, action__in=["document.withdrawn", "document.restored"])
    if until is not None:
        revisions = revisions.filter(published_at__lte=until)
        events = events.filter(created_at__lte=until)
    published = list(revisions[:CHANGES_MADE_SHOWN])
    for document in {r.document_id: r.document for r in published}.values():
        attach_changes(user, document, [r for r in published if r.document_id == document.pk])
    withdrawals = list(events.order_by("seq").values_list("action", "created_at", "document_id")
                       [:CHANGES_MADE_SHOWN])
    named = Document.objects.in_bulk([key for *_, key in withdrawals], field_name="key")
    entries: list[tuple[Any, Document, Revision | Withdrawal]] = [
        *((r.published_at, r.document, r) for r in published),
        *((at, named[key], Withdrawal(action == "document.restored", at, user.get_username()))
          for action, at, key in withdrawals if key in named)]
    return sorted(entries, key=lambda entry: entry[0])


@dataclass(frozen=True)
class FactRow:
    subject: str
    key: str
    value: Any
    valid_from: date
    valid_until: date | None
    span: str


@dataclass(frozen=True)
class CurrentDocument:
    """A document as the gate reads it: its current revision (None before the first one),
    that revision's facts in order, and which of the spans asked about it has passages for."""

    key: str
    withdrawn_at: Any
    revision_id: int | None
    revision: str | None
    allowed_principals: tuple[str, ...]
    facts: tuple[FactRow, ...]
    spans: frozenset[str] = frozenset()


def _tables() -> dict[str, str]:
    return {name: connection.ops.quote_name(model._meta.db_table)
            for name, model in (("document", Document), ("revision", Revision), ("fact", Fact),
                                ("conflict", Conflict), ("passage", Passage))}


# Plain SQL: these two reads run for every answer ingested or re-evaluated, and the ORM spent
# several times longer building them than PostgreSQL spent running them.
_CURRENT_SQL = """
SELECT d.key, d.withdrawn_at, r.id, r.revision, r.allowed_principals, s.spans,
       f.subject, f.key, f.value, f.valid_from, f.valid_until, f.span
FROM {document} d
LEFT JOIN {revision} r ON r.id = d.current_revision_id
LEFT JOIN LATERAL (SELECT array_agg(p.span) AS spans FROM {passage} p
                   WHERE p.revision_id = r.id AND p.span = ANY(%s)) s ON true
LEFT JOIN {fact} f ON f.revision_id = r.id
WHERE d.key = ANY(%s)
ORDER BY d.key, f.position, f.id
"""


def current_documents(keys: Iterable[str], spans: Iterable[str] = ()
                      ) -> dict[str, CurrentDocument]:
    """Documents by key, each with its current revision, that revision's facts, and which of
    `spans` it has passages for (1 query)."""
    keys = sorted(set(keys))
    if not keys:
        return {}
    rows: dict[str, tuple[Any, ...]] = {}
    facts: dict[str, list[FactRow]] = {}
    found: dict[str, frozenset[str]] = {}
    with prepared_cursor() as cursor:
        cursor.execute(_CURRENT_SQL.format(**_tables()), [sorted(set(spans)), keys])
        for (key, withdrawn_at, revision_id, revision, allowed, has, f_subject, f_key, f_value,
             f_from, f_until, f_span) in cursor.fetchall():
            if key not in rows:
                rows[key] = (withdrawn_at, revision_id, revision, tuple(allowed or ()))
                found[key] = frozenset(has or ())
            if f_key is not None:
                facts.setdefault(key, []).append(FactRow(
                    subject=f_subject, key=f_key, value=json.loads(f_value),
                    valid_from=f_from, valid_until=f_until, span=f_span))
    return {key: CurrentDocument(key, *row, facts=tuple(facts.get(key, ())), spans=found[key])
            for key, row in rows.items()}


# The facts of current revisions on some keys (f, r, d), apart from those on a (subject, key)
# whose conflict was dismissed: what the gate reads from the knowledge base. Its parameters are
# the keys and the dismissed status; ingest reads the same rows again once it has committed.
CURRENT_FACTS_FROM = """
FROM {fact} f
JOIN {revision} r ON r.id = f.revision_id
JOIN {document} d ON d.current_revision_id = r.id
WHERE f.key = ANY(%s)
  AND NOT EXISTS (SELECT 1 FROM {conflict} c
                  WHERE c.status = %s AND c.subject = f.subject AND c.key = f.key
                    AND f.id <> ALL(c.exceptions))
"""

_CURRENT_FACTS_SQL = """
SELECT d.key, r.revision, d.allowed_principals,
       f.subject, f.key, f.value, f.valid_from, f.valid_until, f.span""" + CURRENT_FACTS_FROM


def current_facts_on(keys: Iterable[str]) -> list[tuple[str, str, tuple[str, ...], FactRow]]:
    """(document key, revision, document's allowed principals, fact) for every fact on `keys`
    in a current revision anywhere, except on a (subject, key) whose conflict an owner
    dismissed as expected, where only the facts it kept as exceptions count (1 query)."""
    keys = sorted(set(keys))
    if not keys:
        return []
    with prepared_cursor() as cursor:
        cursor.execute(_CURRENT_FACTS_SQL.format(**_tables()),
                       [keys, Conflict.Status.DISMISSED.value])
        return [
            (document, revision, tuple(allowed or ()),
             FactRow(subject=subject, key=key, value=json.loads(value), valid_from=valid_from,
                     valid_until=valid_until, span=span))
            for document, revision, allowed, subject, key, value, valid_from, valid_until, span
            in cursor.fetchall()
        ]


_RECEIVED_SQL = """
SELECT d.key, r.revision, array_agg(p.span) FILTER (WHERE p.span IS NOT NULL)
FROM {revision} r
JOIN {document} d ON d.id = r.document_id
LEFT JOIN {passage} p ON p.revision_id = r.id AND p.span = ANY(%s)
WHERE d.key = ANY(%s) AND r.revision = ANY(%s)
GROUP BY d.key, r.revision
"""


def received_revisions(pairs: Iterable[tuple[str, str]], spans: Iterable[str] = ()
                       ) -> dict[tuple[str, str], frozenset[str]]:
    """The (document key, revision id) pairs the store has received, each with which of
    `spans` it has passages for (1 query)."""
    pairs = set(pairs)
    if not pairs:
        return {}
    with prepared_cursor() as cursor:
        cursor.execute(_RECEIVED_SQL.format(**_tables()),
                       [sorted(set(spans)), sorted({k for k, _ in pairs}),
                        sorted({r for _, r in pairs})])
        return {(key, revision): frozenset(has or ()) for key, revision, has in cursor.fetchall()
                if (key, revision) in pairs}


def revisions_with_passages(revision_ids: Iterable[int]) -> QuerySet[Revision]:
    return (
        Revision.objects.filter(id__in=set(revision_ids))
        .prefetch_related(
            Prefetch("passages", queryset=Passage.objects.order_by("id")),
            Prefetch("facts", queryset=Fact.objects.order_by("position")),
        )
        .select_related("document", "document__owner")
    )


# --- The owner's inbox ----------------------------------------------------------------------


def documents_owned_by(user: Any) -> QuerySet[Document]:
    """`user`'s documents, each with `title`: its newest revision's, which a withdrawn document
    is still known by (its owner may read every revision of it)."""
    last = (Revision.objects.filter(document=OuterRef("pk")).order_by(*Revision.NEWEST_FIRST)
            .values("title")[:1])
    return (Document.objects.filter(owner=user).select_related("current_revision")
            .annotate(title=Subquery(last)))


def may_resolve(user: Any, conflict: Conflict) -> bool:
    """Owners of an involved document and admins may act on a conflict."""
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.roles import has_role

    if has_role(user, Role.ADMIN):
        return True
    keys = set(conflict.documents) | {p["document"] for p in conflict.participants}
    return Document.objects.filter(key__in=keys, owner=user).exists()


def may_manage_document(user: Any, document: Document) -> bool:
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.roles import has_role

    return document.owner_id == user.pk or has_role(user, Role.ADMIN)


def may_see_document(user: Any, document: Document) -> bool:
    """Whether `user` may learn that `document` exists: its id, its revisions' ids, the jobs
    and conflicts naming it. They manage it or one of their principals may read it; what a
    revision says is for `may_read_revision` to tell. A service publishes the documents: it
    knows every id, and follows the jobs its publications start."""
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.principals import may_read, user_principals
    from reviewqueue.accounts.roles import has_role

    return (may_manage_document(user, document) or has_role(user, Role.SERVICE)
            or may_read(document.allowed_principals, user_principals(user)))


def may_read_revision(user: Any, document: Document, revision: Revision) -> bool:
    """Whether `user` may read what `revision` of `document` says: its owner may, anyone else
    only when one of their principals is allowed (invariant 5). Managing every document is no
    reason for an admin to read a restricted one: the Django admin's lists follow the same
    rule."""
    from reviewqueue.accounts.principals import may_read, user_principals

    return document.owner_id == user.pk or may_read(revision.allowed_principals,
                                                     user_principals(user))


def documents_visible_to(user: Any, keys: Iterable[str]) -> list[str]:
    """The keys among `keys` of documents `user` may see, sorted (1 query)."""
    documents = Document.objects.filter(key__in=set(keys)).only(
        "key", "owner_id", "allowed_principals")
    return sorted(d.key for d in documents if may_see_document(user, d))


def titles_read_by(user: Any) -> QuerySet[Revision]:
    """Each document's title as `user` may read it: its current revision's, or a withdrawn
    document's last one's, where they may read that revision (`may_read_revision`: a title
    is what the revision says, not for every admin)."""
    from reviewqueue.accounts.principals import EVERYONE, user_principals

    later = Revision.objects.filter(document=OuterRef("document"), seq__gt=OuterRef("seq"))
    return Revision.objects.filter(
        Q(document__current_revision=F("pk"))
        | (Q(document__current_revision__isnull=True) & ~Exists(later)),
        Q(document__owner=user)
        | Q(allowed_principals__overlap=sorted({*user_principals(user), EVERYONE})),
    )


def document_titles(user: Any, keys: Iterable[str]) -> dict[str, str]:
    """The titles `user` may read of the documents `keys`, by key (1 query, none for no
    keys); a document whose title they may not read is left out."""
    keys = sorted(set(keys))
    if not keys:
        return {}
    return dict(titles_read_by(user).filter(document__key__in=keys)
                .values_list("document__key", "title"))


def document_keys_named(user: Any, text: str, *, limit: int = 20,
                        known: Iterable[QuerySet[Any]] = ()) -> list[str]:
    """The document `text` names: `[text]` when a document has that id; otherwise the ids,
    sorted, of the documents whose title (as `user` may read it) is `text`, case aside, at
    most `limit` + 1 of them; failing both, `[text]` when one of the `known` queries (each
    read up to its first row, in the same statement) has a row: an id known elsewhere, such
    as in the audit log. 1 query."""
    stored_row = Value(False, output_field=BooleanField())
    # Each branch is read through its own index: the id through the documents' unique key,
    # the title through UPPER(title) (revision_title_upper; `iexact` compares UPPER on
    # PostgreSQL). Written as one WHERE "key = text OR id IN (titled)", the OR made PostgreSQL
    # read every document. A title is read from one revision per document (the current one,
    # or a withdrawn document's last), so a document appears once among the titled.
    by_key = Document.objects.filter(key=text).values_list("key", stored_row)
    titled = (titles_read_by(user).filter(title__iexact=text)
              .order_by("document__key").values_list("document__key", stored_row)[:limit + 1])
    elsewhere = [q.values_list(Value(text), Value(True, output_field=BooleanField()))[:1]
                 for q in known]
    rows = list(by_key.union(titled, *elsewhere, all=True))
    stored = sorted({key for key, elsewhere in rows if not elsewhere})
    if text in stored:
        return [text]
    return stored or ([text] if any(elsewhere for _key, elsewhere in rows) else [])


def reasons_shown(conflicts: Iterable[Conflict], user: Any) -> set[int]:
    """The ids of the dismissed conflicts among `conflicts` whose reason `user` may read: it
    is free text about what the documents in conflict say, so only for who may read the
    revision of every side (`may_read_revision`: managing a document, as an admin does every
    one, is not enough), every side it judged too: one withdrawn since may have been the one
    the reason speaks of. At most 1 query."""
    dismissed = [c for c in conflicts
                 if c.status == Conflict.Status.DISMISSED and c.participants]
    judged = {c.pk: {(p["document"], p["revision"]) for p in c.participants}
              | {(d, r) for d, r in c.dismissed_revisions} for c in dismissed}
    sides = set().union(*judged.values())
    if not sides:
        return set()
    revisions = Revision.objects.filter(
        document__key__in={d for d, _ in sides}, revision__in={r for _, r in sides},
    ).select_related("document").only(
        "revision", "allowed_principals", "document__key", "document__owner_id")
    readable = {(r.document.key, r.revision) for r in revisions
                if (r.document.key, r.revision) in sides
                and may_read_revision(user, r.document, r)}
    return {c.pk for c in dismissed if judged[c.pk] <= readable}


def conflicts_for_owner(user: Any, *, include_closed: bool = False) -> QuerySet[Conflict]:
    """Conflicts involving a document `user` owns (all of them for an admin)."""
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.roles import has_role

    conflicts = Conflict.objects.all()
    if not has_role(user, Role.ADMIN):
        owned = list(Document.objects.filter(owner=user).values_list("key", flat=True))
        conflicts = conflicts.filter(documents__overlap=owned)
    if not include_closed:
        conflicts = conflicts.exclude(status=Conflict.Status.CLOSED)
    return conflicts.select_related("dismissed_by").order_by("-opened_at", "-id")


def conflicts_closed_recently(user: Any, *, days: int = 30, limit: int = 20) -> list[Conflict]:
    """The conflicts of `conflicts_for_owner` that closed in the last `days`, newest first:
    a closed conflict leaves the inbox, and its owner may want to see why."""
    since = timezone.now() - timedelta(days=days)
    return list(conflicts_for_owner(user, include_closed=True)
                .filter(status=Conflict.Status.CLOSED, closed_at__gte=since)
                .order_by("-closed_at", "-id")[:limit])


@dataclass(frozen=True)
class ConflictChangeSeen:
    """What a person's changes did to one conflict, by its status before and after them:
    `verb` is opened, again (closed before), changed (open before and after), reopened
    (dismissed before), dismissed (back among the revisions it was dismissed for) or
    closed; or "left" for a conflict the change took the changed document out of, which goes
    on without it (its page may no longer be the person's to open, so it is not linked, and
    its documents are not named)."""

    conflict: Conflict
    verb: str
    after: str  # the status the change left it in
    linked: bool = True  # its page is the person's to open (now)
    # "left" only: another document of the person's is still in it after the change.
    yours_remain: bool = False
    # "closed" only: it closed when the document that changed it last was withdrawn.
    by_withdrawal: bool = False

    @property
    def now(self) -> str:
        """Its status now in words, when a later step (a dismissal, say) has moved it on."""
        if not self.linked or self.conflict.status == self.after:
            return ""
        return str(self.conflict.get_status_display())

    @property
    def words(self) -> tuple[str, str, str]:
        """(badge, its CSS tone, sentence) in the active language."""
        badge, tone, sentence = _CHANGE_WORDS[self.verb]
        still_dismissed = self.verb == "left" and self.after == Conflict.Status.DISMISSED
        if self.yours_remain and still_dismissed:
            sentence = _("The changed document no longer takes part; the conflict stays "
                         "dismissed between the others, documents of yours among them.")
        elif still_dismissed:
            sentence = _("Your documents no longer take part; the conflict stays dismissed "
                         "between the others.")
        elif self.yours_remain:
            sentence = _("The changed document no longer takes part; the conflict goes on, "
                         "with other documents of yours still in it.")
        elif self.by_withdrawal:
            sentence = (_("It closed with the document's withdrawal.")
                        if self.conflict.within_one_document
                        else _("It closed with the withdrawal: the documents left in it do "
                               "not disagree."))
        elif self.conflict.within_one_document:
            sentence = _WITHIN_ONE_DOCUMENT.get(self.verb, sentence)
        return badge, tone, sentence


_CHANGE_WORDS = {
    "opened": (pgettext_lazy("conflict", "Opened"), "tone-review",
               _("The documents now disagree.")),
    "again": (pgettext_lazy("conflict", "Opened again"), "tone-review",
              _("It had closed; the documents disagree again.")),
    "changed": (pgettext_lazy("conflict", "Changed"), "subtle",
                _("Still open: the documents or revisions in it changed.")),
    "reopened": (pgettext_lazy("conflict", "Reopened"), "tone-review",
                 _("It had been dismissed, but the documents in it changed, so it is open "
                   "again.")),
    "dismissed": (pgettext_lazy("conflict", "Dismissed"), "subtle",
                  _("Its revisions are again among those it was dismissed for, so it is "
                    "dismissed as before.")),
    "closed": (pgettext_lazy("conflict", "Closed"), "tone-ok",
               _("The documents no longer disagree over any period they share.")),
    "left": (pgettext_lazy("conflict", "Left"), "tone-ok",
             _("Your documents no longer take part; other documents still disagree.")),
}

# The sentences of a conflict within one document, whose revision states different values.
_WITHIN_ONE_DOCUMENT = {
    "opened": _("The document now states different values."),
    "again": _("It had closed; the document states different values again."),
    "changed": _("Still open: the document still states different values."),
    "reopened": _("It had been dismissed, but the document changed, so it is open again."),
    "closed": _("The document no longer states different values for any period."),
}


def _seen_verb(before: str | None, after: str | None) -> str:
    if after in (Conflict.Status.CLOSED, Conflict.Status.DISMISSED):
        return str(after)
    return {Conflict.Status.OPEN: "changed", Conflict.Status.DISMISSED: "reopened",
            Conflict.Status.CLOSED: "again"}.get(before, "opened")


@dataclass(frozen=True)
class ConflictDecision:
    """A person's dismissal or reopening of a conflict, and the conflict as it is now."""

    conflict: Conflict
    action: str  # "dismissed" or "reopened"
    at: Any


def conflict_decision_by(user: Any, conflict_id: int, since: Any, until: Any = None
                         ) -> ConflictDecision | None:
    """`user`'s last dismissal or reopening of the conflict from `since` (to `until`), as the
    audit log recorded it: a page opened again later, or a link made by hand, tells what the
    person did, never what they did not. None for a conflict they may not resolve (2 queries
    at most, the log's read on its object index)."""
    from reviewqueue.audit.models import AuditEvent
    from reviewqueue.audit.services import Actor

    conflict = Conflict.objects.filter(pk=conflict_id).first()
    if conflict is None or not may_resolve(user, conflict):
        return None
    events = AuditEvent.objects.filter(
        object_type="conflict", object_id=str(conflict_id), created_at__gte=since,
        actor=Actor.of_user(user).name, action__in=["conflict.dismissed", "conflict.reopened"])
    if until is not None:
        events = events.filter(created_at__lte=until)
    last = events.order_by("-seq").values_list("action", "created_at").first()
    if last is None:
        return None
    return ConflictDecision(conflict, last[0].removeprefix("conflict."), last[1])


CONFLICT_CHANGES_READ = 200


def conflict_changes_by(user: Any, documents: list[str], since: Any, until: Any = None
                        ) -> tuple[list[ConflictChangeSeen], bool]:
    """The conflicts that `user`'s own publishes and withdrawals of `documents` opened,
    changed or closed from `since` (to `until`), in the order they were first touched, each
    from its status before the first change to its status after the last; and whether older
    changes were left out (only the newest CONFLICT_CHANGES_READ events are read). 5 queries
    however many, and one more when a document left a conflict."""
    from reviewqueue.audit.models import AuditEvent
    from reviewqueue.audit.services import Actor

    events = (AuditEvent.objects
              .filter(document_id__in=documents, created_at__gte=since,
                      object_type="conflict", actor=Actor.of_user(user).name,
                      action__in=["conflict.opened", "conflict.changed",
                                  "conflict.reopened", "conflict.closed"]))
    if until is not None:
        events = events.filter(created_at__lte=until)
    events = list(events.order_by("-seq")
                  .values_list("object_id", "document_id", "before__status", "after__status",
                               "after__revisions", "after__by")[:CONFLICT_CHANGES_READ + 1])
    cut = len(events) > CONFLICT_CHANGES_READ
    # Per conflict, its status before the first change read and after the last one,
    # whether the last one left the changed document out of it, which documents the
    # conflict then held, and what the last change was (a revision, a withdrawal...).
    last: dict[int, tuple[str | None, str | None, bool, set[str], str]] = {}
    for conflict_id, cause, before, after, revisions, by in reversed(
            events[:CONFLICT_CHANGES_READ]):
        remaining = {d for d, _ in revisions or []}
        left = after != Conflict.Status.CLOSED and cause not in remaining
        last[int(conflict_id)] = (last.get(int(conflict_id), (before,))[0], after, left,
                                  remaining if left else set(), by or "")
    conflicts = Conflict.objects.in_bulk(list(last))
    theirs = set(conflicts_for_owner(user, include_closed=True).filter(pk__in=list(last))
                 .values_list("pk", flat=True))
    # A conflict the changed document left may still hold another of the person's documents:
    # then it is still theirs, and the page says so (and links it).
    remaining_anywhere: set[str] = set().union(*(r for *_, r, _by in last.values()))
    owned = set(Document.objects.filter(owner=user, key__in=remaining_anywhere)
                .values_list("key", flat=True)) if remaining_anywhere else set()
    seen = []
    for pk, (before, after, left, remaining, by) in last.items():
        if pk not in conflicts:
            continue
        yours_remain = bool(remaining & owned)
        seen.append(ConflictChangeSeen(
            conflicts[pk], "left" if left else _seen_verb(before, after), after or "",
            linked=pk in theirs and (not left or yours_remain), yours_remain=yours_remain,
            by_withdrawal=after == Conflict.Status.CLOSED and by == "withdrawal"))
    return seen, cut


@dataclass(frozen=True)
class ConflictSide:
    """One fact of a conflict, with what an owner needs to judge it. A side from a revision
    the viewer may not read (`may_read_revision`) is `restricted`: the page says that such a
    document disagrees, never what it says or which it is, and carries none of it."""

    document: Document | None
    revision: Revision | None
    fact: Fact | None
    passage: str
    # Another side is a fact of the same revision, which states both values: the page says
    # where in it each one is (`fact.position`, `fact.span`). Never set on a restricted side.
    shares_revision: bool = False

    @property
    def restricted(self) -> bool:
        return self.document is None


def conflict_sides(conflicts: list[Conflict], user: Any) -> dict[int, list[ConflictSide]]:
    """The sides of each conflict, by conflict id, as `user` may see them. Two queries
    whatever the number of conflicts."""
    fact_ids = {p["fact"] for c in conflicts for p in c.participants}
    if not fact_ids:
        return {c.pk: [] for c in conflicts}
    facts = {f.pk: f for f in Fact.objects.filter(id__in=fact_ids).select_related(
        "revision", "revision__document", "revision__document__owner")}
    # By the side's own revision: a closed conflict shows revisions since superseded, which
    # may have been more restricted than the document is now.
    shown = {pk for pk, f in facts.items()
             if may_read_revision(user, f.revision.document, f.revision)}
    passages = {
        (p.revision_id, p.span): p.text
        for p in Passage.objects.filter(
            revision_id__in={facts[pk].revision_id for pk in shown})
    }
    out: dict[int, list[ConflictSide]] = {}
    for conflict in conflicts:
        mine = sorted((facts[p["fact"]] for p in conflict.participants if p["fact"] in facts),
                      key=lambda f: (f.pk not in shown, f.revision.document.key, f.position))
        per_revision = Counter(f.revision_id for f in mine)
        out[conflict.pk] = [
            ConflictSide(document=f.revision.document, revision=f.revision, fact=f,
                         passage=passages.get((f.revision_id, f.span), ""),
                         shares_revision=per_revision[f.revision_id] > 1)
            if f.pk in shown else ConflictSide(document=None, revision=None, fact=None, passage="")
            for f in mine
        ]
    return out


@dataclass(frozen=True)
class ConflictReopening:
    """How an open conflict that had been dismissed was reopened: by `who`, a person, by hand;
    or by a change of `document` (None when the viewer may not see it, or by hand), which
    `change` names: a revision, a withdrawal or a restoration."""

    at: Any
    who: str = ""
    document: Document | None = None
    change: str = "revision"


def conflict_reopening(conflict: Conflict, user: Any) -> ConflictReopening | None:
    """How `conflict` was reopened, when the last event that changed its status reopened a
    dismissal, or a close that came while it was dismissed; None otherwise (1 query, 2 when a
    document's change reopened it). The owner who dismissed it reads here that their
    dismissal no longer holds, and why."""
    from reviewqueue.audit.models import AuditEvent

    if conflict.status != Conflict.Status.OPEN:
        return None
    events = list(AuditEvent.objects.filter(
        object_type="conflict", object_id=str(conflict.pk),
        action__in=["conflict.opened", "conflict.reopened", "conflict.dismissed",
                    "conflict.closed"])
        .order_by("-seq").values("before", "after", "document_id", "actor", "created_at")[:2])
    event = events[0] if events else None

    def was(e: dict[str, Any]) -> str | None:
        return (e["before"] or {}).get("status")

    # Reopened from dismissed, or from a close that came while it was dismissed (a withdrawal
    # took the values apart; the revision that brought them back is not one judged).
    if event is None or not (was(event) == Conflict.Status.DISMISSED or (
            was(event) == Conflict.Status.CLOSED and len(events) == 2
            and was(events[1]) == Conflict.Status.DISMISSED)):
        return None
    cause = event["document_id"]
    if not cause:  # reopened by hand
        return ConflictReopening(at=event["created_at"], who=actor_username(event["actor"]))
    return ConflictReopening(
        at=event["created_at"], change=(event["after"] or {}).get("by") or "revision",
        document=_seen_cause(cause, user))


def _seen_cause(key: str | None, user: Any) -> Document | None:
    """The document whose change a conflict event names, if `user` may see it (1 query)."""
    document = Document.objects.filter(key=key).first() if key else None
    return document if document is not None and may_see_document(user, document) else None


@dataclass(frozen=True)
class ConflictClosing:
    """When a closed conflict closed, and why: the periods in which its documents disagreed
    ended (`by_date`), or a document changed: `document`, None when the viewer may not see
    it, `withdrawn` when that change was its withdrawal (said of a hidden one too)."""

    at: Any
    by_date: bool = False
    document: Document | None = None
    withdrawn: bool = False


def conflict_closing(conflict: Conflict, user: Any) -> ConflictClosing | None:
    """How `conflict` closed, from its last `conflict.closed` event; None unless it is closed
    (2 queries)."""
    from reviewqueue.audit.models import AuditEvent

    if conflict.status != Conflict.Status.CLOSED:
        return None
    event = (AuditEvent.objects.filter(object_type="conflict", object_id=str(conflict.pk),
                                       action="conflict.closed")
             .order_by("-seq").values("document_id", "after").first()) or {}
    by = (event.get("after") or {}).get("by")
    if by == "validity":
        return ConflictClosing(at=conflict.closed_at, by_date=True)
    document = _seen_cause(event.get("document_id"), user)
    if document is None:
        # Which document, never; that it was withdrawn, when the event says so.
        return ConflictClosing(at=conflict.closed_at, withdrawn=by == "withdrawal")
    if by is None:  # an event from before they said what changed: the document's state tells
        withdrawn = document.withdrawn_at is not None and (
            conflict.closed_at is None or document.withdrawn_at <= conflict.closed_at)
    else:
        withdrawn = by == "withdrawal"
    return ConflictClosing(at=conflict.closed_at, document=document, withdrawn=withdrawn)


# `held`: the answers held for conflicting sources over one of the conflicts' documents, once
# each, with the documents they cite, those their hold rests on through the knowledge base and
# the claims of their current version. An answer is held over a document when it cites it, or
# when its verdict's conflicting_sources finding names it in `kb_documents`: the gate compared
# its claim with the document's fact, disagreeing, though the answer never retrieved it. The
# queue item keeps those (ReviewItem.kb_documents, written with its reasons), and a dismissal
# releases these answers as it releases the others, so they are counted with them. The answers
# citing one of the documents can be read from either end, and each end is cheap only when it
# is the small one:
#
#   the queue: the items held for conflicting sources, in the partial index of them, each with
#     the documents its answer cites (one lookup in the citations' (answer_id, document_key)
#     index). A document cited by 200,000 answers, five of them held for a conflict, costs five.
#   the citations: the citations of the documents, in the (document_key, answer_id) index,
#     each checked against the queue. A backlog of 200,000 answers held for other conflicts
#     costs nothing to an owner whose documents ten answers cite.
#
# `probe` counts the citations up to HELD_PROBE, `side` the items up to one more than that,
# and the queue is read when it is no bigger. The probe reads at most twice HELD_PROBE index
# entries, and a few when the citations are few: a small part of what reading the wrong end
# row by row would cost. It reads in index order: with no order, when the documents are cited
# by one row in ten, the planner may price a sequential scan that stops at the limit below
# the index, and that reads half the table. Past HELD_PROBE on both ends the citations are
# read, as they always were. The other end's branch of the UNION never runs: its one-time
# filter is checked before its first row.
#
# The queue end finds the answers held through the knowledge base as it goes: their item's
# `kb_documents` is on the row it reads anyway. The citations cannot find them, as they cite
# none of the documents: when the citations are read, a third branch reads them from the
# partial GIN index of the items' `kb_documents` (review_item_kb_documents), which holds an
# entry only for an item held this way, so that probing it for the documents reads the answers
# actually held over them through the knowledge base (some of which cite another of them) and
# nothing else: bounded, like the citations' end, by what is counted. A GIN index is read as a
# bitmap, all of it before the first row, never in order nor stopped early: that is why it holds
# only these items. It keeps to the answers citing none of the documents, as the citations'
# branch gave the others, so that none is counted twice. Its condition
# `kb_documents <> '{}'` repeats the index's, of the column's own type, for the same reason as
# the reasons' below.
#
# Everything per row is a scalar subquery, which runs row by row through unique indexes:
# written as joins, the planner may hash every answer version, or every citation, instead. The
# queue end's subquery is fenced by OFFSET 0 so that its documents are read once, for the
# filter and the result alike. PostgreSQL computes a WITH query only as far as its readers go,
# so when every conflict reaches the cap early the rest is never read; and however many
# conflicts share a popular document, its citations are read once. The item's reasons are
# compared with an array of the column's own type, varchar(64)[]: the partial index's condition
# is written so, and with any other type the planner cannot prove the condition holds and
# leaves the index unused. Only answers the reader may read in full are counted (as in
# readable_answers): every document they cite is stored and allows one of the principals; the
# check runs only on the held answers that match a conflict, up to its cap.
_HELD_SQL = """
WITH probe AS MATERIALIZED (
  SELECT count(*) AS citations FROM (
    SELECT FROM {retrieved} r WHERE r.document_key = ANY(%(documents)s)
    ORDER BY r.document_key LIMIT %(probe)s) AS capped
), side AS MATERIALIZED (
  SELECT count(*) <= (SELECT citations FROM probe) AS from_queue FROM (
    SELECT FROM {item} i WHERE i.reasons @> ARRAY['conflicting_sources']::{reasons}
    LIMIT (SELECT citations FROM probe) + 1) AS capped
), held AS MATERIALIZED (
  SELECT q.documents, q.kb_documents,
         (SELECT v.claims FROM {answer} a JOIN {version} v ON v.id = a.current_version_id
          WHERE a.id = q.answer_id) AS claims
  FROM (SELECT i.answer_id, i.kb_documents,
               ARRAY(SELECT e.document_key FROM {retrieved} e
                     WHERE e.answer_id = i.answer_id) AS documents
        FROM {item} i
        WHERE i.reasons @> ARRAY['conflicting_sources']::{reasons}
        OFFSET 0) AS q
  WHERE (SELECT from_queue FROM side)
    AND (q.documents && %(documents)s::varchar[] OR q.kb_documents && %(documents)s::varchar[])
  UNION ALL
  SELECT ARRAY(SELECT e.document_key FROM {retrieved} e
               WHERE e.answer_id = r.answer_id),
         r.kb_documents,
         (SELECT v.claims FROM {answer} a JOIN {version} v ON v.id = a.current_version_id
          WHERE a.id = r.answer_id)
  -- The item's `kb_documents` where it is held for conflicting sources, else NULL (the column
  -- is never NULL): one lookup tells whether the answer counts and gives what it rests on.
  FROM (SELECT r.id, r.answer_id,
               (SELECT i.kb_documents FROM {item} i
                WHERE i.answer_id = r.answer_id
                  AND i.reasons @> ARRAY['conflicting_sources']::{reasons}) AS kb_documents
        FROM {retrieved} r
        WHERE NOT (SELECT from_queue FROM side)
          AND r.document_key = ANY(%(documents)s)
        OFFSET 0) AS r
  WHERE r.kb_documents IS NOT NULL
    -- Once per answer: at its first citation of one of the documents.
    AND r.id = (SELECT min(e.id) FROM {retrieved} e
                WHERE e.answer_id = r.answer_id AND e.document_key = ANY(%(documents)s))
  UNION ALL
  SELECT k.documents, k.kb_documents,
         (SELECT v.claims FROM {answer} a JOIN {version} v ON v.id = a.current_version_id
          WHERE a.id = k.answer_id)
  FROM (SELECT i.answer_id, i.kb_documents,
               ARRAY(SELECT e.document_key FROM {retrieved} e
                     WHERE e.answer_id = i.answer_id) AS documents
        FROM {item} i
        WHERE NOT (SELECT from_queue FROM side)
          AND i.kb_documents <> '{{}}'::{kb_documents}
          AND i.kb_documents && %(documents)s::varchar[]
          AND i.reasons @> ARRAY['conflicting_sources']::{reasons}
        OFFSET 0) AS k
  -- Those citing one of the documents came from the citations.
  WHERE NOT k.documents && %(documents)s::varchar[]
)
SELECT c.id, (
  SELECT count(*) FROM (
    SELECT 1 FROM held h WHERE {asks} AND {readable} LIMIT %(limit)s) AS capped)
FROM {conflict} c
WHERE c.id = ANY(%(ids)s)
"""
# The answers any of the conflicts holds, each counted once (one answer may be held by two).
_HELD_BY_ANY_SQL = _HELD_SQL[:_HELD_SQL.index("SELECT c.id")] + """
SELECT 0, count(*) FROM (
  SELECT 1 FROM held h
  WHERE EXISTS (SELECT FROM {conflict} c WHERE c.id = ANY(%(ids)s) AND {asks}) AND {readable}
  LIMIT %(limit)s) AS capped
"""
# A held answer the conflict `c` holds: one held over one of its documents (citing it, or
# through the knowledge base) and with a claim asking about it as the gate pairs them
# (gating.claim_asks_about): the same key, and the same subject unless the claim names none.
# An answer held through the knowledge base over documents that disagree on two keys is held by
# the conflict of a key it claims, not by the other's.
_HELD_ASKS = """(h.documents && c.documents OR h.kb_documents && c.documents)
      AND EXISTS (SELECT FROM jsonb_array_elements(h.claims) AS claim
                  WHERE claim ->> 'key' = c.key
                    AND coalesce(claim ->> 'subject', '') IN ('', c.subject))"""
# One the reader may read in full.
_HELD_READABLE = """NOT EXISTS (SELECT FROM unnest(h.documents) AS cited(key)
                      LEFT JOIN {document} d ON d.key = cited.key
                      WHERE d.id IS NULL
                         OR NOT d.allowed_principals && %(principals)s::{principals_type})"""

# How far the probe counts each end before it gives up telling which is smaller: 10,000 index
# entries take about a millisecond; reading that many rows from the wrong end, about ten.
HELD_PROBE = 10_000


def held_answers_of(conflict: Conflict, user: Any, *, limit: int = 20) -> list[Any]:
    """The first `limit` held answers, oldest in the queue first, that `conflict` is holding
    and `user` may read in full: those held_answer_counts counts. One query."""
    from reviewqueue.accounts.principals import user_principals
    from reviewqueue.reviews.models import RetrievedItem
    from reviewqueue.reviews.selectors.queue import visible_items

    # A probe, not a join: joined, every citation of the documents was read, deduplicated and
    # sorted before the first 20; probed, the queue is walked oldest first until 20 match. An
    # item held over the documents through the knowledge base names them in its own row
    # (`kb_documents`), read before the probe: the citations are probed only for the others.
    # Beside that OR the probe is a scalar subquery, one citation at most, not EXISTS: an
    # EXISTS under an OR may be planned as a hash of every citation of the documents, built
    # before the first item is read (20,000 of them for a popular document).
    cites = RetrievedItem.objects.filter(answer_id=OuterRef("answer_id"),
                                         document_key__in=conflict.documents)
    items = (
        visible_items(user_principals(user))
        .alias(cited=Subquery(cites.values("pk")[:1]))
        .filter(Q(kb_documents__overlap=list(conflict.documents)) | Q(cited__isnull=False),
                reasons__contains=["conflicting_sources"],
                answer__current_version__claim_keys__contains=[conflict.key])
        .alias(asks=Func(F("answer__current_version__claims"), RawSQL("%s::jsonpath", [_ASKS]),
                         Value(json.dumps({"key": conflict.key,
                                           "subject": conflict.subject or ""})),
                         function="jsonb_path_exists", output_field=BooleanField()))
        .filter(asks=True)
        .select_related("answer")
        .order_by("entered_at", "id")
    )
    return [item.answer for item in items[:limit]]


# A claim asks about the conflict as the gate pairs them (gating.claim_asks_about): the same
# key, and the same subject unless the claim names none. Checked in SQL, so that answers
# claiming the key for other subjects never crowd out those it holds.
_ASKS = ("$[*] ? (@.key == $key && (!(exists(@.subject)) || @.subject == null"
         " || @.subject == \"\" || @.subject == $subject))")


def held_answer_counts(conflicts: list[Conflict], user: Any) -> dict[int, AtLeast]:
    """How many held answers each conflict is holding that `user` may read in full: answers
    in the queue for conflicting sources that cite one of its documents, or whose verdict
    names one as a knowledge-base source disagreeing with their claim, and claim its key
    (about its subject, or about no subject in particular).
    Each is counted up to COUNT_CAP (more read as "1000+"), in one statement whatever the
    number of conflicts."""
    found = _held_counts(_HELD_SQL, conflicts, user)
    return {c.pk: AtLeast.of(found.get(c.pk, 0)) for c in conflicts}


def held_answer_count_of_any(conflicts: list[Conflict], user: Any) -> AtLeast:
    """How many held answers any of `conflicts` is holding that `user` may read in full, each
    counted once however many of them hold it; up to COUNT_CAP."""
    return AtLeast.of(_held_counts(_HELD_BY_ANY_SQL, conflicts, user).get(0, 0))


def _held_counts(statement: str, conflicts: list[Conflict], user: Any) -> dict[int, int]:
    from reviewqueue.accounts.principals import EVERYONE, user_principals
    from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, ReviewItem

    documents = sorted({k for c in conflicts for k in c.documents})
    if not documents:
        return {}
    tables = {name: connection.ops.quote_name(model._meta.db_table)
              for name, model in (("retrieved", RetrievedItem), ("item", ReviewItem),
                                  ("answer", Answer), ("version", AnswerVersion),
                                  ("conflict", Conflict), ("document", Document))}
    names = {"reasons": ReviewItem._meta.get_field("reasons").db_type(connection),
             "kb_documents": ReviewItem._meta.get_field("kb_documents").db_type(connection),
             "principals_type": Document._meta.get_field("allowed_principals").db_type(
                 connection), **tables}
    params: dict[str, Any] = {"documents": documents, "limit": COUNT_CAP + 1,
                              "ids": [c.pk for c in conflicts], "probe": HELD_PROBE,
                              "principals": sorted({*user_principals(user), EVERYONE})}
    sql = statement.format(asks=_HELD_ASKS, readable=_HELD_READABLE.format(**names), **names)
    # The planner prices both ends as if every row were read, not knowing that the probe
    # leaves one of them unread and that the cap often stops the other early, and past
    # jit_above_cost it JIT-compiles the statement: some 200 ms spent on one that usually
    # takes a few.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(sql, params)
        return dict(cursor.fetchall())


@dataclass(frozen=True)
class ExpiringFact:
    document: Document
    fact: Fact
    days_left: int  # negative: the fact ended that many days ago
    answers: list[dict[str, Any]]
    answer_count: int
    unreadable: int
    more: bool

    @property
    def ended(self) -> bool:
        return self.days_left < 0

    @property
    def days_ago(self) -> int:
        return -self.days_left

    @property
    def not_listed(self) -> int:
        return self.answer_count - len(self.answers)


@dataclass(frozen=True)
class ExpiringFacts:
    facts: list[ExpiringFact]
    # More facts than `limit`: those that ended longest ago are not listed.
    cut: bool


def expiring_facts(
    user: Any,
    *,
    today: date,
    within_days: int = 30,
    answers_per_fact: int = 5,
    scan_limit: int = 5000,
    limit: int = 200,
) -> ExpiringFacts:
    """Facts of the user's current revisions that end within `within_days`, or have ended
    with nothing after them: no fact of the revision about the same subject and key is valid
    for longer from the day after they end. A fact that ended more than `within_days` ago is
    listed only while an answer resting on it is held: the owner ended it on purpose, or has
    let it be, and nothing waits on it. The ones that have ended come first. Each comes with
    the answers resting on it: a claim citing the document asks about the fact. Past `limit`
    facts, those closest to today are listed (the soon to end, the lately ended), and the
    list says it stops short; `expiring_facts_page` reaches the others, those that ended
    longest ago first.

    Only answers `user` may read in full are listed; the others are counted in `unreadable`,
    with nothing about them shown. Four queries whatever the number of facts; the answers are
    scanned newest first up to `scan_limit`, beyond which counts are shown as a lower bound.
    """
    facts = list(
        _ending_facts(user, today=today, within_days=within_days)
        # Days between the fact's end and today, whichever side of today it falls.
        .alias(distance=Func(F("valid_until"), Value(today), arg_joiner=" - ",
                             template="abs(%(expressions)s)", output_field=IntegerField()))
        .order_by("distance", "id")[:limit + 1]
    )
    cut = len(facts) > limit
    facts = sorted(facts[:limit], key=lambda f: (f.valid_until, f.pk))
    return ExpiringFacts(
        facts=_with_answers(facts, user, today=today, within_days=within_days,
                            answers_per_fact=answers_per_fact, scan_limit=scan_limit),
        cut=cut)


@dataclass(frozen=True)
class ExpiringPage:
    facts: list[ExpiringFact]
    # Where the next page starts, (valid_until, id) of this page's last fact read; None at the
    # last page.
    after: tuple[date, int] | None


def expiring_facts_page(
    user: Any,
    *,
    today: date,
    size: int,
    after: tuple[date, int] | None = None,
    within_days: int = 30,
    answers_per_fact: int = 5,
    scan_limit: int = 5000,
) -> ExpiringPage:
    """One page of the facts `expiring_facts` lists, every one of them and not only the
    `limit` closest to today: those that ended longest ago first, by a keyset on
    (valid_until, id) after `after` (no OFFSET, no COUNT). The inbox cuts from that end, and
    a fact that ended long ago is still listed only while an answer held waits on it: those
    the owner must act on lead the list. Each comes as the inbox draws it; as many queries
    as `expiring_facts` whatever the number of facts.

    A page may list fewer than `size` facts, none even, with more after it: a fact that
    ended long ago whose document a held answer retrieved is read, but shown only once its
    answers say one rests on it (what the inbox does)."""
    facts = _ending_facts(user, today=today, within_days=within_days)
    if after is not None:
        # valid_until >= on its own too, besides the OR: the scan then starts where the last
        # page ended (the OR alone is a filter over every fact before it).
        facts = facts.filter(Q(valid_until__gt=after[0]) | Q(valid_until=after[0],
                                                               pk__gt=after[1]),
                             valid_until__gte=after[0])
    page = list(facts.order_by("valid_until", "id")[:size + 1])
    last = page[size - 1] if len(page) > size else None
    return ExpiringPage(
        facts=_with_answers(page[:size], user, today=today, within_days=within_days,
                            answers_per_fact=answers_per_fact, scan_limit=scan_limit),
        after=(last.valid_until, last.pk) if last is not None else None,  # type: ignore[misc]
    )


def _ending_facts(user: Any, *, today: date, within_days: int) -> QuerySet[Fact]:
    """The facts of `user`'s current revisions that end within `within_days` or have ended,
    with nothing after them, unordered. One that ended more than `within_days` ago is left
    out unless a held answer retrieved its document: no answer it could hold waits on it, and
    it would only take the place of one that does (the answers then say which one rests on
    it). The probe runs through the index on the retrieved document.

    Nothing after them: no fact on the same key holds on the day after they end. One that
    starts only later leaves days on which nothing holds, and the answers resting on the
    fact are held over them."""
    from reviewqueue.reviews.models import Answer, RetrievedItem

    later = Fact.objects.filter(
        revision=OuterRef("revision"), subject=OuterRef("subject"), key=OuterRef("key"),
        valid_from__lte=ExpressionWrapper(OuterRef("valid_until") + timedelta(days=1),
                                          output_field=DateField()),
    ).filter(Q(valid_until__isnull=True) | Q(valid_until__gt=OuterRef("valid_until")))
    held = RetrievedItem.objects.filter(document_key=OuterRef("revision__document__key"),
                                        answer__status=Answer.Status.HELD)
    return (
        Fact.objects.filter(
            revision__document__owner=user,
            revision__document__current_revision=F("revision"),
            valid_until__lte=today + timedelta(days=within_days),
        )
        .filter(Q(valid_until__gte=today - timedelta(days=within_days)) | Exists(held))
        .exclude(Exists(later))
        .select_related("revision", "revision__document")
    )


def _with_answers(facts: list[Fact], user: Any, *, today: date, within_days: int,
                  answers_per_fact: int, scan_limit: int) -> list[ExpiringFact]:
    """`facts`, in their order, each with the answers resting on it; those that ended more
    than `within_days` ago with no answer held on them left out. Three queries."""
    from reviewqueue.reviews.models import Answer, RetrievedItem

    if not facts:
        return []
    rows = list(
        RetrievedItem.objects.filter(document_key__in={f.revision.document.key for f in facts})
        .exclude(answer__status=Answer.Status.REJECTED)
        .order_by("-answer_id")
        .values_list(
            "document_key",
            "cite",
            "answer_id",
            "answer__trace_id",
            "answer__question",
            "answer__status",
            "answer__current_version__claims",
        )[:scan_limit + 1]
    )
    truncated = len(rows) > scan_limit
    rows = rows[:scan_limit]
    resting_on = _resting_on(facts, rows)
    readable = readable_answers({row[2] for rs in resting_on.values() for row in rs}, user)
    out = []
    for fact in facts:
        if (fact.valid_until < today - timedelta(days=within_days)  # type: ignore[operator]
                and all(row[5] != Answer.Status.HELD for row in resting_on[fact.pk])):
            continue
        resting = [
            {"trace_id": trace_id, "question": question, "status": status,
             "status_label": Answer.Status(status).label}
            for _, _, answer_id, trace_id, question, status, _ in resting_on[fact.pk]
            if answer_id in readable
        ]
        out.append(
            ExpiringFact(
                document=fact.revision.document,
                fact=fact,
                days_left=(fact.valid_until - today).days,  # type: ignore[operator]
                answers=resting[:answers_per_fact],
                answer_count=len(resting),
                unreadable=len(resting_on[fact.pk]) - len(resting),
                more=truncated,
            )
        )
    return out


def _resting_on(facts: list[Fact], rows: list[tuple[Any, ...]]) -> dict[int, list[tuple[Any, ...]]]:
    """For each fact, by id, the rows (document key, cite, answer id, ..., claims) of the
    answers resting on it, in the order of `rows` and each answer once, at its first row: an
    answer that retrieved the document twice rests on it once.

    The claims are grouped once by what they ask about, (document, key, subject), and each
    fact looks up its own: the time grows with the rows and the facts, not with their product.
    A claim naming no subject asks about every subject (gating.claim_asks_about)."""
    asking: dict[tuple[str, str, str], list[int]] = {}
    for index, row in enumerate(rows):
        document, cite, claims = row[0], row[1], row[6]
        for claim in claims or []:
            key, subject = claim.get("key"), claim.get("subject") or ""
            if claim.get("cite") != cite or not isinstance(key, str) \
                    or not isinstance(subject, str):
                continue  # a key or subject that is no string asks about no fact
            found = asking.setdefault((document, key, subject), [])
            if not found or found[-1] != index:
                found.append(index)
    out: dict[int, list[tuple[Any, ...]]] = {}
    for fact in facts:
        document = fact.revision.document.key
        indexes = {*asking.get((document, fact.key, ""), ()),
                   *asking.get((document, fact.key, fact.subject), ())}
        seen: set[Any] = set()
        resting = out[fact.pk] = []
        for index in sorted(indexes):
            if rows[index][2] not in seen:
                seen.add(rows[index][2])
                resting.append(rows[index])
    return out


def answers_waiting_on(document_key: str, user: Any) -> int:
    """How many held answers a reviewer sent to the owners of `document_key` wait on it, of
    those `user` may read in full: a new revision of it gives each a new verdict that shows
    the reviewer something else, which ends the wait and sends it back to the reviewers. An
    answer waits on the document when its verdict's hold rests on it (held_cites, the rule
    the transition that ends the wait applies): one that only retrieved the document keeps
    waiting. One that `user` may not read is not theirs to know of. One query: the answers
    waiting for their owners are few, and each is read with its verdict."""
    from reviewqueue.accounts.principals import user_principals
    from reviewqueue.reviews.models import ReviewItem
    from reviewqueue.reviews.selectors.answers import held_cites
    from reviewqueue.reviews.selectors.queue import readable_rows

    waiting = ReviewItem.objects.filter(waiting_for_owner=True,
                                        answer__retrieved__document_key=document_key)
    rows = (readable_rows(waiting, user_principals(user), "answer_id")
            .values_list("answer_id", "answer__retrieved__cite",
                         "answer__current_verdict__findings",
                         "answer__current_verdict__version__claims",
                         "answer__current_verdict__version__text"))
    return len({answer_id for answer_id, cite, findings, claims, text in rows
                if cite in held_cites(findings or [], claims or [], text or "")})


@dataclass(frozen=True)
class SentToOwner:
    """The cards of `answers_sent_to`, and whether more answers wait than they show."""

    cards: list[Any]
    more: bool


SENT_READS = 4


def answers_sent_to(user: Any, *, limit: int = 100) -> SentToOwner:
    """Held answers a reviewer sent to `user`, still waiting, that `user` may read in full,
    the longest waiting first, at most `limit`. A hand-off asks the owners of the documents
    behind the hold (`documents_behind_hold`, as reviews.selectors.answers.owners_to_ask
    applies it) and keeps who it asked: an owner of another cited document is not shown what
    was not sent to them, and a document joining or leaving the hold meanwhile changes
    nothing. Each card links to the user's documents now behind the hold. Read `limit` rows
    at a time, so answers the user may not read (access lists change while questions wait)
    do not crowd out those they may: five queries a read, a read only while the cards are
    short of `limit`, and at most SENT_READS reads (`more` says when rows were left)."""
    from reviewqueue.reviews.models import ReviewItem

    owned = set(Document.objects.filter(owner=user).values_list("key", flat=True))
    waiting = (ReviewItem.objects.filter(waiting_for_owner=True,
                                         owner_question__owners__contains=[user.pk])
               .select_related("answer", "answer__current_version", "answer__current_verdict",
                               "owner_question__asked_by")
               .order_by("owner_question__asked_at", "id"))
    shown: list[Any] = []
    after: tuple[Any, int] | None = None
    for _read in range(SENT_READS):
        rows = waiting if after is None else waiting.filter(
            Q(owner_question__asked_at__gt=after[0])
            | Q(owner_question__asked_at=after[0], id__gt=after[1]))
        items = list(rows[:limit + 1])
        left = len(items) > limit
        shown += _readable_cards(items[:limit], user, owned)
        if not left or len(shown) >= limit:
            break
        after = (items[limit - 1].owner_question.asked_at, items[limit - 1].pk)
    return SentToOwner(cards=shown[:limit], more=left or len(shown) > limit)


def _readable_cards(items: list[Any], user: Any, owned: set[str]) -> list[Any]:
    """The items of `answers_sent_to` that `user` may read in full, each with the user's
    documents behind its hold (`my_documents`)."""
    retrieved = _documents_retrieved({i.answer_id for i in items})
    cited = {answer_id: set(by_cite.values()) for answer_id, by_cite in retrieved.items()}
    claimed = {i.answer_id: {c.get("key") for c in (i.answer.current_version.claims
                                                    if i.answer.current_version else [])}
               for i in items}
    involved = _documents_in_conflicts(cited, claimed)
    readable = _reading_every(cited, user)
    shown = []
    for item in items:
        if item.answer_id not in readable:
            continue
        verdict = item.answer.current_verdict
        # The user's documents the hand-off is about: where the card links, to correct them.
        item.my_documents = sorted(owned & documents_behind_hold(
            retrieved[item.answer_id], verdict.findings if verdict else (),
            involved[item.answer_id]))
        shown.append(item)
    return shown


def documents_behind_hold(documents_of: Mapping[str, str], findings: Iterable[Mapping[str, Any]],
                          in_conflicts: Iterable[str]) -> set[str]:
    """The documents behind an answer's hold: those it retrieved (`documents_of`: by cite) in a
    conflict on it or named by a finding of its current verdict (a revised source, a fact not
    in force, a claim its source does not support), or with neither every one it retrieved;
    and the knowledge-base documents a finding says disagree with them, retrieved or not.
    Whose owners a hand-off asks, and whose inbox lists it."""
    keys = set(documents_of.values())
    named: set[str] = set()
    elsewhere: set[str] = set()
    for finding in findings:
        named.update(documents_of[cite] for cite in finding.get("evidence") or ()
                     if cite in documents_of)
        elsewhere.update(finding.get("kb_documents") or ())
    return (((set(in_conflicts) | named) & keys) or keys) | elsewhere


def _documents_in_conflicts(cited: dict[int, set[str]], claimed: dict[int, set[Any]]
                            ) -> dict[int, set[str]]:
    """For each answer, the documents it cites that take part in an open or dismissed conflict
    on a key it claims, as reviews.selectors.answers.conflicts_of_answer finds them for one
    answer (1 query, none without citations or claims)."""
    keys = {k for ks in cited.values() for k in ks}
    claim_keys = {k for ks in claimed.values() for k in ks if isinstance(k, str)}
    conflicts = list(
        Conflict.objects.filter(documents__overlap=sorted(keys), key__in=claim_keys)
        .exclude(status=Conflict.Status.CLOSED).values_list("key", "documents")
    ) if keys and claim_keys else []
    return {
        answer_id: {d for key, documents in conflicts if key in claimed.get(answer_id, ())
                    and not documents_cited.isdisjoint(documents)
                    for d in documents} & documents_cited
        for answer_id, documents_cited in cited.items()
    }


def _documents_retrieved(answer_ids: set[int]) -> dict[int, dict[str, str]]:
    """The document each answer retrieved under each cite (1 query, none for no answers)."""
    from reviewqueue.reviews.models import RetrievedItem

    retrieved: dict[int, dict[str, str]] = {answer_id: {} for answer_id in answer_ids}
    if answer_ids:
        for answer_id, cite, key in RetrievedItem.objects.filter(
                answer_id__in=answer_ids).values_list("answer_id", "cite", "document_key"):
            retrieved[answer_id][cite] = key
    return retrieved


def readable_answers(answer_ids: set[int], user: Any) -> set[int]:
    """The answers among `answer_ids` that `user` may read in full: every document they cite
    allows one of the user's principals. Two queries whatever the number of answers."""
    if not answer_ids:
        return set()
    return _reading_every({answer_id: set(by_cite.values()) for answer_id, by_cite
                           in _documents_retrieved(answer_ids).items()}, user)


def _reading_every(cited: dict[int, set[str]], user: Any) -> set[int]:
    """The answers among `cited` (answer id: the documents it cites) that `user` may read in
    full (1 query, none for no answers)."""
    from reviewqueue.accounts.principals import may_read_every, user_principals

    if not cited:
        return set()
    keys = {k for ks in cited.values() for k in ks}
    allowed = dict(Document.objects.filter(key__in=keys).values_list("key", "allowed_principals"))
    principals = user_principals(user)
    return {answer_id for answer_id, ks in cited.items()
            if may_read_every(ks, allowed, principals)}


# A document's page names at most this many of the revisions held answers wait for.
UNRECEIVED_SHOWN = 5


@dataclass(frozen=True)
class Unreceived:
    """Held answers generated from revisions of a document that were never received."""

    held: AtLeast
    revisions: list[str]  # the first UNRECEIVED_SHOWN, by id
    more: bool  # whether there are more revisions than those

    @property
    def named(self) -> str:
        """The revisions as the page names them: "r1, r2", "r1, …, r5, …" past the first few."""
        return ", ".join([*self.revisions, *(["…"] if self.more else [])])


def held_on_unreceived(document: Document, user: Any) -> Unreceived | None:
    """The held answers `user` may read that were generated from a revision of `document` the
    store never received, and which revisions those are; None when there are none. The gate
    holds them (invalid_metadata) until that revision comes, which only the document's system
    can send: its owner is the one to ask for it (2 queries, the count up to COUNT_CAP)."""
    from reviewqueue.accounts.principals import user_principals
    from reviewqueue.reviews.models import Answer, RetrievedItem
    from reviewqueue.reviews.selectors.queue import readable_rows

    items = readable_rows(
        RetrievedItem.objects.filter(document_key=document.key, answer__status=Answer.Status.HELD)
        .exclude(revision__in=Revision.objects.filter(document=document).values("revision")),
        user_principals(user), "answer_id")
    revisions = list(items.order_by("revision").values_list("revision", flat=True)
                     .distinct()[:UNRECEIVED_SHOWN + 1])
    if not revisions:
        return None
    return Unreceived(held=bounded_count(items.values("answer_id").distinct()),
                      revisions=revisions[:UNRECEIVED_SHOWN],
                      more=len(revisions) > UNRECEIVED_SHOWN)


def answers_retrieving(document_key: str) -> AtLeast:
    """How many answers retrieved `document_key`, citing it or not: those a new revision has
    the gate check again. Counted up to COUNT_CAP (one index range)."""
    from reviewqueue.reviews.models import RetrievedItem

    return bounded_count(RetrievedItem.objects.filter(document_key=document_key)
                         .values("answer_id").distinct())
