"""Request-scoped context: every request gets an id that logs and audit events carry; and
the refusal of text PostgreSQL cannot hold."""

from __future__ import annotations

import contextvars
import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

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
        where = _nul_in(request)
        if where is None:
            return self.get_response(request)
        detail = f"{where} contains a NUL character."
        if request.path.startswith("/api/"):
            body = {"error": "invalid", "detail": detail,
                    "errors": [{"field": where, "message": "contains a NUL character"}]}
            return JsonResponse(body, status=400)
        return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")


_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _nul_in(request: HttpRequest) -> str | None:
    if "\x00" in request.path:
        return "The address"
    # The pages' forms; the API reads its own bodies (and refuses NUL field by field).
    form = (request.POST if request.method == "POST" and not request.path.startswith("/api/")
            and request.content_type in _FORMS else None)
    for label, values in (("query", request.GET), ("form", form)):
        for key, items in (values.lists() if values is not None else ()):
            if "\x00" in key or any("\x00" in item for item in items):
                return f"{label} parameter {key.replace(chr(0), '?')!r}"
    return None
