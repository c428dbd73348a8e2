"""Writes for documents and revisions. Revisions are immutable once published."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max, Prefetch, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.errors import Conflict, FieldError, NotFound
from reviewqueue.replays import fields_differing
from reviewqueue.sources.conflicts import conflicts_refresh, reevaluate_documents, same_value
from reviewqueue.sources.models import Document, Fact, Passage, Revision
from reviewqueue.textmatch import says, unwritten


@dataclass(frozen=True)
class FactInput:
    key: str
    value: Any
    valid_from: date
    valid_until: date | None
    subject: str = ""
    span: str = ""


@dataclass(frozen=True)
class PassageInput:
    span: str
    text: str


@dataclass(frozen=True)
class RevisionInput:
    title: str
    owner: str
    updated_at: datetime
    allowed_principals: tuple[str, ...]
    passages: tuple[PassageInput, ...]
    facts: tuple[FactInput, ...]
    url: str = ""
    note: str = ""

    def digest(self) -> str:
        """Digest of the body as published, so a replay can be told from a different body."""
        canonical = json.dumps(self.compared(), sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def compared(self) -> dict[str, Any]:
        """The body's fields as the digest reads them."""
        return {
            "title": self.title,
            "owner": self.owner,
            "url": self.url,
            "note": self.note,
            # In UTC: the same moment is the same body whatever TIME_ZONE the server runs in
            # (DRF gives it in the current time zone).
            "updated_at": self.updated_at.astimezone(UTC).isoformat(),
            "allowed_principals": list(self.allowed_principals),
            "passages": [[p.span, p.text] for p in self.passages],
            "facts": [
                [
                    f.subject,
                    f.key,
                    f.value,
                    f.valid_from.isoformat(),
                    f.valid_until.isoformat() if f.valid_until else None,
                    f.span,
                ]
                for f in self.facts
            ],
        }


def stored_body(revision: Revision, owner: str) -> RevisionInput:
    """The body the stored rows of `revision` make, naming `owner` (a revision keeps no owner
    of its own: its publication's event does). Its passages and facts are read as `.all()`
    gives them: the caller prefetches them in their order (`with_body`)."""
    return RevisionInput(
        title=revision.title, owner=owner, url=revision.url, updated_at=revision.updated_at,
        allowed_principals=tuple(revision.allowed_principals), note=revision.note,
        passages=tuple(PassageInput(p.span, p.text) for p in revision.passages.all()),
        facts=tuple(FactInput(key=f.key, value=f.value, valid_from=f.valid_from,
                              valid_until=f.valid_until, subject=f.subject, span=f.span)
                    for f in revision.facts.all()),
    )


def with_body(revisions: QuerySet[Revision]) -> QuerySet[Revision]:
    """`revisions` with their passages and facts in the order they were published."""
    return revisions.prefetch_related(Prefetch("passages", Passage.objects.order_by("id")),
                                      Prefetch("facts", Fact.objects.order_by("position")))


def published_owner(after: dict[str, Any]) -> Any:
    """The owner a publication's event says its body named: a late revision changed no owner,
    and its event logs the one it named on its own."""
    return after.get("revision_owner", after.get("owner"))


def _publication_event(existing: Revision) -> AuditEvent | None:
    """The event that recorded the publication of `existing` (its seq and `after`)."""
    return (AuditEvent.objects.filter(action="revision.published",
                                      document_id=existing.document.key)
            .filter(Q(after__revision=existing.revision)
                    | Q(after__current_revision=existing.revision))
            .order_by("seq").only("seq", "after").first())


def _started_by(event: AuditEvent | None) -> tuple[Any, ...]:
    """The re-evaluation jobs the change `event` records started, as its reply listed them."""
    from reviewqueue.jobs.selectors import jobs_started_by

    return tuple(jobs_started_by(event.seq)) if event is not None else ()


