from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Func, Value
from django.utils.translation import gettext_lazy as _

from reviewqueue.audit.hashing import content_sha256
from reviewqueue.jsontext import encoder

_canonical = encoder(sort_keys=True, ensure_ascii=False)


def answer_body(*, trace_id: str, question: str, text: str, asked_by: Sequence[str],
                index_release: str, as_of: date | None, retrieved: Iterable[Sequence[str]],
                claims: Sequence[Any]) -> dict[str, Any]:
    """An answer's body as it was submitted, field by field: what a replay of its trace_id is
    compared on, and what `body_sha256` digests. `retrieved` is each item's cite, document,
    revision and span, in the order sent; `text` and `claims` are the first version's (claims
    that are not a list, rewritten by hand, are taken as they are: their digest then differs
    from the one recorded, and the records check says the body changed)."""
    return {
        "trace_id": trace_id,
        "question": question,
        "answer": text,
        "asked_by": list(asked_by),
        "index_release": index_release,
        "as_of": as_of.isoformat() if as_of else None,
        "retrieved": [list(item) for item in retrieved],
        "claims": list(claims) if isinstance(claims, list | tuple) else claims,
    }


def body_sha256(body: dict[str, Any]) -> str:
    """`Answer.body_digest` of a body from `answer_body`. The ingest event records it, so the
    question, askers, day and citations an answer is judged on are vouched for by the log."""
    return hashlib.sha256(_canonical(body).encode()).hexdigest()


class Answer(models.Model):
    """A RAG answer, keyed by the upstream trace_id. Its text and claims live in versions.

    `status` moves only through `reviews.services.transitions`; `current_verdict` is the verdict
    of `current_version` that decided that status.
    """

    class Status(models.TextChoices):
        CANDIDATE = "candidate", _("Candidate")
        HELD = "held", _("Held for review")
        ABSTAINED = "abstained", _("Abstained")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")

    # Unique: see Meta (no LIKE index needed).
    trace_id = models.CharField(max_length=200, verbose_name=_("trace ID"))
    question = models.TextField(verbose_name=_("question"))
    asked_by = ArrayField(models.CharField(max_length=200), default=list,
                          verbose_name=_("asked by"))
    index_release = models.CharField(max_length=200, blank=True, verbose_name=_("index release"))
    as_of = models.DateField(null=True, blank=True, help_text=_("The date the upstream asked for"),
                             verbose_name=_("as of"))
    status = models.CharField(max_length=16, choices=Status.choices, verbose_name=_("status"))
    status_changed_at = models.DateTimeField(verbose_name=_("status changed at"))
    # No index on the two pointers: nothing looks answers up by them, and every ingest would
    # pay for keeping them.
    current_version = models.ForeignKey("AnswerVersion", null=True, on_delete=models.PROTECT,
                                        related_name="+", db_index=False,
                                        verbose_name=_("current version"))
    current_verdict = models.ForeignKey("Verdict", null=True, on_delete=models.PROTECT,
                                        related_name="+", db_index=False,
                                        verbose_name=_("current verdict"))
    body_digest = models.CharField(max_length=64, help_text=_("Digest of the submitted body"),
                                   verbose_name=_("body digest"))
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                     on_delete=models.SET_NULL, related_name="+",
                                     verbose_name=_("submitted by"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("answer")
        verbose_name_plural = _("answers")
        constraints = [
            models.UniqueConstraint(fields=["trace_id"], name="answer_unique_trace_id"),
        ]
        indexes = [
            models.Index(fields=["status", "status_changed_at", "id"], name="answer_status_age"),
            models.Index(fields=["index_release", "status"], name="answer_release_status"),
        ]

    def __str__(self) -> str:
        return self.trace_id

    def submitted_body(self, text: str, claims: Sequence[Any],
                       retrieved: Iterable[Sequence[str]]) -> dict[str, Any]:
        """The body this row, with its first version's `text` and `claims` and its `retrieved`
        items (cite, document, revision, span, in the order stored), gives now: the one
        submitted (its `body_sha256` is what the ingest event recorded), unless one of them
        was changed since."""
        return answer_body(
            trace_id=self.trace_id, question=self.question, text=text, asked_by=self.asked_by,
            index_release=self.index_release, as_of=self.as_of, retrieved=retrieved,
            claims=claims)


class AnswerVersion(models.Model):
    """The answer text and claims at one point in time. An edit adds a version; none change."""

    # Indexed by the (answer, number) constraint below.
    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="versions",
                               db_index=False)
    number = models.PositiveIntegerField()
    text = models.TextField()
    claims = models.JSONField(help_text="[{subject?, key, value, cite}]")
    # The string keys of `claims`: computed by PostgreSQL on every write (INSERT or COPY),
    # never set by Python. See the function in migration 0010.
    claim_keys = models.GeneratedField(
        expression=Func("claims", function="reviews_claim_keys",
                        output_field=ArrayField(models.TextField())),
        output_field=ArrayField(models.TextField()),
        db_persist=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                   on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "number"], name="answer_version_unique"),
        ]
        indexes = [
            # "Which answers claim key K?" (claim_keys && ARRAY[K]): a publish fans out to
            # them, since the gate reads the facts on a claimed key from every document. An
            # array, not the jsonb claims: ANALYZE keeps the most common elements of an array
            # column, so the planner knows how many versions claim K.
            GinIndex(fields=["claim_keys"], name="answer_version_claim_keys"),
        ]

    def __str__(self) -> str:
        return f"{self.answer_id} v{self.number}"

    def content_sha256(self) -> str:
        """What the audit event of the verdict first made on this version records of it: the
        log keeps no answer text, yet it proves the text and claims shown are those judged."""
        return content_sha256([self.text, self.claims])


