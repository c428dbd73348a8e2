from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Prefetch, QuerySet

import gating
from reviewqueue.accounts.models import Role
from reviewqueue.accounts.principals import may_read, may_read_every, user_principals
from reviewqueue.accounts.roles import has_role, remember_groups
from reviewqueue.reviews.models import Answer, Decision, OwnerQuestion, RetrievedItem, Verdict
from reviewqueue.sources.models import Document, Revision
from reviewqueue.sources.selectors import documents_behind_hold


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
                     .select_related("reviewer", "new_version")),
            Prefetch("owner_questions", queryset=OwnerQuestion.objects.order_by("asked_at", "id")
                     .select_related("asked_by", "replied_by")),
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
    return may_read_every(keys, allowed, principals)


RESTRICTED_MESSAGE = "sources in force disagree, and one of them is a document you may not read"
UNREADABLE_REVISION_MESSAGE = ("this verdict was computed on a revision of a cited document "
                               "that you may not read")
RESTRICTED_WARNING = "claim {claim} rests on a single source: a document you may not read"
# Warnings stored before the gate listed their kb_documents name them only in the message.
_KB_NAMED = re.compile(r"knowledge-base document (.+?)(?=, |$)")


def redact_verdicts(verdicts: list[dict[str, Any]], principals: frozenset[str]
                    ) -> list[dict[str, Any]]:
    """Verdict bodies whose findings and warnings draw on a knowledge-base document the caller
    may not read, with those messages saying only that such a document exists: no value, no
    document id. One query for any number of verdicts.

    An older verdict may also have been computed on a revision the caller may not read (the
    document was restricted then): each of its messages then says only that."""
    verdicts = _redact_unreadable_revisions(verdicts, principals)
    keys = {d for v in verdicts for entry in (*v["findings"], *v["warnings"])
            for d in _kb_documents(entry)}
    if not keys:
        return verdicts
    allowed = dict(Document.objects.filter(key__in=keys)
                   .values_list("key", "allowed_principals"))
    hidden = {d for d in keys if d not in allowed or not may_read(allowed[d], principals)}
    if not hidden:
        return verdicts
    return [
        {**v,
         "findings": [_redacted(f, hidden, RESTRICTED_MESSAGE) for f in v["findings"]],
         "warnings": [_redacted(w, hidden, RESTRICTED_WARNING.format(claim=w.get("claim")))
                      for w in v["warnings"]]}
        for v in verdicts
    ]


def _redact_unreadable_revisions(verdicts: list[dict[str, Any]], principals: frozenset[str]
                                 ) -> list[dict[str, Any]]:
    """See redact_verdicts. One query, none when no verdict names the revisions it used."""
    used = [{(r["document"], r["current"]) for r in v.get("revisions_used") or ()
             if r.get("current")} for v in verdicts]
    pairs = set().union(*used)
    if not pairs:
        return verdicts
    readable = {
        (key, revision) for key, revision, allowed in Revision.objects.filter(
            document__key__in={d for d, _ in pairs}, revision__in={r for _, r in pairs},
        ).values_list("document__key", "revision", "allowed_principals")
        if may_read(allowed, principals)
    }
    return [
        v if pairs_used <= readable else
        {**v,
         "findings": [{**f, "message": UNREADABLE_REVISION_MESSAGE} for f in v["findings"]],
         "warnings": [{**w, "message": UNREADABLE_REVISION_MESSAGE} for w in v["warnings"]]}
        for v, pairs_used in zip(verdicts, used, strict=True)
    ]


def redact_findings(findings: list[dict[str, Any]], principals: frozenset[str]
                    ) -> list[dict[str, Any]]:
    """`redact_verdicts` for a list of findings alone."""
    redacted: list[dict[str, Any]] = redact_verdicts([{"findings": findings, "warnings": []}],
                                                     principals)[0]["findings"]
    return redacted


def _kb_documents(entry: dict[str, Any]) -> list[str]:
    if "kb_documents" in entry:
        return list(entry["kb_documents"] or ())
    return _KB_NAMED.findall(entry.get("message") or "")


def _redacted(entry: dict[str, Any], hidden: set[str], message: str) -> dict[str, Any]:
    documents = _kb_documents(entry)
    if hidden.isdisjoint(documents):
        return entry
    return {**entry, "message": message,
            "kb_documents": [d for d in documents if d not in hidden]}


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


def owners_to_ask(answer: Answer, reviewer: Any, conflicts: list[Any] | None = None
                  ) -> list[Any]:
    """Owners of the documents behind the hold (`documents_behind_hold`) that `reviewer` may
    be told of: a knowledge-base document the answer did not retrieve counts only when the
    reviewer may read it (the page says another source disagrees, never which it is)."""
    if conflicts is None:
        conflicts = conflicts_of_answer(answer)
    verdict = answer.current_verdict
    retrieved = {item.cite: item.document_key for item in answer.retrieved.all()}
    keys = documents_behind_hold(retrieved, verdict.findings if verdict else (),
                                 {k for c in conflicts for k in c.documents})
    principals = user_principals(reviewer)
    documents = [d for d in Document.objects.filter(key__in=keys).select_related("owner")
                 if d.key in retrieved.values() or may_read(d.allowed_principals, principals)]
    return list({d.owner_id: d.owner for d in documents}.values())


def owners_who_may_read(answer: Answer, owners: list[Any]) -> list[Any]:
    """The owners among `owners` who find the answer in their inbox (/owner/): active owners
    or admins who may read every document it cites, the rule the inbox applies (see
    readable_answers). Two queries whatever the number of owners."""
    if not owners:
        return []
    names: dict[int, list[str]] = {o.pk: [] for o in owners}
    memberships = get_user_model().groups.through.objects.filter(user_id__in=names)
    for user_id, name in memberships.values_list("user_id", "group__name"):
        names[user_id].append(name)
    for o in owners:
        remember_groups(o, names[o.pk])
    cited = {item.document_key for item in answer.retrieved.all()}
    allowed = dict(Document.objects.filter(key__in=cited).values_list("key", "allowed_principals"))
    return [o for o in owners if has_role(o, Role.OWNER, Role.ADMIN)
            and may_read_every(cited, allowed, user_principals(o))]


def held_cites(findings: list[dict[str, Any]], claims: list[dict[str, Any]], text: str
               ) -> set[Any]:
    """The retrieved items whose revisions a verdict holds an answer for (the transitions'
    `_held_for`, and the owners' count of the waits a publish ends): those a claim or a marker
    in `text` cites, or a finding names by its id. A new revision of another document the
    answer retrieved changes nothing the reviewer reads."""
    return ({claim.get("cite") for claim in claims} | set(gating.extract_markers(text))
            | {cite for f in findings for cite in f.get("evidence") or ()})
