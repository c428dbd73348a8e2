"""Who may read what. A principal is `user:<name>`, `group:<name>` or `*`."""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from reviewqueue.storable import INVISIBLE

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


def may_read_every(keys: Collection[str], allowed: Mapping[str, Iterable[str]],
                   principals: Iterable[str]) -> bool:
    """May the holder of `principals` read every document in `keys`, given each document's
    allowed principals (`allowed`, by key)? A key with no document has no readers but the
    services, and no keys at all means no: an answer that retrieved nothing still asked
    something, and only services and admins see it."""
    return bool(keys) and all(k in allowed and may_read(allowed[k], principals) for k in keys)


def is_valid_principal(value: str) -> bool:
    """user:<name>, group:<name> or *. A name with spaces around it (`group: hr`) is refused:
    no user is named so, and it would match only a group whose name starts with a space, so
    the document or answer would be readable by nobody its sender meant."""
    if value == EVERYONE:
        return True
    kind, sep, name = value.partition(":")
    return (bool(sep) and kind in {"user", "group"} and bool(name) and name == name.strip()
            and len(value) <= 200
            and not INVISIBLE.search(value) and unicodedata.is_normalized("NFC", value))
