"""The 403 pages, which also record the refusal: a denied request is logged as such."""

from __future__ import annotations

import logging
import re

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
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


# Fields whose value is never shown again, by their name rather than a list of forms: every
# password field (password, old_password, new_password1...), the webhook's signing secret,
# and whatever names a token, a key or a signature.
_SECRET_FIELD = re.compile(r"pass(word|phrase)|secret|token|key|signature", re.IGNORECASE)


def _typed(request: HttpRequest) -> tuple[list[str], bool]:
    """The free text a refused form held, to copy into it again: what has a space or a line
    break in it (ids and choices have none), at most 20 values. And whether a secret field
    (a password...) had something typed in it, left out: a page that prints a password can
    be read over a shoulder, kept in a browser's history or sent on with a screenshot."""
    typed: list[str] = []
    withheld = False
    for name, sent in request.POST.items():
        value = str(sent)
        text = value.strip()
        if name == "csrfmiddlewaretoken" or not text:
            continue
        if _SECRET_FIELD.search(name):
            withheld = True
        elif any(c.isspace() for c in text):
            typed.append(value)
    return typed[:20], withheld


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused for its CSRF token, most often one sent from a page opened before its
    sender signed out and in again (in another tab too): the product's page, in the reader's
    language, with the way back and, when the form came from this site, the text it held, to
    copy into the form again (never a password or a secret). Nothing of it was saved, and the
    browser keeps no copy of the page, signed in or not."""
    _log_denied(request, "csrf")
    typed, withheld = _typed(request) if _same_origin(request) else ([], False)
    response = render(request, "403_csrf.html",
                      {"back": referer_on_this_site(request), "typed": typed,
                       "withheld": withheld}, status=403)
    add_never_cache_headers(response)
    return response