def _revision_fields_differing(existing: Revision, data: RevisionInput,
                               event: AuditEvent | None) -> list[str]:
    """The fields in which `data` differs from the revision as it was published, `event`,
    read back from the stored revision and the owner the event names (three queries). The
    principals in another order are the same."""
    owner = published_owner(event.after) if event and isinstance(event.after, dict) else None
    revision = with_body(Revision.objects.filter(pk=existing.pk)).get()
    stored = stored_body(revision, data.owner if owner is None else str(owner)).compared()
    return fields_differing(stored, data.compared(), sets={"allowed_principals"})


@dataclass(frozen=True)
class PublishResult:
    revision: Revision
    created: bool
    # The re-evaluation jobs the publication started, the document's first (for a replay, those
    # the first time started).
    jobs: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Withdrawal:
    document: Document
    jobs: tuple[Any, ...]  # when it was withdrawn already, those the withdrawal started


@dataclass(frozen=True)
class Restoration:
    revision: Revision
    jobs: tuple[Any, ...]
    # The document was restored already, by the restoration `jobs` come from: the same call
    # again (a retry after a lost reply) is told what the first one started, and changes nothing.
    again: bool = False


def _facts_of(revision_id: int | None) -> list[Fact]:
    return list(Fact.objects.filter(revision_id=revision_id)) if revision_id else []


def _after_content_change(
    *,
    document_key: str,
    old_facts: list[Fact],
    new_facts: list[Fact],
    trigger: str,
    actor: Actor,
    event: AuditEvent,
) -> tuple[Any, ...]:
    """Refresh the conflicts the change touches and re-evaluate every answer that may care:
    those citing this document, and those citing a document whose conflict changed. Returns
    the re-evaluation jobs, which name `event`, the change's audit event."""
    pairs = {(f.subject, f.key) for f in [*old_facts, *new_facts]}
    changes = conflicts_refresh(pairs=pairs, actor=actor, cause=document_key, by=trigger)
    keys = {document_key}
    for change in changes:
        keys.update(change.conflict.documents)
        keys.update(p["document"] for p in change.conflict.participants)
    return tuple(reevaluate_documents(keys, trigger=trigger, actor=actor, cause=document_key,
                                      cause_event=event.seq))


def _new_owner(username: str) -> Any:
    """The user a revision names as its document's new owner: an active owner or admin."""
    owner = get_user_model().objects.filter(username=username, is_active=True).first()
    if owner is None:
        raise FieldError("owner", f"no active user named {username!r}")
    if not has_role(owner, Role.OWNER, Role.ADMIN):
        # The owner is who resolves the document's conflicts on the owner's pages.
        raise FieldError("owner", f"{username!r} is not a document owner (nor an admin)")
    return owner


def revision_owner_problem(document_key: str, revision: str, owner: str,
                           updated_at: datetime | None) -> str | None:
    """What publishing `revision` would say of the owner it names, or None, asked before the
    publish so that a bad body's every error comes in one round (the publish asks again, under
    the document's lock): the document's owner is kept, a revision already received is a
    replay or a conflict, and a late one changes no owner, whoever it names."""
    document = Document.objects.select_related("owner").filter(key=document_key).first()
    if document is not None and (
            owner == document.owner.get_username()
            or Revision.objects.filter(document=document, revision=revision).exists()
            or (updated_at is not None and Revision.objects.filter(
                document=document, updated_at__gt=updated_at).exists())):
        return None
    try:
        _new_owner(owner)
    except FieldError as exc:
        return exc.field_message
    return None


