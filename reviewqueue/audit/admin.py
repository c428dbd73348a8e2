from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from reviewqueue.accounts.principals import user_principals
from reviewqueue.admin_base import ReadOnlyAdmin, fixed_choices_filter
from reviewqueue.api_errors import QUARANTINE_STATUSES
from reviewqueue.audit.models import (
    ACTION_FAMILIES,
    AuditAlert,
    AuditEvent,
    QuarantinedPayload,
    VerificationRun,
)
from reviewqueue.audit.selectors import quarantined_body_shown


class ActionFamilyFilter(admin.SimpleListFilter):
    title = _("action")
    parameter_name = "family"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(family, f"{family}.*") for family in ACTION_FAMILIES]

    def queryset(self, request: HttpRequest,
                 queryset: QuerySet[AuditEvent]) -> QuerySet[AuditEvent]:
        if self.value() in ACTION_FAMILIES:
            # A case-sensitive prefix, LIKE 'token.%', which the action_prefix index serves.
            return queryset.filter(action__startswith=f"{self.value()}.")
        return queryset


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("seq", "created_at", "actor", "action", "object_type", "object_id", "trace_id")
    list_filter = (ActionFamilyFilter, "actor_type")
    # Each term is looked up the way an index on the log can answer it. Django's default
    # (icontains) and its "=" and "^" prefixes compare UPPER(column), which no index covers,
    # so every search would read the whole log. Case matters here as it does in the log.
    # object_id is left out: it is indexed only behind object_type (the timeline's lookup).
    search_fields = (
        "trace_id__exact",  # audit_event_trace_seq
        "document_id__exact",  # audit_event_document_time
        "actor__startswith",  # audit_event_actor_prefix: "user:alice" finds her tokens too
        "action__startswith",  # audit_event_action_prefix
    )
    search_help_text = _("Exact trace id or document id, or the start of an actor "
                        "(user:alice) or of an action (token.). Case matters.")


@admin.register(QuarantinedPayload)
class QuarantinedPayloadAdmin(ReadOnlyAdmin):
    """Refused bodies are kept, whatever they hold: nothing refused is dropped, so there is no
    delete here either (nor the bulk "delete selected", which needs the delete permission)."""

    list_display = (
        "received_at",
        "method",
        "endpoint",
        "status_code",
        "sent_by",
        "trace_id",
        "size_bytes",
    )
    # Fixed choices: anyone sending bad bodies grows this table, and Django's own filters would
    # list the endpoints and codes found in it with a SELECT DISTINCT over all of it.
    list_filter = (fixed_choices_filter("status_code", {str(s): str(s) for s in
                                                        sorted(QUARANTINE_STATUSES)},
                                        _("status code")),)
    search_fields = ("trace_id", "request_id")
    readonly_fields = [f.name for f in QuarantinedPayload._meta.fields]
    # The stored body is shown only through `body` below, never as the model's own field.
    exclude = ("body",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        """The body as this admin may read it (see quarantined_body_shown)."""
        principals = user_principals(request.user)

        @admin.display(description=_("body"))
        def body(payload: QuarantinedPayload) -> str:
            return format_html('<pre class="quarantined-body">{}</pre>',
                               quarantined_body_shown(payload, principals))

        return [body if name == "body" else name for name in self.readonly_fields]


@admin.register(VerificationRun)
class VerificationRunAdmin(ReadOnlyAdmin):
    list_display = ("finished_at", "trigger", "ok", "events_checked", "first_bad_seq", "problem")
    list_filter = ("ok", "trigger")
    readonly_fields = [f.name for f in VerificationRun._meta.fields]


@admin.register(AuditAlert)
class AuditAlertAdmin(ReadOnlyAdmin):
    """Read-only: alerts are acknowledged on the audit page, where that is itself audited."""

    list_display = ("created_at", "problem", "first_bad_seq", "acknowledged_at", "acknowledged_by")
    list_filter = ("problem",)
    readonly_fields = [f.name for f in AuditAlert._meta.fields]

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False
