"""Gate one answer version against the revisions that are current right now."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import gating
from reviewqueue.errors import FieldError
from reviewqueue.instants import today
from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, Verdict
from reviewqueue.sources.selectors import (
    CurrentDocument,
    FactRow,
    current_documents,
    current_facts_on,
    received_revisions,
)

OPEN_END = "9999-12-31"


class GateInputError(FieldError):
    """The gate cannot take the input built from this answer and the store as it stands (a
    limit): an input error named in the answer's own terms, never a verdict. Ingest refuses the
    answer with it; a re-evaluation that meets it fails, and the answer keeps its verdict."""


# Where the gate's input comes from in an answer: its evidence from `retrieved`, the
# knowledge-base facts from the claims' keys.
_ANSWER_FIELD = {"evidence": "retrieved", "kb_facts": "claims"}


def _gate_input_error(exc: gating.InputError) -> GateInputError:
    head = re.split(r"[.\[]", exc.path, maxsplit=1)[0]
    return GateInputError(_ANSWER_FIELD.get(head, exc.path),
                          f"the gate cannot take this answer: {exc.message}")


@dataclass(frozen=True)
class GateRun:
    """A gate verdict plus what it was computed from, ready to be stored."""

    verdict: gating.Verdict
    revisions_used: list[dict[str, Any]]
    # Checked on the day the answer names (`Answer.as_of`), not on today: time passing
    # changes nothing, so the verdict has no next boundary for the validity sweep.
    pinned_day: bool = False


def gate_today() -> date:
    """Today, as the gate takes it (for an answer that names no day of its own)."""
    return today()


def gate_day(answer: Answer, today_is: date | None = None) -> date:
    """The day the gate checks validity on, for ingest, re-evaluation and decisions alike:
    the day the question was about when the answer names one (`as_of`), else today. Every
    path agrees, so re-evaluating with no new source gives the verdict ingest gave. A batch
    reads `gate_today` once and passes it as `today_is`: every answer in it is judged on one
    day, and the clock is not read 500 times."""
    return answer.as_of or today_is or today()


def _fact_fields(fact: FactRow) -> dict[str, Any]:
    """A stored fact in the gate's terms: ISO dates, an open end as 9999-12-31, None for
    blanks."""
    return {
        "key": fact.key,
        "value": fact.value,
        "valid_from": fact.valid_from.isoformat(),
        "valid_until": fact.valid_until.isoformat() if fact.valid_until else OPEN_END,
        "subject": fact.subject or None,
        "span": fact.span or None,
    }


def _gate_fact(fact: FactRow) -> gating.Fact:
    return gating.Fact(**_fact_fields(fact))


def gate_claims(version: AnswerVersion) -> list[gating.Claim]:
    return [
        gating.Claim(key=c["key"], value=c["value"], cite=c["cite"], subject=c.get("subject"))
        for c in version.claims
    ]


@dataclass(frozen=True)
class KbRow:
    """A fact of some document's current revision, with who may read that document."""

    document: str
    revision: str
    allowed_principals: tuple[str, ...]
    fact: gating.KbFact


@dataclass(frozen=True)
class Sources:
    """What the gate reads from the store, loaded once for one answer or a whole batch."""

    documents: dict[str, CurrentDocument]
    # The cited revisions the store has received, each with which of the cited spans it has.
    received: dict[tuple[str, str], frozenset[str]]
    # Current facts by key, but none on a (subject, key) whose conflict an owner dismissed,
    # except the facts the dismissal kept as exceptions.
    kb: dict[str, list[KbRow]]
    gate_facts: dict[int, tuple[gating.Fact, ...]] = field(default_factory=dict)
    # What knowledge_base_facts gave, by what it was asked: the answers of a batch that claim
    # the same keys for the same askers, citing the same documents, get the same tuple.
    kb_facts_given: dict[tuple[frozenset[tuple[str | None, str]], frozenset[str], frozenset[str]],
                         tuple[gating.KbFact, ...]] = field(default_factory=dict)
    # The cited revisions the store had not received: a late delivery of one changes nothing
    # current, yet the verdict of an answer citing it.
    unreceived: frozenset[tuple[str, str]] = frozenset()

    def facts_of(self, document: CurrentDocument) -> tuple[gating.Fact, ...]:
        """A current revision's facts as the gate takes them, converted once per batch."""
        assert document.revision_id is not None
        if document.revision_id not in self.gate_facts:
            self.gate_facts[document.revision_id] = tuple(_gate_fact(f) for f in document.facts)
        return self.gate_facts[document.revision_id]


