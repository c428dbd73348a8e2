"""Ingest throughput against the running app, beside plain-psycopg floors from the same run.

    python -m benchmarks.ingest_bench [--answers 2000] [--clients 4]

Prints answers/s for single-answer ingest (N client connections, one answer per request) and
batch ingest (500 answers per request), each beside its floor: one-row INSERT + COMMIT with
psycopg over the same number of connections, and COPY of the same rows.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

import psycopg

from benchmarks._app import Client, app_env, gunicorn, manage, scratch_database

DOCS = 20


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


def run_threads(clients: int, work: Any) -> float:
    threads = [threading.Thread(target=work, args=(c,)) for c in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def floors(url: str, rows: list[dict[str, Any]], clients: int) -> tuple[float, float]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_floor")
        conn.execute(
            "CREATE TABLE bench_floor (id bigserial primary key, trace_id text "
            "unique, body jsonb, created_at timestamptz default now())"
        )
    per = len(rows) // clients

    def insert(c: int) -> None:
        with psycopg.connect(url) as conn:
            for row in rows[c * per : (c + 1) * per]:
                conn.execute(
                    "INSERT INTO bench_floor (trace_id, body) VALUES (%s, %s)",
                    (row["trace_id"], json.dumps(row)),
                )
                conn.commit()

    single = per * clients / run_threads(clients, insert)
    with psycopg.connect(url) as conn:
        conn.execute("TRUNCATE bench_floor")
        conn.commit()
        started = time.perf_counter()
        with conn.cursor().copy("COPY bench_floor (trace_id, body) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((row["trace_id"], json.dumps(row)))
        conn.commit()
        batch = len(rows) / (time.perf_counter() - started)
    return single, batch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    url = scratch_database("rq_bench_ingest")
    env = app_env(url)
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "adduser", "bench-owner", "--role", "owner")
    manage(env, "adduser", "bench-service", "--role", "service")
    token = manage(env, "issue_token", "bench-service").strip()

    with gunicorn(env, workers=args.workers) as port:
        client = Client(port, token)
        for i in range(DOCS):
            status, _ = client.send("PUT", f"/api/v1/documents/doc-{i}/revisions/r1", revision(i))
            assert status in (200, 201), status
        # Warm every worker once so the first requests do not pay for imports.
        for i in range(args.workers * 2):
            client.send("POST", "/api/v1/answers", answer(i, "warm"))

        per = args.answers // args.clients
        failures: list[int] = []

        def single(c: int) -> None:
            mine = Client(port, token)
            for i in range(c * per, (c + 1) * per):
                status, _ = mine.send("POST", "/api/v1/answers", answer(i, "single"))
                if status != 201:
                    failures.append(status)

        single_rate = per * args.clients / run_threads(args.clients, single)

        batch_size = 500
        batches = max(1, args.answers // batch_size)
        started = time.perf_counter()
        for b in range(batches):
            items = [answer(b * batch_size + i, "batch") for i in range(batch_size)]
            status, body = client.send("POST", "/api/v1/answers/batch", {"answers": items})
            assert status == 200, status
            failures += [
                r["status_code"]
                for r in body["results"]  # type: ignore[index]
                if r["status_code"] != 201
            ]
        batch_rate = batches * batch_size / (time.perf_counter() - started)

    rows = [answer(i, "floor") for i in range(args.answers)]
    floor_single, floor_batch = floors(url, rows, args.clients)
    print(
        f"ingest benchmark: {args.answers} answers, {args.clients} clients, "
        f"{args.workers} gunicorn workers, failures: {len(failures)}"
    )
    print(f"{'figure':<34}{'app/s':>10}{'floor/s':>12}{'ratio':>8}")
    print(
        f"{'single-answer ingest':<34}{single_rate:>10.1f}{floor_single:>12.1f}"
        f"{single_rate / floor_single:>8.3f}   floor: 1-row INSERT+COMMIT"
    )
    print(
        f"{'batch ingest (500 per request)':<34}{batch_rate:>10.1f}{floor_batch:>12.1f}"
        f"{batch_rate / floor_batch:>8.3f}   floor: COPY"
    )


if __name__ == "__main__":
    main()
