"""Everything the item page shows about one held answer, read in a fixed number of queries.

The page must cost the same for 2 citations as for 50: the answer, its queue entry, retrieved
items, documents, older revisions, facts, passages, verdicts and decisions are each one query
(the titles the verdict history names one more, only when it names a withdrawn document or
one the answer did not retrieve), and everything else is assembled in Python.

Invariant 5: nothing is built unless the reader may read every retrieved document, and a
passage of an older revision is shown only when that revision's own principals allow it (a
revision may have been more restricted than the current one).
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.db.models import OuterRef, Prefetch, Subquery
from django.db.models.functions import Left, Right
from django.utils.translation import gettext as _

import gating
from reviewqueue.accounts.principals import may_read, may_read_every, user_principals
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.selectors import job_visible_to, reevaluation_waiting
from reviewqueue.reviews.labels import (
    days_phrase,
    decision_label,
    describe_claim,
    explain_finding,
    explain_warning,
    natural_order,
    reject_reason_label,
    show_value,
    verdict_reason_label,
)
from reviewqueue.reviews.models import Answer, Decision, OwnerQuestion, ReviewItem, Verdict
from reviewqueue.reviews.services.evaluation import (
    boundary_come,
    day_passed_under,
    gate_day,
    today,
)
from reviewqueue.reviews.services.leases import LeaseState, lease_state
from reviewqueue.sources.conflicts import same_value
from reviewqueue.sources.models import Document, Fact, Passage, Revision
from reviewqueue.sources.selectors import document_titles, may_read_revision
from reviewqueue.textdiff import Segment, diff_segments

CONTEXT_CHARS = 240


# --- Small views --------------------------------------------------------------------------------

@dataclass
class FactView:
    subject: str
    key: str
    value: Any
    valid_from: date
    valid_until: date | None
    span: str
    state: str  # "current", "expired" or "future"
    phrase: str

    @property
    def shown_value(self) -> str:
        return show_value(self.value)

    @property
    def what(self) -> str:
        return f"{self.subject}.{self.key}" if self.subject else self.key


@dataclass
class PassageView:
    span: str
    text: str
    before: str = ""
    after: str = ""


@dataclass
class CitationView:
    cite: str
    document_key: str
    # "ok", "no_document" (never received), "withdrawn", "not_received" (revision unknown),
    # "no_passage" (the revision was received, but has no passage with the cited span)
    status: str
    revision: str  # the revision the answer was generated from
    span: str = ""  # the passage the answer says it quotes
    title: str = ""
    url: str = ""
    owner: str = ""
    updated_at: datetime | None = None
    current_revision: str | None = None
    current_updated_at: datetime | None = None
    superseded: bool = False
    passage: PassageView | None = None
    # The passage is the current revision's, standing in for one the cited revision lacks (or
    # that was never received): it must not read as what the answer quoted.
    passage_now: bool = False
    passage_restricted: bool = False
    facts: list[FactView] = field(default_factory=list)  # always the current revision's

    @property
    def facts_now(self) -> bool:
        """The facts shown are those of a revision other than the cited one."""
        return self.current_revision is not None and self.current_revision != self.revision


@dataclass
class SentencePart:
    """A run of a sentence's own words, or one citation standing where its marker was."""

    text: str = ""
    cite: str = ""
    citation: CitationView | None = None


@dataclass
class SentenceView:
    """A sentence of the answer as written, each citation in the place of its marker: "14 days
    [d1]." reads "14 days", [d1], "." and not "14 days." [d1]."""

    parts: list[SentencePart]

    @property
    def cites(self) -> list[str]:
        return [part.cite for part in self.parts if part.cite]


@dataclass
class ClaimRow:
    number: int
    subject: str
    key: str
    value: Any
    cite: str
    fact: FactView | None
    holds: bool
    note: str
    # What the gate found against a claim its own source holds (sources in force disagree,
    # say): the reviewer must not read it as settled.
    disputed: list[str] = field(default_factory=list)
    # False when what it cites could not be read (not retrieved, withdrawn, never received):
    # nobody knows whether it holds, which is not the same as knowing it does not.
    checked: bool = True

    @property
    def shown_value(self) -> str:
        return show_value(self.value)


@dataclass
class ConflictSource:
    """One value in force of a conflict: a fact of a document, with every retrieved id that
    names the document (an answer may retrieve one document under several)."""

    document_key: str | None
    restricted: bool = False
    revision: str = ""
    title: str = ""
    owner: str = ""
    updated_at: datetime | None = None
    fact: FactView | None = None
    passage: PassageView | None = None
    cites: list[str] = field(default_factory=list)


@dataclass
class ConflictView:
    """The sources in force that disagree, side by side, once for every claim they dispute:
    each claim's sentence says what it is disputed about."""

    sentences: list[str]
    sources: list[ConflictSource]
    # Retrieved ids whose value differs from that of a claim the conflict disputes.
    disagreeing: set[str] = field(default_factory=set)


@dataclass
class FindingView:
    code: str
    label: str
    sentence: str
    detail: str | None  # the gate's own message, unless it names a document the reader can't read