def load_sources(cited: Iterable[tuple[str, str, str]], keys: Iterable[str]) -> Sources:
    """For the cited (document, revision, span) triples: the current revisions (with facts) of
    the documents, which cited revisions the store received and which cited spans they have;
    and the current facts anywhere on `keys` (3 queries at most, whatever the number of
    answers, citations or claims)."""
    cited = set(cited)
    spans = {span for _, _, span in cited if span}
    documents = current_documents((key for key, _, _ in cited), spans)
    # A document's current revision was received; only older revisions need looking up.
    received = {(key, document.revision): document.spans for key, document in documents.items()
                if document.revision is not None}
    older = {(key, revision) for key, revision, _ in cited} - received.keys()
    received.update(received_revisions(older, spans))
    return Sources(documents=documents, received=received, kb=_kb_rows(set(keys)),
                   unreceived=frozenset(older - received.keys()))


def _kb_rows(keys: set[str]) -> dict[str, list[KbRow]]:
    out: dict[str, list[KbRow]] = {}
    for document, revision, allowed, fact in current_facts_on(keys):
        kb_fact = gating.KbFact(document=document, revision=revision, **_fact_fields(fact))
        out.setdefault(fact.key, []).append(KbRow(document, revision, allowed, kb_fact))
    return out


def _kb_rows_for(sources: Sources, wanted: set[tuple[str | None, str]],
                 principals: Iterable[str], exclude_documents: set[str]) -> list[KbRow]:
    """The current facts elsewhere in the knowledge base that the gate's conflict step reads
    for claims on the (subject, key) pairs `wanted`: a claim with no subject reads every fact
    on its key, one with a subject the facts about it; only from documents the holder of
    `principals` may read, never from the retrieved ones, and on a (subject, key) whose
    conflict an owner dismissed as expected only the facts kept as exceptions."""
    readers = set(principals) | {"*"}
    out = []
    for key in sorted({key for _, key in wanted}):
        for row in sources.kb.get(key, ()):
            if (None, key) not in wanted and (row.fact.subject, key) not in wanted:
                continue
            if row.document in exclude_documents or not readers.intersection(
                    row.allowed_principals):
                continue
            out.append(row)
    return out


def knowledge_base_facts(
    sources: Sources, claims: list[gating.Claim], principals: Iterable[str],
    exclude_documents: set[str],
) -> tuple[gating.KbFact, ...]:
    """The knowledge-base facts the gate checks `claims` against, for an asker holding
    `principals` (see _kb_rows_for). Asked the same again for another answer of the batch, the
    same tuple: the gate then checks and writes it once."""
    wanted = frozenset((c.subject, c.key) for c in claims)
    asked = (wanted, frozenset(principals), frozenset(exclude_documents))
    facts = sources.kb_facts_given.get(asked)
    if facts is None:
        facts = sources.kb_facts_given[asked] = tuple(
            row.fact for row in _kb_rows_for(sources, set(wanted), asked[1], exclude_documents))
    return facts


def claims_on_hidden_facts(
    sources: Sources, claims: list[dict[str, Any]], asked_by: Iterable[str],
    exclude_documents: set[str], reader: Iterable[str],
) -> list[int]:
    """The numbers (from 1) of `claims` that the gate checks against a knowledge-base fact the
    asker may read and `reader` may not: the verdict on such a claim depends on a value the
    reader must not learn, so a reader who could change the claim at will could learn it from
    the verdicts (a warning comes and goes as the guess matches)."""
    readers = set(reader) | {"*"}
    return [number for number, claim in enumerate(claims, start=1)
            if any(not readers.intersection(row.allowed_principals) for row in _kb_rows_for(
                sources, {(claim.get("subject"), claim["key"])}, asked_by, exclude_documents))]