@transaction.atomic
def revision_publish(
    *, document_key: str, revision: str, data: RevisionInput, actor: Actor, user: Any = None
) -> PublishResult:
    """Publish `revision` of `document_key` and make it current, unless it is late: older (by
    `updated_at`) than a revision of the document received before it, which stays current
    (or withdrawn). A late revision is kept, so that answers generated from it find it.

    The same body again changes nothing; a different body for an existing revision is a
    conflict. Answers citing the document are re-evaluated after the transaction commits.
    The owner named must be an active owner (or admin) when it is new to the document; the
    document's current owner is kept as they are, even deactivated since. A late revision
    changes no owner: the one it names is only logged, whoever they are now.
    """
    digest = data.digest()
    # Lock the document: concurrent publishes of one document are applied one at a time.
    document = (Document.objects.select_for_update(of=("self",)).select_related("owner")
                .filter(key=document_key).first())
    if document is None:
        # Another publish may create it first: then this one waits for it, and sees it.
        Document.objects.get_or_create(key=document_key,
                                       defaults={"owner": _new_owner(data.owner)})
        document = (Document.objects.select_for_update(of=("self",)).select_related("owner")
                    .get(key=document_key))

    # Before the owner is looked at: a replay is answered as the first time, whatever
    # happened to the owner since.
    existing = Revision.objects.filter(document=document, revision=revision).first()
    if existing is not None:
        event = _publication_event(existing)
        fields = ([] if existing.body_digest == digest
                  else _revision_fields_differing(existing, data, event))
        if not fields:
            return PublishResult(existing, created=False, jobs=_started_by(event))
        raise Conflict(
            f"revision {revision!r} of {document_key!r} was already published with a "
            f"different body (it differs in {', '.join(fields)}); revisions are immutable, "
            "publish a new revision id",
            extra={"revision": revision, "errors": [
                {"field": name, "message": "differs from the body first published with this "
                                           "revision id"} for name in fields]},
        )

    seq = (document.revisions.aggregate(m=Max("seq"))["m"] or 0) + 1
    newest = document.revisions.order_by(*Revision.NEWEST_FIRST).first()
    late = newest is not None and newest.updated_at > data.updated_at
    # A late revision, retried, names the owner it named when it was written, who may have
    # left since: its event logs that name, but it makes nobody the document's owner.
    owner = (document.owner if late or data.owner == document.owner.get_username()
             else _new_owner(data.owner))
    new = Revision.objects.create(
        document=document,
        revision=revision,
        seq=seq,
        title=data.title,
        url=data.url,
        updated_at=data.updated_at,
        allowed_principals=list(data.allowed_principals),
        body_digest=digest,
        published_by=user if getattr(user, "is_authenticated", False) else None,
        note=data.note,
    )
    Passage.objects.bulk_create(
        [Passage(revision=new, span=p.span, text=p.text) for p in data.passages]
    )
    Fact.objects.bulk_create(
        [
            Fact(
                revision=new,
                subject=f.subject,
                key=f.key,
                value=f.value,
                valid_from=f.valid_from,
                valid_until=f.valid_until,
                span=f.span,
                position=i,
            )
            for i, f in enumerate(data.facts)
        ]
    )
    before = {
        "current_revision": document.current_revision.revision
        if document.current_revision_id and document.current_revision
        else None,
        "owner": document.owner.username,
    }
    # Said only when this publish ends a withdrawal: "withdrawn: yes → no". (It said
    # "withdrawn: no" as it was before on every publish.)
    ended_withdrawal = {"withdrawn": False} if document.withdrawn_at is not None else {}
    if ended_withdrawal:
        before["withdrawn"] = True
    received = {
        "seq": seq,
        "facts": len(data.facts),
        "passages": len(data.passages),
        # What proves the stored revision is the one published (`verify_sources`), and who
        # it let read it; the log keeps no text, only this digest of the whole body.
        "body_digest": digest,
        "allowed_principals": list(data.allowed_principals),
    }
    if late:
        assert newest is not None
        # The knowledge base says what it said; only the answers citing this document, which
        # may have been waiting for exactly this revision, are evaluated again.
        event = audit_record(
            actor=actor, action="revision.published", object_type="document",
            object_id=document_key, document_id=document_key, before=before,
            after={**before, "revision": revision, **received, "revision_owner": data.owner,
                   "late_behind": newest.revision})
        jobs = reevaluate_documents([document_key], trigger="revision", actor=actor,
                                    cause=document_key, cause_event=event.seq)
        return PublishResult(new, created=True, jobs=tuple(jobs))
    old_facts = _facts_of(document.current_revision_id)
    document.current_revision = new
    document.allowed_principals = list(data.allowed_principals)
    document.withdrawn_at = None
    document.owner = owner
    document.save(update_fields=["current_revision", "allowed_principals", "withdrawn_at", "owner"])
    event = audit_record(
        actor=actor,
        action="revision.published",
        object_type="document",
        object_id=document_key,
        document_id=document_key,
        before=before,
        after={"current_revision": revision, **received, "owner": owner.username,
               **ended_withdrawal},
    )
    jobs = _after_content_change(
        document_key=document_key,
        old_facts=old_facts,
        new_facts=_facts_of(new.pk),
        trigger="revision",
        actor=actor,
        event=event,
    )
    return PublishResult(new, created=True, jobs=jobs)


