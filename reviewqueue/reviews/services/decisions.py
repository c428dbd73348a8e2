"""A reviewer's approve, reject or edit of a held answer.

Every decision names the verdict the reviewer saw. It is applied only while that verdict is the
answer's current one *and* still fresh (gating the answer now gives the same fingerprint).
Otherwise nothing is applied: the fresh verdict is stored, becomes current, and the caller gets
StaleVerdict carrying it (Invariant 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import Max

import gating
from reviewqueue.accounts.principals import user_principals
from reviewqueue.audit.services import Actor, audit_chain_lock
from reviewqueue.errors import Conflict, DomainError, FieldError, NotFound
from reviewqueue.instants import instant_text
from reviewqueue.reviews.labels import REJECT_REASONS
from reviewqueue.reviews.models import (
    Answer,
    AnswerVersion,
    Decision,
    PassageExpansion,
    RetrievedItem,
    ReviewItem,
    Verdict,
)
from reviewqueue.reviews.selectors.answers import user_may_read_answer
from reviewqueue.reviews.services.evaluation import (
    claims_on_hidden_facts,
    day_passed_under,
    gate_day,
    load_sources,
    older_gate,
    run_gate,
    store_verdict,
    verdict_is_fresh,
)
from reviewqueue.reviews.services.leases import (
    LeasedByOther,
    LeaseLost,
    NotHeld,
    lease_claim,
    lease_state,
)
from reviewqueue.reviews.services.reevaluation import catch_up_on_commit, record_cleared
from reviewqueue.reviews.services.transitions import (
    answer_apply_decision,
    answer_apply_verdict,
    says_the_same,
)
from reviewqueue.textmatch import answer_is_blank, says

ACTIONS = ("approve", "reject", "edit")
MAX_COMMENT_CHARS = 5000
# A refusal of an edit that the item page says in the reviewer's language (see views.decide).
NOTHING_CHANGED = "the edit changes nothing; approve the answer instead"


class StaleVerdict(Conflict):
    """The verdict the reviewer saw is no longer current or no longer fresh."""

    code = "stale_verdict"

    def __init__(self, answer: Answer, verdict: Verdict, *, edited: bool = False,
                 day_passed: date | None = None) -> None:
        what = "the sources changed while you were reviewing"
        if day_passed is not None:
            what = (f"a validity date passed while you were reviewing: on {day_passed:%Y-%m-%d}"
                    " a fact this answer rests on started or stopped holding")
        version = answer.current_version
        if edited and version is not None:
            # Said with who edited it: the one told may be its author (an edit, then a
            # decision sent on the verdict seen before it).
            who = version.created_by.get_username() if version.created_by else "someone"
            what = f"the answer was edited after that verdict (version {version.number}, by {who})"
        elif edited:
            what = "the answer was edited after that verdict"
        super().__init__(
            f"{what}; decide again on the current verdict",
            extra={"status": answer.status},
        )
        self.answer = answer
        self.verdict = verdict
        # The verdict the reviewer decided on was of an older version of the answer.
        self.edited = edited
        # Nothing changed in the sources: a day came on which a fact started or stopped
        # holding (the page was open over midnight, before the nightly validity check).
        self.day_passed = day_passed


class RecordedBefore(Conflict):
    """The reviewer's decision, sent again (a client's retry after a lost reply, a second
    tab), was recorded, and the answer has come back to the queue since: its sources changed.
    Nothing is recorded or claimed; they decide again on the current verdict."""

    code = "recorded_before"

    def __init__(self, answer: Answer, decision: Decision) -> None:
        super().__init__(
            f"your {decision.action} of verdict {decision.verdict_id} was recorded at "
            f"{instant_text(decision.created_at)}, and the answer has come back to the queue "
            "since (its sources changed): decide again on the current verdict",
            extra={"status": answer.status, "current_verdict": answer.current_verdict_id,
                   "decision": {"id": decision.pk, "action": decision.action,
                                "reviewer": decision.reviewer.get_username(),
                                "created_at": instant_text(decision.created_at)}})
        self.decision = decision


class EditRefused(DomainError):
    """The gate abstains on the edited answer; nothing was stored."""

    code = "edit_refused"

    def __init__(self, verdict: gating.Verdict) -> None:
        super().__init__(
            f"the gate abstains on the edited answer ({verdict.reason}); nothing was saved",
            extra={"decision": verdict.decision, "reason": verdict.reason},
        )
        self.verdict = verdict


class ApproveRefused(Conflict):
    """The current verdict abstains: an approval would send what the gate refuses (a source
    the asker may not read, a citation pointing at nothing). Reject or edit instead."""

    code = "approve_refused"

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(
            f"the gate abstains on this answer ({verdict.reason}), so it cannot be approved; "
            "reject it, or edit it so that the gate no longer abstains",
            extra={"decision": verdict.decision, "reason": verdict.reason},
        )
        self.verdict = verdict


@dataclass(frozen=True)
class DecisionInput:
    action: str
    verdict_id: int
    comment: str = ""
    reject_reason: str = ""
    text: str | None = None
    claims: list[dict[str, Any]] | None = None
    # The decision was made on a page drawn under the reviewer's lease (see _decide).
    lease_held: bool = False
    # An edit whose text no longer says a value its unchanged claims state is refused unless
    # the reviewer says the claims are right as they are (see claims_unsaid).
    claims_checked: bool = False


@dataclass(frozen=True)
class DecisionResult:
    decision: Decision
    answer: Answer
    verdict: Verdict  # what the answer rests on now
    status: str
    # The same decision sent again by the same reviewer (a double click, a client's retry):
    # nothing new was recorded, and this is the decision stored the first time.
    replayed: bool = False


@dataclass
class _Refresh:
    """Outcome that must be committed before the caller is told (a fresh verdict, a claim)."""

    stale: Verdict | None = None
    edited: bool = False
    day_passed: date | None = None
    refused: gating.Verdict | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def validate_decision(data: DecisionInput) -> None:
    """Checks that do not need the database; the API and the forms check the same first."""
    if data.action not in ACTIONS:
        raise FieldError("action", "must be approve, reject or edit")
    if len(data.comment) > MAX_COMMENT_CHARS:
        raise FieldError("comment", f"at most {MAX_COMMENT_CHARS} characters")
    if data.action == "reject":
        if data.reject_reason not in REJECT_REASONS:
            raise FieldError("reason", "choose one of: " + ", ".join(REJECT_REASONS))
        if data.reject_reason == "other" and not data.comment.strip():
            raise FieldError("comment", "say why the answer is rejected")
    if data.action == "edit":
        if data.text is None or answer_is_blank(data.text):
            raise FieldError("answer", "the edited answer text is required (white space, "
                                       "citation markers and HTML comments alone say nothing)")
        if data.claims is None:
            raise FieldError("claims", "the edited claims are required")
        for index, claim in enumerate(data.claims):
            for name in ("key", "cite"):
                if not isinstance(claim.get(name), str) or not claim[name].strip():
                    raise FieldError(f"claims[{index}].{name}", "this field is required")
            if not isinstance(claim.get("value"), (str, int, float, bool)):
                raise FieldError(f"claims[{index}].value",
                                 "must be a string, number or boolean")


def _clean_claims(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for claim in claims:
        item: dict[str, Any] = {"key": claim["key"].strip(), "value": claim["value"],
                                "cite": claim["cite"].strip()}
        subject = (claim.get("subject") or "").strip()
        if subject:
            item = {"subject": subject, **item}
        out.append(item)
    return out


def answer_decide(*, trace_id: str, user: Any, actor: Actor, data: DecisionInput
                  ) -> DecisionResult:
    """Apply the decision, or raise why not.

    Raises NotFound (no such answer, or one the user may not read), NotHeld, LeasedByOther,
    StaleVerdict (after storing the fresh verdict), EditRefused (nothing stored),
    ApproveRefused (an approval of a verdict that abstains) or FieldError.
    """
    validate_decision(data)
    outcome = _decide(trace_id=trace_id, user=user, actor=actor, data=data)
    # Raised only now, after the transaction committed the fresh verdict (or the claim).
    if isinstance(outcome, _Refresh):
        if outcome.stale is not None:
            answer = Answer.objects.select_related("current_verdict").get(trace_id=trace_id)
            raise StaleVerdict(answer, outcome.stale, edited=outcome.edited,
                               day_passed=outcome.day_passed)
        assert outcome.refused is not None
        raise EditRefused(outcome.refused)
    return outcome


@transaction.atomic
def _decide(*, trace_id: str, user: Any, actor: Actor, data: DecisionInput
            ) -> DecisionResult | _Refresh:
    # Lock the answer row alone, then read it with its relations. Locking a join instead would
    # go wrong when we had to wait: PostgreSQL re-checks only the locked row against its new
    # version and hands back the outer-joined columns (current_verdict, ...) as NULL.
    locked = (
        Answer.objects.select_for_update().filter(trace_id=trace_id)
        .values_list("pk", flat=True).first()
    )
    answer = None
    if locked is not None:
        answer = Answer.objects.select_related("current_version", "current_verdict").get(
            pk=locked)
    # Checked under the lock: a revision published a moment ago may have restricted a source.
    if answer is None or not user_may_read_answer(answer, user_principals(user)):
        raise NotFound(f"no answer {trace_id!r}")
    decided = answer.status in (Answer.Status.APPROVED, Answer.Status.REJECTED)
    if decided or data.verdict_id != answer.current_verdict_id:
        # Sent again by the reviewer who made it (a double click, a client's retry)? Then
        # nothing happened since: an approval or a rejection still stands, an edit's version
        # is still the answer's.
        last = (answer.decisions.select_related("reviewer", "new_version", "verdict")
                .order_by("-pk").first())
        if last is not None and _same_decision(last, user, data) and (
                answer.current_version_id == last.new_version_id if last.action == "edit"
                else decided):
            assert answer.current_verdict is not None
            return DecisionResult(decision=last, answer=answer, verdict=answer.current_verdict,
                                  status=answer.status, replayed=True)
        if decided:  # only a decision approves or rejects: the last one took it out
            raise NotHeld(answer, decided=last)
        if last is not None and _same_decision(last, user, data):
            # Theirs stands in the history, and the answer is back: said before any claim.
            raise RecordedBefore(answer, last)
    if answer.status != Answer.Status.HELD:
        raise NotHeld(answer)
    if data.verdict_id != answer.current_verdict_id and not Verdict.objects.filter(
            pk=data.verdict_id, answer=answer).exists():
        # A mistake, not a stale view: nothing is claimed or re-evaluated for it.
        raise FieldError("verdict", "not a verdict of this answer")

    # Locked until the decision commits: the lease read here is the one the decision is made
    # under. Unlocked, an admin could break it and a colleague claim the item in between, be
    # told the item is theirs, and see it decided from under them a moment later. Now their
    # claim waits for this transaction and finds the item decided (NotHeld).
    locked_item = (ReviewItem.objects.select_for_update().filter(answer=answer)
                   .values_list("pk", flat=True).first())
    item = None if locked_item is None else (
        ReviewItem.objects.select_related("leased_by").get(pk=locked_item))
    lease = lease_state(item, user)
    if lease.active and not lease.mine:
        assert lease.holder is not None and lease.until is not None
        raise LeasedByOther(lease.holder, lease.until)
    if not lease.active:
        if data.lease_held:
            # The reviewer's lease ended while they worked (an admin broke it, or it expired):
            # they are told before anything is recorded, rather than claiming it back unseen.
            raise LeaseLost
        # Deciding on a free item claims it first, so the claim is audited like any other.
        lease_claim(answer=answer, user=user, actor=actor)

    # Every change to the sources (publish, withdrawal, restore, dismissal) appends to the
    # audit chain before it commits: holding the chain's lock while the freshness is checked
    # means none can commit between the check and this decision's commit.
    audit_chain_lock()
    current = answer.current_verdict
    assert current is not None and answer.current_version is not None
    # A verdict made current since the reviewer's, which tells them exactly what theirs told
    # (a document the answer does not cite republished with the same facts), is decided on.
    seen = says_the_same(data.verdict_id, current)
    if not seen or not verdict_is_fresh(answer, current):
        seen_on_another_version = current.pk != data.verdict_id and not Verdict.objects.filter(
            pk=data.verdict_id, version_id=answer.current_version_id).exists()
        # Asked before the refresh, which may make another verdict current.
        shown = (current if current.pk == data.verdict_id
                 else Verdict.objects.select_related("version").get(pk=data.verdict_id))
        day_passed = None if seen_on_another_version else day_passed_under(answer, shown)
        return _Refresh(stale=_refresh(answer, actor), edited=seen_on_another_version,
                        day_passed=day_passed)

    # An approved answer whose sources changed comes back held even when the gate now
    # abstains (so that a person sees it): it can be rejected or edited, never approved as is.
    if data.action == "approve" and current.decision == Verdict.Decision.ABSTAIN:
        raise ApproveRefused(current)

    # Passages opened on this verdict: those opened on an earlier one may have said otherwise.
    # (And on the verdict the reviewer read, when a verdict telling the same replaced it.)
    read = PassageExpansion.objects.filter(answer=answer, reviewer=user,
                                           verdict_id__in={current.pk, data.verdict_id}).exists()
    decision = Decision(
        answer=answer,
        verdict=current,
        version=answer.current_version,
        action=data.action,
        reviewer=user,
        comment=data.comment.strip(),
        reject_reason=data.reject_reason if data.action == "reject" else "",
        revisions_used=current.revisions_used,
        read_passages=read,
    )
    resting_on = current
    if data.action == "edit":
        edited = _edit(answer, user, data)
        if isinstance(edited, gating.Verdict):
            return _Refresh(refused=edited)
        decision.new_version = edited.version
        resting_on = edited
    decision.save()
    waiting = item is not None and item.waiting_for_owner
    status = answer_apply_decision(answer=answer, decision=decision, verdict=resting_on,
                                   actor=actor, was_waiting_for_owner=waiting)
    return DecisionResult(decision=decision, answer=answer, verdict=resting_on, status=status)


def _same_decision(decision: Decision, user: Any, data: DecisionInput) -> bool:
    """Whether `data` is `decision` sent again by the reviewer who made it."""
    same = (decision.reviewer_id == user.pk and decision.action == data.action
            and (decision.verdict_id == data.verdict_id
                 # decided on a verdict that replaced the one sent, telling the same
                 or says_the_same(data.verdict_id, decision.verdict))
            and decision.comment == data.comment.strip()
            and decision.reject_reason == (data.reject_reason if data.action == "reject" else ""))
    if not same or data.action != "edit":
        return same
    made = decision.new_version
    return made is not None and made.text == data.text and (
        _as_json(made.claims) == _as_json(_clean_claims(data.claims or [])))


def _refresh(answer: Answer, actor: Actor) -> Verdict:
    """Gate the current version now, store the verdict and make it current (unless a newer
    gate than this process runs gave the current one)."""
    retrieved = list(answer.retrieved.all())
    run = run_gate(answer=answer, version=answer.current_version, retrieved=retrieved,
                   as_of=gate_day(answer))
    current = answer.current_verdict
    if current is not None and older_gate(run.verdict.gate_version, current.gate_version):
        # A rolling deploy: this process still runs the previous release, which cannot tell
        # the new gate's verdict fresh, nor may replace it. Nothing is stored; sent again,
        # the decision reaches a process of the new release.
        return current
    fresh, _ = store_verdict(answer=answer, version=answer.current_version, run=run,
                             trigger=Verdict.Trigger.DECISION)
    if answer.current_verdict_id != fresh.pk:
        old_status = answer.status
        new_status = answer_apply_verdict(answer=answer, verdict=fresh, actor=actor,
                                          cause=Verdict.Trigger.DECISION)
        # The fresh verdict may let the answer through (or abstain): it leaves the queue
        # undecided, which the log says as it does after any other re-evaluation.
        record_cleared(answer=answer, old_status=old_status, new_status=new_status,
                       verdict=fresh, trigger=Verdict.Trigger.DECISION, actor=actor)
    return fresh


def _as_json(claims: list[dict[str, Any]]) -> str:
    return json.dumps(claims, sort_keys=True)


class ClaimsOnHiddenFacts(FieldError):
    """An edit changes or adds claims whose verdict rests on facts the reviewer may not read."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers
        which = claim_paths(numbers, "is checked", "are checked")
        super().__init__("claims", f"{which} against a document you may not read, and "
                         "changing such a claim would tell you what the document says: leave "
                         "it as it is or remove it (a reviewer who may read the document can "
                         "change it)")


