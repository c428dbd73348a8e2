"""Whether the store still holds each revision as it was published, and lets read each document
whom its current revision does.

Revisions, passages and facts are append-only in PostgreSQL; someone with the database's own
rights can still change them, or the document's copy of its access list that every permission
filter reads. Each publication's audit event, in the hash chain, recorded the digest of the
body and the access list: the stored rows are checked against those."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from reviewqueue.audit.chain import plural
from reviewqueue.audit.hashing import content_sha256
from reviewqueue.audit.models import AuditEvent
from reviewqueue.snapshot import in_one_snapshot
from reviewqueue.sources.models import Conflict, Document, Revision
from reviewqueue.sources.services import published_owner, stored_body, with_body


@dataclass(frozen=True)
class SourceProblem:
    """One difference: `name` is `document@revision`, or the document's key for its own
    access list; `code` says which check failed; `detail` is the sentence verify_sources
    prints."""

    name: str
    # "unpublished", "access_list", "body", "deleted" (of a revision); "document_access",
    # "document_state" or "document_owner" (of a document); "conflict_state" or
    # "conflict_justification" (of a conflict)
    code: str
    detail: str
    # A digest of what the row holds now: a second change to one already reported is news
    # (see reviews.integrity.RecordProblem).
    evidence: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code, "detail": self.detail,
                "evidence": self.evidence}


@dataclass
class SourcesCheck:
    revisions: int = 0
    documents: int = 0
    problems: list[SourceProblem] = field(default_factory=list)


# What the check compares of a publication's event (it records more: counts, sequence).
_COMPARED = ("allowed_principals", "revision_owner", "owner", "body_digest")


@dataclass
class _Logged:
    """What the log says of the sources: each publication (by document and revision: only
    what the check compares, and its event's seq), and each document as its last change
    left it: its current revision (None: withdrawn), its owner, and that event's seq."""

    published: dict[tuple[str, str], dict[str, object]] = field(default_factory=dict)
    documents: dict[str, tuple[object, object, int]] = field(default_factory=dict)


_CHANGES = ("revision.published", "document.withdrawn", "document.restored")


def _logged() -> _Logged:
    """One read of the publications, withdrawals and restorations, in the chain's order."""
    logged = _Logged()
    for e in (AuditEvent.objects.filter(action__in=_CHANGES).order_by("seq")
              .only("seq", "action", "document_id", "after").iterator(chunk_size=2000)):
        if not isinstance(e.after, dict):
            continue
        key = str(e.document_id)
        if e.action == "revision.published":
            # `revision` names the revision published; events from before it was recorded
            # name it as the current one, which it then always became.
            revision = str(e.after.get("revision", e.after.get("current_revision")))
            logged.published[(key, revision)] = {
                **{k: e.after[k] for k in _COMPARED if k in e.after}, "seq": e.seq}
        # Each of them says what the document's current revision is after it (a late
        # revision, the one that stays); a publication says its owner too.
        _, owner, _ = logged.documents.get(key, (None, None, 0))
        logged.documents[key] = (e.after.get("current_revision"), e.after.get("owner", owner),
                                 e.seq)
    return logged


def _revision_problems(revision: Revision,
                       logged: dict[str, object] | None) -> list[SourceProblem]:
    """Each way a stored revision differs from the event that published it: its access list
    and its body are told apart, so that a change to the one is not hidden behind the other."""
    name = f"{revision.document.key}@{revision.revision}"
    if logged is None:
        return [SourceProblem(name, "unpublished", f"{name}: no audit event published it",
                              revision.body_digest)]
    problems = []
    if logged.get("allowed_principals", revision.allowed_principals) != \
            revision.allowed_principals:
        problems.append(SourceProblem(name, "access_list", (
            f"{name}: may be read by {revision.allowed_principals}, but was published for "
            f"{logged['allowed_principals']}"), content_sha256(revision.allowed_principals)))
    stored = stored_body(revision, str(published_owner(logged)))
    if "allowed_principals" in logged:
        # The access list is compared on its own above; the body digest covers the rest.
        stored = replace(stored, allowed_principals=tuple(logged["allowed_principals"]))
    body = stored.digest()
    if body != logged.get("body_digest", revision.body_digest):
        problems.append(SourceProblem(name, "body", f"{name}: its title, dates, passages or "
                                                    "facts are not those it was published with",
                                      body))
    return problems


def _document_problem(document: Document, logged: tuple[object, object, int] | None
                      ) -> SourceProblem | None:
    """A document whose current revision, withdrawal or owner is not what the last event of
    its log left (`logged`), or that lets read others than its current revision does."""
    current = document.current_revision
    name = document.key
    if logged is None:
        return SourceProblem(name, "unpublished", f"{name}: no audit event published it")
    revision, owner, seq = logged
    if current is not None and current.document_id != document.pk:
        # The gate reads the facts of whatever revision the document points at.
        return SourceProblem(name, "document_state", (
            f"{name}: its current revision is {current.revision} of another document, but its "
            f"last audit event, #{seq}, left it its own revision {revision}"))
    # The gate takes a document whose withdrawal date is set as withdrawn, whatever it points at.
    now = current.revision if current is not None and document.withdrawn_at is None else None
    if now != revision:
        def said(r: object) -> str:
            return f"revision {r}" if r is not None else "withdrawn"
        return SourceProblem(name, "document_state", (
            f"{name}: is {said(now)}, but its last audit event, #{seq}, left it {said(revision)}"))
    if owner is not None and document.owner.get_username() != owner:
        return SourceProblem(name, "document_owner", (
            f"{name}: is owned by {document.owner.get_username()}, but its audit events give "
            f"it to {owner}"))
    if current is None or document.allowed_principals == current.allowed_principals:
        return None
    return SourceProblem(document.key, "document_access", (
        f"{document.key}: lets {document.allowed_principals} read it, but its current "
        f"revision {current.revision} lets {current.allowed_principals}"))


@dataclass
class _LoggedConflict:
    """A conflict as its last event left it, and the digest of the justification its last
    dismissal recorded (None: never dismissed, or dismissed before digests were recorded)."""

    after: dict[str, object]
    seq: int
    justification: object = None


def _logged_conflicts() -> dict[str, _LoggedConflict]:
    logged: dict[str, _LoggedConflict] = {}
    for e in (AuditEvent.objects.filter(object_type="conflict").order_by("seq")
              .only("seq", "object_id", "after").iterator(chunk_size=2000)):
        if not isinstance(e.after, dict):
            continue
        earlier = logged.get(e.object_id)
        logged[e.object_id] = _LoggedConflict(
            e.after, e.seq, e.after.get("reason_sha256", earlier and earlier.justification))
    return logged


def _conflict_problem(conflict: Conflict, logged: _LoggedConflict | None
                      ) -> SourceProblem | None:
    """A conflict whose status, subject or key is not what its last event left, or whose
    justification is not the one its dismissal recorded. The gate leaves out the facts of a
    dismissed conflict: one dismissed in the table alone would pass the answers it holds."""
    name = f"conflict #{conflict.pk}"
    if logged is None:
        return SourceProblem(name, "conflict_state", f"{name} ({conflict.key}): no audit "
                                                     "event opened it")
    said = (logged.after.get("status"), logged.after.get("subject", conflict.subject),
            logged.after.get("key", conflict.key))
    if said != (conflict.status, conflict.subject, conflict.key):
        return SourceProblem(name, "conflict_state", (
            f"{name}: is {conflict.status} on {conflict.key!r}, but its last audit event, "
            f"#{logged.seq}, left it {said[0]} on {said[2]!r}"))
    if conflict.status == Conflict.Status.DISMISSED and logged.justification is not None and (
            hashlib.sha256(conflict.dismissal_reason.encode()).hexdigest()
            != logged.justification):
        return SourceProblem(name, "conflict_justification", (
            f"{name} ({conflict.key}): its justification is not the one its dismissal "
            "recorded"))
    return None


@in_one_snapshot
def sources_check() -> SourcesCheck:
    """Every revision against the event that published it, each publication against a stored
    revision, every document's current revision, owner and access list, and every conflict's
    status and justification, against what their events left. In one snapshot: a publication
    committing while the check reads is then in neither the events nor the rows."""
    check = SourcesCheck()
    logged = _logged()
    stored: set[tuple[str, str]] = set()
    revisions = with_body(Revision.objects.select_related("document")
                          .order_by("document__key", "seq"))
    for revision in revisions.iterator(chunk_size=500):
        check.revisions += 1
        key = (revision.document.key, revision.revision)
        stored.add(key)
        check.problems += _revision_problems(revision, logged.published.get(key))
    for (document, revision), published in logged.published.items():
        if (document, revision) not in stored:
            check.problems.append(SourceProblem(f"{document}@{revision}", "deleted", (
                f"{document}@{revision}: audit event #{published['seq']} published it, and "
                "it is no longer stored (deleted)")))
    documents = Document.objects.select_related("current_revision", "owner").order_by("key")
    for document in documents.iterator(chunk_size=2000):
        check.documents += 1
        if problem := _document_problem(document, logged.documents.get(document.key)):
            check.problems.append(replace(problem, evidence=content_sha256([
                document.current_revision_id, document.withdrawn_at, document.owner_id,
                document.allowed_principals])))
    conflicts = _logged_conflicts()
    for conflict in Conflict.objects.order_by("pk").iterator(chunk_size=2000):
        if problem := _conflict_problem(conflict, conflicts.get(str(conflict.pk))):
            check.problems.append(replace(problem, evidence=content_sha256([
                conflict.status, conflict.subject, conflict.key, conflict.dismissal_reason])))
    return check


def sources_report(revisions: int, documents: int, count: int, details: list[str]) -> str:
    """What verify_sources and verify_audit print of a check: `count` problems, the first of
    them in `details`."""
    if not count:
        published = ("1 revision matches the audit event that published it" if revisions == 1
                     else f"{revisions} revisions match the audit events that published them")
        readers = ("1 document has the readers its current revision gives" if documents == 1
                   else f"{documents} documents have the readers their current revision gives")
        return f"Sources OK: {published}; {readers}."
    listing = "".join(f"\n  {detail}" for detail in details[:100])
    more = count - len(details[:100])
    return (f"Sources CHANGED: {plural(count, 'problem')} in {plural(revisions, 'revision')} "
            f"and {plural(documents, 'document')}:{listing}"
            + (f"\n  ... and {more} more" if more > 0 else ""))
