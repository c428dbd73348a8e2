"""The gate's public value types: inputs, outputs and the input error.

Every type is a frozen, slotted dataclass so that a verdict can be handed around, cached or
compared without anyone mutating it behind the gate's back. The rule engine itself does not work
on these objects (see ``gating.engine``): it works on plain tuples, which are several times
cheaper to build when the CLI pushes hundreds of thousands of JSON lines through it.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

GATE_VERSION = "2026.12.8"
"""Version of the rules. It is hashed into every fingerprint, so bumping it makes every stored
verdict stale and lets the Django side re-run the gate everywhere."""

JSONScalar: TypeAlias = str | int | float | bool | None

# Size limits: anything over them is an input error, never a verdict.
MAX_CLAIMS = 1_000
MAX_EVIDENCE = 1_000
MAX_FACTS = 10_000
"""Facts over all evidence items of one record, or kb facts of one record."""
MAX_PRINCIPALS = 1_000
MAX_TEXT_BYTES = 200 * 1024
"""UTF-8 bytes of the answer text plus every passage text of one record."""
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
"""Whole-number values outside this range (a 64-bit signed integer) are an input error."""
UNCITED_MIN_CHARS = 200
"""Step 7b: an answer longer than this (ignoring surrounding whitespace) needs a marker."""

DECISIONS = ("candidate", "review", "abstain")
UNRESOLVED_REASONS = ("withdrawn", "revision_not_received", "passage_not_found")
UNRESOLVED_CHOICES = "must be 'withdrawn', 'revision_not_received' or 'passage_not_found'"


class InputError(ValueError):
    """A malformed input: a missing field, a wrong type or a value over a limit.

    ``path`` names the offending field the way a reader would find it in the JSON record,
    for example ``claims[3].value`` or ``unresolved.d7``; ``$`` is the record itself.
    """

    path: str
    message: str

    def __init__(self, path: str, message: str) -> None:
        # Passing both to ValueError keeps the exception picklable (args rebuild it).
        super().__init__(path, message)
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def claim_asks_about(claim_key: str, claim_subject: str | None, fact_key: str,
                     fact_subject: str | None) -> bool:
    """Whether a claim is about a fact, as the gate pairs them: the same key, and the same
    subject when the claim names one (a claim naming none is about the key's facts of every
    subject)."""
    return claim_key == fact_key and (not claim_subject or claim_subject == fact_subject)


@dataclass(frozen=True, slots=True)
class Claim:
    """One checkable statement of the answer: ``key`` has ``value``, according to ``cite``."""

    key: str
    value: JSONScalar
    cite: str
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class Fact:
    """A value a source states, with the (inclusive) dates between which it holds."""

    key: str
    value: JSONScalar
    valid_from: str
    valid_until: str
    subject: str | None = None
    span: str | None = None


@dataclass(frozen=True, slots=True)
class Evidence:
    """A retrieved item the answer may cite by ``id``.

    The flat JSON shape ``{id, key, value, valid_from, valid_until}`` is an item with one fact.
    ``allowed_principals`` of ``None`` means unrestricted; a ``"*"`` entry means everyone.
    ``revision`` is the revision the answer was generated from and ``current_revision`` the
    document's current one. Step 5b treats the item as superseded when ``superseded`` is true,
    or when both revisions are given (non-empty) and differ.
    """

    id: str
    facts: tuple[Fact, ...]
    document: str | None = None
    revision: str | None = None
    span: str | None = None
    text: str | None = None
    allowed_principals: tuple[str, ...] | None = None
    superseded: bool = False
    current_revision: str | None = None


@dataclass(frozen=True, slots=True)
class KbFact:
    """A current fact from the rest of the knowledge base, used only by step 6."""

    document: str
    revision: str
    key: str
    value: JSONScalar
    valid_from: str
    valid_until: str
    subject: str | None = None
    span: str | None = None


@dataclass(frozen=True, slots=True)
class Options:
    """Everything besides claims and evidence that a gate run depends on.

    ``principals`` of ``None`` skips step 0. ``unresolved`` lists cited ids the caller could
    not turn into evidence, each with why: ``"withdrawn"`` (step 4),
    ``"revision_not_received"`` (step 3) or ``"passage_not_found"`` (step 4: the revision was
    received but has no passage with the cited span). A mapping is accepted and stored as
    sorted pairs.

    ``unresolved_principals`` gives, for some of those ids, the allowed principals of their
    document's current revision (as ``Evidence.allowed_principals``; ``None`` is the same as
    not listing the id): step 0 then applies to the unresolved item as to evidence, so that an
    answer resting on a document the asker may not read abstains even when the cited revision
    never arrived. A mapping is accepted and stored as sorted pairs.
    """

    as_of: datetime.date
    answer_text: str | None = None
    principals: tuple[str, ...] | None = None
    kb_facts: tuple[KbFact, ...] = ()
    unresolved: Mapping[str, str] | tuple[tuple[str, str], ...] = field(default=())
    unresolved_principals: (
        Mapping[str, tuple[str, ...] | None] | tuple[tuple[str, tuple[str, ...]], ...]
    ) = field(default=())

    def __post_init__(self) -> None:
        if self.unresolved == () and self.unresolved_principals == ():
            return  # nearly every answer: all its cites resolved, nothing to normalise
        pairs = tuple(
            self.unresolved.items() if isinstance(self.unresolved, Mapping) else self.unresolved
        )
        # Pairs that do not sort are not (str, str) pairs; evaluate() reports the input error.
        with contextlib.suppress(TypeError):
            pairs = tuple(sorted(pairs))
        object.__setattr__(self, "unresolved", pairs)
        allowed: tuple[object, ...] = tuple(
            self.unresolved_principals.items()
            if isinstance(self.unresolved_principals, Mapping)
            else self.unresolved_principals
        )
        # None means unrestricted, as if the id were not listed; lists become tuples so that
        # the options stay hashable. Anything malformed is left for evaluate() to report.
        allowed = tuple(
            (pair[0], tuple(pair[1]) if isinstance(pair[1], list) else pair[1])
            if isinstance(pair, tuple | list) and len(pair) == 2
            else pair
            for pair in allowed
            if not (isinstance(pair, tuple | list) and len(pair) == 2 and pair[1] is None)
        )
        with contextlib.suppress(TypeError):
            allowed = tuple(sorted(allowed))  # type: ignore[type-var]
        object.__setattr__(self, "unresolved_principals", allowed)

    @property
    def unresolved_pairs(self) -> tuple[tuple[str, str], ...]:
        """``unresolved`` as sorted ``(cite_id, why)`` pairs (its stored form)."""
        if isinstance(self.unresolved, Mapping):  # pragma: no cover - normalised on init
            return tuple(sorted(self.unresolved.items()))
        return self.unresolved

    @property
    def unresolved_principal_pairs(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """``unresolved_principals`` as sorted ``(cite_id, allowed_principals)`` pairs."""
        if isinstance(self.unresolved_principals, Mapping):  # pragma: no cover - normalised
            return tuple(
                sorted((k, v) for k, v in self.unresolved_principals.items() if v is not None)
            )
        return self.unresolved_principals


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem the gate found.

    ``step`` is the row of the decision order ("0" to "7b"), ``claim`` the index of the claim
    concerned (``None`` when the problem is not about one claim), ``evidence`` the evidence ids
    involved and, for conflicts, ``kb_documents`` the knowledge-base documents involved.
    Messages name ids, keys, values and dates only, never passage text.
    """

    code: str
    step: str
    claim: int | None
    evidence: tuple[str, ...]
    message: str
    kb_documents: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "step": self.step,
            "claim": self.claim,
            "evidence": list(self.evidence),
            "message": self.message,
            "kb_documents": list(self.kb_documents),
        }


