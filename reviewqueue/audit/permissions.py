"""Who may see the audit and insight pages: admins only."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role


def is_admin(user: Any) -> bool:
    return has_role(user, Role.ADMIN)


def admin_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Anonymous visitors go to the login page; signed-in people without the admin role get
    403. Checked before the view reads anything."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_admin(request.user):
            raise PermissionDenied("Only admins may read the audit log and insight.")
        return view(request, *args, **kwargs)

    return wrapper