@dataclass
class FactChange:
    """A fact of the cited revision (`before`) against the current revision's (`after`); one
    side is None when only one of the revisions states it."""

    before: FactView | None
    after: FactView | None
    used: bool = False  # a claim citing this source names the fact

    @property
    def from_changed(self) -> bool:
        return self.before is None or self.after is None or (
            self.before.valid_from != self.after.valid_from)

    @property
    def until_changed(self) -> bool:
        return self.before is None or self.after is None or (
            self.before.valid_until != self.after.valid_until)

    @property
    def what(self) -> str:
        return (self.before or self.after).what  # type: ignore[union-attr]

    @property
    def sides(self) -> tuple[FactView | None, FactView | None]:
        return self.before, self.after

    @property
    def value_changed(self) -> bool:
        return self.before is None or self.after is None or not _values_equal(
            self.before.value, self.after.value)

    @property
    def validity_changed(self) -> bool:
        return self.from_changed or self.until_changed


@dataclass
class DiffView:
    """What changed for one citation between the revision quoted and the current one: the
    quoted passage word by word (None when there is no passage to compare), and the facts the
    citation stands for whose value or validity period changed."""

    cite: str
    document_key: str
    old_revision: str
    new_revision: str
    old: list[Segment] | None
    new: list[Segment] | None
    new_missing: bool = False
    facts: list[FactChange] = field(default_factory=list)
    cited_by_claim: bool = True  # a claim cites this citation's document

    @property
    def used_unchanged(self) -> bool:
        """The facts the answer's claims name through this citation did not change."""
        return not any(change.used for change in self.facts)

    @property
    def passage_same(self) -> bool:
        return self.old is not None and not self.new_missing and all(
            seg.kind == "same" for seg in [*self.old, *(self.new or [])])


@dataclass
class RevisionUsed:
    cite: str
    document: str
    revision: str
    current: str | None
    # The document's title as the reader may read it now, "" when they may not (or it has
    # none): the page then names it by its id alone.
    title: str = ""

    @property
    def superseded(self) -> bool:
        return self.current is not None and self.current != self.revision


@dataclass
class VerdictView:
    verdict: Verdict
    is_current: bool
    revisions: list[RevisionUsed]

    @property
    def decision_label(self) -> str:
        return decision_label(self.verdict.decision)

    @property
    def reason_label(self) -> str:
        return verdict_reason_label(self.verdict.reason)


@dataclass
class DecisionView:
    decision: Decision

    @property
    def reject_reason_label(self) -> str:
        return reject_reason_label(self.decision.reject_reason)


@dataclass(frozen=True)
class WaitEnd:
    """What ended the wait on a question no owner replied to: a decision (`who` and its
    `action`), a new verdict that held the answer for something else (`verdict`, `cause`), or
    a newer question (`who` asked it), `at` that moment."""

    kind: str  # "decision", "verdict" or "question"
    at: datetime
    who: str = ""
    action: str = ""  # approve, edit or reject
    verdict: int | None = None
    cause: str = ""
    left: bool = False  # the verdict took the answer out of the queue


def _wait_ends(answer: Answer, item: ReviewItem | None, questions: list[OwnerQuestion],
               decisions: list[Decision]) -> dict[int, WaitEnd]:
    """By question, what ended the wait on each one no owner replied to: the first, after it
    was asked, of a decision, a verdict whose audit event ended a wait, and the next question.
    One query, only when there is such a question."""
    from reviewqueue.audit.models import AuditEvent

    waiting = item.owner_question_id if item is not None and item.waiting_for_owner else None
    ended = [q for q in questions if q.replied_at is None and q.pk != waiting]
    if not ended:
        return {}
    verdict_ends = list(AuditEvent.objects.filter(
        trace_id=answer.trace_id, action="verdict.created", before__waiting_for_owner=True,
        created_at__gte=min(q.asked_at for q in ended))
        .order_by("seq").values_list("created_at", "after__verdict", "after__cause",
                                     "after__status"))
    ends: dict[int, WaitEnd] = {}
    for q in ended:
        found = [WaitEnd("decision", d.created_at, action=d.action,
                         who=d.reviewer.get_username() if d.reviewer else "")
                 for d in decisions if d.created_at >= q.asked_at]
        found += [WaitEnd("verdict", at, verdict=verdict, left=status != Answer.Status.HELD,
                          cause=str(Verdict.Trigger(cause).label
                                    if cause in Verdict.Trigger.values else cause))
                  for at, verdict, cause, status in verdict_ends if at >= q.asked_at]
        found += [WaitEnd("question", later.asked_at, who=later.asked_by.get_username()
                          if later.asked_by else "")
                  for later in questions if later.asked_at > q.asked_at]
        if found:
            ends[q.pk] = min(found, key=lambda end: end.at)
    return ends


