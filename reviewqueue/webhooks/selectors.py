"""Reads for webhooks: endpoints and their delivery log."""

from __future__ import annotations

from django.apps import apps
from django.db.models import Exists, IntegerField, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KT

from reviewqueue.counting import COUNT_CAP, AtLeast, bounded_count
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


DELIVERY_PAGE = 50


def endpoint_deliveries(endpoint: WebhookEndpoint, *, before: int | None = None,
                        size: int = DELIVERY_PAGE) -> tuple[list[WebhookDelivery], int | None]:
    """One page of the endpoint's delivery log, newest first, older than delivery `before`
    (by keyset on (created_at, id), through the log's index: no OFFSET, no COUNT), and the
    id to read the next older page from, or None at the oldest."""
    deliveries = endpoint.deliveries.all()
    if before is not None:
        at = endpoint.deliveries.filter(pk=before).values_list("created_at", flat=True).first()
        if at is None:
            return [], None
        # created_at <= on its own too: the index's range starts where the last page ended.
        deliveries = deliveries.filter(Q(created_at__lt=at) | Q(created_at=at, pk__lt=before),
                                       created_at__lte=at)
    page = list(deliveries.order_by("-created_at", "-id")
                .prefetch_related("attempt_log")[:size + 1])
    _mark_waiting_behind(endpoint, page[:size])
    _mark_superseded(endpoint, page[:size])
    return page[:size], page[size - 1].pk if len(page) > size else None


def _newer_of_its_answer() -> Exists:
    """A newer event of the same answer for the same endpoint, in whatever state."""
    return Exists(WebhookDelivery.objects.filter(
        endpoint_id=OuterRef("endpoint_id"), trace_id=OuterRef("trace_id"),
        pk__gt=OuterRef("pk"),
    ).exclude(trace_id=""))


def _answer_still_so() -> Exists:
    """The delivery's answer has the status its event tells, still. A change made while the
    endpoint was disabled was recorded for none of its deliveries: its newest event there may
    tell a status the answer has left since."""
    answers = apps.get_model("reviews", "Answer").objects
    return Exists(answers.filter(trace_id=OuterRef("trace_id"),
                                 status=OuterRef("told_status")))


def resendable(endpoint_id: int) -> QuerySet[WebhookDelivery]:
    """The given-up deliveries of the endpoint that may be sent again: each the newest event of
    its answer there, telling the status the answer still has. Another would reach the
    receiver after the newer status it already has (or is being sent), or tell it one the
    answer has left, and overwrite what is true."""
    return (WebhookDelivery.objects.annotate(told_status=KT("payload__status"))
            .filter(~_newer_of_its_answer(), Q(trace_id="") | _answer_still_so(),
                    endpoint_id=endpoint_id, state=WebhookDelivery.State.FAILED))


def resendable_count(endpoint: WebhookEndpoint) -> AtLeast:
    """How many of the endpoint's given-up deliveries may be sent again, up to the cap."""
    return bounded_count(resendable(endpoint.pk).values("pk"))


def _mark_superseded(endpoint: WebhookEndpoint, deliveries: list[WebhookDelivery]) -> None:
    """Set `superseded` on each given-up delivery that `resendable` would not send again, and
    why: "newer" when a newer event of its answer follows it, "moved" when the answer no
    longer has the status it tells (changed while the endpoint was disabled); "" when it may
    be sent (2 queries)."""
    failed = [d for d in deliveries if d.state == WebhookDelivery.State.FAILED and d.trace_id]
    for delivery in deliveries:
        delivery.superseded = ""
    if not failed:
        return
    sendable = set(resendable(endpoint.pk).filter(pk__in=[d.pk for d in failed])
                   .values_list("pk", flat=True))
    newest = dict(endpoint.deliveries.filter(trace_id__in={d.trace_id for d in failed})
                  .order_by().values("trace_id").annotate(newest=Max("id"))
                  .values_list("trace_id", "newest"))
    for delivery in failed:
        if delivery.pk not in sendable:
            delivery.superseded = ("newer" if newest.get(delivery.trace_id, 0) > delivery.pk
                                   else "moved")


def _mark_waiting_behind(endpoint: WebhookEndpoint, deliveries: list[WebhookDelivery]) -> None:
    """Set `behind` on each pending delivery that waits for an older one of the same answer
    (an endpoint gets an answer's events in order): the event id of the oldest still to go,
    or None. Its own next attempt time means nothing until that one is through (1 query)."""
    pending = [d for d in deliveries if d.state == WebhookDelivery.State.PENDING and d.trace_id]
    for delivery in deliveries:
        delivery.behind = None
    if not pending:
        return
    oldest = {trace: (pk, event) for trace, pk, event in (
        endpoint.deliveries.filter(trace_id__in={d.trace_id for d in pending},
                                   state__in=[WebhookDelivery.State.PENDING,
                                              WebhookDelivery.State.SENDING])
        .order_by("trace_id", "id").distinct("trace_id")
        .values_list("trace_id", "id", "event_id"))}
    for delivery in pending:
        pk, event = oldest.get(delivery.trace_id, (delivery.pk, None))
        if pk < delivery.pk:
            delivery.behind = event
