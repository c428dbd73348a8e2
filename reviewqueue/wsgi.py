"""The WSGI application (gunicorn, and `runserver` through WSGI_APPLICATION), behind what
Django cannot do itself:

- check that the address is UTF-8. Django keeps bytes that are not as `%FF` text, so
  `/api/v1/documents/%FF` and `/api/v1/documents/%25FF` would name the same document; once it
  has decoded the address the difference is gone, so the check reads the server's own.
- read a body sent in chunks (`Transfer-Encoding: chunked`, no `Content-Length`). Django reads
  only as many bytes as `Content-Length` says, so such a body would arrive empty and be refused
  for fields it does hold.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewqueue.settings")

Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def utf8_addresses_only(app: Wsgi) -> Wsgi:
    def checked(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        try:  # WSGI gives the address's bytes as latin-1 text
            path.encode("latin-1").decode("utf-8")
        except UnicodeError:
            problem = "is not valid UTF-8"
            if path.startswith("/api/"):
                body = json.dumps({"error": "invalid", "detail": f"The address {problem}.",
                                   "errors": [{"field": "The address", "message": problem}]})
                kind = "application/json"
            else:
                body, kind = f"The address {problem}.", "text/plain; charset=utf-8"
            data = body.encode()
            start_response("400 Bad Request", [("Content-Type", kind),
                                               ("Content-Length", str(len(data)))])
            return [data]
        return app(environ, start_response)

    return checked


def chunked_bodies_read(app: Wsgi) -> Wsgi:
    """The server has undone the chunks; read the body (one byte past the API's limit at most,
    which the API then refuses as too large) and give its length as Content-Length."""

    def read(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if ("chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
                and not environ.get("CONTENT_LENGTH")):
            from django.conf import settings

            data = environ["wsgi.input"].read(settings.API_MAX_BODY_BYTES + 1)
            environ["wsgi.input"] = io.BytesIO(data)
            environ["CONTENT_LENGTH"] = str(len(data))
        return app(environ, start_response)

    return read


application = utf8_addresses_only(chunked_bodies_read(get_wsgi_application()))
