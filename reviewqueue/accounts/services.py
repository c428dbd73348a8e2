"""Writes for accounts: users with roles, API tokens."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction

from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.audit.services import Actor, audit_record

DEFAULT_SCOPES: dict[str, list[str]] = {
    Role.SERVICE: [ApiToken.Scope.PUBLISH, ApiToken.Scope.SUBMIT, ApiToken.Scope.READ],
    Role.REVIEWER: [ApiToken.Scope.READ, ApiToken.Scope.REVIEW],
    Role.OWNER: [ApiToken.Scope.READ],
    Role.ADMIN: [ApiToken.Scope.READ, ApiToken.Scope.REVIEW],
}


def ensure_role_groups() -> None:
    for role in Role:
        Group.objects.get_or_create(name=role.value)


@transaction.atomic
def user_create_or_update(
    *,
    username: str,
    role: Role,
    groups: list[str],
    password: str | None,
    actor: Actor,
    email: str = "",
) -> AbstractUser:
    """Create the user (or update an existing one) with exactly one role plus extra groups."""
    ensure_role_groups()
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username, defaults={"email": email})
    before_groups = sorted(user.groups.values_list("name", flat=True)) if not created else []
    if password:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    user.is_staff = role == Role.ADMIN
    user.is_superuser = role == Role.ADMIN
    user.save()
    wanted = [role.value, *groups]
    group_objects = [Group.objects.get_or_create(name=name)[0] for name in wanted]
    user.groups.set(group_objects)
    audit_record(
        actor=actor,
        action="user.role_changed" if not created else "user.created",
        object_type="user",
        object_id=username,
        before={"groups": before_groups},
        after={"groups": sorted(wanted)},
    )
    return user


@transaction.atomic
def token_issue(
    *, user: AbstractUser, actor: Actor, name: str = "", scopes: list[str] | None = None
) -> str:
    """Create a token and return it in clear: the only time it is ever shown."""
    roles = set(user.groups.values_list("name", flat=True))
    if scopes is None:
        scopes = sorted({s for role, ss in DEFAULT_SCOPES.items() if role in roles for s in ss})
    raw = "rq_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, prefix=raw[:10], digest=ApiToken.digest_of(raw), scopes=list(scopes)
    )
    audit_record(
        actor=actor,
        action="token.issued",
        object_type="api_token",
        object_id=token.pk,
        after={"user": user.username, "prefix": token.prefix, "scopes": list(scopes)},
    )
    return raw