@dataclass
class ItemPage:
    answer: Answer
    verdict: Verdict
    item: ReviewItem | None
    lease: LeaseState
    sentences: list[SentenceView]
    citations: dict[str, CitationView]
    claims: list[ClaimRow]
    findings: list[FindingView]
    single_source: list[str]
    unused: list[CitationView]
    conflicts: list[ConflictView]
    diffs: list[DiffView]
    verdicts: list[VerdictView]
    decisions: list[DecisionView]
    earlier_approval: Decision | None
    # The reviewers' questions to the owners, oldest first, each with its reply if one came.
    owner_questions: list[OwnerQuestion]
    # What ended the wait on each question no owner replied to, by question.
    wait_ends: dict[int, WaitEnd]
    cites: list[str]
    reference_date: date  # the gate's day (gate_day): every validity state on the page is for it
    today: date
    # A re-evaluation started since the verdict that has not reached the answer yet: the
    # verdict may be behind the sources the page shows. `waiting_job_visible`: the reader may
    # follow that job's page.
    waiting_job: Job | None = None
    waiting_job_visible: bool = False

    @property
    def held(self) -> bool:
        return self.answer.status == Answer.Status.HELD and self.item is not None

    @property
    def questions_and_ends(self) -> list[tuple[OwnerQuestion, WaitEnd | None]]:
        return [(q, self.wait_ends.get(q.pk)) for q in self.owner_questions]

    def asks_despite(self, verdict_id: int) -> bool:
        """Whether an approval sent on `verdict_id` is asked to confirm ("Approve it all the
        same") the claims shown not holding now: only when it was made on the current verdict,
        or one telling the same, and that verdict is still fresh. Made on an older one, or while
        a re-evaluation still waits for a worker (the claims are read from the sources as they
        are now, the stored verdict is behind them), it is stale: the service refuses it and
        shows the fresh verdict."""
        from reviewqueue.reviews.services.evaluation import verdict_is_fresh
        from reviewqueue.reviews.services.transitions import says_the_same

        return (bool(self.contradicted) and says_the_same(verdict_id, self.verdict)
                and verdict_is_fresh(self.answer, self.verdict))

    def replaced(self, verdict_id: int | None) -> dict[str, Any] | None:
        """Whether a form drawn with the verdict `verdict_id` now stands on another verdict
        that tells the reviewer something else: {"edited": True} when that one is of an
        earlier version of the answer, else {"edited": False} with "day_passed", the day a fact
        started or stopped holding when only that replaced it; None when it tells the same,
        or is no verdict of this answer. A form refused for what was typed in it is drawn
        again bound to the verdict this page shows, so sent again it decides on that one:
        the page says the verdict changed, as a refusal on a stale verdict does."""
        from reviewqueue.reviews.services.transitions import says_the_same

        seen = next((v.verdict for v in self.verdicts if v.verdict.pk == verdict_id), None)
        if seen is None or says_the_same(seen.pk, self.verdict):
            return None
        edited = seen.version_id != self.verdict.version_id
        return {"edited": edited,
                "day_passed": None if edited else day_passed_under(self.answer, seen)}

    @property
    def boundary_passed(self) -> date | None:
        """The day, on or before the gate's day, on which a fact the verdict weighed started
        or stopped holding, when no re-evaluation was started since: the validity sweep (each
        night, and when a worker starts) has yet to come, and the validity the page shows
        is no longer the verdict's."""
        return boundary_come(self.answer, self.verdict) if self.waiting_job is None else None

    @property
    def waiting_on(self) -> OwnerQuestion | None:
        """The question the answer waits on the owners for, if it does."""
        if self.item is None or not self.item.waiting_for_owner:
            return None
        return next((q for q in self.owner_questions if q.pk == self.item.owner_question_id),
                    None)

    @property
    def current_not_newest(self) -> tuple[VerdictView, VerdictView] | None:
        """(the current verdict, the newest) when a newer verdict than the current one was
        computed: the sources came back to what the current one saw."""
        current = next((v for v in self.verdicts if v.is_current), None)
        if current is None or not self.verdicts or self.verdicts[0] is current:
            return None
        return current, self.verdicts[0]

    @property
    def may_decide(self) -> bool:
        return self.held and (self.lease.mine or not self.lease.active)

    @property
    def reason_label(self) -> str:
        return verdict_reason_label(self.verdict.reason)

    @property
    def decision_label(self) -> str:
        return decision_label(self.verdict.decision)

    @property
    def contradicted(self) -> list[int]:
        """The numbers of the claims that do not hold against what they cite (✗ on the page):
        approving the answer as it is takes a second, explicit yes."""
        return [claim.number for claim in self.claims if not claim.holds]

    @property
    def unchecked(self) -> list[int]:
        """Those of `contradicted` whose source could not be read: they cannot be checked."""
        return [claim.number for claim in self.claims if not claim.checked]

    @property
    def uncited(self) -> list[int]:
        """The numbers (from 1) of the sentences that cite nothing: the gate checks claims,
        so what such a sentence says goes out unchecked (an edit may have added it)."""
        return [number for number, s in enumerate(self.sentences, start=1) if not s.cites]

    @property
    def conflict_cites(self) -> set[str]:
        """Retrieved ids that are a side of a conflict shown on the page."""
        return {cite for c in self.conflicts for side in c.sources for cite in side.cites}

    @property
    def disagreeing_cites(self) -> set[str]:
        """Those of `conflict_cites` whose value differs from that of a claim disputed."""
        return {cite for c in self.conflicts for cite in c.disagreeing}


# --- Helpers ------------------------------------------------------------------------------------

