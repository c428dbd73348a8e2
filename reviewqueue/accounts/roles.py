"""Role checks. Roles are Django groups named after `Role` values."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from reviewqueue.accounts.models import Role


def group_names(user: AbstractBaseUser) -> frozenset[str]:
    """The names of the user's groups, read once per request (token sign-in reads them along
    with the token, see remember_groups)."""
    cached = getattr(user, "_rq_groups", None)
    if cached is None:
        cached = remember_groups(user, [g.name for g in user.groups.all()])  # type: ignore[attr-defined]
    return cached  # type: ignore[no-any-return]


def remember_groups(user: AbstractBaseUser, names: list[str]) -> frozenset[str]:
    user._rq_groups = frozenset(names)  # type: ignore[attr-defined]
    return user._rq_groups  # type: ignore[attr-defined,no-any-return]


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    if not user.is_authenticated or not user.is_active:
        return frozenset()
    cached = getattr(user, "_rq_roles", None)
    if cached is None:
        names = group_names(user)  # type: ignore[arg-type]
        cached = frozenset(r.value for r in Role if r.value in names)
        user._rq_roles = cached  # type: ignore[union-attr]
    return cached


def has_role(user: AbstractBaseUser | AnonymousUser, *roles: Role) -> bool:
    """True when the user holds any of `roles`. Callers list Role.ADMIN where admins may act."""
    held = user_roles(user)
    return any(role.value in held for role in roles)
