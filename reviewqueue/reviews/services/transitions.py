"""The one place where an answer's status and its queue entry change."""

from __future__ import annotations

import json
import random
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from reviewqueue.audit.services import Actor, Entry, audit_record, audit_record_many
from reviewqueue.copying import built, copy_instances
from reviewqueue.reviews.models import Answer, Decision, ReviewItem, Verdict
from reviewqueue.reviews.selectors.answers import held_cites
from reviewqueue.reviews.signals import answers_status_changed

_STATUS_FOR_DECISION = {
    Verdict.Decision.CANDIDATE: Answer.Status.CANDIDATE,
    Verdict.Decision.REVIEW: Answer.Status.HELD,
    Verdict.Decision.ABSTAIN: Answer.Status.ABSTAINED,
}


def status_after(current: str | None, decision: str) -> str:
    """Where a fresh verdict moves an answer.

    - A rejected answer stays rejected: a person decided it, a new verdict is only recorded.
    - An approved answer stays approved while the gate still says candidate; any other verdict
      sends it back to the queue, where the earlier approval is shown (answer_apply_verdict
      keeps it approved when the verdict is the very one the reviewer approved).
    - Otherwise the verdict decides: candidate, held (review) or abstained. An answer that
      was approved once is never abstained: answer_apply_verdict holds it, approval shown.
    """
    if current == Answer.Status.REJECTED:
        return Answer.Status.REJECTED
    if current == Answer.Status.APPROVED:
        return Answer.Status.APPROVED if decision == "candidate" else Answer.Status.HELD
    return _STATUS_FOR_DECISION[Verdict.Decision(decision)]


def _set_current(answer: Answer, verdict: Verdict, old_status: str | None, new_status: str,
                 now: datetime) -> None:
    """Point the answer at `verdict` (and its version) and, if it moves, at `new_status`."""
    answer.current_verdict = verdict
    answer.current_version_id = verdict.version_id
    fields = ["current_verdict", "current_version"]
    if new_status != old_status:
        answer.status = new_status
        answer.status_changed_at = now
        fields += ["status", "status_changed_at"]
    answer.save(update_fields=fields)


def kb_documents_of(findings: list[dict[str, Any]]) -> list[str]:
    """What a hold rests on through the knowledge base (ReviewItem.kb_documents): the documents
    the verdict's conflicting_sources findings name in `kb_documents`, sorted, once each. A
    conflict over one of them holds the answer, though it retrieved none of them: the owner's
    inbox counts it, the conflict's page lists it (sources.selectors). Written with the item's
    `reasons`, wherever they are written, so that the two always tell of the same verdict."""
    return sorted({key for finding in findings if finding.get("code") == "conflicting_sources"
                   for key in finding.get("kb_documents") or ()})


def first_status(decision: str) -> tuple[str, bool]:
    """The status a newly ingested answer starts in, and whether it is an audit sample: a
    small random share of fresh candidates is held so that the share reviewers reject
    estimates how many bad answers the gate lets through."""
    status = status_after(None, decision)
    if status == Answer.Status.CANDIDATE and random.random() < settings.AUDIT_SAMPLE_RATE:
        return Answer.Status.HELD, True
    return status, False


def _verdict_event(answer: Answer, verdict: Verdict, old_status: str | None, new_status: str,
                   old_verdict_id: int | None, cause: str, actor: Actor,
                   audit_sample: bool = False, owner_wait_ended: bool = False) -> Entry:
    before: dict[str, object] = {"status": old_status, "verdict": old_verdict_id}
    after: dict[str, object] = {
        "status": new_status, "verdict": verdict.pk, "decision": verdict.decision,
        "reason": verdict.reason, "cause": cause, "audit_sample": audit_sample,
        "revisions": [[r["document"], r.get("current")] for r in verdict.revisions_used],
        "verdict_sha256": verdict.content_sha256(),
    }
    if cause == "ingest":
        # The first verdict on the answer's first version: its event vouches for the text and
        # claims judged (an edit's decision event does for the versions after it), and for the
        # body submitted: the question, who asked, the day and the citations every later
        # verdict is computed from.
        after["version_sha256"] = verdict.version.content_sha256()
        after["body_sha256"] = answer.body_digest
    if old_verdict_id is not None and verdict.pk < old_verdict_id:
        # A verdict is never stored twice: the gate gave back one the answer had before.
        after["earlier_verdict"] = True
    if owner_wait_ended:
        before["waiting_for_owner"] = True
        after["waiting_for_owner"] = False
    return Entry(
        actor=actor,
        action="verdict.created" if cause != "ingest" else "answer.ingested",
        object_type="answer",
        object_id=answer.trace_id,
        trace_id=answer.trace_id,
        before=before,
        after=after,
    )


