"""Accept an answer from the upstream RAG service and gate it at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from reviewqueue.audit.services import Actor
from reviewqueue.copying import built, copy_instances
from reviewqueue.errors import Conflict, DomainError
from reviewqueue.prepared import prepared_cursor
from reviewqueue.replays import fields_differing
from reviewqueue.reviews.models import (
    Answer,
    AnswerVersion,
    RetrievedItem,
    Verdict,
    answer_body,
    body_sha256,
)
from reviewqueue.reviews.services.evaluation import (
    GateInputError,
    gate_day,
    gate_today,
    load_sources,
    run_gate,
    verdict_fields,
)
from reviewqueue.reviews.services.reevaluation import catch_up_on_commit
from reviewqueue.reviews.services.transitions import answers_enter, first_status


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

    def compared(self) -> dict[str, Any]:
        """What a replay is compared on, field by field."""
        return answer_body(
            trace_id=self.trace_id, question=self.question, text=self.answer,
            asked_by=self.asked_by, index_release=self.index_release, as_of=self.as_of,
            retrieved=[(r.cite, r.document_id, r.revision, r.span) for r in self.retrieved],
            claims=self.claims)

    def digest(self) -> str:
        return body_sha256(self.compared())


@dataclass(frozen=True)
class IngestResult:
    answer: Answer
    created: bool


def _replay(answer: Answer, data: AnswerInput, digest: str) -> IngestResult:
    """The same trace_id again: the stored result if the body is the same, else a conflict
    naming the fields that differ."""
    fields = [] if answer.body_digest == digest else _fields_differing(answer, data)
    if fields:
        raise Conflict(
            f"trace_id {answer.trace_id!r} was already submitted with a different body "
            f"(it differs in {', '.join(fields)})",
            extra={"trace_id": answer.trace_id, "errors": [
                {"field": name, "message": "differs from the body first submitted with this "
                                           "trace_id"} for name in fields]},
        )
    return IngestResult(answer, created=False)


def _fields_differing(answer: Answer, data: AnswerInput) -> list[str]:
    """The fields in which `data` differs from the body the answer was first stored from, read
    back from its first version and retrieved items (two queries). Who asked, in another
    order, is the same."""
    first = answer.versions.filter(number=1).values("text", "claims").first() or {}
    stored = answer.submitted_body(
        first.get("text"), first.get("claims") or [],
        answer.retrieved.order_by("pk").values_list("cite", "document_key", "revision", "span"))
    return fields_differing(stored, data.compared(), sets={"asked_by"})


def answer_ingest(*, data: AnswerInput, actor: Actor, user: Any = None) -> IngestResult:
    """Store the answer, gate it on the current revisions and queue it if held.

    The same trace_id with the same body returns the stored result and stores nothing; with a
    different body it is a conflict. The number of queries does not grow with the claims.
    """
    result = answers_ingest(items=[data], actor=actor, user=user)[0]
    if isinstance(result, DomainError):
        raise result
    return result


def answers_ingest(
    *, items: Sequence[AnswerInput], actor: Actor, user: Any = None
) -> list[IngestResult | DomainError]:
    """`answer_ingest` for many answers, one result per item in order, in one transaction
    whose number of queries does not grow with the answers: the sources are read once, each
    table gets one insert, the audit chain one append. A trace_id repeated in the batch is
    a replay (or a conflict) of its first occurrence, as if they had come one after another.
    An answer the gate cannot take (`GateInputError`) is that item's result, stored nowhere.
    """
    digests = [data.digest() for data in items]
    # One answer goes straight to its insert: a replay is rare, and the unique trace_id
    # turns it away there (see the IntegrityError below).
    stored = {} if len(items) == 1 else _stored({data.trace_id for data in items})
    results: list[IngestResult | DomainError | None] = [None] * len(items)
    first: dict[str, int] = {}
    for index, data in enumerate(items):
        if data.trace_id in stored:
            results[index] = _replayed(stored[data.trace_id], data, digests[index])
        elif data.trace_id not in first:
            first[data.trace_id] = index
    # Inserted in trace_id order: two batches sharing trace_ids then wait for one another on
    # the first they share, never each for the other (a deadlock).
    new = sorted(first.values(), key=lambda index: items[index].trace_id)
    if new:
        try:
            with transaction.atomic():
                created = _create_many([items[i] for i in new], [digests[i] for i in new],
                                       actor, user)
        except IntegrityError:
            # Another request stored one of these trace_ids first: take them one at a time,
            # so each answers as a replay would.
            if len(items) == 1:
                answer = Answer.objects.select_related("current_verdict").filter(
                    trace_id=items[0].trace_id).first()
                if answer is None:
                    raise
                return [_replayed(answer, items[0], digests[0])]
            return [answers_ingest(items=[data], actor=actor, user=user)[0] for data in items]
        for index, answer in zip(new, created, strict=True):
            results[index] = (IngestResult(answer, created=True) if isinstance(answer, Answer)
                              else answer)
    for index, data in enumerate(items):
        if results[index] is None:
            earlier = results[first[data.trace_id]]
            if isinstance(earlier, IngestResult):
                results[index] = _replayed(earlier.answer, data, digests[index])
            elif digests[index] == digests[first[data.trace_id]]:
                results[index] = earlier  # the same body, refused the same way
            else:
                # The first was refused and stored nothing: this one comes after it.
                results[index] = answers_ingest(items=[data], actor=actor, user=user)[0]
    return [r for r in results if r is not None]


def _stored(trace_ids: set[str]) -> dict[str, Answer]:
    """The stored answers among `trace_ids`, by trace_id. Most batches replay none: a prepared
    statement with one array parameter finds that out, where the ORM's IN list would send and
    parse a parameter for each (a few percent of a 500-answer batch)."""
    with prepared_cursor() as cursor:
        cursor.execute(f"SELECT trace_id FROM {Answer._meta.db_table} WHERE trace_id = ANY(%s)",
                       [list(trace_ids)])
        found = [trace_id for (trace_id,) in cursor.fetchall()]
    if not found:
        return {}
    return {answer.trace_id: answer
            for answer in Answer.objects.select_related("current_verdict").filter(
                trace_id__in=found)}


def _replayed(answer: Answer, data: AnswerInput, digest: str) -> IngestResult | DomainError:
    """`_replay`, with a conflict returned as this item's result instead of raised."""
    try:
        return _replay(answer, data, digest)
    except Conflict as exc:
        return exc


