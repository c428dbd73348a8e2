"""Ingest throughput against the running app, beside plain-psycopg floors from the same run.

    python -m benchmarks.ingest_bench [--answers 4000] [--clients 4] [--batch-clients 2] [--quick]

Reports answers/s for single-answer ingest (N client connections, one answer per request) and
batch ingest (500 answers per request), each beside its floor: one-row INSERT + COMMIT with
psycopg over the same number of connections, and COPY of the same rows (batch ingest and COPY
taken in turn, three rounds, best of each). Beside each it gives the
CPU an answer took, split between the app (gunicorn and its workers), PostgreSQL and this client,
and the CPU an answer may take on this machine's cores for the figure to reach its target; the
single-answer row adds the same split for GET /healthz, the emptiest request the app serves.
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import threading
import time
from typing import Any

import psycopg

from benchmarks._app import (
    Client,
    app_env,
    gunicorn,
    manage,
    postmaster_pid,
    scratch_database,
    tree_cpu,
)
from benchmarks._table import at_least, rate, report, section_args

DOCS = 20
# Each ingest figure's target, as a share of its floor (issue 9).
SINGLE_TARGET = 0.3
BATCH_TARGET = 0.05
BATCH_SIZE = 500
ROUNDS = 3


def answer(i: int, prefix: str) -> dict[str, Any]:
    doc = f"doc-{i % DOCS}"
    return {
        "trace_id": f"{prefix}-{i}",
        "question": f"What is the value of fact {i % 7}?",
        "answer": f"The value is {i % 7} [d1]. Another sentence cites the second source [d2].",
        "asked_by": ["user:bench"],
        "index_release": "bench",
        "retrieved": [
            {"cite": "d1", "document_id": doc, "revision": "r1", "span": "p1"},
            {"cite": "d2", "document_id": f"doc-{(i + 1) % DOCS}", "revision": "r1"},
        ],
        "claims": [{"key": f"k{i % 7}", "value": i % 7, "cite": "d1"}],
    }


def revision(i: int) -> dict[str, Any]:
    return {
        "title": f"Document {i}",
        "owner": "bench-owner",
        "updated_at": "2026-01-01T00:00:00Z",
        "allowed_principals": ["*"],
        "passages": [{"span": "p1", "text": f"Passage of document {i}."}],
        "facts": [
            {
                "key": f"k{k}",
                "value": k,
                "valid_from": "2020-01-01",
                "valid_until": None,
                "span": "p1",
            }
            for k in range(7)
        ],
    }


def service_database(name: str) -> tuple[str, dict[str, str], str]:
    """A migrated scratch database with the documents' owner and a service: its URL, the
    app's environment on it and the service's token."""
    url = scratch_database(name)
    env = app_env(url)
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "adduser", "bench-owner", "--role", "owner")
    manage(env, "adduser", "bench-service", "--role", "service")
    return url, env, manage(env, "issue_token", "bench-service").strip()


def run_threads(clients: int, work: Any) -> float:
    threads = [threading.Thread(target=work, args=(c,)) for c in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def floor_table(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_floor")
        conn.execute(
            "CREATE TABLE bench_floor (id bigserial primary key, trace_id text "
            "unique, body jsonb, created_at timestamptz default now())"
        )


def insert_floor(url: str, rows: list[dict[str, Any]], clients: int) -> float:
    """Rows/s of one-row INSERT + COMMIT over `clients` connections."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE bench_floor")
    per = len(rows) // clients

    def insert(c: int) -> None:
        with psycopg.connect(url) as conn:
            for row in rows[c * per : (c + 1) * per]:
                conn.execute(
                    "INSERT INTO bench_floor (trace_id, body) VALUES (%s, %s)",
                    (row["trace_id"], json.dumps(row)),
                )
                conn.commit()

    return per * clients / run_threads(clients, insert)


