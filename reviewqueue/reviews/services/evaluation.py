"""Gate one answer version against the revisions that are current right now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

import gating
from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, Verdict
from reviewqueue.sources.models import Conflict, Document, Fact
from reviewqueue.sources.selectors import current_documents, received_revisions

OPEN_END = "9999-12-31"


@dataclass(frozen=True)
class GateRun:
    """A gate verdict plus what it was computed from, ready to be stored."""

    verdict: gating.Verdict
    revisions_used: list[dict[str, Any]]


def today() -> date:
    """The gate's as_of for ingest, re-evaluation and decisions alike: today in TIME_ZONE,
    unless REEVALUATION_TODAY pins a date (drills and tests), so that every path agrees."""
    pinned: date | None = settings.REEVALUATION_TODAY
    return pinned if pinned is not None else timezone.localdate()


def _gate_fact(fact: Any) -> gating.Fact:
    return gating.Fact(
        key=fact.key,
        value=fact.value,
        valid_from=fact.valid_from.isoformat(),
        valid_until=fact.valid_until.isoformat() if fact.valid_until else OPEN_END,
        subject=fact.subject or None,
        span=fact.span or None,
    )


def gate_claims(version: AnswerVersion) -> list[gating.Claim]:
    return [
        gating.Claim(key=c["key"], value=c["value"], cite=c["cite"], subject=c.get("subject"))
        for c in version.claims
    ]


def knowledge_base_facts(
    claims: list[gating.Claim], principals: list[str], exclude_documents: set[str]
) -> list[gating.KbFact]:
    """Current facts elsewhere in the knowledge base on the claims' keys, for the gate's
    conflict step: only from documents the asker may read, never from the retrieved ones, and
    not on a (subject, key) whose conflict an owner dismissed as expected."""
    if not claims:
        return []
    readable = Q(revision__document__allowed_principals__contains=["*"])
    if principals:
        readable |= Q(revision__document__allowed_principals__overlap=list(principals))
    dismissed = Conflict.objects.filter(
        status=Conflict.Status.DISMISSED, subject=OuterRef("subject"), key=OuterRef("key")
    )
    facts = (
        Fact.objects.filter(
            key__in={c.key for c in claims}, revision__document__current_revision=F("revision")
        )
        .filter(readable)
        .exclude(revision__document__key__in=exclude_documents)
        .exclude(Exists(dismissed))
        .values_list(
            "revision__document__key",
            "revision__revision",
            "subject",
            "key",
            "value",
            "valid_from",
            "valid_until",
            "span",
        )
    )
    wanted = {(c.subject, c.key) for c in claims}
    out = []
    for document, revision, subject, key, value, valid_from, valid_until, span in facts:
        if (None, key) not in wanted and (subject, key) not in wanted:
            continue
        out.append(
            gating.KbFact(
                document=document,
                revision=revision,
                key=key,
                value=value,
                valid_from=valid_from.isoformat(),
                valid_until=valid_until.isoformat() if valid_until else OPEN_END,
                subject=subject or None,
                span=span or None,
            )
        )
    return out


def run_gate(
    *,
    answer: Answer,
    version: AnswerVersion,
    retrieved: list[RetrievedItem],
    as_of: date,
    documents: dict[str, Document] | None = None,
) -> GateRun:
    """Build the gate's input from the store and evaluate. Reads only; stores nothing.

    Each retrieved item becomes one evidence item with the facts of its document's *current*
    revision, marked superseded when that is not the revision the answer was generated from.
    A revision the store never received, or a withdrawn document, is passed as unresolved.
    """
    if documents is None:
        documents = current_documents(item.document_key for item in retrieved)
    received = received_revisions((item.document_key, item.revision) for item in retrieved)

    evidence: list[gating.Evidence] = []
    unresolved: list[tuple[str, str]] = []
    used: list[dict[str, Any]] = []
    for item in retrieved:
        document = documents.get(item.document_key)
        current = document.current_revision if document is not None else None
        if document is not None and document.withdrawn_at is not None:
            unresolved.append((item.cite, "withdrawn"))
            used.append(
                {
                    "cite": item.cite,
                    "document": item.document_key,
                    "revision": item.revision,
                    "current": None,
                    "withdrawn": True,
                }
            )
            continue
        if current is None or (item.document_key, item.revision) not in received:
            unresolved.append((item.cite, "revision_not_received"))
            used.append(
                {
                    "cite": item.cite,
                    "document": item.document_key,
                    "revision": item.revision,
                    "current": current.revision if current else None,
                    "received": False,
                }
            )
            continue
        facts = tuple(_gate_fact(f) for f in current.fact_list)  # type: ignore[attr-defined]
        superseded = current.revision != item.revision
        evidence.append(
            gating.Evidence(
                id=item.cite,
                facts=facts,
                document=item.document_key,
                revision=item.revision,
                span=item.span or None,
                allowed_principals=tuple(current.allowed_principals),
                superseded=superseded,
                current_revision=current.revision,
            )
        )
        used.append(
            {
                "cite": item.cite,
                "document": item.document_key,
                "revision": item.revision,
                "current": current.revision,
            }
        )

    claims = gate_claims(version)
    kb = knowledge_base_facts(
        claims, list(answer.asked_by), {item.document_key for item in retrieved}
    )
    verdict = gating.evaluate(
        claims,
        evidence,
        gating.Options(
            as_of=as_of,
            answer_text=version.text,
            principals=tuple(answer.asked_by),
            kb_facts=tuple(kb),
            unresolved=tuple(unresolved),
        ),
    )
    return GateRun(verdict=verdict, revisions_used=used)


def store_verdict(
    *, answer: Answer, version: AnswerVersion, run: GateRun, trigger: str
) -> tuple[Verdict, bool]:
    """Store the verdict unless this exact (version, fingerprint) already exists."""
    result = run.verdict
    codes: list[str] = [result.reason] if result.decision != "candidate" else []
    for finding in result.findings:
        if finding.code not in codes:
            codes.append(finding.code)
    data = result.to_dict()
    return Verdict.objects.get_or_create(
        version=version,
        fingerprint=result.fingerprint,
        defaults={
            "answer": answer,
            "decision": result.decision,
            "reason": result.reason,
            "reasons": codes,
            "findings": data["findings"],
            "warnings": data["warnings"],
            "gate_version": result.gate_version,
            "as_of": result.as_of,
            "next_boundary": result.next_boundary,
            "revisions_used": run.revisions_used,
            "trigger": trigger,
        },
    )


def verdict_is_fresh(answer: Answer, verdict: Verdict) -> bool:
    """True while gating the answer now would give exactly this verdict's fingerprint."""
    if answer.current_verdict_id != verdict.pk or answer.current_version_id != verdict.version_id:
        return False
    version = verdict.version
    retrieved = list(answer.retrieved.all())
    run = run_gate(answer=answer, version=version, retrieved=retrieved, as_of=today())
    return run.verdict.fingerprint == verdict.fingerprint
