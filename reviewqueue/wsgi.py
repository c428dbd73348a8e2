"""The WSGI application (gunicorn, and `runserver` through WSGI_APPLICATION), behind what
Django cannot do itself:

- check that the address is UTF-8. Django keeps bytes that are not as `%FF` text, so
  `/api/v1/documents/%FF` and `/api/v1/documents/%25FF` would name the same document; once it
  has decoded the address the difference is gone, so the check reads the server's own.
- read a body sent in chunks (`Transfer-Encoding: chunked`, no `Content-Length`). Django reads
  only as many bytes as `Content-Length` says, so such a body would arrive empty and be refused
  for fields it does hold. gunicorn undoes the chunks; Django's development server (`make
  demo`) passes them on as they came, and they are undone here.
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
    """Read a body sent in chunks (one byte past the API's limit at most, which the API then
    refuses as too large) and give its length as Content-Length."""

    def read(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if ("chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
                and not environ.get("CONTENT_LENGTH")):
            from django.conf import settings

            limit = settings.API_MAX_BODY_BYTES + 1
            stream = environ["wsgi.input"]
            try:
                data = (_unchunked(stream, limit) if _undone_by_nobody(stream)
                        else stream.read(limit))
            except ValueError:
                body = b"The body's chunks are malformed (Transfer-Encoding: chunked)."
                start_response("400 Bad Request", [("Content-Type", "text/plain"),
                                                   ("Content-Length", str(len(body)))])
                return [body]
            environ["wsgi.input"] = io.BytesIO(data)
            environ["CONTENT_LENGTH"] = str(len(data))
        return app(environ, start_response)

    return read


def _undone_by_nobody(stream: Any) -> bool:
    """Django's development server gives the connection itself, behind a limit of the
    Content-Length it did not get (0): the chunks are still in it."""
    from django.core.handlers.wsgi import LimitedStream

    return isinstance(stream, LimitedStream) and stream.limit == 0


def _unchunked(stream: Any, limit: int) -> bytes:
    """Undo the chunks, reading the connection through the development server's own stream
    (each chunk: its size in hex, CRLF, the bytes, CRLF; a chunk of size 0 and the trailer
    lines end the body). Stops after `limit` bytes: the API refuses the body as too large."""
    read, readline = stream._read, stream._readline  # the connection, past the limit of 0
    data = bytearray()
    while len(data) < limit:
        size = int(readline(1024).split(b";")[0].strip() or b"x", 16)  # ValueError if not hex
        if size < 0:
            raise ValueError("a chunk's size is negative")
        if size == 0:
            while readline(1024) not in (b"\r\n", b"\n", b""):  # the trailer
                pass
            break
        data += read(size)
        if readline(1024).strip():
            raise ValueError("a chunk is longer than its size says")
    return bytes(data[:limit])


application = utf8_addresses_only(chunked_bodies_read(get_wsgi_application()))
