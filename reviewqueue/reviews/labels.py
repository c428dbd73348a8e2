"""Words the reviewer's workspace shows for the gate's codes, in the reviewer's language.

The gate speaks in codes and English messages written for engineers. Reviewers get a label per
reason and one plain sentence per finding; the gate's own message stays available as detail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

# Every reason the gate can give a verdict, "supported" (a candidate's) included. Ordered as
# the gate's decision steps.
REASON_LABELS: dict[str, Any] = {
    "unauthorized_evidence": gettext_lazy("Asker may not read a source"),
    "no_claims": gettext_lazy("No claims"),
    "no_evidence": gettext_lazy("No evidence"),
    "invalid_metadata": gettext_lazy("Invalid source data"),
    "unknown_citation": gettext_lazy("Unknown citation"),
    "noncurrent_citation": gettext_lazy("Source not in force"),
    "superseded_revision": gettext_lazy("Source revised"),
    "conflicting_sources": gettext_lazy("Conflicting sources"),
    "unsupported_claim": gettext_lazy("Unsupported claim"),
    "uncited_answer": gettext_lazy("Uncited answer"),
    "supported": gettext_lazy("Supported"),
}
REASONS: tuple[str, ...] = tuple(REASON_LABELS)
# A candidate held back at random so that reviewers can check the gate (ReviewItem.audit_sample).
AUDIT_SAMPLE = gettext_lazy("Audit sample")

# Why a reviewer rejects an answer. Stored as the key; shown with the label.
REJECT_REASONS: dict[str, Any] = {
    "incorrect": gettext_lazy("The answer is wrong"),
    "outdated": gettext_lazy("It relies on outdated sources"),
    "unsupported": gettext_lazy("The sources do not support it"),
    "conflict": gettext_lazy("The sources contradict each other"),
    "sensitive": gettext_lazy("Inappropriate or sensitive content"),
    "other": gettext_lazy("Other (say why in the comment)"),
}

DECISION_LABELS: dict[str, Any] = {
    "candidate": gettext_lazy("Candidate"),
    "review": gettext_lazy("Needs review"),
    "abstain": gettext_lazy("Abstain"),
}


def verdict_reason_label(code: str) -> str:
    """The gate's reason for a verdict: "Supported" for a candidate."""
    label = REASON_LABELS.get(code)
    return str(label) if label is not None else code


def reason_label(code: str) -> str:
    """Why an item waits in the queue (its primary reason, a queue filter): a held item whose
    reason is "supported" is there only because it was drawn as an audit sample."""
    return str(AUDIT_SAMPLE) if code == "supported" else verdict_reason_label(code)


def reject_reason_label(code: str) -> str:
    label = REJECT_REASONS.get(code)
    return str(label) if label is not None else code


def decision_label(code: str) -> str:
    label = DECISION_LABELS.get(code)
    return str(label) if label is not None else code


def show_value(value: Any) -> str:
    """A fact or claim value as the gate compares it: 14 and "14" must read differently."""
    return json.dumps(value, ensure_ascii=False)


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(f"[{i}]" for i in ids)


