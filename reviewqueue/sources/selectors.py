"""Reads for documents and revisions."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Prefetch, QuerySet

from reviewqueue.sources.models import Document, Fact, Passage, Revision


def document_get(document_key: str) -> Document | None:
    return (
        Document.objects.select_related("owner", "current_revision")
        .filter(key=document_key)
        .first()
    )


def document_history(document: Document) -> QuerySet[Revision]:
    return document.revisions.order_by("-seq").select_related("published_by")


def current_documents(keys: Iterable[str]) -> dict[str, Document]:
    """Documents by key, with their current revision and its facts prefetched (3 queries)."""
    documents = Document.objects.filter(key__in=set(keys)).select_related(
        "current_revision", "owner"
    )
    by_key = {d.key: d for d in documents}
    current_ids = [d.current_revision_id for d in by_key.values() if d.current_revision_id]
    facts: dict[int, list[Fact]] = {}
    for fact in Fact.objects.filter(revision_id__in=current_ids).order_by(
        "revision_id", "position"
    ):
        facts.setdefault(fact.revision_id, []).append(fact)
    for document in by_key.values():
        if document.current_revision is not None:
            document.current_revision.fact_list = facts.get(  # type: ignore[attr-defined]
                document.current_revision_id, []
            )
    return by_key


def received_revisions(pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which (document key, revision id) pairs the store has received."""
    pairs = set(pairs)
    if not pairs:
        return set()
    keys = {k for k, _ in pairs}
    revisions = {r for _, r in pairs}
    found = Revision.objects.filter(document__key__in=keys, revision__in=revisions).values_list(
        "document__key", "revision"
    )
    return set(found) & pairs


def revisions_with_passages(revision_ids: Iterable[int]) -> QuerySet[Revision]:
    return (
        Revision.objects.filter(id__in=set(revision_ids))
        .prefetch_related(
            Prefetch("passages", queryset=Passage.objects.order_by("id")),
            Prefetch("facts", queryset=Fact.objects.order_by("position")),
        )
        .select_related("document", "document__owner")
    )