# _LOCK_ALONE: a document is locked alone, and its current revision read afterwards by a
# query of its own. Joined into the locking statement, a row that waited for a publication's
# lock is read again as that publication left it, but the revision it now names is not in the
# statement's snapshot: the join found none, and a correction racing a publication was told
# the document was withdrawn (a withdrawal audited "before: no current revision").
@transaction.atomic
def document_withdraw(*, document_key: str, actor: Actor) -> Withdrawal:
    """Withdraw a document: it keeps its history but has no current revision."""
    document = Document.objects.select_for_update().filter(key=document_key).first()
    if document is None:
        raise NotFound(f"no document {document_key!r}")
    if document.withdrawn_at is not None:  # nothing to do, nothing to audit
        withdrawn = (AuditEvent.objects.filter(action="document.withdrawn",
                                               document_id=document_key)
                     .order_by("-seq").only("seq").first())
        return Withdrawal(document, jobs=_started_by(withdrawn))
    old_facts = _facts_of(document.current_revision_id)
    before = {
        "current_revision": document.current_revision.revision
        if document.current_revision
        else None,
        "withdrawn": False,
    }
    document.current_revision = None
    document.withdrawn_at = timezone.now()
    document.save(update_fields=["current_revision", "withdrawn_at"])
    event = audit_record(
        actor=actor,
        action="document.withdrawn",
        object_type="document",
        object_id=document_key,
        document_id=document_key,
        before=before,
        after={"current_revision": None, "withdrawn": True},
    )
    jobs = _after_content_change(
        document_key=document_key,
        old_facts=old_facts,
        new_facts=[],
        trigger="withdrawal",
        actor=actor,
        event=event,
    )
    return Withdrawal(document, jobs)


@transaction.atomic
def document_restore(*, document_key: str, actor: Actor) -> Restoration | None:
    """Undo a withdrawal: the document's last revision is current again, readable by whom it
    named, and the answers that may care are re-evaluated as after a publication. Returns that
    revision and the jobs. A document not withdrawn is left as it is, with nothing audited:
    if a restoration is the last thing that changed it, that restoration (`again`, with the
    jobs it started), else (never withdrawn, or republished since) None."""
    document = Document.objects.select_for_update().filter(key=document_key).first()
    if document is None:
        raise NotFound(f"no document {document_key!r}")
    if document.withdrawn_at is None:
        last_change = (AuditEvent.objects.filter(
            document_id=document_key,
            action__in=("document.restored", "document.withdrawn", "revision.published"))
            .order_by("-seq").only("seq", "action").first())
        if (last_change is None or last_change.action != "document.restored"
                or document.current_revision is None):
            return None
        return Restoration(document.current_revision, jobs=_started_by(last_change), again=True)
    last = document.revisions.order_by(*Revision.NEWEST_FIRST).first()
    assert last is not None, "a document exists only through a publication"
    document.current_revision = last
    document.allowed_principals = list(last.allowed_principals)
    document.withdrawn_at = None
    document.save(update_fields=["current_revision", "allowed_principals", "withdrawn_at"])
    event = audit_record(
        actor=actor,
        action="document.restored",
        object_type="document",
        object_id=document_key,
        document_id=document_key,
        before={"current_revision": None, "withdrawn": True},
        after={"current_revision": last.revision, "withdrawn": False},
    )
    jobs = _after_content_change(
        document_key=document_key,
        old_facts=[],
        new_facts=_facts_of(last.pk),
        trigger="restoration",
        actor=actor,
        event=event,
    )
    return Restoration(last, jobs)


