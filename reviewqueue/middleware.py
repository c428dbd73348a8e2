"""What every request goes through: an id that logs and audit events carry; the refusal of
text PostgreSQL cannot hold; a way back from a page address that only takes a submitted form;
and no page of a signed-in user kept by the browser."""

from __future__ import annotations

import contextvars
import re
import uuid
from collections.abc import Callable
from urllib.parse import parse_qsl

from django.contrib import messages
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
    JsonResponse,
)
from django.urls import Resolver404, resolve
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
trace_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("trace_id", default="")

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        # Only accept a caller's id when it is a plain token; anything else could inject into logs.
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        token = request_id_var.set(request_id)
        trace_token = trace_id_var.set("")
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
            trace_id_var.reset(trace_token)
        response["X-Request-ID"] = request_id
        return response


class RefuseNulMiddleware:
    """A NUL character in the address, the query string or a submitted form is a 400 that
    names where it was. PostgreSQL cannot store or compare text holding one, so it would
    otherwise fail deep inside a query; no id or value the app stores can contain it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = "contains a NUL character"
        found = _nul_in(request)
        if found is None:
            problem = "is not valid UTF-8"
            found = _not_utf8_in_query(request)
        if found is None:
            return self.get_response(request)
        where, field = found
        detail = f"{where} {problem}."
        if request.path.startswith("/api/"):
            body = {"error": "invalid", "detail": detail,
                    "errors": [{"field": field, "message": problem}]}
            return JsonResponse(body, status=400)
        return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")


_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


# Where a refused character was, in the detail's words, and as the field `errors` names: the
# address is the request's path; a parameter, by its name.
Found = tuple[str, str]


def _nul_in(request: HttpRequest) -> Found | None:
    if "\x00" in request.path:
        return "The address", "path"
    # The pages' forms; the API reads its own bodies (and refuses NUL field by field).
    form = (request.POST if request.method == "POST" and not request.path.startswith("/api/")
            and request.content_type in _FORMS else None)
    for label, values in (("query", request.GET), ("form", form)):
        for key, items in (values.lists() if values is not None else ()):
            if "\x00" in key or any("\x00" in item for item in items):
                shown = key.replace(chr(0), "?")
                return f"{label} parameter {shown!r}", shown
    return None


def _not_utf8_in_query(request: HttpRequest) -> Found | None:
    """The query parameter whose bytes are not UTF-8 ("?document=%FF"), which Django would read
    as U+FFFD: a filter on a value nobody sent."""
    raw = request.META.get("QUERY_STRING", "")
    if raw.isascii() and "%" not in raw:
        return None
    # WSGI gives the query's bytes as latin-1 text; each of them one character, so is each
    # percent-escape decoded as latin-1.
    for key, value in parse_qsl(raw, keep_blank_values=True, encoding="latin-1"):
        name = key.encode("latin-1")
        try:
            name.decode("utf-8")
            value.encode("latin-1").decode("utf-8")
        except UnicodeError:
            shown = name.decode("utf-8", errors="replace")
            return f"query parameter {shown!r}", shown
    return None


class FormAddressMiddleware:
    """A page address that only takes a submitted form (decide, publish, verify...), opened
    with GET, leads to the page the form is on instead of an empty 405. That happens when a
    session ended as the form was sent: signing in again returns to the form's address, and
    what was sent is gone, which the message says."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (response.status_code != 405 or request.method != "GET"
                or request.path.startswith("/api/")):
            return response
        messages.info(request, _("That address only takes a form sent from this page. If you "
                                 "had to sign in again, what you sent was not saved: please "
                                 "send it again."))
        return HttpResponseRedirect(_form_page(request.path))


def _form_page(path: str) -> str:
    """The nearest address above `path` that is a page: /answers/t-1/decide → /answers/t-1/."""
    while path not in ("", "/"):
        path = path.rstrip("/").rsplit("/", 1)[0] + "/"
        try:
            resolve(path)
        except Resolver404:
            continue
        return path
    return "/"


class PrivatePagesMiddleware:
    """What a signed-in user gets is never stored by the browser: Back after a decision then
    asks for the item again and shows that it was decided, instead of the page from before
    with its buttons still there; and a shared computer keeps no answer text."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and not response.has_header(
                "Cache-Control"):
            add_never_cache_headers(response)
        return response
