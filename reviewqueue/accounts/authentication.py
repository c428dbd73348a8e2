from __future__ import annotations

from django.contrib.auth.models import Group
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef
from django.utils import timezone
from rest_framework import authentication, exceptions

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.roles import remember_groups


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Token <key>`; the key is looked up by its SHA-256 digest."""

    keyword = "Token"

    def authenticate(self, request):  # type: ignore[no-untyped-def]
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Token <key>'.")
        try:
            raw = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        groups = Group.objects.filter(user=OuterRef("user_id")).values("name")
        token = (
            ApiToken.objects.select_related("user")
            .annotate(group_names=ArraySubquery(groups))
            .filter(digest=ApiToken.digest_of(raw), revoked_at__isnull=True)
            .first()
        )
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        remember_groups(token.user, token.group_names)  # one query for token, user and roles
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            # Touch at most once a minute so a busy service does not write on every request.
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):  # type: ignore[no-untyped-def]
        return self.keyword
