from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


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
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens",
        verbose_name=_("user"),
    )
    name = models.CharField(max_length=100, blank=True, verbose_name=_("name"))
    prefix = models.CharField(max_length=12,
                              help_text=_("First characters, for recognising a token"),
                              verbose_name=_("prefix"))
    digest = models.CharField(max_length=64, unique=True, verbose_name=_("digest"))
    scopes = models.JSONField(default=list, verbose_name=_("scopes"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    revoked_at = models.DateTimeField(null=True, blank=True, verbose_name=_("revoked at"))
    last_used_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last used at"))

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def digest_of(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()


class LanguagePreference(models.Model):
    """The language a person last chose or signed in with: mail to them is written in it."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                primary_key=True, related_name="language_preference",
                                verbose_name=_("user"))
    language = models.CharField(max_length=8, verbose_name=_("language"))

    class Meta:
        verbose_name = _("language preference")
        verbose_name_plural = _("language preferences")

    def __str__(self) -> str:
        return f"{self.user}: {self.language}"