def _announce(actor: Actor,
              changes: list[tuple[Answer, str | None, str, Verdict, str]]) -> None:
    """Tell other areas (webhooks) which answers changed status, with one signal for one
    answer or many: (answer, old status, new status, verdict, cause)."""
    answers_status_changed.send(sender=Answer, actor=actor, changes=[
        {"answer": answer, "old_status": old, "new_status": new, "verdict": verdict,
         "actor": actor, "cause": cause}
        for answer, old, new, verdict, cause in changes
    ])


def answers_enter(*, entered: list[tuple[Answer, Verdict, bool]], actor: Actor) -> None:
    """Queue and record answers just stored, each with its first verdict and the status
    `first_status` gave it: (answer, verdict, audit_sample). One insert for the queue
    entries, one signal and one audit append for the whole batch."""
    assert transaction.get_connection().in_atomic_block
    copy_instances([
        built(ReviewItem, answer_id=answer.pk, entered_at=answer.status_changed_at,
              primary_reason=verdict.reason, reasons=verdict.reasons,
              kb_documents=kb_documents_of(verdict.findings),
              index_release=answer.index_release, audit_sample=sample)
        for answer, verdict, sample in entered if answer.status == Answer.Status.HELD
    ])
    _announce(actor, [(answer, None, answer.status, verdict, "ingest")
                      for answer, verdict, _ in entered])
    audit_record_many([
        _verdict_event(answer, verdict, None, answer.status, None, "ingest", actor, sample)
        for answer, verdict, sample in entered
    ])


def _held_for(decision: str, reasons: list[str], findings: list[dict[str, Any]],
              revisions_used: list[dict[str, Any]], claims: list[dict[str, Any]],
              text: str) -> object:
    """What a verdict holds an answer for, as the reviewer reads it: its decision, each
    finding's code, claim and cited ids, and the revisions of the documents it cites (by a
    claim or a marker in `text`) or a finding names by its id. Not the knowledge-base
    documents a finding names, nor those it only retrieved: one that joins a conflict the
    owners were asked about, or a new revision of a document nothing rests on, leaves their
    question the one to answer."""
    cited = held_cites(findings, claims, text)
    return json.dumps([decision, reasons,
                       [[f.get("code"), f.get("claim"), f.get("evidence")] for f in findings],
                       # Ingest keeps the order the answer listed them in; re-evaluation, its own.
                       sorted((used for used in revisions_used if used.get("cite") in cited),
                              key=lambda used: str(used.get("cite")))],
                      sort_keys=True)


def _shows_the_same(old_verdict_id: int | None, verdict: Verdict) -> bool:
    """Whether `verdict` holds the answer for what the verdict `old_verdict_id` held it for
    (`_held_for`): a new fingerprint may come from a document the answer does not cite that
    agrees with it, or from one more document in the same conflict. Two queries at most."""
    old = (Verdict.objects.filter(pk=old_verdict_id)
           .values_list("decision", "reasons", "findings", "revisions_used", "version__claims",
                        "version__text").first())
    return old is not None and _held_for(*old) == _held_for(
        verdict.decision, verdict.reasons, verdict.findings, verdict.revisions_used,
        verdict.version.claims, verdict.version.text)


_SAID = ("version_id", "decision", "reasons", "findings", "warnings", "revisions_used")


def says_the_same(verdict_id: int, verdict: Verdict) -> bool:
    """Whether the verdict `verdict_id` tells a reviewer exactly what `verdict` tells: on the
    same version, the same decision, reasons, findings and warnings, on the same revisions of
    the documents it cites. Their fingerprints may differ: a document the answer does not
    cite got a revision whose facts are the same (a passage reworded, a re-sync). One query."""
    if verdict_id == verdict.pk:
        return True
    said = Verdict.objects.filter(pk=verdict_id).values_list(*_SAID).first()
    if said is None:
        return False

    def plain(values: Any) -> str:
        version, decision, reasons, findings, warnings, used = values
        # Ingest keeps the order the answer listed its documents in; re-evaluation, its own.
        used = sorted(used or [], key=lambda u: json.dumps(u, sort_keys=True))
        return json.dumps([version, decision, reasons, findings, warnings, used], sort_keys=True)

    return plain(said) == plain([getattr(verdict, name) for name in _SAID])


