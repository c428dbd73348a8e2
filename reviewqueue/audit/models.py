from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEvent(models.Model):
    """One state change, appended in the same transaction as the change itself.

    Events form a hash chain: `hash` covers a canonical serialisation of the event including
    `prev_hash`, so editing, deleting, inserting or reordering any event breaks the chain.
    A database trigger refuses UPDATE, DELETE and TRUNCATE on this table. No passage text,
    answer text or tokens are ever stored here: only ids and statuses.
    """

    class ActorType(models.TextChoices):
        USER = "user"
        SERVICE = "service"
        WORKER = "worker"
        SYSTEM = "system"

    seq = models.BigIntegerField(unique=True)
    created_at = models.DateTimeField()
    actor_type = models.CharField(max_length=16, choices=ActorType.choices)
    actor = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=200)
    trace_id = models.CharField(max_length=200, blank=True, db_index=True)
    document_id = models.CharField(max_length=200, blank=True, db_index=True)
    request_id = models.CharField(max_length=64, blank=True)
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        indexes = [
            models.Index(fields=["action", "seq"]),
            models.Index(fields=["actor", "seq"]),
            models.Index(fields=["created_at"]),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} {self.object_type}:{self.object_id}"


class QuarantinedPayload(models.Model):
    """A rejected request body, kept with why it was refused. Nothing is dropped silently."""

    received_at = models.DateTimeField(auto_now_add=True, db_index=True)
    endpoint = models.CharField(max_length=200)
    method = models.CharField(max_length=10)
    sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                on_delete=models.SET_NULL)
    status_code = models.PositiveSmallIntegerField()
    errors = models.JSONField(default=list)
    trace_id = models.CharField(max_length=200, blank=True, db_index=True)
    size_bytes = models.PositiveIntegerField()
    body = models.TextField(help_text="The body as received (truncated when oversized)")
    truncated = models.BooleanField(default=False)
    request_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.method} {self.endpoint} {self.status_code} at {self.received_at:%Y-%m-%d %H:%M}"