def answer_sentences(text: str, citations: Mapping[str, CitationView]) -> list[SentenceView]:
    """The answer sentence by sentence (Japanese ones end at 。 with no space after it too),
    each marker the gate reads replaced by its citations where it stands. Brackets it does not
    read (`refunds[r9]` in code) are the answer's text, shown as written. The spaces before a
    marker go with it, the citation drawn with its own margin; nothing else moves."""
    # Read in the whole text, as the gate reads it: a code span may run across sentences.
    spans = gating.marker_spans(text)
    starts = [start for start, _ in spans]
    sentences: list[SentenceView] = []
    for sentence in gating.split_sentences(text, cjk=True):
        parts: list[SentencePart] = []
        end = sentence.start
        first, last = bisect_left(starts, sentence.start), bisect_left(starts, sentence.end)
        for start, stop in spans[first:last]:
            if words := text[end:start].rstrip(" \t"):
                parts.append(SentencePart(text=words))
            parts.extend(SentencePart(cite=cite, citation=citations.get(cite))
                         for cite in gating.extract_markers(text[start:stop]))
            end = stop
        if rest := text[end:sentence.end]:
            parts.append(SentencePart(text=rest))
        sentences.append(SentenceView(parts))
    return sentences


def fact_view(fact: Fact, on: date) -> FactView:
    if fact.valid_until is not None and on > fact.valid_until:
        state, phrase = "expired", days_phrase("expired", (on - fact.valid_until).days)
    elif on < fact.valid_from:
        state, phrase = "future", days_phrase("starts", (fact.valid_from - on).days)
    elif fact.valid_until is None:
        state, phrase = "current", days_phrase("open", 0)
    else:
        state, phrase = "current", days_phrase("current", (fact.valid_until - on).days)
    return FactView(fact.subject, fact.key, fact.value, fact.valid_from, fact.valid_until,
                    fact.span, state, phrase)


def _values_equal(a: Any, b: Any) -> bool:
    # The gate compares values with their JSON type: 14, 14.0, "14" and true all differ.
    return a == b and type(a) is type(b)


def _claim_facts(facts: Iterable[FactView], key: str, subject: str | None) -> list[FactView]:
    return [f for f in facts if f.key == key and (not subject or f.subject == subject)]


# --- The page -----------------------------------------------------------------------------------


def _earlier_approval(answer: Answer, item: Any, decisions: list[Decision],
                      verdicts: list[Verdict]) -> Decision | None:
    """The approval a change of sources sent back to the queue: on the queue entry while the
    answer waits there; once the gate passes it again by itself (a candidate, no longer
    queued), its latest approval, shown as history rather than as the answer's status: an
    approve, or an edit its own verdict let through (as `transitions` counts them)."""
    if item is not None:
        return item.earlier_approval
    if answer.status != Answer.Status.CANDIDATE:
        return None
    approving_edits = {v.version_id for v in verdicts if v.trigger == Verdict.Trigger.EDIT
                       and v.decision == Verdict.Decision.CANDIDATE}
    return next((d for d in decisions if d.action == Decision.Action.APPROVE
                 or (d.action == Decision.Action.EDIT and d.new_version_id in approving_edits)),
                None)