# --- Resolutions from the owner's pages --------------------------------------------------------


@dataclass(frozen=True)
class FactEdit:
    fact_id: int
    value: Any
    valid_from: date
    valid_until: date | None


def _revision_as_input(
    revision: Revision, *, facts: tuple[FactInput, ...], note: str,
    passages: tuple[PassageInput, ...] | None = None,
) -> RevisionInput:
    return RevisionInput(
        title=revision.title,
        owner=revision.document.owner.username,
        url=revision.url,
        # Never older than the revision it corrects, whatever the document system's clock
        # said of that one: a correction is the newest revision, never one received late.
        updated_at=max(timezone.now(), revision.updated_at),
        allowed_principals=tuple(revision.allowed_principals),
        passages=passages if passages is not None else tuple(
            PassageInput(p.span, p.text) for p in revision.passages.order_by("id")),
        facts=facts,
        note=note,
    )


class DocumentWithdrawn(Conflict):
    """Edits made on a document withdrawn since: it has no current revision to correct."""

    def __init__(self) -> None:
        super().__init__("the document is withdrawn; publish a revision through the API")


def _current_revision(document: Document) -> Revision:
    if document.current_revision is None:
        raise DocumentWithdrawn()
    return document.current_revision


class RevisionChanged(Conflict):
    """Edits made on a revision that is no longer current."""

    def __init__(self, current: str) -> None:
        super().__init__(
            f"revision {current!r} was published since the edits were made",
            extra={"revision": current},
        )
        self.current = current


def revision_check_current(
    *, document: Document, based_on: str | None, fact_ids: set[int]
) -> Revision:
    """The current revision, if edits made on `based_on` (None: on the current one, as far as
    the caller knows) to the facts `fact_ids` still apply to it; else RevisionChanged, or
    DocumentWithdrawn when the document has no current revision.

    Every revision has facts of its own, so a fact id of an older revision means the edit was
    made on that revision: applying it would drop the edit or revert what the newer one changed.
    """
    current = _current_revision(document)
    known = set(current.facts.values_list("pk", flat=True))
    if (based_on is not None and based_on != current.revision) or not fact_ids <= known:
        raise RevisionChanged(current.revision)
    return current


def _next_revision_id(document: Document) -> str:
    """Today's date and the number of today's correction: `2026-12-05.1`, then `.2`, past any
    id an upstream already gave a revision in that style today (revision ids never repeat
    within a document)."""
    day = f"{timezone.localdate():%Y-%m-%d}"
    taken = document.revisions.filter(revision__startswith=f"{day}.").values_list("revision",
                                                                                flat=True)
    suffixes = (revision.removeprefix(f"{day}.") for revision in taken)
    numbers = [int(n) for n in suffixes if n.isascii() and n.isdigit() and len(n) < 10]
    return f"{day}.{max(numbers, default=0) + 1}"


@transaction.atomic
def revision_publish_corrected(
    *,
    document: Document,
    edits: list[FactEdit],
    note: str,
    actor: Actor,
    user: Any,
    based_on: str | None = None,
    passages: dict[str, str] | None = None,
) -> PublishResult:
    """Publish a new revision that copies the current one with some facts changed, and the
    text of the passages named in `passages` (by span) replaced.

    `based_on` is the revision the edits were made on; if another revision was published
    since, nothing is published and RevisionChanged says which.
    """
    # Lock the document: a revision published by the API meanwhile is seen, not overwritten.
    # Its current revision is read after the lock, by a query of its own (see _LOCK_ALONE).
    document = Document.objects.select_for_update().get(pk=document.pk)
    by_id = {e.fact_id: e for e in edits}
    current = revision_check_current(document=document, based_on=based_on, fact_ids=set(by_id))
    facts = []
    for fact in current.facts.order_by("position"):
        edit = by_id.get(fact.pk)
        facts.append(
            FactInput(
                key=fact.key,
                subject=fact.subject,
                span=fact.span,
                value=edit.value if edit else fact.value,
                valid_from=edit.valid_from if edit else fact.valid_from,
                valid_until=edit.valid_until if edit else fact.valid_until,
            )
        )
    for index, fact in enumerate(facts):
        if fact.valid_until is not None and fact.valid_from > fact.valid_until:
            raise FieldError(f"facts[{index}].valid_until", "must not be before valid_from")
    texts = {p.span: p.text for p in current.passages.order_by("id")}
    for span, text in (passages or {}).items():
        if span not in texts:
            raise FieldError(f"passages[{span}]", "is not a passage of the current revision")
        if not text.strip():
            raise FieldError(f"passages[{span}].text", "must not be empty")
        texts[span] = text
    return revision_publish(
        document_key=document.key,
        revision=_next_revision_id(document),
        data=_revision_as_input(current, facts=tuple(facts), note=note,
                                passages=tuple(PassageInput(s, t) for s, t in texts.items())),
        actor=actor,
        user=user,
    )