def natural_order(cite: str) -> list[Any]:
    """A retrieved id's sort key, numbers read as numbers: [r2] before [r10]."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", cite)]


IDS_SHOWN = 10


def _ids_shown(ids: Sequence[str]) -> str:
    """The first IDS_SHOWN ids, and how many more: an answer may retrieve one document in
    hundreds of chunks, and every claim on it would list them all."""
    if len(ids) <= IDS_SHOWN:
        return _ids(ids)
    return ngettext("%(ids)s and %(n)s more", "%(ids)s and %(n)s more",
                    len(ids) - IDS_SHOWN) % {"ids": _ids(ids[:IDS_SHOWN]),
                                             "n": len(ids) - IDS_SHOWN}


def describe_claim(index: int | None, claims: Sequence[Mapping[str, Any]]) -> str:
    """'claim 2 (trial_days = 14)': numbered from 1, as the claims table shows them."""
    if index is None:
        return _("the answer text")
    if 0 <= index < len(claims):
        claim = claims[index]
        what = f"{claim.get('subject')}.{claim['key']}" if claim.get("subject") else claim["key"]
        return _("claim %(number)s (%(what)s = %(value)s)") % {
            "number": index + 1, "what": what, "value": show_value(claim.get("value")),
        }
    return _("claim %(number)s") % {"number": index + 1}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _invalid_metadata(finding: Mapping[str, Any], who: str, sources: str) -> str:
    message = finding.get("message", "")
    if "never received" in message:
        return _("The store has not received the revision %(sources)s was taken from; it may "
                 "still be on its way, or the answer names a revision that never existed.") % {
            "sources": sources}
    if "appears" in message and "times" in message:
        return _("The retrieved sources use the id %(sources)s more than once, so a citation "
                 "cannot say which one it means.") % {"sources": sources}
    if finding.get("kb_documents"):
        return _("A document elsewhere in the knowledge base has a date the gate cannot read.")
    return _("A fact in %(sources)s has a date the gate cannot read, or a validity period that "
             "ends before it starts.") % {"sources": sources}


def _unknown_citation(finding: Mapping[str, Any], who: str, sources: str) -> str:
    message = finding.get("message", "")
    if "withdrawn" in message:
        text = _("%(who)s cites %(sources)s, whose document has been withdrawn.")
    elif "no passage" in message:
        text = _("%(who)s cites %(sources)s, but the revision it names has no such passage: "
                 "the answer quotes something its source does not contain.")
    else:
        text = _("%(who)s cites %(sources)s, which is not among the retrieved sources.")
    return text % {"who": _cap(who), "sources": sources}


_SENTENCES: dict[str, Callable[[Mapping[str, Any], str, str], str]] = {
    "unauthorized_evidence": lambda f, who, sources: _(
        "The person who asked may not read %(sources)s, so the answer must not rest on it."
    ) % {"sources": sources},
    "no_claims": lambda f, who, sources: _(
        "The answer states no claims, so there is nothing the gate could check."),
    "no_evidence": lambda f, who, sources: _(
        "No source was retrieved for this answer."),
    "invalid_metadata": _invalid_metadata,
    "unknown_citation": _unknown_citation,
    "noncurrent_citation": lambda f, who, sources: _(
        "%(who)s rests on %(sources)s, but the fact it uses is not in force on the date of the "
        "answer (it has expired or has not started yet)."
    ) % {"who": _cap(who), "sources": sources},
    "superseded_revision": lambda f, who, sources: _(
        "%(who)s quotes %(sources)s from a revision that has since been replaced; see below "
        "what changed since."
    ) % {"who": _cap(who), "sources": sources},
    "conflicting_sources": lambda f, who, sources: _(
        "For %(who)s, sources in force give different values; see the sources side by side."
    ) % {"who": who},
    "unsupported_claim": lambda f, who, sources: _(
        "%(who)s is not what %(sources)s says."
    ) % {"who": _cap(who), "sources": sources},
    "uncited_answer": lambda f, who, sources: _(
        "The answer is long and cites no source at all."),
}


def explain_finding(finding: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> str:
    """One plain sentence for a gate finding, in the active language."""
    code = finding.get("code", "")
    who = describe_claim(finding.get("claim"), claims)
    sources = _ids(finding.get("evidence") or ()) or _("a source")
    make = _SENTENCES.get(code)
    if make is None:
        return _("The gate reported %(code)s.") % {"code": code}
    return make(finding, who, sources)


def explain_warning(warning: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> str:
    code = warning.get("code", "")
    sources = _ids(warning.get("evidence") or ())
    if code == "single_source":
        who = describe_claim(warning.get("claim"), claims)
        if len(warning.get("evidence") or ()) > 1:
            # One document retrieved under several ids (a chunk each): still one source.
            return _("%(who)s rests on a single document, retrieved as %(sources)s.") % {
                "who": _cap(who),
                "sources": _ids_shown(sorted(warning["evidence"], key=natural_order))}
        return _("%(who)s rests on a single source: %(sources)s.") % {
            "who": _cap(who), "sources": sources or _("one document")}
    if code == "uncited_evidence":
        return _("%(sources)s was retrieved but no claim uses it.") % {"sources": sources}
    return str(warning.get("message", code))


def days_phrase(kind: str, days: int) -> str:
    """'expired 12 days ago', 'starts in 5 days', 'ends today'."""
    if kind == "expired":
        return ngettext("expired %(days)s day ago", "expired %(days)s days ago", days) % {
            "days": days}
    if kind == "starts":
        return ngettext("starts in %(days)s day", "starts in %(days)s days", days) % {
            "days": days}
    if kind == "open":
        return _("current, no end date")
    if days == 0:
        return _("current, ends today")
    return ngettext("current, %(days)s day left", "current, %(days)s days left", days) % {
        "days": days}
