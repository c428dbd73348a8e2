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
import re
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

from reviewqueue.gcpause import startup_objects_kept

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
                                   "errors": [{"field": "path", "message": problem}]})
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
        if "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            return app(environ, start_response)
        from django.conf import settings

        limit = settings.API_MAX_BODY_BYTES + 1
        stream = environ["wsgi.input"]
        whole = True
        if _from_the_development_server(stream):
            # Transfer-Encoding wins over a Content-Length sent beside it (RFC 9112, 6.3).
            try:
                data, whole = _unchunked(stream, limit)
            except ValueError:
                body = b"The body's chunks are malformed (Transfer-Encoding: chunked)."
                # No length: the development server then closes the connection, whose unread
                # bytes would otherwise be taken for the next request.
                start_response("400 Bad Request", [("Content-Type", "text/plain")])
                return iter([body])  # a list of one would have the server count its length
        elif not environ.get("CONTENT_LENGTH"):
            data = stream.read(limit)
        else:
            return app(environ, start_response)
        environ["wsgi.input"] = io.BytesIO(data)
        environ["CONTENT_LENGTH"] = str(len(data))
        if whole:
            return app(environ, start_response)

        def without_length(status: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
            # The rest of the body is still on the connection: it must close after this reply.
            return start_response(status, [(k, v) for k, v in headers
                                           if k.lower() != "content-length"], *rest)

        return app(environ, without_length)

    return read


def _from_the_development_server(stream: Any) -> bool:
    """Django's development server gives the connection itself, behind a limit of the
    Content-Length it was sent (0 when none was): the chunks are still in it."""
    from django.core.handlers.wsgi import LimitedStream

    return isinstance(stream, LimitedStream)


_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


def _unchunked(stream: Any, limit: int) -> tuple[bytes, bool]:
    """Undo the chunks, reading the connection through the development server's own stream
    (each chunk: its size in hex, CRLF, the bytes, CRLF; a chunk of size 0 and the trailer
    lines end the body). Returns the body and whether it was read to its end: past `limit`
    bytes it stops (the API refuses the body as too large). ValueError when malformed."""
    read, readline = stream._read, stream._readline  # the connection, past the limit of 0
    data = bytearray()
    while True:
        size_text = readline(1024).split(b";")[0].strip()
        if not _CHUNK_SIZE.fullmatch(size_text):
            raise ValueError("a chunk's size is not hexadecimal digits")
        size = int(size_text, 16)
        if size == 0:
            while readline(1024) not in (b"\r\n", b"\n", b""):  # the trailer
                pass
            return bytes(data), True
        if size > limit - len(data):
            data += read(limit - len(data))
            return bytes(data), False
        chunk = read(size)
        if len(chunk) < size or readline(1024).strip():
            raise ValueError("a chunk is shorter or longer than its size says")
        data += chunk


application = utf8_addresses_only(chunked_bodies_read(get_wsgi_application()))
startup_objects_kept()
