"""Accept an answer from the upstream RAG service and gate it at once."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from reviewqueue.audit.services import Actor
from reviewqueue.errors import Conflict
from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem
from reviewqueue.reviews.services.evaluation import run_gate, store_verdict, today
from reviewqueue.reviews.services.transitions import answer_apply_verdict


@dataclass(frozen=True)
class RetrievedInput:
    cite: str
    document_id: str
    revision: str
    span: str = ""


@dataclass(frozen=True)
class AnswerInput:
    trace_id: str
    question: str
    answer: str
    asked_by: tuple[str, ...]
    index_release: str
    retrieved: tuple[RetrievedInput, ...]
    claims: tuple[dict[str, Any], ...]
    as_of: date | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def digest(self) -> str:
        body = {
            "trace_id": self.trace_id,
            "question": self.question,
            "answer": self.answer,
            "asked_by": list(self.asked_by),
            "index_release": self.index_release,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "retrieved": [[r.cite, r.document_id, r.revision, r.span] for r in self.retrieved],
            "claims": list(self.claims),
        }
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class IngestResult:
    answer: Answer
    created: bool


def _existing(trace_id: str, digest: str) -> IngestResult | None:
    answer = Answer.objects.select_related("current_verdict").filter(trace_id=trace_id).first()
    if answer is None:
        return None
    if answer.body_digest != digest:
        raise Conflict(
            f"trace_id {trace_id!r} was already submitted with a different body",
            extra={"trace_id": trace_id},
        )
    return IngestResult(answer, created=False)


def answer_ingest(*, data: AnswerInput, actor: Actor, user: Any = None) -> IngestResult:
    """Store the answer, gate it on the current revisions and queue it if held.

    The same trace_id with the same body returns the stored result and stores nothing; with a
    different body it is a conflict. The number of queries does not grow with the claims.
    """
    digest = data.digest()
    found = _existing(data.trace_id, digest)
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return _create(data, digest, actor, user)
    except IntegrityError:
        # Another request with the same trace_id committed first; answer as a replay would.
        found = _existing(data.trace_id, digest)
        if found is None:
            raise
        return found


def _create(data: AnswerInput, digest: str, actor: Actor, user: Any) -> IngestResult:
    now = timezone.now()
    answer = Answer.objects.create(
        trace_id=data.trace_id,
        question=data.question,
        asked_by=list(data.asked_by),
        index_release=data.index_release,
        as_of=data.as_of,
        status="",
        status_changed_at=now,
        body_digest=digest,
        submitted_by=user if getattr(user, "is_authenticated", False) else None,
    )
    version = AnswerVersion.objects.create(
        answer=answer, number=1, text=data.answer, claims=list(data.claims)
    )
    retrieved = RetrievedItem.objects.bulk_create(
        [
            RetrievedItem(
                answer=answer,
                cite=r.cite,
                document_key=r.document_id,
                revision=r.revision,
                span=r.span,
            )
            for r in data.retrieved
        ]
    )
    run = run_gate(answer=answer, version=version, retrieved=retrieved, as_of=data.as_of or today())
    verdict, _ = store_verdict(answer=answer, version=version, run=run, trigger="ingest")
    answer_apply_verdict(answer=answer, verdict=verdict, actor=actor, cause="ingest")
    return IngestResult(answer, created=True)
