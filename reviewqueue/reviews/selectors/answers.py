from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet

from reviewqueue.accounts.principals import may_read
from reviewqueue.reviews.models import Answer, Decision, RetrievedItem, Verdict
from reviewqueue.sources.models import Document


def answer_ids_citing(document_key: str) -> QuerySet[Answer]:
    """Answers with a retrieved item on `document_key`, through the document index."""
    return (
        RetrievedItem.objects.filter(document_key=document_key)
        .values_list("answer_id", flat=True)
        .distinct()
        .order_by("answer_id")
    )


def answer_detail(trace_id: str) -> Answer | None:
    return (
        Answer.objects.select_related("current_verdict", "current_version")
        .prefetch_related(
            Prefetch("verdicts", queryset=Verdict.objects.order_by("-id")),
            Prefetch("decisions", queryset=Decision.objects.order_by("id")
                     .select_related("reviewer")),
            "retrieved",
        )
        .filter(trace_id=trace_id)
        .first()
    )


def user_may_read_answer(answer: Answer, principals: frozenset[str]) -> bool:
    """A person may see an answer only when they may read every document it retrieved."""
    keys = {item.document_key for item in answer.retrieved.all()}
    allowed = dict(Document.objects.filter(key__in=keys).values_list("key",
                                                                      "allowed_principals"))
    # A document the store has not received yet has no readers but the services.
    return all(key in allowed and may_read(allowed[key], principals) for key in keys)


RESTRICTED_MESSAGE = "sources in force disagree, and one of them is a document you may not read"


def redact_findings(findings: list[dict[str, Any]], principals: frozenset[str]
                    ) -> list[dict[str, Any]]:
    """Findings whose message draws on a knowledge-base document the caller may not read say
    only that such a document exists: no value, no document id."""
    keys = {d for f in findings for d in f.get("kb_documents") or ()}
    if not keys:
        return findings
    allowed = dict(Document.objects.filter(key__in=keys)
                   .values_list("key", "allowed_principals"))
    out = []
    for finding in findings:
        hidden = [d for d in finding.get("kb_documents") or ()
                  if d not in allowed or not may_read(allowed[d], principals)]
        if hidden:
            finding = {**finding, "message": RESTRICTED_MESSAGE,
                       "kb_documents": [d for d in finding["kb_documents"] if d not in hidden]}
        out.append(finding)
    return out


def conflicts_of_answer(answer: Answer) -> list[Any]:
    """Open or dismissed conflict records on the answer's cited documents and claimed keys."""
    from reviewqueue.sources.models import Conflict

    keys = [item.document_key for item in answer.retrieved.all()]
    version = answer.current_version
    claim_keys = {c.get("key") for c in (version.claims if version else [])}
    if not keys or not claim_keys:
        return []
    return list(
        Conflict.objects.filter(documents__overlap=keys, key__in=claim_keys)
        .exclude(status=Conflict.Status.CLOSED)
        .order_by("key", "subject")
    )


def owners_to_ask(answer: Answer, conflicts: list[Any] | None = None) -> list[Any]:
    """Owners of the cited documents that take part in a conflict on the answer; without such
    a conflict, the owners of every cited document."""
    keys = {item.document_key for item in answer.retrieved.all()}
    if conflicts is None:
        conflicts = conflicts_of_answer(answer)
    involved = {k for c in conflicts for k in c.documents} & keys
    documents = Document.objects.filter(key__in=involved or keys).select_related("owner")
    return list({d.owner_id: d.owner for d in documents}.values())
