"""The single-answer floor's work behind HTTP, with no Django: a reference point for scale.

Under the same gunicorn as the app, each POST stores its body as the floor does (one INSERT and
a COMMIT on the worker's own connection) and answers 201. What it reaches beside the floor is
what HTTP and a Python WSGI worker leave of the floor before ReviewQueue does anything.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

import psycopg

_connection: psycopg.Connection[Any] | None = None


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    global _connection
    if environ["REQUEST_METHOD"] == "GET":  # the start-up check of benchmarks._app.gunicorn
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]
    if _connection is None:
        _connection = psycopg.connect(os.environ["BARE_DATABASE_URL"])
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    _connection.execute(
        "INSERT INTO bench_floor (trace_id, body) VALUES (%s, %s)",
        (json.loads(body)["trace_id"], body.decode()),
    )
    _connection.commit()
    reply = b'{"stored": true}'
    start_response("201 Created", [("Content-Type", "application/json"),
                                   ("Content-Length", str(len(reply)))])
    return [reply]
