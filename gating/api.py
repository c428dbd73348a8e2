"""Public entry points: typed ``evaluate`` and JSON-shaped ``evaluate_record``."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence

from gating import engine
from gating.model import (
    Claim,
    Evidence,
    Finding,
    GateWarning,
    Options,
    Verdict,
)
from gating.records import RawCase, iso_as_of, objects_to_raw, parse_raw, raw_to_objects


def evaluate(claims: Sequence[Claim], evidence: Sequence[Evidence], options: Options) -> Verdict:
    """Run the gate on typed input.

    Raises ``InputError`` (with the JSON path of the field) on malformed input; every other
    outcome, including dates that do not parse, is a verdict.
    """
    raw_claims, items, as_of, answer, principals, kb, unresolved, allowed = objects_to_raw(
        claims, evidence, options
    )
    # Typed input is what a caller gating many answers at once builds: it hands the same
    # Fact tuples to each, and the engine remembers what it made of them.
    decision, reason, findings, warnings, digest, boundary = engine.run(
        raw_claims, items, as_of, answer, principals, kb, unresolved, allowed, shared=True
    )
    return Verdict(
        decision=decision,
        reason=reason,
        findings=tuple(
            Finding(code=c, step=s, claim=i, evidence=e, message=m, kb_documents=k)
            for c, s, i, e, m, k in findings
        ),
        warnings=tuple(
            GateWarning(code=c, claim=i, evidence=e, message=m, kb_documents=k)
            for c, i, e, m, k in warnings
        ),
        fingerprint=digest,
        gate_version=engine.GATE_VERSION,  # read at call time, like the fingerprint does
        as_of=datetime.date.fromisoformat(as_of),
        next_boundary=datetime.date.fromisoformat(boundary) if boundary is not None else None,
    )


def parse_record(
    record: object, *, default_as_of: datetime.date | None = None
) -> tuple[tuple[Claim, ...], tuple[Evidence, ...], Options]:
    """Validate a JSON record and return ``(claims, evidence, options)`` for ``evaluate``.

    ``as_of`` comes from the record, else ``default_as_of`` (a datetime is read as its day, as
    in ``Options``), else today.
    """
    return raw_to_objects(parse_raw(record, _default_day(default_as_of)))


def _default_day(default_as_of: datetime.date | None) -> datetime.date | None:
    """`default_as_of` as a plain date, once per call: a datetime is a date too, whose
    isoformat() would be compared with the facts' days as if it were one. The command line
    passes a plain date, so the per-record path never needs this."""
    if default_as_of is None or type(default_as_of) is datetime.date:
        return default_as_of
    return datetime.date.fromisoformat(iso_as_of(default_as_of, "default_as_of"))


def _run_raw(case: RawCase) -> dict[str, object]:
    case_id, claims, items, as_of, answer, principals, kb, unresolved, allowed = case
    decision, reason, findings, warnings, digest, boundary = engine.run(
        claims, items, as_of, answer, principals, kb, unresolved, allowed
    )
    return {
        "id": case_id,
        "decision": decision,
        "reason": reason,
        "findings": [
            {
                "code": code,
                "step": step,
                "claim": claim,
                "evidence": list(evidence),
                "message": message,
                "kb_documents": list(kb_documents),
            }
            for code, step, claim, evidence, message, kb_documents in findings
        ],
        "warnings": [
            {
                "code": code,
                "claim": claim,
                "evidence": list(evidence),
                "message": message,
                "kb_documents": list(kb_documents),
            }
            for code, claim, evidence, message, kb_documents in warnings
        ],
        "fingerprint": digest,
        "next_boundary": boundary,
    }


_quote_ascii = json.encoder.encode_basestring_ascii


def result_line(case_id: str | int | None, result: engine.ResultT) -> str:
    """The compact JSON text of ``_run_raw``'s dictionary, written out directly.

    The CLI spends most of its time outside the rules; writing the line by hand instead of
    building dictionaries for ``json`` saves a third of it. A test checks that the text is
    exactly ``encode_json(evaluate_record(record))``.
    """
    decision, reason, findings, warnings, digest, boundary = result
    quote = _quote_ascii
    finding_text = (
        ",".join(
            [
                f'{{"code":"{code}","step":"{step}","claim":{"null" if claim is None else claim},'
                f'"evidence":[{",".join(map(quote, evidence))}],"message":{quote(message)},'
                f'"kb_documents":[{",".join(map(quote, kb_documents))}]}}'
                for code, step, claim, evidence, message, kb_documents in findings
            ]
        )
        if findings
        else ""
    )
    warning_text = (
        ",".join(
            [
                f'{{"code":"{code}","claim":{"null" if claim is None else claim},'
                f'"evidence":[{",".join(map(quote, evidence))}],"message":{quote(message)},'
                f'"kb_documents":[{",".join(map(quote, kb_documents))}]}}'
                for code, claim, evidence, message, kb_documents in warnings
            ]
        )
        if warnings
        else ""
    )
    if case_id is None:
        id_text = "null"
    elif type(case_id) is int:
        id_text = str(case_id)
    else:
        id_text = quote(case_id)  # type: ignore[arg-type]
    boundary_text = "null" if boundary is None else f'"{boundary}"'
    return (
        f'{{"id":{id_text},"decision":"{decision}","reason":"{reason}",'
        f'"findings":[{finding_text}],"warnings":[{warning_text}],'
        f'"fingerprint":"{digest}","next_boundary":{boundary_text}}}'
    )


def evaluate_record(
    record: object, *, default_as_of: datetime.date | None = None
) -> dict[str, object]:
    """Validate a JSON record and run the gate on it.

    Returns ``{"id", "decision", "reason", "findings", "warnings", "fingerprint",
    "next_boundary"}``, ready for ``json.dumps``. Raises ``InputError`` on malformed input.
    ``as_of`` comes from the record, else ``default_as_of`` (a datetime is read as its day),
    else today.
    """
    return _run_raw(parse_raw(record, _default_day(default_as_of)))


def citation_only_pass(record: object) -> bool:
    """The naive check the gate replaces: there are claims and every cited id was retrieved.

    The record is validated first, so malformed input raises ``InputError`` here too.
    """
    _, claims, items, *_ = parse_raw(record, datetime.date(2000, 1, 1))
    ids = {item[0] for item in items}
    return bool(claims) and all(claim[2] in ids for claim in claims)