@dataclass(frozen=True, slots=True)
class GateWarning:
    """Something a reviewer may want to know that never changes the decision.

    ``kb_documents`` names the knowledge-base documents the message draws on (a claim resting
    on a single kb document), as ``Finding.kb_documents`` does for conflicts.
    """

    code: str
    claim: int | None
    evidence: tuple[str, ...]
    message: str
    kb_documents: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "claim": self.claim,
            "evidence": list(self.evidence),
            "message": self.message,
            "kb_documents": list(self.kb_documents),
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one gate run.

    ``fingerprint`` covers the canonical inputs, the gate version and the validity status of
    every fact on ``as_of``; two runs with the same fingerprint give the same verdict (apart from
    ``as_of`` itself). ``next_boundary`` is the first day after ``as_of`` on which some fact
    starts or stops being valid, that is the first day a re-run could decide differently.
    """

    decision: str
    reason: str
    findings: tuple[Finding, ...]
    warnings: tuple[GateWarning, ...]
    fingerprint: str
    gate_version: str
    as_of: datetime.date
    next_boundary: datetime.date | None

    def to_dict(self) -> dict[str, object]:
        return {
            "decision": self.decision,
            "reason": self.reason,
            "findings": [f.to_dict() for f in self.findings],
            "warnings": [w.to_dict() for w in self.warnings],
            "fingerprint": self.fingerprint,
            "gate_version": self.gate_version,
            "as_of": self.as_of.isoformat(),
            "next_boundary": (
                self.next_boundary.isoformat() if self.next_boundary is not None else None
            ),
        }


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of the answer text with the ids of the markers it carries.

    ``start``/``end`` are offsets into the answer text (end exclusive) and
    ``text == answer[start:end]``; trailing markers such as ``. [d1]`` belong to the sentence.
    """

    text: str
    markers: tuple[str, ...]
    start: int
    end: int