class RetrievedItem(models.Model):
    """What marker `cite` in the answer referred to: a document, the revision the answer was
    generated from, and optionally a span. `document_key` is a plain string so an answer may
    cite a document the store has not received yet; re-evaluation finds answers through it."""

    # Indexed by the (answer, cite) constraint below.
    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="retrieved",
                               db_index=False)
    cite = models.CharField(max_length=200)
    document_key = models.CharField(max_length=200)
    revision = models.CharField(max_length=200)
    span = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "cite"], name="retrieved_unique_cite"),
        ]
        indexes = [
            models.Index(fields=["document_key", "answer"], name="retrieved_by_document"),
            # The queue's visibility check probes each item's retrieved documents: with the
            # key in the index the probe never visits the table.
            models.Index(fields=["answer", "document_key"], name="retrieved_answer_document"),
        ]

    def __str__(self) -> str:
        return f"[{self.cite}] {self.document_key}@{self.revision}"


class Verdict(models.Model):
    """The immutable result of one gate run on one answer version.

    `fingerprint` hashes every input the gate saw (claims, evidence from the revisions used,
    principals, the validity state of each fact on `as_of`, the gate version). The same
    (version, fingerprint) is never stored twice, so re-running re-evaluation is harmless.
    """

    class Decision(models.TextChoices):
        CANDIDATE = "candidate", _("Candidate")
        REVIEW = "review", _("Review")
        ABSTAIN = "abstain", _("Abstain")

    class Trigger(models.TextChoices):
        INGEST = "ingest", _("Ingested")
        EDIT = "edit", _("Reviewer edit")
        REVISION = "revision", _("Revision published")
        WITHDRAWAL = "withdrawal", _("Document withdrawn")
        RESTORATION = "restoration", _("Withdrawn document restored")
        VALIDITY = "validity", _("Validity date passed")
        GATE_VERSION = "gate_version", _("Gate version changed")
        MANUAL = "manual", _("Re-evaluated on request")
        DISMISSAL = "dismissal", _("Conflict dismissed")
        REOPENING = "reopening", _("Conflict reopened")
        # A revision published or a document withdrawn, of a document the answer does not
        # cite: one that states a key it claims, or shares a conflict with one it cites.
        OTHER_DOCUMENT = "other_document", _("Another document changed")
        DECISION = "decision", _("Checked at decision time")

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="verdicts",
                               verbose_name=_("answer"))
    # Indexed by the (version, fingerprint) constraint below.
    version = models.ForeignKey(AnswerVersion, on_delete=models.PROTECT, related_name="verdicts",
                                db_index=False, verbose_name=_("version"))
    decision = models.CharField(max_length=16, choices=Decision.choices,
                                verbose_name=_("gate decision"))
    reason = models.CharField(max_length=64, verbose_name=_("reason"))
    reasons = ArrayField(models.CharField(max_length=64), default=list,
                         help_text=_("Every distinct finding code, primary first"),
                         verbose_name=_("reasons"))
    findings = models.JSONField(default=list, verbose_name=_("findings"))
    warnings = models.JSONField(default=list, verbose_name=_("warnings"))
    fingerprint = models.CharField(max_length=64, verbose_name=_("fingerprint"))
    gate_version = models.CharField(max_length=32, verbose_name=_("gate version"))
    as_of = models.DateField(verbose_name=_("as of"))
    next_boundary = models.DateField(null=True, blank=True, verbose_name=_("next boundary"))
    revisions_used = models.JSONField(default=list,
                                      help_text=_("[{cite, document, revision, current}]"),
                                      verbose_name=_("revisions used"))
    trigger = models.CharField(max_length=16, choices=Trigger.choices, verbose_name=_("trigger"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("verdict")
        verbose_name_plural = _("verdicts")
        constraints = [
            models.UniqueConstraint(fields=["version", "fingerprint"],
                                    name="verdict_unique_fingerprint"),
        ]
        indexes = [
            # Insight reads the first verdict of each answer by date.
            models.Index(fields=["created_at"], name="verdict_ingest_created",
                         condition=models.Q(trigger="ingest")),
            models.Index(fields=["next_boundary"], name="verdict_next_boundary",
                         condition=models.Q(next_boundary__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"verdict {self.pk}: {self.decision}/{self.reason}"

    def content_sha256(self) -> str:
        """What the verdict's audit event records of it beyond the decision and reason it
        names: the version judged, the findings, warnings and fingerprint, the day, the next
        boundary and every revision used."""
        return content_sha256([self.version_id, self.reasons, self.findings, self.warnings,
                               self.fingerprint, self.gate_version, str(self.as_of),
                               self.next_boundary and str(self.next_boundary),
                               self.revisions_used, self.trigger])


class ReviewItem(models.Model):
    """The queue entry of a held answer. It exists exactly while the answer is held.

    The lease (`leased_by`, `lease_until`) says who is working on it; an expired lease is free.
    """

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="review_item",
                                  verbose_name=_("answer"))
    entered_at = models.DateTimeField(verbose_name=_("queued at"))
    primary_reason = models.CharField(max_length=64, verbose_name=_("primary reason"))
    reasons = ArrayField(models.CharField(max_length=64), default=list, verbose_name=_("reasons"))
    # What the hold rests on through the knowledge base: the documents the current verdict's
    # conflicting_sources findings name in their `kb_documents` (sorted, once each), the
    # documents of a conflict the answer's claim disagrees with without citing them. Kept with
    # `reasons` (transitions.kb_documents_of), so that a conflict counts and lists the answers
    # it holds this way through an index (review_item_kb_documents) instead of every verdict.
    # Empty in the database too by default, for rows written without it. No verbose name of
    # its own: no page shows it, and a new one would be a message to translate.
    kb_documents = ArrayField(models.CharField(max_length=200), default=list,
                              db_default=Value([], output_field=ArrayField(
                                  models.CharField(max_length=200))))
    index_release = models.CharField(max_length=200, blank=True, verbose_name=_("index release"))
    leased_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+",
                                  verbose_name=_("lease holder"))
    lease_until = models.DateTimeField(null=True, blank=True, verbose_name=_("lease until"))
    audit_sample = models.BooleanField(default=False, verbose_name=_("audit sample"))
    # A reviewer asked the owners (`owner_question`, the latest question) and waits for them:
    # until one replies, a decision takes the item out, or a new verdict ends the wait.
    waiting_for_owner = models.BooleanField(default=False, verbose_name=_("waiting for owner"))
    owner_question = models.ForeignKey("OwnerQuestion", null=True, blank=True,
                                       on_delete=models.SET_NULL, related_name="+",
                                       verbose_name=_("question to the owners"))
    earlier_approval = models.ForeignKey("Decision", null=True, blank=True,
                                         on_delete=models.SET_NULL, related_name="+",
                                         verbose_name=_("earlier approval"))

    class Meta:
        verbose_name = _("review item")
        verbose_name_plural = _("review items")
        indexes = [
            models.Index(fields=["entered_at", "id"], name="review_item_age"),
            # The queue filtered by a reason, oldest first.
            models.Index(fields=["primary_reason", "entered_at", "id"],
                         name="review_item_reason_age", include=["answer"]),
            # Counts per reason walk this index up to the cap, in answer order, so that each
            # visibility probe lands next to the previous one in the citations' answer index.
            models.Index(fields=["primary_reason", "answer"], name="review_item_reason_answer"),
            models.Index(fields=["index_release", "entered_at", "id"],
                         name="review_item_release_age"),
            # The conflict inbox's counts start from these items when there are fewer of them
            # than citations of the owner's documents. Any reason, not only the primary one,
            # counts, so the condition is on the array; the selector repeats it word for word,
            # as PostgreSQL uses a partial index only for a query that implies its condition.
            models.Index(fields=["answer"], name="review_item_conflicting",
                         condition=models.Q(reasons__contains=["conflicting_sources"])),
            # The items held over a document through the knowledge base, for a conflict's
            # counts and page (sources.selectors): `kb_documents && documents` probes the
            # entries of its documents alone. Partial, so the items held for anything else, all
            # but a few, add nothing to it; the selectors repeat the condition word for word.
            GinIndex(fields=["kb_documents"], name="review_item_kb_documents",
                     condition=~models.Q(kb_documents=[])),
            # The answers waiting for their owners, a few however long the queue: the inbox
            # lists them by question, a correction counts those citing its document.
            models.Index(fields=["owner_question", "answer"],
                         name="review_item_waiting_for_owner",
                         condition=models.Q(waiting_for_owner=True)),
        ]
        constraints = [
            # What it waits for is a question on record, its page and the inbox show it.
            models.CheckConstraint(
                condition=models.Q(waiting_for_owner=False)
                | models.Q(owner_question__isnull=False),
                name="review_item_waits_on_a_question"),
        ]

    def __str__(self) -> str:
        return f"item for {self.answer_id}"

    @property
    def owner_replied(self) -> bool:
        """An owner answered the latest question (read with `owner_question` selected)."""
        question = self.owner_question
        return (not self.waiting_for_owner and question is not None
                and question.replied_at is not None)


class OwnerQuestion(models.Model):
    """A reviewer's question to the owners of a held answer's sources, and the reply of the
    owner who answered, if one did. Kept when the answer leaves the queue: its page shows every
    question asked about it."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="owner_questions")
    asked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    asked_at = models.DateTimeField()
    note = models.TextField(help_text="What the reviewer asked the owners")
    replied_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    replied_at = models.DateTimeField(null=True, blank=True)
    reply = models.TextField(blank=True, help_text="What the owner answered")
    owners = ArrayField(
        models.BigIntegerField(), default=list, blank=True,
        help_text="Ids of the owners asked: whose inbox lists the question and who may reply, "
        "whatever the sources behind the hold become while it waits")

    class Meta:
        indexes = [models.Index(fields=["answer", "asked_at"], name="owner_question_answer"),
                   GinIndex(fields=["owners"], name="owner_question_owners")]

    def __str__(self) -> str:
        return f"question {self.pk} on answer {self.answer_id}"


class Decision(models.Model):
    """A reviewer's approve / edit / reject, bound to the verdict the reviewer saw."""

    class Action(models.TextChoices):
        APPROVE = "approve", _("Approve")
        EDIT = "edit", _("Edit")
        REJECT = "reject", _("Reject")

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="decisions",
                               verbose_name=_("answer"))
    verdict = models.ForeignKey(Verdict, on_delete=models.PROTECT, related_name="decisions",
                                verbose_name=_("verdict"))
    version = models.ForeignKey(AnswerVersion, on_delete=models.PROTECT, related_name="+",
                                verbose_name=_("version"))
    action = models.CharField(max_length=16, choices=Action.choices, verbose_name=_("action"))
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                 related_name="+", verbose_name=_("reviewer"))
    comment = models.TextField(blank=True, verbose_name=_("comment"))
    reject_reason = models.CharField(max_length=64, blank=True, verbose_name=_("reject reason"))
    new_version = models.ForeignKey(AnswerVersion, null=True, blank=True,
                                    on_delete=models.PROTECT, related_name="+",
                                    verbose_name=_("new version"))
    revisions_used = models.JSONField(default=list, verbose_name=_("revisions used"))
    read_passages = models.BooleanField(default=False, verbose_name=_("expanded a passage first"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("decision")
        verbose_name_plural = _("decisions")

    def __str__(self) -> str:
        return f"{self.action} on {self.answer_id} by {self.reviewer_id}"

    def comment_sha256(self) -> str | None:
        """What the decision's audit event records of the comment. The log keeps no free text
        (it can never be purged), yet it proves that the comment shown with the decision is
        the one the reviewer wrote."""
        return hashlib.sha256(self.comment.encode()).hexdigest() if self.comment else None


class PassageExpansion(models.Model):
    """A reviewer opened a cited passage on the item page.

    Feeds `Decision.read_passages`: admins watch the share of decisions made after reading at
    least one passage. Recorded once per (answer, reviewer, verdict, cite); never updated.
    """

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="expansions")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                                 related_name="+")
    verdict = models.ForeignKey(Verdict, on_delete=models.PROTECT, related_name="+")
    cite = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "reviewer", "verdict", "cite"],
                                    name="passage_expansion_once"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer_id} read [{self.cite}] of {self.answer_id}"
