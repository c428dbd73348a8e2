from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from reviewqueue.admin_base import ReadOnlyAdmin
from reviewqueue.audit.services import Actor
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from reviewqueue.webhooks.services import webhook_endpoint_set_active


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ReadOnlyAdmin):
    """Endpoints are registered on the Webhooks page (the URL check and the audit run there);
    here admins list them and switch them off or on. The secret is never shown."""

    list_display = ("url", "description", "is_active", "created_by", "created_at")
    list_filter = ("is_active",)
    fields = ("url", "description", "is_active", "created_by", "created_at", "disabled_at")
    readonly_fields = fields
    actions = ["disable_selected", "enable_selected"]

    # Shown to staff and switched by them, never edited: a change permission would give the
    # page a form and a Save button that could save nothing.
    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_switch_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def _set_active(
        self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint], active: bool
    ) -> None:
        actor = Actor.of_user(request.user)
        for endpoint_id in queryset.values_list("pk", flat=True):
            webhook_endpoint_set_active(endpoint_id=endpoint_id, active=active, actor=actor)
        self.message_user(request, gettext("Done."), messages.SUCCESS)

    @admin.action(description=_("Disable the selected endpoints"), permissions=["switch"])
    def disable_selected(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        self._set_active(request, queryset, False)

    @admin.action(description=_("Enable the selected endpoints"), permissions=["switch"])
    def enable_selected(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        self._set_active(request, queryset, True)


class AttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = ("number", "started_at", "duration_ms", "status_code", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False

    # Attempts are what happened: an inline that could be changed would give the delivery's
    # page a Save button (the admin offers one for any editable inline).
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "endpoint",
        "event_type",
        "trace_id",
        "state",
        "attempts",
        "last_status_code",
        "last_error",
        "delivered_at",
    )
    list_filter = ("state",)  # one event type so far; a filter on it would read every delivery
    search_fields = ("trace_id", "event_id")
    list_select_related = ("endpoint",)
    inlines = [AttemptInline]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)
