"""What the account commands share. Django skips command modules whose name starts with "_"."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def user_named(name: Any, *, hint: str = "", active: bool = False) -> Any:
    """The user called `name`, or a CommandError that names it (and says what to do). With
    `active`, a deactivated user is refused too: a token made for them would be refused on
    every request ("invalid or revoked"), then start working the day they are reactivated."""
    user = get_user_model().objects.filter(username=name).first()
    if user is None:
        raise CommandError(f"no user named {name!r}{hint}")
    if active and not user.is_active:
        raise CommandError(f"{name!r} is deactivated: reactivate_user {name} first")
    return user