@dataclass(frozen=True)
class PassageLeftBehind:
    """A corrected fact whose passage still says the value it had, and not the new one; or,
    `unsaid`, whose value is one no text writes as such (true, false, null, "") while its
    passage is left as it was: it may well still say the old value in words."""

    fact: Fact
    span: str
    old: Any
    new: Any
    unsaid: bool = False


def passages_left_behind(revision: Revision, edits: list[FactEdit],
                         passages: dict[str, str]) -> list[PassageLeftBehind]:
    """The facts whose value `edits` change while the passage they quote, as `passages` leaves
    it (the texts the owner changed, by span), still says the old value and not the new one:
    an answer quoting that passage would show the reader what the fact no longer states."""
    texts = {p.span: p.text for p in revision.passages.all()} | passages
    by_id = {fact.pk: fact for fact in revision.facts.all()}
    found = []
    for edit in edits:
        fact = by_id.get(edit.fact_id)
        if fact is None or not fact.span or same_value(fact.value, edit.value):
            continue
        text = texts.get(fact.span, "")
        if says(text, fact.value) and not says(text, edit.value):
            found.append(PassageLeftBehind(fact, fact.span, fact.value, edit.value))
        elif (unwritten(fact.value) and fact.span not in passages
              and not says(text, edit.value)):
            found.append(PassageLeftBehind(fact, fact.span, fact.value, edit.value, unsaid=True))
    return found


# Refusals of fact_end_validity, in the API's language; the owner's page translates them.
LAST_DAY_BEFORE_START = gettext_noop("must not be before the fact becomes valid")
LAST_DAY_NOT_EARLIER = gettext_noop(
    "must be before the day the fact ends now; to extend it, correct its values instead")
NOT_A_FACT_HERE = gettext_noop(
    "The fact you were ending is not one of this document's: open the document again and end "
    "one of the facts it lists.")


def fact_end_validity(
    *, document: Document, fact_id: int, last_day: date, note: str, actor: Actor, user: Any
) -> PublishResult:
    """End one fact's validity on `last_day` (inclusive), as a new revision."""
    current = _current_revision(document)
    fact = current.facts.filter(pk=fact_id).first()
    if fact is None:
        if Fact.objects.filter(pk=fact_id, revision__document=document).exists():
            raise RevisionChanged(current.revision)  # a fact of an older revision
        raise FieldError("fact_id", NOT_A_FACT_HERE)
    if last_day < fact.valid_from:
        raise FieldError("last_day", LAST_DAY_BEFORE_START)
    if fact.valid_until is not None and last_day >= fact.valid_until:
        # Ending a fact never extends it (an owner extends one by correcting its values).
        raise FieldError("last_day", LAST_DAY_NOT_EARLIER)
    edit = FactEdit(
        fact_id=fact.pk, value=fact.value, valid_from=fact.valid_from, valid_until=last_day
    )
    return revision_publish_corrected(
        document=document,
        edits=[edit],
        # Written in the owner's language, as a note they typed would be.
        note=note or gettext("%(key)s ends on %(day)s") % {"key": fact.key,
                                                            "day": last_day.isoformat()},
        actor=actor,
        user=user,
    )
