from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models.functions import Upper
from django.utils.translation import gettext_lazy as _


class Document(models.Model):
    """A source in the knowledge base, owned by one user. Its content lives in revisions.

    `current_revision` points at the last published revision; a withdrawn document has none.
    `allowed_principals` mirrors the current revision's so that permission filters on lists are
    one indexed lookup instead of a join per row.
    """

    key = models.CharField(max_length=200, unique=True, help_text=_("The upstream document_id"),
                           verbose_name=_("key"))
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_documents",
        verbose_name=_("owner"),
    )
    current_revision = models.ForeignKey(
        "Revision", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("current revision"),
    )
    allowed_principals = ArrayField(models.CharField(max_length=200), default=list,
                                    verbose_name=_("who may read it"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    withdrawn_at = models.DateTimeField(null=True, blank=True, verbose_name=_("withdrawn at"))

    class Meta:
        verbose_name = _("document")
        verbose_name_plural = _("documents")
        indexes = [GinIndex(fields=["allowed_principals"], name="document_principals_gin")]

    def __str__(self) -> str:
        return self.key


class Revision(models.Model):
    """An immutable published version of a document: passages and facts never change."""

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="revisions",
                                 verbose_name=_("document"))
    revision = models.CharField(max_length=200, verbose_name=_("revision"))
    seq = models.PositiveIntegerField(help_text=_("Publication order within the document"),
                                      verbose_name=_("sequence number"))
    title = models.CharField(max_length=500, verbose_name=_("title"))
    url = models.URLField(max_length=2000, blank=True, verbose_name=_("URL"))
    updated_at = models.DateTimeField(help_text=_("When the source itself was last updated"),
                                      verbose_name=_("updated at"))
    allowed_principals = ArrayField(models.CharField(max_length=200),
                                    verbose_name=_("who may read it"))
    body_digest = models.CharField(max_length=64, help_text=_("Digest of the published body"),
                                   verbose_name=_("body digest"))
    published_at = models.DateTimeField(auto_now_add=True, verbose_name=_("published at"))
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("published by"),
    )
    note = models.TextField(blank=True, verbose_name=_("note"))

    class Meta:
        verbose_name = _("revision")
        verbose_name_plural = _("revisions")
        constraints = [
            models.UniqueConstraint(fields=["document", "revision"], name="revision_unique_id"),
            models.UniqueConstraint(fields=["document", "seq"], name="revision_unique_seq"),
        ]
        indexes = [
            # Admins name a document by its title, case aside (selectors.document_keys_named):
            # `title__iexact` compares UPPER(title) on PostgreSQL, which this index answers.
            models.Index(Upper("title"), name="revision_title_upper"),
        ]

    # The newest revision of a document first: by when the source says it was updated, then by
    # publication order. A revision delivered late (older than one received before it) is kept
    # but never becomes current.
    NEWEST_FIRST = ("-updated_at", "-seq")

    def __str__(self) -> str:
        return f"{self.document.key}@{self.revision}"


class Passage(models.Model):
    """A quotable span of a revision: what a citation points at."""

    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="passages",
                                 verbose_name=_("revision"))
    span = models.CharField(max_length=200, verbose_name=_("span"))
    text = models.TextField(verbose_name=_("text"))

    class Meta:
        verbose_name = _("passage")
        verbose_name_plural = _("passages")
        constraints = [
            models.UniqueConstraint(fields=["revision", "span"], name="passage_unique_span"),
        ]

    def __str__(self) -> str:
        return f"{self.revision}#{self.span}"


class Fact(models.Model):
    """A (subject, key) = value statement a revision makes, valid for a period (inclusive)."""

    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="facts",
                                 verbose_name=_("revision"))
    subject = models.CharField(max_length=200, blank=True, verbose_name=_("subject"))
    key = models.CharField(max_length=200, verbose_name=_("key"))
    value = models.JSONField(verbose_name=_("value"))
    valid_from = models.DateField(verbose_name=_("valid from"))
    valid_until = models.DateField(null=True, blank=True, help_text=_("Empty: no end date"),
                                   verbose_name=_("valid until"))
    span = models.CharField(max_length=200, blank=True, verbose_name=_("span"))
    position = models.PositiveIntegerField(default=0, verbose_name=_("position"))

    class Meta:
        verbose_name = _("fact")
        verbose_name_plural = _("facts")
        ordering = ["revision_id", "position"]
        indexes = [models.Index(fields=["subject", "key"]), models.Index(fields=["key"])]

    def __str__(self) -> str:
        return f"{self.subject + '.' if self.subject else ''}{self.key}={self.value!r}"


class Conflict(models.Model):
    """Current facts that disagree on one (subject, key): facts of different documents, or
    of one revision that states the pair twice with different values (then `documents` holds
    that one document, and its participants name the same revision).

    One row per (subject, key); its status follows the documents: opened when a publish or a
    withdrawal creates a disagreement, closed when a later one removes it, reopened when it
    comes back. A dismissal is tied to the revisions involved (`dismissed_revisions`): a
    disagreement among other revisions reopens the conflict, one among some of them (after a
    withdrawal) does not.
    """

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        DISMISSED = "dismissed", _("Dismissed")
        CLOSED = "closed", _("Closed")

    subject = models.CharField(max_length=200, blank=True)
    key = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=Status.choices)
    documents = ArrayField(
        models.CharField(max_length=200),
        default=list,
        help_text="Keys of the documents involved now",
    )
    documents_ever = ArrayField(
        models.CharField(max_length=200),
        default=list,
        help_text="Keys of every document the conflict has involved: the audit search of a "
        "document finds the events of its conflicts through it",
    )
    participants = models.JSONField(
        default=list,
        help_text="[{document, revision, fact, value, valid_from, valid_until}] of the facts "
        "that disagree",
    )
    signature = models.CharField(max_length=64, help_text="Digest of the revisions involved")
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    dismissed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    dismissed_at = models.DateTimeField(null=True, blank=True)
    dismissal_reason = models.TextField(blank=True)
    dismissed_signature = models.CharField(max_length=64, blank=True)
    dismissed_revisions = models.JSONField(
        default=list,
        blank=True,
        help_text="[[document, revision], ...] that a dismissal judged: it holds while the "
        "disagreeing facts are all of these",
    )
    exceptions = ArrayField(
        models.BigIntegerField(),
        default=list,
        blank=True,
        help_text="Ids of the facts a dismissal as an exception keeps before the gate: each "
        "holds during part of another value's period and prevails then. Every other fact on "
        "the (subject, key) of a dismissed conflict is left out",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "key"], name="conflict_unique_subject_key"),
        ]
        indexes = [
            GinIndex(fields=["documents"], name="conflict_documents_gin"),
            GinIndex(fields=["documents_ever"], name="conflict_documents_ever_gin"),
            models.Index(fields=["status", "opened_at"], name="conflict_status_opened"),
        ]

    def __str__(self) -> str:
        return f"{self.subject + '.' if self.subject else ''}{self.key} ({self.status})"

    @property
    def within_one_document(self) -> bool:
        """Its values are all stated by one document (as it stood when last open), whose
        revision contradicts itself."""
        return len(self.documents) == 1
