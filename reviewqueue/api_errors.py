"""One error shape for the whole API, and the quarantine of refused payloads.

Every error body is `{"error": code, "detail": sentence, "errors": [{"field", "message"}]}`;
`field` is a path such as `claims[2].cite`. Refused write payloads (400, 409, 413) are kept in
the quarantine with the reason, the sender and the time.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from reviewqueue.errors import DomainError, FieldError
from reviewqueue.storable import storable

log = logging.getLogger("reviewqueue.api")

QUARANTINE_STATUSES = {400, 409, 413, 415}


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body is too large."
    default_code = "payload_too_large"


class UntypedBody(exceptions.UnsupportedMediaType):
    """A body sent with no Content-Type. DRF would read it as no body at all (`{}`): an answer
    would be told that each of its fields is missing, and what a claim or a withdrawal was
    asked would be ignored."""

    def __init__(self) -> None:
        super().__init__("", detail="The body was sent with no Content-Type: a JSON body "
                                    "needs `Content-Type: application/json`.")


class SentFieldName(str):
    """A key of an error detail that names a field the body sent: told apart from DRF's own key
    for errors of a whole object ("non_field_errors"), which a body may send as a field name
    too."""


def flatten_errors(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """Turn DRF's nested error detail into a flat list of {field, message} with paths.

    A hostile field name or value repeated in an error is made storable: the error must still
    render as UTF-8 and go into the quarantine."""
    out: list[dict[str, str]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key == "non_field_errors" and not isinstance(key, SentFieldName):
                out += flatten_errors(value, prefix)
            elif isinstance(key, int):
                out += flatten_errors(value, f"{prefix}[{key}]")
            else:
                name = storable(str(key))
                out += flatten_errors(value, f"{prefix}.{name}" if prefix else name)
    elif isinstance(detail, list):
        if all(isinstance(item, (str, exceptions.ErrorDetail)) for item in detail):
            out += [{"field": prefix, "message": storable(str(item))} for item in detail]
        else:
            for index, item in enumerate(detail):
                if item in ({}, [], None):
                    continue
                out += flatten_errors(item, f"{prefix}[{index}]")
    else:
        out.append({"field": prefix, "message": storable(str(detail))})
    return out


def error_body(
    code: str, detail: str, errors: list[dict[str, str]] | None = None, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"error": code, "detail": detail, "errors": errors or []}
    body.update(extra)
    return body


def invalid_body(errors: list[dict[str, str]]) -> dict[str, Any]:
    """The body of a refused payload: every error in `errors`, the first five in `detail`."""
    summary = "; ".join(
        f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errors[:5]
    )
    if len(errors) > 5:
        summary += f"; and {len(errors) - 5} more in errors"
    return error_body("invalid", summary or "Invalid input.", errors)


def domain_error_body(exc: DomainError) -> dict[str, Any]:
    if isinstance(exc, FieldError):
        return error_body(
            "invalid", exc.message, [{"field": exc.field, "message": exc.field_message}]
        )
    return error_body(exc.code, exc.message, **exc.extra)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    request = context.get("request")
    if isinstance(exc, DomainError):
        response = Response(domain_error_body(exc), status=exc.status_code)
    elif isinstance(exc, exceptions.ValidationError):
        # An error about the body as a whole ("Expected a dictionary") is named so.
        errors = [{**e, "field": e["field"] or "body"} for e in flatten_errors(exc.detail)]
        response = Response(invalid_body(errors), status=400)
    else:
        response = drf_exception_handler(exc, context)
        if response is None:
            return None
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        code = getattr(exc, "default_code", "error")
        if isinstance(exc, exceptions.APIException) and hasattr(exc.detail, "code"):
            code = exc.detail.code or code  # type: ignore[union-attr]
        # A body that does not parse, is not JSON or is too large is a bad field too, the
        # body: named in `errors` as any other, for clients that read only those.
        errors = ([{"field": "body", "message": str(detail)}]
                  if isinstance(exc, (exceptions.ParseError, exceptions.UnsupportedMediaType,
                                      PayloadTooLarge))
                  else None)
        response.data = error_body(str(code), str(detail), errors)
    if response.status_code in (401, 403):
        log.warning(
            "request denied",
            extra={"status": response.status_code, "path": request.path if request else ""},
        )
    if request is not None and response.status_code in QUARANTINE_STATUSES:
        quarantine_from_request(request, response)
    return response


def quarantine_from_request(request: Any, response: Response) -> None:
    if request.method not in ("POST", "PUT", "PATCH", "DELETE"):
        return
    from reviewqueue.audit.services import quarantine_payload

    body = getattr(request, "_rq_raw_body", b"")
    trace_id = ""
    data = getattr(request, "_full_data", None)
    if isinstance(data, dict) and isinstance(data.get("trace_id"), str):
        trace_id = data["trace_id"]
    errors = response.data.get("errors") or [
        {"field": "", "message": response.data.get("detail", "")}
    ]
    quarantine_payload(
        endpoint=request.path,
        method=request.method,
        user=request.user,
        status_code=response.status_code,
        errors=errors,
        body=body,
        trace_id=trace_id,
        # A body the API read is kept whole, so that the field its errors name is in it; one
        # refused for its size only in part (what it held was never read).
        max_bytes=(settings.QUARANTINE_OVERSIZED_BYTES if response.status_code == 413
                   else settings.API_MAX_BODY_BYTES),
        # Read as the API read it: in the charset the request names, else UTF-8.
        charset=getattr(request, "encoding", None) or "utf-8",
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An address nothing answers: under /api/ the API's error shape, elsewhere the page."""
    if not request.path.startswith("/api/"):
        return defaults.page_not_found(request, exception)
    detail = f"No API endpoint at {storable(request.path)}."
    trimmed = request.path.rstrip("/")
    if trimmed != request.path:
        try:
            resolve(trimmed)
        except Resolver404:
            pass
        else:
            detail += f" Did you mean {storable(trimmed)}, without the trailing slash?"
    return JsonResponse(error_body("not_found", detail), status=404)
