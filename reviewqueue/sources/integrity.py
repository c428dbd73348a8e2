"""Whether the store still holds each revision as it was published, and lets read each document
whom its current revision does.

Revisions, passages and facts are append-only in PostgreSQL; someone with the database's own
rights can still change them, or the document's copy of its access list that every permission
filter reads. Each publication's audit event, in the hash chain, recorded the digest of the
body and the access list: the stored rows are checked against those."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from reviewqueue.audit.models import AuditEvent
from reviewqueue.sources.models import Document, Revision
from reviewqueue.sources.services import published_owner, stored_body, with_body


@dataclass(frozen=True)
class SourceProblem:
    """One difference: `name` is `document@revision`, or the document's key for its own
    access list; `code` says which check failed; `detail` is the sentence verify_sources
    prints."""

    name: str
    code: str  # "unpublished", "access_list", "body" or "document_access"
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code, "detail": self.detail}


@dataclass
class SourcesCheck:
    revisions: int = 0
    documents: int = 0
    problems: list[SourceProblem] = field(default_factory=list)


# What the check compares of a publication's event (it records more: counts, sequence).
_COMPARED = ("allowed_principals", "revision_owner", "owner", "body_digest")


def _published() -> dict[tuple[str, str], dict[str, object]]:
    """What each revision.published event recorded, by (document, revision): only what the
    check compares, so that the dict holds little per revision."""
    return {
        # `revision` names the revision published; events from before it was recorded name
        # it as the current one, which it then always became.
        (str(e.document_id), str(e.after.get("revision", e.after.get("current_revision")))):
        {k: e.after[k] for k in _COMPARED if k in e.after}
        for e in AuditEvent.objects.filter(action="revision.published")
        .only("document_id", "after").iterator(chunk_size=2000)
        if isinstance(e.after, dict)
    }


def _revision_problem(revision: Revision,
                      logged: dict[str, object] | None) -> SourceProblem | None:
    """What differs between a stored revision and the event that published it, if anything."""
    name = f"{revision.document.key}@{revision.revision}"
    if logged is None:
        return SourceProblem(name, "unpublished", f"{name}: no audit event published it")
    if logged.get("allowed_principals", revision.allowed_principals) != \
            revision.allowed_principals:
        return SourceProblem(name, "access_list", (
            f"{name}: may be read by {revision.allowed_principals}, but was published for "
            f"{logged['allowed_principals']}"))
    if stored_body(revision, str(published_owner(logged))).digest() != logged.get(
            "body_digest", revision.body_digest):
        return SourceProblem(name, "body", f"{name}: its title, dates, passages or facts are "
                                           "not those it was published with")
    return None


def _document_problem(document: Document) -> SourceProblem | None:
    """A document letting read others than its current revision does."""
    current = document.current_revision
    if current is None or document.allowed_principals == current.allowed_principals:
        return None
    return SourceProblem(document.key, "document_access", (
        f"{document.key}: lets {document.allowed_principals} read it, but its current "
        f"revision {current.revision} lets {current.allowed_principals}"))


@transaction.atomic
def sources_check() -> SourcesCheck:
    """Every revision against the event that published it, and every document's access list
    against its current revision's. In a transaction, so that its cursors send their rows
    as they come (see `records_check`)."""
    check = SourcesCheck()
    published = _published()
    revisions = with_body(Revision.objects.select_related("document")
                          .order_by("document__key", "seq"))
    for revision in revisions.iterator(chunk_size=500):
        check.revisions += 1
        logged = published.get((revision.document.key, revision.revision))
        if problem := _revision_problem(revision, logged):
            check.problems.append(problem)
    documents = Document.objects.select_related("current_revision").order_by("key")
    for document in documents.iterator(chunk_size=2000):
        check.documents += 1
        if problem := _document_problem(document):
            check.problems.append(problem)
    return check


def sources_report(revisions: int, documents: int, count: int, details: list[str]) -> str:
    """What verify_sources and verify_audit print of a check: `count` problems, the first of
    them in `details`."""
    if not count:
        return (f"Sources OK: {revisions} revisions match the audit events that published "
                f"them; {documents} documents have the readers their current revision gives.")
    listing = "".join(f"\n  {detail}" for detail in details[:100])
    more = count - len(details[:100])
    return (f"Sources CHANGED: {count} problem(s) in {revisions} revisions and {documents} "
            f"documents:{listing}" + (f"\n  ... and {more} more" if more > 0 else ""))
