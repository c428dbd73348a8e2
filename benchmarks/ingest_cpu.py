"""Where an ingested answer's CPU goes, measured in process (no HTTP, no client, no gunicorn).

    python -m benchmarks.ingest_cpu [--answers 1000] [--batches 4]

Calls the WSGI application directly on a scratch database with the ingest benchmark's data, and
prints the app process's CPU time (user + system) per request for `GET /healthz`, per single
answer and per answer of a 500-answer batch, then where a batch answer's CPU goes. It sets no
target: it explains the two ingest figures of `python -m benchmarks`. The parts are timed by
wrapping a few functions, which adds a little to each.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import time
from collections.abc import Callable
from typing import Any

from benchmarks.ingest_bench import DOCS, answer, revision, service_database

BATCH = 500


class App:
    """The WSGI application, called as a server would with a service token."""

    def __init__(self, token: str) -> None:
        from django.core.handlers.wsgi import WSGIHandler

        self.handler = WSGIHandler()
        self.token = token

    def call(self, method: str, path: str, body: str = "") -> tuple[str, bytes]:
        data = body.encode()
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1:8000", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(data),
            "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": "application/json",
            "HTTP_AUTHORIZATION": f"Token {self.token}",
        }
        status: list[str] = []
        reply = b"".join(self.handler(environ, lambda s, headers: status.append(s)))
        return status[0], reply


def app_on_documents(database: str) -> App:
    """The app in this process, on a new scratch database holding the benchmark's documents."""
    _, env, token = service_database(database)
    os.environ.update(env)
    import django

    django.setup()
    app = App(token)
    for i in range(DOCS):
        status, reply = app.call("PUT", f"/api/v1/documents/doc-{i}/revisions/r1",
                                 json.dumps(revision(i)))
        assert status[:3] in ("200", "201"), reply
    return app


def cpu_per(count: int, work: Callable[[], None]) -> float:
    """CPU seconds of this process per unit of `work`, which does `count` units."""
    started = time.process_time()
    work()
    return (time.process_time() - started) / count


class Parts:
    """CPU spent inside chosen functions, by label."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def wrap(self, owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        @functools.wraps(inner)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.spent[label] = self.spent.get(label, 0.0) + time.process_time() - started

        setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=1000, help="single answers to time")
    parser.add_argument("--batches", type=int, default=4, help=f"batches of {BATCH} to time")
    args = parser.parse_args()

    app = app_on_documents("rq_bench_ingest_cpu")
    from django.db import connection

    for i in range(50):  # warm caches, prepared statements and imports
        app.call("POST", "/api/v1/answers", json.dumps(answer(i, "warm")))
        app.call("GET", "/healthz")

    def ingest_each(bodies: list[str]) -> Callable[[], None]:
        def work() -> None:
            for body in bodies:
                status, reply = app.call("POST", "/api/v1/answers", body)
                assert status.startswith("201"), reply
        return work

    def healthz() -> None:
        for _ in range(args.answers):
            app.call("GET", "/healthz")

    statements: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    singles = [json.dumps(answer(i, "single")) for i in range(args.answers)]
    idle = cpu_per(args.answers, healthz)
    with connection.execute_wrapper(count):
        single = cpu_per(args.answers, ingest_each(singles))
    per_request = len(statements) / args.answers

    import gating
    from reviewqueue.reviews import api
    from reviewqueue.reviews.services import ingest

    parts = Parts()
    parts.wrap(gating, "evaluate", "the gate itself (gating.evaluate)")
    parts.wrap(ingest, "run_gate", "gate input and evaluation (run_gate)")
    parts.wrap(ingest, "copy_instances", "COPY of answers, versions, citations, verdicts")
    parts.wrap(ingest, "answers_enter", "queue rows, status signal, audit events")
    parts.wrap(api, "answer_input", "body checks (answer_input)")
    parts.wrap(api, "ingest_body", "reply bodies (ingest_body)")
    parts.wrap(ingest, "built", "model instances (copying.built)")
    batches = [json.dumps({"answers": [answer(b * BATCH + i, "batch") for i in range(BATCH)]})
               for b in range(args.batches)]

    def batch_work() -> None:
        for body in batches:
            status, reply = app.call("POST", "/api/v1/answers/batch", body)
            assert status.startswith("200"), reply

    batch = cpu_per(args.batches * BATCH, batch_work)

    print(f"CPU of the app process, in process, per request or answer "
          f"({args.answers} single answers; {args.batches} x {BATCH}-answer batches):")
    print(f"  GET /healthz                   {idle * 1e3:7.3f} ms")
    print(f"  single answer                  {single * 1e3:7.3f} ms  "
          f"({single / idle:.1f} x /healthz; {per_request:.1f} statements through Django "
          f"a request, plus the commit and the connection health check)")
    print(f"  one answer of a batch          {batch * 1e3:7.3f} ms")
    print("Where a batch answer's CPU goes (parts may nest: run_gate holds the gate):")
    answers = args.batches * BATCH
    for label, spent in sorted(parts.spent.items(), key=lambda item: -item[1]):
        print(f"  {label:48s} {spent / answers * 1e3:7.3f} ms  {spent / answers / batch:4.0%}")


if __name__ == "__main__":
    main()