def _last_approval(answer: Answer) -> Decision | None:
    """The answer's last decision that approved it: an approve, or an edit whose own verdict
    let it through (`status_after_decision`). An edit the gate still held approved nothing."""
    return (
        Decision.objects.filter(answer=answer)
        .filter(Q(action=Decision.Action.APPROVE)
                | Q(action=Decision.Action.EDIT,
                    new_version__verdicts__trigger=Verdict.Trigger.EDIT,
                    new_version__verdicts__decision=Verdict.Decision.CANDIDATE))
        .order_by("-id").first()
    )


def answer_apply_verdict(
    *, answer: Answer, verdict: Verdict, actor: Actor, cause: str
) -> str:
    """Make `verdict` the answer's current verdict and move its status. Caller holds the lock
    on the answer row (select_for_update) inside a transaction. Returns the new status."""
    assert transaction.get_connection().in_atomic_block
    old_status = answer.status or None
    new_status = status_after(old_status, verdict.decision)
    # The approval a held answer shows: its last approval, when it comes back to the queue
    # from APPROVED, or from CANDIDATE (an approved answer the gate let through by itself for
    # a while: the approval is its history, and its verdict may come back).
    earlier_approval: Decision | None = None
    item: ReviewItem | None = None
    if old_status in (Answer.Status.APPROVED, Answer.Status.CANDIDATE) \
            and new_status in (Answer.Status.HELD, Answer.Status.ABSTAINED):
        earlier_approval = _last_approval(answer)
    elif old_status == Answer.Status.HELD:
        # Locked: a hand-off to the owner committing meanwhile is seen, not overwritten.
        item = (ReviewItem.objects.select_for_update(of=("self",))
                .select_related("earlier_approval").filter(answer=answer).first())
        earlier_approval = item.earlier_approval if item is not None else None
    if new_status == Answer.Status.ABSTAINED and earlier_approval is not None:
        # Back from an approval, it stays with a person, as an approved answer whose gate
        # abstains does: however many changes came between, the approval is shown.
        new_status = Answer.Status.HELD
    if (new_status == Answer.Status.HELD and earlier_approval is not None
            and earlier_approval.action == "approve"
            and says_the_same(earlier_approval.verdict_id, verdict)):
        # The gate says exactly what the reviewer approved: the very verdict (the sources came
        # back to it: a document withdrawn and restored, say), or one that differs only in a
        # document the answer does not cite, whose new revision states the same facts. Their
        # approval stands.
        new_status = Answer.Status.APPROVED
    if (old_status == Answer.Status.HELD and new_status == Answer.Status.CANDIDATE
            and item is not None and item.audit_sample):
        # An audit sample was drawn to be checked by a person: a fresh verdict that still lets
        # it through does not take it out of the sample (insight's reject share counts on it).
        new_status = Answer.Status.HELD
    now = timezone.now()
    old_verdict_id = answer.current_verdict_id
    _set_current(answer, verdict, old_status, new_status, now)

    owner_wait_ended = False
    if new_status == Answer.Status.HELD:
        created = False
        if item is None:
            item, created = ReviewItem.objects.select_for_update().get_or_create(
                answer=answer,
                defaults={
                    "entered_at": now,
                    "primary_reason": verdict.reason,
                    "reasons": verdict.reasons,
                    "kb_documents": kb_documents_of(verdict.findings),
                    "index_release": answer.index_release,
                    "earlier_approval": earlier_approval,
                },
            )
        fields: list[str] = []
        kb_documents = kb_documents_of(verdict.findings)
        if not created and (item.primary_reason != verdict.reason
                            or item.reasons != verdict.reasons
                            or item.kb_documents != kb_documents):
            item.primary_reason = verdict.reason
            item.reasons = verdict.reasons
            item.kb_documents = kb_documents
            fields += ["primary_reason", "reasons", "kb_documents"]
        # The owner was asked about the answer as the earlier verdict saw it; a new verdict
        # that shows the reviewer something else ends the wait, and the reviewer takes the
        # item up again. The question stays, unanswered: the answer's page lists it.
        # One that holds it for the same asks the owners behind the hold now as well: a
        # document handed to another owner meanwhile (ask_owners_now_behind).
        asking_on = False
        if item.waiting_for_owner and verdict.pk != old_verdict_id:
            if _shows_the_same(old_verdict_id, verdict):
                asking_on = True
            else:
                item.waiting_for_owner = False
                fields.append("waiting_for_owner")
                owner_wait_ended = True
        if fields:
            item.save(update_fields=fields)
        if asking_on:
            from reviewqueue.reviews.services.handoff import ask_owners_now_behind

            ask_owners_now_behind(answer, item, actor)
    elif old_status == Answer.Status.HELD:
        # Out of the queue: a wait on the owners ends with it, and its event says so.
        if item is None:
            item = ReviewItem.objects.filter(answer=answer).only("waiting_for_owner").first()
        owner_wait_ended = item is not None and item.waiting_for_owner
        ReviewItem.objects.filter(answer=answer).delete()

    if new_status != old_status:
        _announce(actor, [(answer, old_status, new_status, verdict, cause)])
    audit_record_many([_verdict_event(answer, verdict, old_status, new_status, old_verdict_id,
                                      cause, actor, owner_wait_ended=owner_wait_ended)])
    return new_status


