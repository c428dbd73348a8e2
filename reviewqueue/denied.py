"""The 403 page, which also records the refusal: a denied request is logged as such."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.views import defaults

log = logging.getLogger("reviewqueue.denied")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    user = getattr(request, "user", None)
    log.warning(
        "request denied",
        extra={
            "status": 403,
            "path": request.path,
            "method": request.method,
            # An id, never a name someone typed: usernames are chosen by people.
            "user_id": getattr(user, "pk", None),
        },
    )
    return defaults.permission_denied(request, exception)
