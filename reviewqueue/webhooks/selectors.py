"""Reads for webhooks: endpoints and their delivery log."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint


def endpoints_with_counts() -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.annotate(
        delivered=Count("deliveries", filter=Q(deliveries__state="delivered")),
        pending=Count("deliveries", filter=Q(deliveries__state__in=["pending", "sending"])),
        failed=Count("deliveries", filter=Q(deliveries__state="failed")),
    ).order_by("-created_at")


def endpoint_deliveries(endpoint: WebhookEndpoint, limit: int = 100) -> QuerySet[WebhookDelivery]:
    return (endpoint.deliveries.order_by("-created_at")
            .prefetch_related("attempt_log")[:limit])
