"""Reads for webhooks: endpoints and their delivery log."""

from __future__ import annotations

from django.db.models import IntegerField, OuterRef, QuerySet, Subquery

from reviewqueue.counting import COUNT_CAP, AtLeast
from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint

# The list shows each endpoint's deliveries per state, counted up to the cap ("1000+" beyond):
# an endpoint that has received millions of events costs what 1001 of them cost.
DELIVERY_STATES = {
    "delivered": ["delivered"],
    "pending": ["pending", "sending"],
    "failed": ["failed"],
}


class CappedCount(Subquery):
    """COUNT(*) over a subquery that ends in LIMIT: `queryset` must be sliced."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) AS capped)"
    output_field = IntegerField()


def _capped(states: list[str]) -> CappedCount:
    deliveries = (WebhookDelivery.objects.filter(endpoint=OuterRef("pk"), state__in=states)
                  .order_by().values("pk")[:COUNT_CAP + 1])
    return CappedCount(deliveries)


def endpoints_with_counts() -> list[WebhookEndpoint]:
    """Endpoints, newest first, each with `delivered`, `pending` and `failed` counts that
    compare as numbers and read "1000+" beyond the cap."""
    endpoints = list(WebhookEndpoint.objects.annotate(
        **{name: _capped(states) for name, states in DELIVERY_STATES.items()}
    ).order_by("-created_at"))
    for endpoint in endpoints:
        for name in DELIVERY_STATES:
            setattr(endpoint, name, AtLeast.of(getattr(endpoint, name)))
    return endpoints


def endpoint_deliveries(endpoint: WebhookEndpoint, limit: int = 100) -> QuerySet[WebhookDelivery]:
    return (endpoint.deliveries.order_by("-created_at")
            .prefetch_related("attempt_log")[:limit])
