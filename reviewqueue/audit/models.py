from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

# What the actions of the log start with ("token.revoked", "user.deactivated", ...). A fixed
# list: Django's own filter would run SELECT DISTINCT action over the whole log on every page.
ACTION_FAMILIES = (
    "answer", "verdict", "decision", "review_item", "lease", "revision", "document",
    "conflict", "reevaluation", "dead_letter", "webhook", "token", "user", "audit",
)

class AuditEvent(models.Model):
    """One state change, appended in the same transaction as the change itself.

    Events form a hash chain: `hash` covers a canonical serialisation of the event including
    `prev_hash`, so editing, deleting, inserting or reordering any event breaks the chain.
    A database trigger refuses UPDATE, DELETE and TRUNCATE on this table. No passage text,
    answer text or tokens are ever stored here: only ids and statuses.
    """

    class ActorType(models.TextChoices):
        USER = "user", _("user")
        SERVICE = "service", _("service")
        WORKER = "worker", _("worker")
        SYSTEM = "system", _("system")

    seq = models.BigIntegerField(unique=True, verbose_name=_("sequence number"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    actor_type = models.CharField(max_length=16, choices=ActorType.choices,
                                  verbose_name=_("actor type"))
    actor = models.CharField(max_length=200, blank=True, verbose_name=_("actor"))
    action = models.CharField(max_length=64, verbose_name=_("action"))
    object_type = models.CharField(max_length=64, verbose_name=_("object type"))
    object_id = models.CharField(max_length=200, verbose_name=_("object ID"))
    trace_id = models.CharField(max_length=200, blank=True, verbose_name=_("trace ID"))
    document_id = models.CharField(max_length=200, blank=True, verbose_name=_("document ID"))
    request_id = models.CharField(max_length=64, blank=True, verbose_name=_("request ID"))
    before = models.JSONField(default=dict, verbose_name=_("before"))
    after = models.JSONField(default=dict, verbose_name=_("after"))
    prev_hash = models.CharField(max_length=64, verbose_name=_("previous hash"))
    hash = models.CharField(max_length=64, verbose_name=_("hash"))

    class Meta:
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")
        indexes = [
            # A page reads events in (created_at, seq) order, the order they are appended in,
            # so a search by dates starts right at its range: the time index, and each field
            # that can be searched alone followed by the time.
            models.Index(fields=["created_at", "seq"], name="audit_event_time_seq"),
            models.Index(fields=["actor", "created_at", "seq"], name="audit_event_actor_time"),
            models.Index(fields=["action", "created_at", "seq"], name="audit_event_action_time"),
            models.Index(fields=["document_id", "created_at", "seq"],
                         name="audit_event_document_time"),
            # A trace has a handful of events; the timeline reads them in seq order.
            models.Index(fields=["trace_id", "seq"], name="audit_event_trace_seq"),
            # The per-answer timeline finds events by their object.
            models.Index(fields=["object_type", "object_id", "seq"], name="audit_event_object"),
            # The document search also shows events about the document that name no document
            # (or another one): only those, so it never walks past the many that name it.
            models.Index(fields=["object_type", "object_id", "created_at", "seq"],
                         name="audit_event_object_other",
                         condition=~models.Q(document_id=models.F("object_id"))),
            # The search matches a person and their tokens by prefix ("user:alice token:..."),
            # and actions by prefix ("revision.*"): LIKE 'x%' needs pattern operator classes.
            models.Index(fields=["actor"], name="audit_event_actor_prefix",
                         opclasses=["varchar_pattern_ops"]),
            models.Index(fields=["action"], name="audit_event_action_prefix",
                         opclasses=["varchar_pattern_ops"]),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} {self.object_type}:{self.object_id}"


class QuarantinedPayload(models.Model):
    """A rejected request body, kept with why it was refused. Nothing is dropped silently."""

    received_at = models.DateTimeField(auto_now_add=True, db_index=True,
                                       verbose_name=_("received at"))
    endpoint = models.CharField(max_length=200, verbose_name=_("endpoint"))
    method = models.CharField(max_length=10, verbose_name=_("method"))
    sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                on_delete=models.SET_NULL, verbose_name=_("sent by"))
    status_code = models.PositiveSmallIntegerField(verbose_name=_("status code"))
    errors = models.JSONField(default=list, verbose_name=_("errors"))
    trace_id = models.CharField(max_length=200, blank=True, db_index=True,
                                verbose_name=_("trace ID"))
    size_bytes = models.PositiveIntegerField(verbose_name=_("size (bytes)"))
    body = models.TextField(help_text=_("The body as received (truncated when oversized)"),
                            verbose_name=_("body"))
    truncated = models.BooleanField(default=False, verbose_name=_("truncated"))
    request_id = models.CharField(max_length=64, blank=True, verbose_name=_("request ID"))

    class Meta:
        verbose_name = _("quarantined payload")
        verbose_name_plural = _("quarantined payloads")
        ordering = ["-received_at"]

    def __str__(self) -> str:
        when = f"{self.received_at:%Y-%m-%d %H:%M}"
        return f"{self.method} {self.endpoint} {self.status_code} at {when}"


class VerificationRun(models.Model):
    """One walk of the audit chain: who asked, what it found, and the tip it vouched for.

    A successful run records the last event it checked (`last_seq`, `last_hash`); a run that
    finds the chain broken records it too (`checked_to_seq`, `tip_hash`) when the anchor it
    checked held. The next run compares the log against that anchor, so removing events from
    the end of the log, or rewriting and re-hashing the whole chain up to the anchor, is caught
    even though the walk itself would find a consistent chain.

    A walk goes on past a bad event, so a run records every problem: how many, the first
    MAX_LISTED of them, and a digest of all of them, which the next run compares with its own
    to tell whether anything changed since (an alert is raised only then).
    `first_bad_seq` and `problem` stay those of the first problem found.
    """

    class Trigger(models.TextChoices):
        COMMAND = "command", _("verify_audit command")
        NIGHTLY = "nightly", _("Nightly job")
        MANUAL = "manual", _("Requested on the audit page")

    started_at = models.DateTimeField(verbose_name=_("started at"))
    finished_at = models.DateTimeField(verbose_name=_("finished at"))
    trigger = models.CharField(max_length=16, choices=Trigger.choices, verbose_name=_("trigger"))
    requested_by = models.CharField(max_length=200, blank=True, verbose_name=_("requested by"))
    ok = models.BooleanField(verbose_name=_("chain intact"))
    events_checked = models.BigIntegerField(default=0, verbose_name=_("events checked"))
    last_seq = models.BigIntegerField(null=True, blank=True,
                                      verbose_name=_("last event vouched for"))
    last_hash = models.CharField(max_length=64, blank=True,
                                 verbose_name=_("hash of the last event vouched for"))
    first_bad_seq = models.BigIntegerField(null=True, blank=True, verbose_name=_("first bad event"))
    problem = models.CharField(max_length=32, blank=True, verbose_name=_("problem"))
    detail = models.TextField(blank=True, verbose_name=_("detail"))
    # Unlike last_seq (set only when the run vouches for the chain), how far a broken walk got.
    checked_to_seq = models.BigIntegerField(null=True, blank=True,
                                            verbose_name=_("checked up to event"))
    # The hash of event #checked_to_seq, kept when every anchor the run checked was there with
    # its hash, broken chain or not: the next run's anchor. Without it, once the chain was
    # broken anywhere no run would vouch for its end again, and events removed from the end
    # after that would go unnoticed. A run that finds an anchor broken keeps none, so the next
    # run checks against that same anchor and finds it broken again.
    tip_hash = models.CharField(max_length=64, blank=True, default="",
                                verbose_name=_("anchor hash"))
    # The hash of event #checked_to_seq as this run read it, whether or not it could vouch for
    # it: the next run checks that this end is still there unchanged, so that once an anchor
    # is broken, events removed from the end later are still news.
    seen_tip_hash = models.CharField(max_length=64, blank=True, default="",
                                     verbose_name=_("end hash seen"))
    problem_count = models.BigIntegerField(default=0, verbose_name=_("problem count"))
    problems = models.JSONField(default=list, blank=True,
                                help_text=_("The first problems found: seq, problem, detail"),
                                verbose_name=_("problems"))
    problems_digest = models.CharField(max_length=64, blank=True, verbose_name=_("problems digest"))
    # The sources checked on the same run (sources/integrity.py): each stored revision against
    # the event that published it. `ok` is the chain's alone, since it decides the anchor.
    sources_checked = models.JSONField(null=True, blank=True,
                                       help_text=_("How many revisions and documents were checked"),
                                       verbose_name=_("sources checked"))
    sources_problem_count = models.IntegerField(default=0, verbose_name=_("source problem count"))
    sources_problems = models.JSONField(default=list, blank=True,
                                        help_text=_("The first differences: name, code, detail"),
                                        verbose_name=_("source problems"))
    # And every verdict and decision against the event that recorded it (reviews/integrity.py).
    records_checked = models.JSONField(null=True, blank=True,
                                       help_text=_("How many verdicts and decisions were checked"),
                                       verbose_name=_("records checked"))
    records_problem_count = models.IntegerField(default=0, verbose_name=_("record problem count"))
    records_problems = models.JSONField(
        default=list, blank=True,
        help_text=_("The first differences: name, trace_id, code, detail, fields"),
        verbose_name=_("record problems"))

    class Meta:
        verbose_name = _("verification run")
        verbose_name_plural = _("verification runs")
        indexes = [models.Index(fields=["-finished_at"], name="audit_verif_finished")]

    def __str__(self) -> str:
        outcome = "ok" if self.ok else f"failed at #{self.first_bad_seq}"
        return f"verification {self.finished_at:%Y-%m-%d %H:%M} {outcome}"

    @property
    def sources_ok(self) -> bool:
        return self.sources_problem_count == 0

    @property
    def records_ok(self) -> bool:
        return self.records_problem_count == 0


class AuditAlert(models.Model):
    """Raised when a verification finds the chain broken with problems the run before it
    did not find. Stays open until an admin acknowledges it; the same problems found again
    night after night raise no new alert, but any new one does, acknowledged or not.
    `first_bad_seq` and `problem` are those of the chain's first bad event; `message` says
    what is new."""

    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    run = models.ForeignKey(VerificationRun, on_delete=models.PROTECT, related_name="alerts",
                            verbose_name=_("verification run"))
    first_bad_seq = models.BigIntegerField(null=True, blank=True, verbose_name=_("first bad event"))
    problem = models.CharField(max_length=32, verbose_name=_("problem"))
    message = models.TextField(verbose_name=_("message"))
    acknowledged_at = models.DateTimeField(null=True, blank=True, verbose_name=_("acknowledged at"))
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                        on_delete=models.SET_NULL, related_name="+",
                                        verbose_name=_("acknowledged by"))

    class Meta:
        verbose_name = _("audit alert")
        verbose_name_plural = _("audit alerts")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["created_at"], name="audit_alert_open",
                         condition=models.Q(acknowledged_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"alert {self.created_at:%Y-%m-%d %H:%M}: {self.problem} at #{self.first_bad_seq}"