def run_gate(
    *,
    answer: Answer,
    version: AnswerVersion,
    retrieved: list[RetrievedItem],
    as_of: date,
    sources: Sources | None = None,
) -> GateRun:
    """Build the gate's input from the store and evaluate. Reads only; stores nothing.

    Each retrieved item becomes one evidence item with the facts of its document's *current*
    revision, marked superseded when that is not the revision the answer was generated from.
    A revision the store never received, a span the revision has no passage for, or a
    withdrawn document, is passed as unresolved; for the first two, with the allowed
    principals of the document's current revision, so that the gate's step 0 still refuses an
    asker who may not read the document.
    """
    claims = gate_claims(version)
    if sources is None:
        sources = load_sources(
            ((item.document_key, item.revision, item.span) for item in retrieved),
            (c.key for c in claims))
    documents, received = sources.documents, sources.received

    evidence: list[gating.Evidence] = []
    unresolved: list[tuple[str, str]] = []
    unresolved_principals: list[tuple[str, tuple[str, ...]]] = []
    used: list[dict[str, Any]] = []
    for item in retrieved:
        document = documents.get(item.document_key)
        current = document.revision if document is not None else None
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
        spans = received.get((item.document_key, item.revision))
        if current is None or spans is None or (item.span and item.span not in spans):
            # Never received, or received without the passage the answer says it quotes.
            received_it = current is not None and spans is not None
            missing = "passage_not_found" if received_it else "revision_not_received"
            unresolved.append((item.cite, missing))
            if document is not None and current is not None:
                unresolved_principals.append((item.cite, document.allowed_principals))
            used.append(
                {
                    "cite": item.cite,
                    "document": item.document_key,
                    "revision": item.revision,
                    # The gate read no revision for it. Naming the one current now would go
                    # stale with the next publish, which leaves the verdict as it is (only
                    # the document's access list, in the fingerprint, counts).
                    "current": None,
                    **({"passage_found": False} if received_it else {"received": False}),
                }
            )
            continue
        assert document is not None
        evidence.append(
            gating.Evidence(
                id=item.cite,
                facts=sources.facts_of(document),
                document=item.document_key,
                revision=item.revision,
                span=item.span or None,
                allowed_principals=document.allowed_principals,
                superseded=current != item.revision,
                current_revision=current,
            )
        )
        used.append(
            {
                "cite": item.cite,
                "document": item.document_key,
                "revision": item.revision,
                "current": current,
            }
        )

    kb = knowledge_base_facts(
        sources, claims, answer.asked_by, {item.document_key for item in retrieved}
    )
    _check_fact_limits(evidence, claims, kb)
    try:
        verdict = gating.evaluate(
            claims,
            evidence,
            gating.Options(
                as_of=as_of,
                answer_text=version.text,
                principals=tuple(answer.asked_by),
                kb_facts=kb,
                unresolved=tuple(unresolved),
                unresolved_principals=tuple(unresolved_principals),
            ),
        )
    except gating.InputError as exc:
        # The API checks what the sender controls; this catches whatever is left.
        raise _gate_input_error(exc) from exc
    return GateRun(verdict=verdict, revisions_used=used, pinned_day=answer.as_of is not None)


def _check_fact_limits(evidence: list[gating.Evidence], claims: list[gating.Claim],
                       kb: Sequence[gating.KbFact]) -> None:
    """The gate takes at most MAX_FACTS facts of evidence and as many from the rest of the
    knowledge base. Both depend on the store as well as the answer, so only here can they be
    checked; the error says which part of the answer brings them in.

    Each cite carries every fact of its document: the gate checks a claim (or a marker)
    against the facts of the item it cites, so a document cited eleven times counts eleven
    times."""
    facts = sum(len(item.facts) for item in evidence)
    if facts > gating.MAX_FACTS:
        raise GateInputError(
            "retrieved",
            f"the cited documents bring {facts} facts to the gate (each cite carries every fact "
            f"of its document), over its limit of {gating.MAX_FACTS}; cite fewer passages of "
            "large documents",
        )
    if len(kb) > gating.MAX_FACTS:
        by_key = Counter(fact.key for fact in kb)
        by_pair = Counter((fact.subject, fact.key) for fact in kb)
        counts = [by_key[c.key] if c.subject is None else by_pair[c.subject, c.key]
                  for c in claims]
        index = max(range(len(claims)), key=counts.__getitem__)
        raise GateInputError(
            f"claims[{index}].key",
            f"the knowledge base holds {len(kb)} facts on the claims' keys ({counts[index]} on "
            f"{claims[index].key!r}) for the gate to compare, over its limit of "
            f"{gating.MAX_FACTS}; a claim that names its subject is compared with the facts "
            "on that subject only",
        )


