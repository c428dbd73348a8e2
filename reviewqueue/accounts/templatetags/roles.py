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


@register.filter
def return_to(request: Any) -> str:
    """Where the language menu returns to: the page itself, or after a refused form the page
    the form came from when that is one of this site's (never an address from elsewhere)."""
    from reviewqueue.denied import referer_on_this_site

    if request.method == "GET":
        return str(request.get_full_path())
    return referer_on_this_site(request) or "/"