def _new_ids(count: int) -> list[tuple[int, int, int]]:
    """Ids for `count` answers, their first versions and verdicts, taken from the tables' own
    sequences: each row can then point at the others when it is inserted (the foreign keys
    are checked at commit), so each table takes one INSERT and no UPDATE follows."""
    tables = [model._meta.db_table for model in (Answer, AnswerVersion, Verdict)]
    with prepared_cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')), "
            "nextval(pg_get_serial_sequence(%s, 'id')), "
            "nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [*tables, count],
        )
        return [tuple(row) for row in cursor.fetchall()]  # type: ignore[misc]


def _create_many(items: list[AnswerInput], digests: list[str], actor: Actor,
                 user: Any) -> list[Answer | GateInputError]:
    """The answers stored, in order, or for an answer the gate cannot take its error."""
    now = timezone.now()
    submitter = user if getattr(user, "is_authenticated", False) else None
    sources = load_sources(
        ((r.document_id, r.revision, r.span) for data in items for r in data.retrieved),
        (claim["key"] for data in items for claim in data.claims),
    )
    citing: dict[str, list[int]] = {}
    claiming: dict[str, list[int]] = {}
    out: list[Answer | GateInputError] = []
    answers: list[Answer] = []
    versions: list[AnswerVersion] = []
    retrieved_rows: list[RetrievedItem] = []
    verdicts: list[Verdict] = []
    entered: list[tuple[Answer, Verdict, bool]] = []
    submitter_id = submitter.pk if submitter is not None else None
    day = gate_today()
    # Rows are tied together by id (`_new_ids`), not by assigning instances to foreign keys:
    # for 500 answers Django's related-object bookkeeping costs more than the gate does.
    cached_verdict = Answer.current_verdict.field  # type: ignore[attr-defined]
    cached_version = Verdict.version.field  # type: ignore[attr-defined]
    for data, digest, (answer_id, version_id, verdict_id) in zip(
            items, digests, _new_ids(len(items)), strict=True):
        answer = built(
            Answer,
            id=answer_id,
            trace_id=data.trace_id,
            question=data.question,
            asked_by=list(data.asked_by),
            index_release=data.index_release,
            as_of=data.as_of,
            status_changed_at=now,
            body_digest=digest,
            submitted_by_id=submitter_id,
            current_version_id=version_id,
            current_verdict_id=verdict_id,
        )
        version = built(AnswerVersion, id=version_id, answer_id=answer_id, number=1,
                        text=data.answer, claims=list(data.claims))
        retrieved = [
            built(RetrievedItem, answer_id=answer_id, cite=r.cite, document_key=r.document_id,
                  revision=r.revision, span=r.span)
            for r in data.retrieved
        ]
        try:
            run = run_gate(answer=answer, version=version, retrieved=retrieved,
                           as_of=gate_day(answer, day), sources=sources)
        except GateInputError as exc:
            out.append(exc)
            continue
        verdict = built(Verdict, id=verdict_id, answer_id=answer_id, version_id=version_id,
                        **verdict_fields(run, Verdict.Trigger.INGEST))
        answer.status, audit_sample = first_status(verdict.decision)
        cached_verdict.set_cached_value(answer, verdict)  # the reply shows it
        cached_version.set_cached_value(verdict, version)  # its audit event vouches for it
        out.append(answer)
        answers.append(answer)
        versions.append(version)
        retrieved_rows += retrieved
        for r in data.retrieved:
            citing.setdefault(r.document_id, []).append(answer_id)
        for claim in data.claims:
            claiming.setdefault(claim["key"], []).append(answer_id)
        verdicts.append(verdict)
        entered.append((answer, verdict, audit_sample))
    if answers:
        copy_instances(answers, versions, retrieved_rows, verdicts)
        answers_enter(entered=entered, actor=actor)
        catch_up_on_commit(sources, citing, claiming)
    return out
