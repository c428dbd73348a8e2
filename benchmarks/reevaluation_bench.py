"""How re-evaluation scales with the number of stored answers, and what Celery costs.

Reports two figures (a section of `python -m benchmarks`) from three measurements:
  1. time per affected answer when 1,000 of 1,000 stored answers cite the changed document;
  2. the same when 1,000 of 100,000 stored answers do (it should be about the same: affected
     answers are found through the index on cited documents, not by a scan);
  3. re-evaluations per second through a real Celery worker (2 pool processes, Redis) against
     the same loop run in this process without Celery, on the same data.

Each measurement publishes a new revision of a document cited by 1,000 candidate answers, so
every run does the same work per answer (a new verdict, candidate to held, a queue entry, an
audit event). Answers are copied in SQL from one ingested answer; the run takes a few minutes.

    .venv/bin/python -m benchmarks.reevaluation_bench [--quick]

The script creates (and afterwards drops) its own database, `<name>_reeval_bench`, on the
server of DATABASE_URL, and uses Redis db 14 of REDIS_URL's server (default
redis://127.0.0.1:6379/14), which it flushes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._table import at_least, at_most, ms, rate, report, section_args  # noqa: E402


def _bench_urls() -> tuple[str, str, str]:
    server = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    parts = urlsplit(server)
    name = (parts.path.lstrip("/") or "postgres") + "_reeval_bench"
    bench = urlunsplit(parts._replace(path=f"/{name}"))
    redis_server = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    redis = urlunsplit(redis_server._replace(path="/14"))
    return server, bench, redis


def _recreate_database(server_url: str, name: str, *, drop_only: bool = False) -> None:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')


@contextmanager
def _no_fan_out() -> Any:
    """Publish without queueing re-evaluation: the benchmark runs it itself, timed."""
    with mock.patch("reviewqueue.reviews.tasks.enqueue_document_reevaluation"):
        yield


def _key(document_key: str) -> str:
    """Each document states its own key: a publish re-evaluates the answers that cite the
    document and those that claim one of its keys, and the figure is about a known number of
    affected answers, not about every answer that happens to share a key."""
    return f"trial_days_{document_key}"


def _publish(document_key: str, revision: str) -> None:
    import datetime as dt

    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.sources.services import (
        FactInput,
        PassageInput,
        RevisionInput,
        revision_publish,
    )

    data = RevisionInput(
        title=f"{document_key} terms",
        owner="bench-owner",
        updated_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        allowed_principals=("*",),
        passages=(PassageInput("p1", "The free trial lasts 14 days."),),
        facts=(FactInput(key=_key(document_key), value=14, valid_from=dt.date(2026, 1, 1),
                         valid_until=None, span="p1"),),
    )
    revision_publish(document_key=document_key, revision=revision, data=data, actor=SYSTEM)


def _store(prefix: str, document_key: str, count: int) -> None:
    from tests.reevaluation.builders import copy_answers, ingest

    template = ingest(f"{prefix}0", cites=[("d1", document_key, "r1")],
                      claims=[{"key": _key(document_key), "value": 14, "cite": "d1"}])
    assert template.status == "candidate", template.status
    if count > 1:
        copy_answers(template, count - 1, prefix)


def _answers_stored() -> int:
    from reviewqueue.reviews.models import Answer

    return Answer.objects.count()


def _in_process(document_key: str) -> tuple[float, int]:
    """The loop without Celery: find the affected answers (citing the document or claiming
    its key) through the indexes, re-evaluate each."""
    from reviewqueue.jobs.selectors import answer_ids_affected_by_document
    from reviewqueue.reviews.services.reevaluation import answers_reevaluate

    started = time.perf_counter()
    ids = list(answer_ids_affected_by_document(document_key))
    outcome = answers_reevaluate(answer_ids=ids, trigger="revision")
    elapsed = time.perf_counter() - started
    assert not outcome.errors and outcome.changed == len(ids), outcome
    return elapsed, len(ids)


def _warm_up(document_key: str) -> None:
    """An untimed pass in which nothing changes, so the first timed run pays no start-up."""
    from reviewqueue.jobs.selectors import answer_ids_affected_by_document
    from reviewqueue.reviews.services.reevaluation import answers_reevaluate

    answers_reevaluate(answer_ids=list(answer_ids_affected_by_document(document_key)),
                       trigger="revision")


def _plan_uses(sql_and_params: tuple[str, Any], index: str) -> bool:
    from django.db import connection

    sql, params = sql_and_params
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return index in "\n".join(row[0] for row in cursor.fetchall())


class Worker:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewqueue", "worker", "--loglevel=INFO",
             "--pool=prefork", "--concurrency=2", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", "bench@%h"],
            cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the worker did not start; see {log}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def main() -> None:
    parser = section_args(__doc__.split("\n\n")[0])
    parser.add_argument("--stored", type=int, default=100_000)
    parser.add_argument("--affected", type=int, default=1_000)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = parser.parse_args()
    if args.quick:
        args.stored, args.affected = 5_000, 200
    cold_documents = 20
    cold = args.stored - 3 * args.affected
    if cold < cold_documents:
        parser.error("--stored must exceed 3 x --affected by at least 20")

    server_url, bench_url, redis_url = _bench_urls()
    bench_name = urlsplit(bench_url).path.lstrip("/")
    _recreate_database(server_url, bench_name)
    os.environ.update({
        "DATABASE_URL": bench_url, "REDIS_URL": redis_url, "HTTPS": "0",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or "benchmark-only-secret-key-0123456789abc",
        "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "reviewqueue.settings",
    })
    os.environ.pop("REEVALUATION_TODAY", None)
    import django

    django.setup()
    import redis
    from django.core.management import call_command
    from django.db import connection

    redis.Redis.from_url(redis_url).flushdb()
    worker: Worker | None = None
    try:
        call_command("migrate", verbosity=0)
        from reviewqueue.accounts.models import Role
        from reviewqueue.accounts.services import user_create_or_update
        from reviewqueue.audit.services import SYSTEM

        user_create_or_update(username="bench-owner", role=Role.OWNER, groups=[],
                              password="bench-only-password", actor=SYSTEM)
        with _no_fan_out():
            for key in ["hot-small", "hot-large", "hot-worker",
                        *(f"cold-{n}" for n in range(cold_documents))]:
                _publish(key, "r1")

            # 1. Few answers stored, all of them affected.
            _store("small-", "hot-small", args.affected)
            stored_small = _answers_stored()
            _warm_up("hot-small")
            _publish("hot-small", "r2")
            small_s, small_n = _in_process("hot-small")

            # 2. Many answers stored, the same number affected.
            _store("large-", "hot-large", args.affected)
            _store("worker-", "hot-worker", args.affected)
            for n in range(cold_documents):
                _store(f"cold{n}-", f"cold-{n}", cold // cold_documents)
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            stored_large = _answers_stored()
            _warm_up("hot-large")  # as the small one was: both timed runs start warm
            _publish("hot-large", "r2")
            large_s, large_n = _in_process("hot-large")

        from reviewqueue.jobs.selectors import (
            answer_ids_citing_document,
            answer_ids_claiming,
            answer_ids_due_for_validity,
        )
        from reviewqueue.reviews.services.evaluation import today

        fan_out_index = _plan_uses(answer_ids_citing_document("hot-large")
                                   .query.sql_with_params(), "retrieved_by_document")
        claims_index = _plan_uses(answer_ids_claiming([_key("hot-large")])
                                  .query.sql_with_params(), "answer_version_claim_keys")
        sweep_index = _plan_uses(answer_ids_due_for_validity(today())
                                 .query.sql_with_params(), "verdict_next_boundary")

        # 3. The same work through a real worker: publish, and wait for the job to finish.
        log = Path(os.environ.get("TMPDIR", "/tmp")) / "reevaluation_bench_worker.log"
        worker = Worker({**os.environ, "REEVALUATION_CATCH_UP_ON_START": "0"}, log)
        from reviewqueue.jobs.models import Job

        started = time.perf_counter()
        _publish("hot-worker", "r2")  # queues the fan-out after commit, as in production
        while True:
            job = Job.objects.filter(document_key="hot-worker").first()
            if job is not None and job.state in ("finished", "failed"):
                break
            if time.perf_counter() - started > 600:
                raise SystemExit(f"the worker did not finish in 10 minutes; see {log}")
            time.sleep(0.05)
        worker_s = time.perf_counter() - started
        assert (job.done, job.failed, job.changed) == (args.affected, 0, args.affected), job
    finally:
        if worker is not None:
            worker.stop()
        connection.close()
        if not args.keep:
            _recreate_database(server_url, bench_name, drop_only=True)

    small_per, large_per = small_s / small_n, large_s / large_n
    in_process, through_worker = large_n / large_s, args.affected / worker_s
    indexes = (f"fan-out index {'used' if fan_out_index else 'NOT used'}, "
               f"claimed-keys index {'used' if claims_index else 'NOT used'}, "
               f"sweep index {'used' if sweep_index else 'NOT used'}")
    report([
        at_most("re-evaluation time per affected answer, "
                f"{stored_large:,} stored vs {stored_small:,}",
                ms(large_per), ms(small_per), large_per / small_per, 1.2,
                f"{large_n:,} affected each; {indexes}"),
        at_least("re-evaluations/s through the Celery worker (2 processes)",
                 rate(through_worker, "answers"), rate(in_process, "answers") + " in process",
                 through_worker / in_process, 0.8, "publish to job finished"),
    ], args.json)


if __name__ == "__main__":
    main()