def claim_paths(numbers: list[int], one: str, many: str) -> str:
    """Claims numbered from 1, as the page numbers them, said the API's way: by their index
    in `claims`, as findings name them ("claims[0] does not hold ...")."""
    listed = ", ".join(f"claims[{number - 1}]" for number in numbers)
    return f"{listed} {one if len(numbers) == 1 else many}"


class ClaimsUnsaid(FieldError):
    """An edit changed the text away from values its claims, left as they were, state."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers
        which = claim_paths(numbers, "states a value", "state values")
        super().__init__("claims_checked", f"{which} the text said before the edit and no "
                         "longer says: change the claims too (the gate checks the claims, not "
                         "the text), or send true if they are right as they are")


def claims_unsaid(before_text: str, after_text: str, before: list[dict[str, Any]],
                  after: list[dict[str, Any]]) -> list[int]:
    """The numbers (from 1) of the claims whose value the text said before an edit and no
    longer says, when the edit left the claims as they were: the reviewer corrected the text
    ("within 365 days") and forgot the claim (30), which the gate alone checks. A value is
    looked for as textmatch.says looks for it."""
    if _as_json(before) != _as_json(after):
        return []
    return [number for number, claim in enumerate(after, start=1)
            if says(before_text, claim.get("value"))
            and not says(after_text, claim.get("value"))]


def _edit(answer: Answer, user: Any, data: DecisionInput) -> Verdict | gating.Verdict:
    """Gate the edited text and claims on the current revisions.

    Abstain: return the unsaved gate verdict, store nothing (versions are never overwritten, so
    a refused edit would stay in the history for good; the page keeps the text instead).
    Otherwise store the new version and its verdict and return the verdict.
    """
    assert data.text is not None and data.claims is not None
    claims = _clean_claims(data.claims)
    current = answer.current_version
    assert current is not None
    # Compared as JSON: 1, 1.0 and true are equal in Python but three values to the gate, so
    # correcting only a claim's type is a change. Spaces before or after the text are none:
    # no reader sees them.
    if data.text.strip() == current.text.strip() and _as_json(claims) == _as_json(
            current.claims):
        raise FieldError("answer", NOTHING_CHANGED)
    if not data.claims_checked and (unsaid := claims_unsaid(current.text, data.text,
                                                            current.claims, claims)):
        raise ClaimsUnsaid(unsaid)
    number = (answer.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    version = AnswerVersion(answer=answer, number=number, text=data.text, claims=claims,
                            created_by=user)
    retrieved = list(RetrievedItem.objects.filter(answer=answer))
    sources = load_sources(((r.document_key, r.revision, r.span) for r in retrieved),
                           (c["key"] for c in claims))
    # Only claims the edit changes or adds: one left as it was tells nothing new.
    kept = {_as_json([c]) for c in current.claims}
    changed = [(number, c) for number, c in enumerate(claims, start=1)
               if _as_json([c]) not in kept]
    hidden = claims_on_hidden_facts(sources, [c for _, c in changed], answer.asked_by,
                                    {r.document_key for r in retrieved}, user_principals(user))
    if hidden:
        raise ClaimsOnHiddenFacts([changed[i - 1][0] for i in hidden])
    run = run_gate(answer=answer, version=version, retrieved=retrieved, as_of=gate_day(answer),
                   sources=sources)
    if run.verdict.decision == Verdict.Decision.ABSTAIN:
        return run.verdict
    version.save()
    verdict, _ = store_verdict(answer=answer, version=version, run=run,
                               trigger=Verdict.Trigger.EDIT)
    # A publish committing meanwhile re-evaluates the answers whose *current* version claims
    # its keys, and this one is not current until the edit commits: checked again then, as
    # ingest does, so an approval never stays on a verdict its sources have moved past.
    catch_up_on_commit(sources, {r.document_key: [answer.pk] for r in retrieved},
                       {c["key"]: [answer.pk] for c in claims})
    return verdict


@transaction.atomic
def passage_expansion_record(*, answer: Answer, verdict_id: int, user: Any, cite: str) -> None:
    """Note that the reviewer opened passage `cite` (once per verdict; repeats are ignored)."""
    if not answer.retrieved.filter(cite=cite).exists():
        raise FieldError("cite", "not a retrieved item of this answer")
    if not Verdict.objects.filter(pk=verdict_id, answer=answer).exists():
        raise FieldError("verdict", "not a verdict of this answer")
    PassageExpansion.objects.bulk_create(
        [PassageExpansion(answer=answer, reviewer=user, verdict_id=verdict_id, cite=cite)],
        ignore_conflicts=True,
    )