def item_page(*, trace_id: str, user: Any) -> ItemPage | None:
    """The item page of `trace_id`, or None when it does not exist or the user may not read
    every document it retrieved (the caller answers 404 either way: nothing leaks)."""
    principals = user_principals(user)
    answer = (
        Answer.objects.select_related(
            "current_version", "current_verdict", "review_item__leased_by",
            "review_item__earlier_approval__reviewer",
        )
        .prefetch_related("retrieved", Prefetch(
            "owner_questions", OwnerQuestion.objects.select_related("asked_by", "replied_by")
            .order_by("asked_at", "id")))
        .filter(trace_id=trace_id)
        .first()
    )
    if answer is None or answer.current_version is None or answer.current_verdict is None:
        return None
    retrieved = sorted(answer.retrieved.all(), key=lambda r: r.pk)
    verdict = answer.current_verdict
    version = answer.current_version
    kb_keys = {d for f in verdict.findings for d in f.get("kb_documents") or ()}
    keys = {r.document_key for r in retrieved}
    documents = {
        d.key: d
        for d in Document.objects.filter(key__in=keys | kb_keys)
        .select_related("current_revision", "owner")
    }
    if not may_read_every(keys, {k: d.allowed_principals for k, d in documents.items()},
                          principals):
        return None

    # Validity on the day the gate checks this answer on, which is the day a decision made on
    # this page is checked on: the day the answer was asked about when it names one, else
    # today. Not the verdict's as_of: a verdict stays current for as long as no fact crosses a
    # boundary, so one computed days ago would count "days left" from that day, and in the
    # hours before the day's sweep it would call a fact that ended yesterday current.
    on = gate_day(answer)
    # Revisions the answer was generated from, where they are not the current one.
    wanted = {(r.document_key, r.revision) for r in retrieved}
    older: dict[tuple[str, str], Revision] = {}
    old_ids = {d.pk for d in documents.values()}
    if wanted:
        for revision in Revision.objects.filter(
            document_id__in=old_ids, revision__in={rev for _, rev in wanted}
        ).select_related("document"):
            pair = (revision.document.key, revision.revision)
            if pair in wanted:
                older[pair] = revision
    current_ids = {d.current_revision_id for d in documents.values() if d.current_revision_id}
    # The quoted revisions' facts too, for what changed since.
    facts_by_revision: dict[int, list[FactView]] = {}
    for fact in Fact.objects.filter(
        revision_id__in=current_ids | {r.pk for r in older.values()}
    ).order_by("revision_id", "position"):
        facts_by_revision.setdefault(fact.revision_id, []).append(fact_view(fact, on))

    claims: list[dict[str, Any]] = list(version.claims)
    cited_by_claims = {c.get("cite") for c in claims}

    # Which passages to load: each citation's quoted span (in the revision it was taken from,
    # and in the current one when that differs) and the spans of facts in a conflict.
    needed: set[tuple[int, str]] = set()
    for r in retrieved:
        document = documents.get(r.document_key)
        if not r.span or document is None:
            continue
        quoted = older.get((r.document_key, r.revision))
        if quoted is not None:
            needed.add((quoted.pk, r.span))
        if document.current_revision_id:
            needed.add((document.current_revision_id, r.span))
    conflict_findings = [f for f in verdict.findings if f.get("code") == "conflicting_sources"]
    conflict_keys = {
        claims[f["claim"]]["key"] for f in conflict_findings
        if isinstance(f.get("claim"), int) and 0 <= f["claim"] < len(claims)
    }
    for d in documents.values():
        for fv in facts_by_revision.get(d.current_revision_id or 0, []):
            if fv.span and fv.key in conflict_keys:
                needed.add((d.current_revision_id, fv.span))
    passages = _passages(needed)

    citations: dict[str, CitationView] = {}
    for r in retrieved:
        citations[r.cite] = _citation(r, documents.get(r.document_key),
                                      older.get((r.document_key, r.revision)),
                                      facts_by_revision, passages, principals, claims)

    sentences = answer_sentences(version.text, citations)
    claim_rows = [_claim_row(i, c, citations.get(c.get("cite", ""))) for i, c in
                  enumerate(claims)]

    # The gate's own messages quote values of the revisions the verdict was computed on: none
    # is shown when one of those is a revision the reader may not read, or one this page did
    # not load (the verdict predates the current revision, which a re-evaluation will replace).
    loaded = {(key, revision.revision): revision.allowed_principals
              for (key, _), revision in older.items()}
    loaded.update({(d.key, d.current_revision.revision): d.current_revision.allowed_principals
                   for d in documents.values() if d.current_revision is not None})
    # A citation the gate could not resolve (revision never received, passage missing) gave it
    # no values to quote: its document's current revision then is no basis of the messages.
    unreadable_basis = any(
        (r.get("document"), r["current"]) not in loaded
        or not may_read(loaded[(r.get("document"), r["current"])], principals)
        for r in verdict.revisions_used or ()
        if r.get("current") and r.get("received", True) and r.get("passage_found", True))
    findings = []
    for f in verdict.findings:
        restricted = unreadable_basis or any(
            d not in documents or not may_read(documents[d].allowed_principals, principals)
            for d in f.get("kb_documents") or ()
        )
        code = f.get("code", "")
        findings.append(FindingView(code, verdict_reason_label(code), explain_finding(f, claims),
                                    None if restricted else _gate_message(f)))
        index = f.get("claim")
        if isinstance(index, int) and 0 <= index < len(claim_rows) and claim_rows[index].holds:
            claim_rows[index].disputed.append(str(verdict_reason_label(code)))
    single = [explain_warning(w, claims) for w in verdict.warnings
              if w.get("code") == "single_source"]
    unused = [citations[r.cite] for r in retrieved if r.cite not in cited_by_claims]

    in_force_memo: dict[tuple[str, str, str | None], list[FactView]] = {}
    conflicts = _grouped([
        _conflict(f, claims, citations, documents, facts_by_revision, passages, principals,
                  in_force_memo)
        for f in conflict_findings
    ])
    # A claim citing one chunk of a document cites the document.
    claimed_documents = {citations[c["cite"]].document_key for c in claims
                         if c.get("cite") in citations}
    diffs = [_diff(r, citations[r.cite], older, documents, facts_by_revision, passages,
                   principals, _what_claims_ask(claims, r.cite),
                   citations[r.cite].document_key in claimed_documents)
             for r in retrieved if citations[r.cite].superseded]

    item = _review_item(answer)
    verdicts = list(Verdict.objects.filter(answer=answer).select_related("version")
                    .order_by("-id"))
    titles = _history_titles({u.get("document", "") for v in verdicts for u in v.revisions_used},
                             documents, user)
    decisions = list(
        Decision.objects.filter(answer=answer).select_related("reviewer").order_by("-id")
    )
    questions = list(answer.owner_questions.all())
    waiting = reevaluation_waiting(answer)
    return ItemPage(
        answer=answer,
        verdict=verdict,
        item=item,
        lease=lease_state(item, user),
        sentences=sentences,
        citations=citations,
        claims=claim_rows,
        findings=findings,
        single_source=single,
        unused=unused,
        conflicts=conflicts,
        diffs=[d for d in diffs if d is not None],
        verdicts=[VerdictView(v, v.pk == verdict.pk, _revisions_shown(v.revisions_used, titles))
                  for v in verdicts],
        decisions=[DecisionView(d) for d in decisions],
        earlier_approval=_earlier_approval(answer, item, decisions, verdicts),
        owner_questions=questions,
        wait_ends=_wait_ends(answer, item, questions, decisions),
        cites=[r.cite for r in retrieved],
        reference_date=on,
        today=today(),
        waiting_job=waiting,
        waiting_job_visible=waiting is not None and job_visible_to(waiting, user),
    )