def copy_floor(url: str, rows: list[dict[str, Any]]) -> float:
    """Rows/s of one COPY of `rows` into the emptied table."""
    with psycopg.connect(url) as conn:
        conn.execute("TRUNCATE bench_floor")
        conn.commit()
        started = time.perf_counter()
        with conn.cursor().copy("COPY bench_floor (trace_id, body) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((row["trace_id"], json.dumps(row)))
        conn.commit()
        return len(rows) / (time.perf_counter() - started)


def healthz_rate(port: int, clients: int, requests: int) -> float:
    """GET /healthz (one SELECT 1, no ORM, no DRF) with the same clients: what this machine's
    HTTP stack serves at most, for scale."""

    def work(c: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for _ in range(requests // clients):
            conn.request("GET", "/healthz")
            conn.getresponse().read()

    return requests // clients * clients / run_threads(clients, work)


def bare_rate(url: str, env: dict[str, str], workers: int, rows: list[dict[str, Any]],
              clients: int) -> float:
    """Rows/s of the single-answer floor's INSERT + COMMIT behind a bare WSGI app under the same
    gunicorn and clients (benchmarks._bare_wsgi): HTTP and Python without Django."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE bench_floor")
    bodies = [json.dumps(row) for row in rows]
    per = len(bodies) // clients
    with gunicorn(dict(env, BARE_DATABASE_URL=url), workers=workers,
                  app="benchmarks._bare_wsgi:application") as server:

        def post(c: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            for body in bodies[c * per : (c + 1) * per]:
                conn.request("POST", "/", body=body,
                             headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                assert response.status == 201, response.status

        return per * clients / run_threads(clients, post)


class CpuMeter:
    """CPU time by part (the app's gunicorn, PostgreSQL, this client) spent on a phase."""

    def __init__(self, server_pid: int, postmaster: int) -> None:
        self.server_pid = server_pid
        self.postmaster = postmaster

    def now(self) -> dict[str, float]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        parts = {"app": tree_cpu(self.server_pid)}
        if self.postmaster:
            parts["PostgreSQL"] = tree_cpu(self.postmaster)
        parts["client"] = usage.ru_utime + usage.ru_stime
        return parts

    def per(self, before: dict[str, float], units: int) -> dict[str, float]:
        """Seconds of CPU per unit since `before`, by part."""
        after = self.now()
        return {part: (after[part] - before[part]) / units for part in after}


def cpu_text(per_unit: dict[str, float]) -> str:
    parts = ", ".join(f"{part} {seconds * 1e3:.2f}" for part, seconds in per_unit.items())
    return f"{sum(per_unit.values()) * 1e3:.2f} ms ({parts})"


def budget(target: float, floor: float) -> str:
    """The CPU an answer may take, on this machine's cores, for `target` times `floor`
    answers/s."""
    cores = os.cpu_count() or 1
    return f"the target leaves {cores / (target * floor) * 1e3:.2f} ms on {cores} cores"


def main() -> None:
    parser = section_args(__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-clients", type=int, default=2,
                        help="batch requests in flight at once (default: one per core here)")
    args = parser.parse_args()
    if args.quick:
        args.answers = 500

    url, env, token = service_database("rq_bench_ingest")
    with gunicorn(env, workers=args.workers) as server:
        port = server.port
        client = Client(port, token)
        for i in range(DOCS):
            status, _ = client.send("PUT", f"/api/v1/documents/doc-{i}/revisions/r1", revision(i))
            assert status in (200, 201), status
        # Warm every worker once so the first requests do not pay for imports.
        for i in range(args.workers * 4):
            client.send("POST", "/api/v1/answers", answer(i, "warm"))
            client.send("POST", "/api/v1/answers/batch",
                        {"answers": [answer(i * 10 + j, "warm-batch") for j in range(10)]})
        meter = CpuMeter(server.pid, postmaster_pid(url))
        before = meter.now()
        ceiling = healthz_rate(port, args.clients, args.answers)
        healthz_cpu = meter.per(before, args.answers // args.clients * args.clients)

        per = args.answers // args.clients
        failures: list[int] = []

        def single(c: int) -> None:
            mine = Client(port, token)
            for i in range(c * per, (c + 1) * per):
                status, _ = mine.send("POST", "/api/v1/answers", answer(i, "single"))
                if status != 201:
                    failures.append(status)

        before = meter.now()
        single_rate = per * args.clients / run_threads(args.clients, single)
        single_cpu = meter.per(before, per * args.clients)

        # Batch ingest and its COPY floor in turn, best of ROUNDS each (as the audit export
        # does): one round takes about a second, short enough for a neighbour's burst on
        # this shared machine to halve either figure.
        floor_table(url)
        rows = [answer(i, "floor") for i in range(args.answers)]
        batches = max(args.batch_clients, args.answers // BATCH_SIZE)
        batch_rate = floor_batch = 0.0
        before = meter.now()
        for round_ in range(ROUNDS):
            bodies = [
                json.dumps({"answers": [answer(b * BATCH_SIZE + i, f"batch-{round_}")
                                        for i in range(BATCH_SIZE)]})
                for b in range(batches)
            ]

            def batch(c: int, bodies: list[str] = bodies) -> None:
                mine = Client(port, token)
                for body in bodies[c::args.batch_clients]:
                    status, reply = mine.send_raw("POST", "/api/v1/answers/batch", body)
                    assert status == 200, status
                    failures.extend(r["status_code"]  # type: ignore[index]
                                    for r in reply["results"] if r["status_code"] != 201)

            batch_rate = max(batch_rate,
                             batches * BATCH_SIZE / run_threads(args.batch_clients, batch))
            app_cpu = meter.now()
            floor_batch = max(floor_batch, copy_floor(url, rows))
            floor_cpu = meter.now()
            # The app's CPU only, not the floor's COPY run in between.
            before = {part: before[part] + floor_cpu[part] - app_cpu[part] for part in before}
        batch_cpu = meter.per(before, ROUNDS * batches * BATCH_SIZE)

    if failures:
        raise SystemExit(f"{len(failures)} answers were not stored: {sorted(set(failures))}")
    floor_single = insert_floor(url, rows, args.clients)
    bare = bare_rate(url, env, args.workers, [answer(i, "bare") for i in range(args.answers)],
                     args.clients)
    report([
        at_least(f"single-answer ingest, {args.clients} client connections",
                 rate(single_rate, "answers"),
                 rate(floor_single, "rows") + " one-row INSERT+COMMIT",
                 single_rate / floor_single, SINGLE_TARGET,
                 f"{args.workers} gunicorn workers; CPU an answer: {cpu_text(single_cpu)}; "
                 f"{budget(SINGLE_TARGET, floor_single)}; "
                 f"GET /healthz alone: {rate(ceiling, 'requests')}, CPU a request: "
                 f"{cpu_text(healthz_cpu)}; the floor's INSERT+COMMIT behind a bare WSGI app "
                 f"on the same gunicorn (no Django): {rate(bare, 'rows')}, "
                 f"{bare / floor_single:.2f} of the floor"),
        at_least(f"batch ingest, {BATCH_SIZE} answers per request",
                 rate(batch_rate, "answers"), rate(floor_batch, "rows") + " COPY",
                 batch_rate / floor_batch, BATCH_TARGET,
                 f"best of {ROUNDS} rounds of {batches} requests from {args.batch_clients} "
                 f"client(s), each beside a COPY; CPU an answer: "
                 f"{cpu_text(batch_cpu)}; {budget(BATCH_TARGET, floor_batch)}"),
    ], args.json)


if __name__ == "__main__":
    main()
