from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class Job(models.Model):
    """One batch of re-evaluations and how far it got.

    A job covers the answers of one scope (some answers, the answers citing a document, every
    answer, or the answers whose validity boundary has come). Its answers are split into
    chunks, one Celery message each; `done` and `failed` grow as chunks finish, so
    `done + failed == total` once the job is over.
    """

    class Scope(models.TextChoices):
        ANSWERS = "answers", _("Chosen answers")
        DOCUMENT = "document", _("Answers citing a document or claiming one of its keys")
        ALL = "all", _("Every answer")
        VALIDITY = "validity", _("Validity boundary reached")

    class State(models.TextChoices):
        PENDING = "pending", _("Waiting to start")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        FAILED = "failed", _("Failed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scope = models.CharField(max_length=16, choices=Scope.choices, verbose_name=_("scope"))
    document_key = models.CharField(max_length=200, blank=True, verbose_name=_("document key"))
    cause = models.CharField(
        max_length=200, blank=True,
        help_text=_("The document whose revision or withdrawal started the job; an answer "
                    "that does not cite it gets the trigger 'another document changed'"),
        verbose_name=_("cause"))
    cause_event = models.BigIntegerField(
        null=True, blank=True,
        help_text=_("The audit event (its seq) of the publication, withdrawal or restoration "
                    "that started the job: the same request again answers with the jobs it "
                    "started"),
        verbose_name=_("cause event"))
    trigger = models.CharField(max_length=16,
                               help_text=_("Verdict trigger recorded on new verdicts"),
                               verbose_name=_("trigger"))
    as_of = models.DateField(null=True, blank=True, help_text=_("The day a validity sweep ran for"),
                             verbose_name=_("as of"))
    fact_keys = ArrayField(
        models.CharField(max_length=200), null=True, blank=True,
        help_text=_("A document job: the fact keys of the document's current revision and the "
                    "one before it when the job was started (the answers claiming one are "
                    "re-evaluated too). Read then, not at fan-out: by then newer revisions may "
                    "have replaced the one that dropped a key. Empty for a job started before "
                    "this was kept."),
        verbose_name=_("fact keys"))
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING,
                             verbose_name=_("state"))
    total = models.PositiveIntegerField(default=0, verbose_name=_("total"))
    done = models.PositiveIntegerField(default=0, help_text=_("Answers re-evaluated"),
                                       verbose_name=_("re-evaluated"))
    failed = models.PositiveIntegerField(default=0,
                                         help_text=_("Answers that could not be re-evaluated"),
                                         verbose_name=_("failed"))
    changed = models.PositiveIntegerField(default=0, help_text=_("Answers that got a new verdict"),
                                          verbose_name=_("new verdicts"))
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+",
                                     verbose_name=_("requested by"))
    actor_type = models.CharField(max_length=16, verbose_name=_("actor type"))
    actor = models.CharField(max_length=200, help_text=_("Who the new verdicts are audited as"),
                             verbose_name=_("actor"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))

    class Meta:
        verbose_name = _("job")
        verbose_name_plural = _("jobs")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["state", "created_at"], name="job_state_age"),
            models.Index(fields=["created_at"], name="job_age"),
            models.Index(fields=["cause_event"], name="job_cause_event",
                         condition=models.Q(cause_event__isnull=False)),
        ]

    def __str__(self) -> str:
        target = f" {self.document_key}" if self.document_key else ""
        return f"{self.get_scope_display()}{target} ({self.state})"

    def get_absolute_url(self) -> str:
        return reverse("jobs:detail", args=[self.pk])

    @property
    def trigger_label(self) -> str:
        """The trigger in words, as verdicts show it ("Re-evaluated on request")."""
        from reviewqueue.reviews.models import Verdict

        return str(dict(Verdict.Trigger.choices).get(self.trigger, self.trigger))

    @property
    def progress_url(self) -> str:
        return reverse("jobs:progress", args=[self.pk])

    @property
    def ended(self) -> bool:
        """Finished, or failed for good: nothing more will happen to it."""
        return self.state in (self.State.FINISHED, self.State.FAILED)

    @property
    def processed(self) -> int:
        return self.done + self.failed

    @property
    def summary(self) -> str:
        """The figures in words, as the progress bar and its JSON say them."""
        if self.total == 0 and self.state == self.State.FINISHED:
            return gettext("No answer was affected: nothing to re-evaluate")
        return gettext("%(done)s of %(total)s re-evaluated, %(changed)s with a new verdict, "
                       "%(failed)s failed") % {"done": self.done, "total": self.total,
                                               "changed": self.changed, "failed": self.failed}

    @property
    def percent(self) -> int:
        if self.total == 0:
            return 100 if self.state == self.State.FINISHED else 0
        return min(100, self.processed * 100 // self.total)


class JobChunk(models.Model):
    """The answer ids of one re-evaluation message. It finishes exactly once, however often
    its message is delivered; a chunk whose task failed for good is `dead` until retried.

    `enqueued_at` is the same for every chunk sent in one batch (they go out in `number`
    order); `started_at` is when a worker first took the chunk up. Together they let
    `jobs_resume_stalled` tell a chunk still queued from one whose message was lost.

    `changed_ids` are the answers this job gave a new verdict, each one appended in the
    transaction that stored the verdict: a run that dies after it is still counted, once, and
    a verdict another job (or a reviewer) made meanwhile is not. `changed` is counted from it.
    """

    class State(models.TextChoices):
        PENDING = "pending", _("Pending")
        FINISHED = "finished", _("Finished")
        DEAD = "dead", _("Dead-lettered")

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks",
                            verbose_name=_("job"))
    number = models.PositiveIntegerField(verbose_name=_("chunk number"))
    answer_ids = ArrayField(models.BigIntegerField(), verbose_name=_("answer IDs"))
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING,
                             verbose_name=_("state"))
    done = models.PositiveIntegerField(default=0, verbose_name=_("re-evaluated"))
    failed = models.PositiveIntegerField(default=0, verbose_name=_("failed"))
    changed = models.PositiveIntegerField(default=0, verbose_name=_("new verdicts"))
    changed_ids = ArrayField(models.BigIntegerField(), default=list, blank=True,
                             verbose_name=_("Answers that got a new verdict"))
    enqueued_at = models.DateTimeField(null=True, blank=True, verbose_name=_("enqueued at"))
    started_at = models.DateTimeField(null=True, blank=True,
                                      help_text=_("When a worker first took the chunk up"),
                                      verbose_name=_("started at"))
    last_started_at = models.DateTimeField(
        null=True, blank=True,
        help_text=_("When a worker last took the chunk up: a dead letter of one of its "
                    "answers older than this was left by an earlier run"),
        verbose_name=_("last started at"))
    runs = models.PositiveIntegerField(
        default=0, help_text=_("How often a worker took the chunk up; past "
                               "REEVALUATION_CHUNK_MAX_RUNS unfinished, it is dead-lettered"),
        verbose_name=_("runs"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))

    class Meta:
        verbose_name = _("job chunk")
        verbose_name_plural = _("job chunks")
        constraints = [
            models.UniqueConstraint(fields=["job", "number"], name="job_chunk_unique_number"),
        ]
        indexes = [
            models.Index(fields=["enqueued_at"], name="job_chunk_pending_age",
                         condition=models.Q(state="pending")),
            # "Has a chunk sent after this one in the same batch been started?": a range scan
            # from (job, enqueued_at, number) that skips the chunks nobody has taken up yet,
            # the whole backlog of a big job.
            models.Index(fields=["job", "enqueued_at", "number"], name="job_chunk_started_order",
                         condition=models.Q(started_at__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"chunk {self.number} of {self.job_id}"


class DeadLetter(models.Model):
    """A task that failed for good: after its retries ran out, or on an error no retry fixes.

    Only the task name, its arguments (ids) and the error type and first line are kept, never a
    payload. An admin can send the task again from the Django admin.

    An answer that a job's chunk could not re-evaluate has one letter per (job, answer),
    however often its chunk ran: it names the job and the answer, and keeps the latest error.
    Sent again and failing again, it waits for an admin again, as a new letter would.
    Once the answer has been re-evaluated (the letter sent again, or its chunk run again) the
    letter is resolved and the job counts the answer as done instead of failed.
    """

    task_name = models.CharField(max_length=200, verbose_name=_("task"))
    task_id = models.CharField(max_length=200, blank=True, verbose_name=_("task ID"))
    args = models.JSONField(default=list, verbose_name=_("arguments"))
    kwargs = models.JSONField(default=dict, verbose_name=_("keyword arguments"))
    error_type = models.CharField(max_length=200, verbose_name=_("error type"))
    error_message = models.CharField(max_length=500, blank=True, verbose_name=_("error message"))
    attempts = models.PositiveIntegerField(default=1, verbose_name=_("attempts"))
    failed_at = models.DateTimeField(verbose_name=_("failed at"))
    retry_count = models.PositiveIntegerField(default=0, verbose_name=_("retries"))
    retried_at = models.DateTimeField(null=True, blank=True, verbose_name=_("retried at"))
    retried_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+",
                                   verbose_name=_("retried by"))
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+",
                            help_text=_("The job whose chunk failed on the answer"),
                            verbose_name=_("job"))
    answer_id = models.BigIntegerField(null=True, blank=True,
                                       help_text=_("The one answer that could not be re-evaluated"),
                                       verbose_name=_("answer ID"))
    resolved_at = models.DateTimeField(null=True, blank=True,
                                       help_text=_("When the answer was re-evaluated after all"),
                                       verbose_name=_("resolved at"))

    class Meta:
        verbose_name = _("dead letter")
        verbose_name_plural = _("dead letters")
        ordering = ["-failed_at"]
        indexes = [
            models.Index(fields=["failed_at"], name="dead_letter_age"),
            # Letters are kept once resolved: a finished chunk resolves the open letters of
            # the answers it did, and /jobs/ and the metrics count those still waiting.
            models.Index(fields=["answer_id"], name="dead_letter_open_answer",
                         condition=models.Q(resolved_at__isnull=True)),
            models.Index(fields=["failed_at"], name="dead_letter_waiting",
                         condition=models.Q(resolved_at__isnull=True, retried_at__isnull=True)),
        ]
        constraints = [
            # A chunk delivered again stores the same failure again: one letter it is.
            models.UniqueConstraint(fields=["job", "answer_id"], name="dead_letter_job_answer"),
        ]

    def __str__(self) -> str:
        return f"{self.task_name} failed with {self.error_type}"
