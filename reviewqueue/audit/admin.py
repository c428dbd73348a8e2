from django.contrib import admin

from reviewqueue.admin_base import BoundedCountAdmin, ReadOnlyAdmin
from reviewqueue.audit.models import AuditAlert, AuditEvent, QuarantinedPayload, VerificationRun


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("seq", "created_at", "actor", "action", "object_type", "object_id", "trace_id")
    list_filter = ("action", "actor_type")
    search_fields = ("trace_id", "object_id", "actor", "document_id")


@admin.register(QuarantinedPayload)
class QuarantinedPayloadAdmin(BoundedCountAdmin):
    list_display = (
        "received_at",
        "method",
        "endpoint",
        "status_code",
        "sent_by",
        "trace_id",
        "size_bytes",
    )
    list_filter = ("endpoint", "status_code")
    search_fields = ("trace_id", "request_id")
    readonly_fields = [f.name for f in QuarantinedPayload._meta.fields]

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


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
