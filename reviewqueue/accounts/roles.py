"""Role checks. Roles are Django groups named after `Role` values."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from reviewqueue.accounts.models import Role


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    if not user.is_authenticated or not user.is_active:
        return frozenset()
    cached = getattr(user, "_rq_roles", None)
    if cached is None:
        names = {g.name for g in user.groups.all()}  # type: ignore[attr-defined]
        cached = frozenset(r.value for r in Role if r.value in names)
        user._rq_roles = cached  # type: ignore[union-attr]
    return cached


def has_role(user: AbstractBaseUser | AnonymousUser, *roles: Role) -> bool:
    """True when the user holds any of `roles`. Callers list Role.ADMIN where admins may act."""
    held = user_roles(user)
    return any(role.value in held for role in roles)
