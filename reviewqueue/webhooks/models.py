from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WebhookEndpoint(models.Model):
    """An address an admin registered to receive status changes.

    Every delivery is signed with `secret` (HMAC-SHA256); the secret is shown once when the
    endpoint is registered and never listed again. Endpoints are disabled, not deleted, so the
    delivery log keeps its target.
    """

    url = models.URLField(max_length=2000, verbose_name=_("URL"))
    secret = models.CharField(max_length=200, verbose_name=_("secret"))
    description = models.CharField(max_length=200, blank=True, verbose_name=_("description"))
    is_active = models.BooleanField(default=True, verbose_name=_("active"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+",
                                   verbose_name=_("created by"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    disabled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("disabled at"))

    class Meta:
        verbose_name = _("webhook endpoint")
        verbose_name_plural = _("webhook endpoints")

    def __str__(self) -> str:
        return self.url


class WebhookDelivery(models.Model):
    """One event for one endpoint, and where its delivery stands.

    Stored in the transaction of the status change (so no event is lost between the change and
    the queue), sent after it commits. `payload` holds ids and statuses only, never answer or
    passage text. A delivery is claimed for an attempt by a conditional update, so two workers
    never send the same attempt. An endpoint gets the events of one answer in the order they
    happened: a delivery waits while an older one for the same endpoint and answer is pending
    or being sent.
    """

    class State(models.TextChoices):
        PENDING = "pending", _("Waiting for an attempt")
        SENDING = "sending", _("Being sent")
        DELIVERED = "delivered", _("Delivered")
        FAILED = "failed", _("Given up")

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.PROTECT,
                                 related_name="deliveries", verbose_name=_("endpoint"))
    event_id = models.UUIDField(default=uuid.uuid4, verbose_name=_("event ID"))
    event_type = models.CharField(max_length=64, verbose_name=_("event type"))
    trace_id = models.CharField(max_length=200, blank=True, verbose_name=_("trace ID"))
    payload = models.JSONField(verbose_name=_("payload"))
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING,
                             verbose_name=_("state"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("attempts"))
    next_attempt_at = models.DateTimeField(verbose_name=_("next attempt at"))
    lease_until = models.DateTimeField(null=True, blank=True, verbose_name=_("claimed until"))
    # A message for the next attempt is in the broker's queue until then (sent on commit or
    # with a countdown): the minute sweep does not send another copy before.
    dispatched_until = models.DateTimeField(null=True, blank=True, verbose_name=_("queued until"))
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True,
                                                        verbose_name=_("last status code"))
    last_error = models.CharField(max_length=200, blank=True, verbose_name=_("last error"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    delivered_at = models.DateTimeField(null=True, blank=True, verbose_name=_("delivered at"))
    # An admin sent it again after it was given up: a fresh round of attempts from then, its
    # retry window and attempt limit counted from `resent_at` and `attempts_before_resend`.
    resent_at = models.DateTimeField(null=True, blank=True, verbose_name=_("resent at"))
    attempts_before_resend = models.PositiveIntegerField(default=0,
                                                         verbose_name=_("attempts before resend"))

    class Meta:
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event_id"],
                                    name="webhook_delivery_once_per_event"),
        ]
        indexes = [
            models.Index(fields=["next_attempt_at"], name="webhook_delivery_due",
                         condition=models.Q(state="pending")),
            models.Index(fields=["lease_until"], name="webhook_delivery_sending",
                         condition=models.Q(state="sending")),
            models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_log"),
            # The endpoints page counts each state up to a cap: a range of this index.
            models.Index(fields=["endpoint", "state"], name="webhook_delivery_state"),
            # The deliveries of one endpoint and answer in order: an older one still to be
            # sent (a newer waits for it), a newer one of any state (a given-up delivery that
            # has one is not sent again: it would overwrite a newer status).
            models.Index(fields=["endpoint", "trace_id", "id"], name="webhook_delivery_by_answer"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id} to endpoint {self.endpoint_id} ({self.state})"


class WebhookAttempt(models.Model):
    """The delivery log: one row per HTTP attempt, with its outcome and timing."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE,
                                 related_name="attempt_log", verbose_name=_("delivery"))
    number = models.PositiveIntegerField(verbose_name=_("attempt number"))
    started_at = models.DateTimeField(verbose_name=_("started at"))
    duration_ms = models.PositiveIntegerField(verbose_name=_("duration (ms)"))
    status_code = models.PositiveSmallIntegerField(null=True, blank=True,
                                                   verbose_name=_("status code"))
    error = models.CharField(max_length=200, blank=True, verbose_name=_("error"))

    class Meta:
        verbose_name = _("webhook attempt")
        verbose_name_plural = _("webhook attempts")
        ordering = ["delivery_id", "number"]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"