def status_after_decision(action: str, verdict: Verdict) -> str:
    """Where a reviewer's decision moves a held answer.

    Approve and reject are final. An edit rests on the verdict of the edited version: a
    candidate is approved at once, a review keeps the answer held for an explicit approval.
    An abstaining edit never gets here (the decision service refuses it).
    """
    if action == Decision.Action.APPROVE:
        return Answer.Status.APPROVED
    if action == Decision.Action.REJECT:
        return Answer.Status.REJECTED
    if verdict.decision == Verdict.Decision.CANDIDATE:
        return Answer.Status.APPROVED
    if verdict.decision == Verdict.Decision.REVIEW:
        return Answer.Status.HELD
    raise ValueError("an edit whose verdict abstains cannot be applied")


def answer_apply_decision(
    *, answer: Answer, decision: Decision, verdict: Verdict, actor: Actor,
    was_waiting_for_owner: bool = False,
) -> str:
    """Apply a stored reviewer decision to a held answer and record it in the audit chain.

    `verdict` is the verdict the answer rests on afterwards: the one the reviewer decided on for
    approve and reject, the edited version's for an edit. The caller holds the lock on the
    answer row inside a transaction and has checked that the answer is held and the verdict
    fresh. Returns the new status.
    """
    assert transaction.get_connection().in_atomic_block
    old_status = answer.status or None
    old_verdict_id = answer.current_verdict_id
    old_version_id = answer.current_version_id
    new_status = status_after_decision(decision.action, verdict)
    now = timezone.now()
    _set_current(answer, verdict, old_status, new_status, now)

    if new_status == Answer.Status.HELD:
        # An edit the gate still holds: the same queue entry (and the editor's lease) stays,
        # showing the new version's reasons. The owner was asked about the version before
        # the edit: the wait ends, as it does with any new verdict.
        ReviewItem.objects.filter(answer=answer).update(
            primary_reason=verdict.reason, reasons=verdict.reasons,
            kb_documents=kb_documents_of(verdict.findings), waiting_for_owner=False
        )
    else:
        # The queue entry, and with it the lease, ends with the decision.
        ReviewItem.objects.filter(answer=answer).delete()

    if new_status != old_status:
        _announce(actor, [(answer, old_status, new_status, verdict, "decision")])
    after: dict[str, object] = {
        "status": new_status,
        "decision": decision.pk,
        "reviewer": decision.reviewer.get_username(),
        "decided_on_verdict": decision.verdict_id,
        "revisions": [[r["document"], r.get("current")] for r in decision.revisions_used],
        "verdict": verdict.pk,
        "version": verdict.version_id,
        # The number people see ("version 2"); `version` is the row's id. An edit's verdict
        # was stored with its new version, so neither read costs a query.
        "version_number": (decision.version if verdict.version_id == decision.version_id
                           else verdict.version).number,
        "reject_reason": decision.reject_reason or None,
        "comment_sha256": decision.comment_sha256(),
        "read_passages": decision.read_passages,
    }
    if verdict.pk != decision.verdict_id:
        # An edit: the answer now rests on the edited version's own verdict.
        after["verdict_decision"] = verdict.decision
        after["verdict_revisions"] = [[r["document"], r.get("current")]
                                      for r in verdict.revisions_used]
        after["verdict_sha256"] = verdict.content_sha256()
        after["version_sha256"] = verdict.version.content_sha256()
    before: dict[str, object] = {"status": old_status, "verdict": old_verdict_id,
                                 "version": old_version_id}
    if was_waiting_for_owner and new_status == Answer.Status.HELD:
        before["waiting_for_owner"] = True
        after["waiting_for_owner"] = False
    audit_record(
        actor=actor,
        action=f"decision.{decision.action}",
        object_type="answer",
        object_id=answer.trace_id,
        trace_id=answer.trace_id,
        before=before,
        after=after,
    )
    return new_status