def _revisions_shown(used: Iterable[Mapping[str, Any]], titles: Mapping[str, str]
                     ) -> list[RevisionUsed]:
    """A verdict's revisions, each once: an answer retrieving one document in many chunks
    used its revision under each of their ids."""
    shown: dict[tuple[str, str, str | None], RevisionUsed] = {}
    for u in used:
        document, revision = u.get("document", ""), u.get("revision", "")
        if (document, revision, u.get("current")) not in shown:
            shown[(document, revision, u.get("current"))] = RevisionUsed(
                u.get("cite", ""), document, revision, u.get("current"), titles.get(document, ""))
    return list(shown.values())


def _history_titles(keys: set[str], documents: Mapping[str, Document], user: Any
                    ) -> dict[str, str]:
    """The titles, by id, of the documents the verdict history names, as `user` may read them:
    each one's current revision's, as the audit log and the jobs list name a document, and
    never that of the revision an entry used: an older revision may have been restricted,
    and one document keeps one name down the whole history.

    The documents the page loaded already carry their current revision: no query for them. A
    withdrawn document (no current revision, its last one's title) and one the page did not
    load are read in one query for them all, by the rule those lists use."""
    titles: dict[str, str] = {}
    rest: set[str] = set()
    for key in keys - {""}:
        document = documents.get(key)
        if document is None or document.current_revision is None:
            rest.add(key)
        elif may_read_revision(user, document, document.current_revision):
            titles[key] = document.current_revision.title
    if rest:
        titles.update(document_titles(user, rest))
    return titles


def _gate_message(finding: Mapping[str, Any]) -> str | None:
    """The gate's own message, with its claim numbered from 1 as the claims table does (the gate
    counts from 0)."""
    message, index = finding.get("message"), finding.get("claim")
    if not message or not isinstance(index, int):
        return message
    return re.sub(rf"\bclaim {index}\b", f"claim {index + 1}", message, count=1)


def _review_item(answer: Answer) -> ReviewItem | None:
    try:
        return answer.review_item
    except ReviewItem.DoesNotExist:
        return None


def _passages(needed: set[tuple[int, str]]) -> dict[tuple[int, str], PassageView]:
    """The needed passages with a little of their neighbours for context (one query)."""
    if not needed:
        return {}
    neighbours = Passage.objects.filter(revision_id=OuterRef("revision_id"))
    before = neighbours.filter(id__lt=OuterRef("id")).order_by("-id").values("text")[:1]
    after = neighbours.filter(id__gt=OuterRef("id")).order_by("id").values("text")[:1]
    found: dict[tuple[int, str], PassageView] = {}
    rows = (
        Passage.objects.filter(revision_id__in={r for r, _ in needed},
                               span__in={s for _, s in needed})
        .annotate(before=Right(Subquery(before), CONTEXT_CHARS),
                  after=Left(Subquery(after), CONTEXT_CHARS))
        .values_list("revision_id", "span", "text", "before", "after")
    )
    for revision_id, span, text, before_text, after_text in rows:
        if (revision_id, span) in needed:
            found[(revision_id, span)] = PassageView(span, text, before_text or "",
                                                     after_text or "")
    return found


def _citation(r: Any, document: Document | None, quoted: Revision | None,
              facts_by_revision: Mapping[int, list[FactView]],
              passages: Mapping[tuple[int, str], PassageView], principals: frozenset[str],
              claims: list[dict[str, Any]]) -> CitationView:
    if document is None:
        return CitationView(r.cite, r.document_key, "no_document", r.revision)
    current = document.current_revision
    view = CitationView(r.cite, r.document_key, "ok", r.revision, r.span,
                        owner=document.owner.username)
    if document.withdrawn_at is not None or current is None:
        view.status = "withdrawn"
    elif quoted is None:
        view.status = "not_received"
    elif r.span and (quoted.pk, r.span) not in passages:
        view.status = "no_passage"
    quoted_readable = quoted is not None and may_read(quoted.allowed_principals, principals)
    if quoted is not None and quoted_readable:
        # Only the cited revision's own date: the current one's would date a revision never seen.
        # A revision the reader may not read names nothing of itself, not even its title.
        view.title, view.url, view.updated_at = quoted.title, quoted.url, quoted.updated_at
    if current is not None:
        view.current_revision = current.revision
        view.current_updated_at = current.updated_at
        view.superseded = quoted is not None and current.pk != quoted.pk
        view.facts = _cited_facts(facts_by_revision.get(current.pk, []), r.span,
                                  _what_claims_ask(claims, r.cite))
        if not view.title:
            view.title, view.url = current.title, current.url
    if r.span:
        if quoted is not None and not quoted_readable:
            view.passage_restricted = True
        elif quoted is not None and (quoted.pk, r.span) in passages:
            view.passage = passages[(quoted.pk, r.span)]
        elif current is not None:
            # The cited revision was never received or lacks the span (when it is the current
            # one, this finds nothing either).
            view.passage = passages.get((current.pk, r.span))
            view.passage_now = view.passage is not None
    return view


