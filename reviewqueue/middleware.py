"""Request-scoped context: every request gets an id that logs and audit events carry."""

from __future__ import annotations

import contextvars
import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

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
