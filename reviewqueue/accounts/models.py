from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models


class Role(models.TextChoices):
    REVIEWER = "reviewer", "Business reviewer"
    OWNER = "owner", "Document owner"
    ADMIN = "admin", "Admin"
    SERVICE = "service", "Upstream service"


class ApiToken(models.Model):
    """A token an upstream service (or a person's script) sends as `Authorization: Token ...`.

    Only a SHA-256 digest of the token is stored; the clear token is shown once when issued.
    """

    class Scope(models.TextChoices):
        PUBLISH = "publish", "Publish document revisions"
        SUBMIT = "submit", "Submit answers"
        READ = "read", "Read answer status"
        REVIEW = "review", "Work the review queue"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="First characters, for recognising a token")
    digest = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def digest_of(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()
