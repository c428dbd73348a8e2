from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from reviewqueue.admin_base import ReadOnlyAdmin, fixed_choices_filter
from reviewqueue.audit.services import Actor
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.jobs.services import BrokerUnavailable, dead_letter_retry
from reviewqueue.reviews.models import Verdict


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "scope",
        "document_key",
        "trigger",
        "state",
        "total",
        "done",
        "failed",
        "changed",
        "requested_by",
        "finished_at",
    )
    list_filter = ("state", "scope", fixed_choices_filter("trigger", dict(Verdict.Trigger.choices),
                                                          _("trigger")))
    search_fields = ("document_key", "actor")
    list_select_related = ("requested_by",)
    # No date_hierarchy: its links are built from the dates of every job in the table.


@admin.register(JobChunk)
class JobChunkAdmin(ReadOnlyAdmin):
    list_display = (
        "job",
        "number",
        "state",
        "done",
        "failed",
        "changed",
        "enqueued_at",
        "started_at",
        "runs",
        "finished_at",
    )
    list_filter = ("state",)
    list_select_related = ("job",)


def _task_names() -> dict[str, str]:
    """The project's tasks, from the registry of its Celery app (the web process has not
    imported every tasks module; this does, once)."""
    from reviewqueue.celery import app

    app.loader.import_default_modules()
    return {name: name for name in sorted(app.tasks) if not name.startswith("celery.")}


@admin.register(DeadLetter)
class DeadLetterAdmin(ReadOnlyAdmin):
    list_display = (
        "failed_at",
        "task_name",
        "error_type",
        "error_message",
        "attempts",
        "retry_count",
        "retried_at",
        "retried_by",
        "resolved_at",
    )
    # Task names from the worker's registry, not from the table: a dead letter is stored per
    # failing answer, and Django's own filter would read every row for its choices. The error
    # type is found by search.
    list_filter = (fixed_choices_filter("task_name", _task_names, _("task")),)
    search_fields = ("task_name", "error_type", "task_id")
    list_select_related = ("retried_by",)
    readonly_fields = (
        "task_name",
        "task_id",
        "args",
        "kwargs",
        "error_type",
        "error_message",
        "attempts",
        "failed_at",
        "retry_count",
        "retried_at",
        "retried_by",
        "job",
        "answer_id",
        "resolved_at",
    )
    actions = ["retry_selected"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Needed for the retry action; every field stays read-only.
        return bool(request.user.is_active and request.user.is_staff)

    @admin.action(description=_("Send the selected tasks again"))
    def retry_selected(self, request: HttpRequest, queryset: QuerySet[DeadLetter]) -> None:
        actor = Actor.of_user(request.user)
        letter_ids = list(queryset.values_list("pk", flat=True))
        # Only letters still waiting are sent: one whose answer was re-evaluated since is done.
        waiting = list(queryset.filter(resolved_at__isnull=True).values_list("pk", flat=True))
        count = 0
        for position, letter_id in enumerate(waiting):
            try:
                letter = dead_letter_retry(dead_letter_id=letter_id, user=request.user,
                                           actor=actor)
            except BrokerUnavailable:
                # Stop at the first refusal: with the broker down every further send would
                # wait out its own connection retries, and be refused as well.
                if count:
                    self.message_user(request, _sent_again(count), messages.SUCCESS)
                left = len(waiting) - position
                self.message_user(request, ngettext(
                    "The message broker could not be reached: %(count)d task was not sent "
                    "again, and nothing was recorded for it. Try again once the broker is back.",
                    "The message broker could not be reached: %(count)d tasks were not sent "
                    "again, and nothing was recorded for them. Try again once the broker is "
                    "back.", left) % {"count": left}, messages.ERROR)
                if len(waiting) < len(letter_ids):
                    resolved = len(letter_ids) - len(waiting)
                    self.message_user(request, ngettext(
                        "%(count)d of the selected was not to be sent: its answer was "
                        "re-evaluated since (resolved).",
                        "%(count)d of the selected were not to be sent: their answer was "
                        "re-evaluated since (resolved).", resolved) % {"count": resolved},
                        messages.WARNING)
                return
            if letter is not None:
                count += 1
        if count or not letter_ids:
            self.message_user(request, _sent_again(count), messages.SUCCESS)
        if count < len(letter_ids):
            unsent = len(letter_ids) - count
            self.message_user(request, ngettext(
                "%(count)d task was not sent again: its answer was re-evaluated since "
                "(resolved), or the letter is gone.",
                "%(count)d tasks were not sent again: their answer was re-evaluated since "
                "(resolved), or the letter is gone.", unsent) % {"count": unsent},
                messages.WARNING)


def _sent_again(count: int) -> str:
    return ngettext("%(count)d task sent again.", "%(count)d tasks sent again.",
                    count) % {"count": count}
