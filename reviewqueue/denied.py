"""The 403 pages, which also record the refusal: a denied request is logged as such."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

log = logging.getLogger("reviewqueue.denied")


def _log_denied(request: HttpRequest, why: str = "") -> None:
    user = getattr(request, "user", None)
    log.warning(
        "request denied",
        extra={
            "status": 403,
            "path": request.path,
            "method": request.method,
            # An id, never a name someone typed: usernames are chosen by people.
            "user_id": getattr(user, "pk", None),
            "why": why,
        },
    )


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    _log_denied(request)
    return defaults.permission_denied(request, exception)


def _same_origin(request: HttpRequest) -> bool:
    """Whether the refused form came from one of this site's own pages, by the Origin header
    a browser sets itself (no page elsewhere can make it name this site)."""
    origin = request.headers.get("Origin", "")
    return bool(origin) and origin == f"{request.scheme}://{request.get_host()}"


def referer_on_this_site(request: HttpRequest) -> str:
    """The page a request was sent from, when it is one of this site's; otherwise "". For
    the ways back from a refused form (never to an address elsewhere)."""
    back = request.headers.get("Referer", "")
    safe = url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure())
    return back if safe else ""


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused for its CSRF token, most often one sent from a page opened before its
    sender signed out and in again (in another tab too): the product's page, in the reader's
    language, with the way back and, when the form came from this site, the text it held, to
    copy into the form again. Nothing of it was saved."""
    _log_denied(request, "csrf")
    typed = []
    if _same_origin(request):
        # Free text only: what has a space or a line break in it (ids and choices have none).
        typed = [value for name, value in request.POST.items()
                 if name != "csrfmiddlewaretoken" and value.strip() and any(
                     c.isspace() for c in value.strip())][:20]
    return render(request, "403_csrf.html",
                  {"back": referer_on_this_site(request), "typed": typed}, status=403)
