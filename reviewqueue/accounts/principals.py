"""Who may read what. A principal is `user:<name>`, `group:<name>` or `*`."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

EVERYONE = "*"


def user_principals(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """A user's principals: their user principal plus one per Django group."""
    if not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_rq_principals", None)
    if cached is not None:
        return cached
    from reviewqueue.accounts.roles import group_names

    names = sorted(group_names(user))  # type: ignore[arg-type]
    principals = frozenset([f"user:{user.get_username()}", *(f"group:{n}" for n in names)])
    user._rq_principals = principals  # type: ignore[union-attr]
    return principals


def may_read(allowed: Iterable[str], principals: Iterable[str]) -> bool:
    allowed_set = set(allowed)
    return EVERYONE in allowed_set or not allowed_set.isdisjoint(principals)


def is_valid_principal(value: str) -> bool:
    if value == EVERYONE:
        return True
    kind, sep, name = value.partition(":")
    return bool(sep) and kind in {"user", "group"} and bool(name.strip()) and len(value) <= 200