def verdict_fields(run: GateRun, trigger: str) -> dict[str, Any]:
    """The columns of a stored verdict, apart from its answer and version."""
    result = run.verdict
    codes: list[str] = [result.reason] if result.decision != "candidate" else []
    for finding in result.findings:
        if finding.code not in codes:
            codes.append(finding.code)
    return {
        "decision": result.decision,
        "reason": result.reason,
        "reasons": codes,
        "findings": [finding.to_dict() for finding in result.findings],
        "warnings": [warning.to_dict() for warning in result.warnings],
        "fingerprint": result.fingerprint,
        "gate_version": result.gate_version,
        "as_of": result.as_of,
        "next_boundary": None if run.pinned_day else result.next_boundary,
        "revisions_used": run.revisions_used,
        "trigger": trigger,
    }


def store_verdict(
    *, answer: Answer, version: AnswerVersion, run: GateRun, trigger: str
) -> tuple[Verdict, bool]:
    """Store the verdict unless this exact (version, fingerprint) already exists."""
    fields = verdict_fields(run, trigger)
    return Verdict.objects.get_or_create(
        version=version,
        fingerprint=fields.pop("fingerprint"),
        defaults={"answer": answer, **fields},
    )


def older_gate(mine: str, theirs: str) -> bool:
    """Whether gate version `mine` ("2026.12.7") is older than `theirs`: during a rolling
    deploy, a process of the previous release must not put its verdict in place of one the
    new gate gave. Versions that are not numbers separated by dots are not compared."""
    def release(version: str) -> tuple[int, ...] | None:
        parts = version.split(".")
        return (tuple(map(int, parts))
                if all(part.isascii() and part.isdigit() for part in parts) else None)

    ours, newer = release(mine), release(theirs)
    return ours is not None and newer is not None and ours < newer


def boundary_come(answer: Answer, verdict: Verdict) -> date | None:
    """The day, on or before the day the gate checks the answer on, on which a fact `verdict`
    weighed started or stopped holding: from that day the verdict is behind, until the daily
    validity check re-evaluates the answer. None while no such day has come."""
    boundary = verdict.next_boundary
    return boundary if boundary is not None and boundary <= gate_day(answer) else None


def day_passed_under(answer: Answer, verdict: Verdict) -> date | None:
    """The day on which a fact `verdict` weighed started or stopped holding, when that alone
    keeps it from being fresh: it is of the answer's current version, its next boundary has
    come, and gated again on its own day, on the sources as they are now, the answer gives
    its very fingerprint (nothing was published, withdrawn or dismissed since). None when the
    sources changed, or the answer was edited."""
    boundary = boundary_come(answer, verdict)
    if boundary is None or verdict.version_id != answer.current_version_id:
        return None
    run = run_gate(answer=answer, version=verdict.version, retrieved=list(answer.retrieved.all()),
                   as_of=verdict.as_of)
    return boundary if run.verdict.fingerprint == verdict.fingerprint else None


def verdict_is_fresh(answer: Answer, verdict: Verdict) -> bool:
    """True while gating the answer now would give exactly this verdict's fingerprint."""
    if answer.current_verdict_id != verdict.pk or answer.current_version_id != verdict.version_id:
        return False
    version = verdict.version
    retrieved = list(answer.retrieved.all())
    run = run_gate(answer=answer, version=version, retrieved=retrieved,
                   as_of=gate_day(answer))
    return run.verdict.fingerprint == verdict.fingerprint
