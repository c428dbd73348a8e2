"""ReviewQueue's gate: decides whether a RAG answer is a candidate, needs review or abstains.

Standard library only; nothing here knows Django, DRF or Celery. See ``gating/README.md``.
"""

from gating.api import citation_only_pass, evaluate, evaluate_record, parse_record
from gating.markers import (
    CITE_ID,
    comment_spans,
    extract_markers,
    marker_spans,
    split_sentences,
)
from gating.model import (
    GATE_VERSION,
    MAX_CLAIMS,
    MAX_EVIDENCE,
    MAX_FACTS,
    MAX_INT,
    MAX_TEXT_BYTES,
    MIN_INT,
    UNCITED_MIN_CHARS,
    Claim,
    Evidence,
    Fact,
    Finding,
    GateWarning,
    InputError,
    JSONScalar,
    KbFact,
    Options,
    Sentence,
    Verdict,
    claim_asks_about,
)

__all__ = [
    "CITE_ID",
    "GATE_VERSION",
    "MAX_CLAIMS",
    "MAX_EVIDENCE",
    "MAX_FACTS",
    "MAX_INT",
    "MAX_TEXT_BYTES",
    "MIN_INT",
    "UNCITED_MIN_CHARS",
    "Claim",
    "Evidence",
    "Fact",
    "Finding",
    "GateWarning",
    "InputError",
    "JSONScalar",
    "KbFact",
    "Options",
    "Sentence",
    "Verdict",
    "citation_only_pass",
    "claim_asks_about",
    "comment_spans",
    "evaluate",
    "evaluate_record",
    "extract_markers",
    "marker_spans",
    "parse_record",
    "split_sentences",
]
