"""Template filters for navigation: `{% if request.user|is_admin %}`."""

from __future__ import annotations

from typing import Any

from django import template

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role

register = template.Library()


@register.filter
def is_admin(user: Any) -> bool:
    return has_role(user, Role.ADMIN)


@register.filter
def is_reviewer(user: Any) -> bool:
    return has_role(user, Role.REVIEWER, Role.ADMIN)


@register.filter
def is_owner(user: Any) -> bool:
    return has_role(user, Role.OWNER, Role.ADMIN)