def _claim_row(index: int, claim: Mapping[str, Any], citation: CitationView | None) -> ClaimRow:
    subject = claim.get("subject") or ""
    row = ClaimRow(index + 1, subject, claim.get("key", ""), claim.get("value"),
                   claim.get("cite", ""), None, False, "")
    if citation is None:
        row.note = _("The cited id is not among the retrieved sources.")
        row.checked = False
        return row
    if citation.status == "withdrawn":
        row.note = _("The cited document was withdrawn.")
        row.checked = False
        return row
    if citation.status == "no_document":
        row.note = _("The cited document has not been received.")
        row.checked = False
        return row
    if citation.status == "not_received":
        # The current revision's facts say nothing about what the cited revision stated.
        row.note = _("The store has not received the cited revision %(revision)s.") % {
            "revision": citation.revision}
        row.checked = False
        return row
    if citation.status == "no_passage":
        # The answer quotes nothing the source says, so the gate did not read its facts.
        row.note = _("The cited revision %(revision)s has no passage %(span)s.") % {
            "revision": citation.revision, "span": citation.span}
        row.checked = False
        return row
    matched = _claim_facts(citation.facts, row.key, subject or None)
    if not matched:
        row.note = _("The cited source says nothing about %(key)s.") % {"key": row.key}
        return row
    in_force = [f for f in matched if f.state == "current"]
    equal = [f for f in (in_force or matched) if _values_equal(f.value, row.value)]
    row.fact = (equal or in_force or matched)[0]
    if equal and in_force:
        row.holds = True
        row.note = _("Holds.")
    elif equal:
        row.note = _("The value matches, but the fact is not in force (%(state)s).") % {
            "state": row.fact.phrase}
    else:
        row.note = _("The source says %(value)s.") % {"value": row.fact.shown_value}
    return row


def _conflict(finding: Mapping[str, Any], claims: list[dict[str, Any]],
              citations: Mapping[str, CitationView], documents: Mapping[str, Document],
              facts_by_revision: Mapping[int, list[FactView]],
              passages: Mapping[tuple[int, str], PassageView],
              principals: frozenset[str],
              memo: dict[tuple[str, str, str | None], list[FactView]]) -> ConflictView:
    index = finding.get("claim")
    claim = claims[index] if isinstance(index, int) and 0 <= index < len(claims) else {}
    key, subject = claim.get("key"), claim.get("subject")
    sources: list[ConflictSource] = []

    def in_force(document: Document) -> list[FactView]:
        """The document's facts in force on the claim's key and subject, read once a page
        (`memo`) however many claims and ids ask for them."""
        found = memo.get((document.key, key or "", subject))
        if found is None:
            facts = facts_by_revision.get(document.current_revision_id or 0, [])
            found = memo[(document.key, key or "", subject)] = [
                f for f in _claim_facts(facts, key or "", subject) if f.state == "current"]
        return found

    def card(document: Document, fact: FactView | None) -> ConflictSource:
        revision = document.current_revision
        assert revision is not None
        return ConflictSource(
            document_key=document.key, revision=revision.revision, title=revision.title,
            owner=document.owner.username, updated_at=revision.updated_at, fact=fact,
            passage=passages.get((revision.pk, fact.span)) if fact is not None and fact.span
            else None)

    # One card for each document's fact, naming every id the answer retrieved it under: an
    # answer citing one document under many ids would otherwise draw it once for each.
    cards: dict[tuple[str, int], ConflictSource] = {}
    for cite in sorted(finding.get("evidence") or (), key=natural_order):
        citation = citations.get(cite)
        document = documents.get(citation.document_key) if citation else None
        if citation is None or document is None or document.current_revision is None:
            continue
        for fact in in_force(document) or [None]:  # type: ignore[list-item]
            if (document.key, id(fact)) not in cards:
                sources.append(cards.setdefault((document.key, id(fact)), card(document, fact)))
            cards[(document.key, id(fact))].cites.append(cite)
    for key_name in finding.get("kb_documents") or ():
        document = documents.get(key_name)
        if document is None or not may_read(document.allowed_principals, principals) \
                or document.current_revision is None:
            # Say that another source disagrees, never what it says or which it is.
            sources.append(ConflictSource(document_key=None, restricted=True))
            continue
        sources.extend(card(document, fact)
                       for fact in in_force(document) or [None])  # type: ignore[list-item]
    by_subject: dict[str | None, list[Any]] = {}
    for source in sources:
        if source.fact is not None:
            by_subject.setdefault(source.fact.subject or None, []).append(source.fact.value)
    hidden = any(source.restricted for source in sources)  # its value and subject untold
    if not subject and not hidden and len(by_subject) > 1 and all(
            all(same_value(value, values[0]) for value in values)
            for values in by_subject.values()):
        # No owner can settle this: each value is right for its own subject (two sources
        # that disagree on one subject are a conflict an owner settles, whatever the others).
        sentence = _("Sources in force give different values for %(what)s because they speak "
                     "of different subjects, and the claim names none: the answer has to say "
                     "which applies.")
    else:
        sentence = _("Sources in force disagree about %(what)s.")
    disagreeing = {cite for source in sources if source.fact is not None
                   and not same_value(source.fact.value, claim.get("value"))
                   for cite in source.cites}
    return ConflictView([sentence % {"what": describe_claim(index, claims)}], sources,
                        disagreeing)


def _grouped(conflicts: list[ConflictView]) -> list[ConflictView]:
    """Conflicts over the very same sources drawn once, with each claim's sentence: many
    claims on one key would otherwise draw the same cards again for each claim."""
    by_sources: dict[tuple[object, ...], ConflictView] = {}
    for conflict in conflicts:
        same = tuple((s.document_key, s.revision, id(s.fact), s.restricted, tuple(s.cites))
                     for s in conflict.sources)
        if same in by_sources:
            by_sources[same].sentences.extend(conflict.sentences)
            by_sources[same].disagreeing |= conflict.disagreeing
        else:
            by_sources[same] = conflict
    return list(by_sources.values())


# What the claims citing one source ask about: (key, subject), with None for a claim that names
# no subject, which the gate matches against that key's facts of every subject.
Claimed = set[tuple[str, str | None]]


def _what_claims_ask(claims: list[dict[str, Any]], cite: str) -> Claimed:
    return {(c["key"], c.get("subject") or None) for c in claims if c.get("cite") == cite}


def _is_claimed(fact: FactView, claimed: Claimed) -> bool:
    """Whether a claim asks about `fact`, as the gate pairs them."""
    return any(gating.claim_asks_about(key, subject, fact.key, fact.subject)
               for key, subject in claimed)


def _cited_facts(facts: list[FactView], span: str, claimed: Claimed) -> list[FactView]:
    """The facts a citation stands for: those of its quoted span and those its claims name."""
    return [f for f in facts if (span and f.span == span) or _is_claimed(f, claimed)]


def _fact_changes(old: list[FactView], new: list[FactView]) -> list[FactChange]:
    """The facts of `old` and `new` that are not in both, paired by (subject, key) in order:
    a fact stated unchanged in both revisions, wherever it sits, is no change."""
    def by_name(facts: list[FactView]) -> dict[tuple[str, str], list[FactView]]:
        grouped: dict[tuple[str, str], list[FactView]] = {}
        for f in facts:
            grouped.setdefault((f.subject, f.key), []).append(f)
        return grouped

    before, after = by_name(old), by_name(new)
    changes = []
    for name in sorted(before.keys() | after.keys()):
        gone, came = list(before.get(name, [])), list(after.get(name, []))
        for fact in list(gone):
            same = next((f for f in came if _values_equal(f.value, fact.value)
                         and (f.valid_from, f.valid_until) == (fact.valid_from,
                                                               fact.valid_until)), None)
            if same is not None:
                gone.remove(fact)
                came.remove(same)
        changes.extend(FactChange(*pair) for pair in itertools.zip_longest(gone, came))
    return changes


def _diff(r: Any, citation: CitationView, older: Mapping[tuple[str, str], Revision],
          documents: Mapping[str, Document], facts_by_revision: Mapping[int, list[FactView]],
          passages: Mapping[tuple[int, str], PassageView], principals: frozenset[str],
          claimed: Claimed, cited_by_claim: bool) -> DiffView | None:
    quoted = older.get((citation.document_key, citation.revision))
    document = documents.get(citation.document_key)
    if quoted is None or document is None or document.current_revision is None:
        return None
    if not may_read(quoted.allowed_principals, principals):
        return None
    # Every fact, in either revision, named like one the citation stands for in either: a
    # fact that moved to another span, or a period that was split, is compared whole.
    quoted_facts = facts_by_revision.get(quoted.pk, [])
    current_facts = facts_by_revision.get(document.current_revision_id, [])
    names = {(f.subject, f.key) for f in [*_cited_facts(quoted_facts, r.span, claimed),
                                          *citation.facts]}
    facts = _fact_changes([f for f in quoted_facts if (f.subject, f.key) in names],
                          [f for f in current_facts if (f.subject, f.key) in names])
    for change in facts:
        change.used = _is_claimed(change.before or change.after, claimed)  # type: ignore[arg-type]
    old = passages.get((quoted.pk, r.span)) if r.span else None
    new = passages.get((document.current_revision_id, r.span)) if r.span else None
    if old is None and not facts:
        return None
    left, right = diff_segments(old.text, new.text if new is not None else "") if old else (
        None, None)
    return DiffView(citation.cite, citation.document_key, quoted.revision,
                    document.current_revision.revision, left, right,
                    new_missing=old is not None and new is None, facts=facts,
                    cited_by_claim=cited_by_claim)

