"""Integration: a task whose worker process dies under it every time (out of memory, a crash)
is retried a few times, then dead-lettered, with a real worker on Redis. Put back on the queue
as it was, it would come back for ever, and take a pool process down each time."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from reviewqueue.jobs.models import DeadLetter, Job
from tests.reevaluation.builders import ingest as ingest_answer
from tests.reevaluation.conftest import Worker, fact, wait_until, worker_database_url

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def waiting_on_a_lock(conn: psycopg.Connection[Any]) -> set[int]:
    """Backends of the test database waiting for a row lock."""
    rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock'").fetchall()
    return {pid for (pid,) in rows}


def kill_pool_processes(worker: Worker) -> None:
    """SIGKILL the worker's pool processes, as the kernel's out-of-memory killer would; the
    worker's main process lives on and starts new ones."""
    assert worker.process is not None
    main = worker.process.pid
    children = Path(f"/proc/{main}/task/{main}/children").read_text().split()
    assert children, "the worker has no pool processes"
    for pid in children:
        os.kill(int(pid), signal.SIGKILL)


def an_answer_on_pricing(publish: Any) -> Any:
    """An answer citing pricing, published and re-evaluated by the worker first."""
    publish("pricing", "r1", facts=[fact()])
    wait_until(lambda: not Job.objects.exclude(state__in=["finished", "failed"]).exists(),
               timeout=60, message="the first publication's job did not finish")
    return ingest_answer("pricing-0")


def test_a_chunk_whose_worker_dies_every_time_ends_as_a_dead_letter_and_its_job_ends(
    start_worker: Any, publish: Any
) -> None:
    worker = start_worker(CELERY_TASK_MAX_RETRIES="2", CELERY_WORKER_LOST_RETRY_DELAY="0")
    answer = an_answer_on_pricing(publish)

    with psycopg.connect(worker_database_url(), autocommit=True) as watcher, \
            psycopg.connect(worker_database_url()) as blocker:
        # The chunk's run re-evaluates the answer under its row lock: held here, every run
        # waits on it, and is killed there.
        blocker.execute("SELECT 1 FROM reviews_answer WHERE id = %s FOR UPDATE", [answer.pk])
        publish("pricing", "r2", facts=[fact()])
        seen: set[int] = set()
        for run in range(3):  # the first run and its two retries
            new = wait_until(lambda known=seen: waiting_on_a_lock(watcher) - known, timeout=30,
                             message=f"run {run + 1} of the chunk never came")
            seen |= new
            kill_pool_processes(worker)

        letter = wait_until(
            lambda: DeadLetter.objects.filter(task_name="reviews.reevaluate_answers",
                                              error_type__endswith="WorkerLostError").first(),
            timeout=30, message="the chunk that killed its worker three times has no dead letter")
        time.sleep(2)
        # No fourth run: the message is not back on the queue.
        assert waiting_on_a_lock(watcher) - seen == set()
        blocker.rollback()

    assert letter.error_type == "billiard.exceptions.WorkerLostError"
    # Each run is killed within a second or two of taking the lock's queue, well inside the
    # soft time limit (5 s here), which would otherwise leave a letter of its own.
    assert DeadLetter.objects.count() == 1
    assert "Worker exited prematurely: signal 9 (SIGKILL)" in letter.error_message
    assert letter.attempts == 3
    assert letter.kwargs["chunk_id"] is not None
    # The job counts the chunk's answer as failed and ends; an admin can send the letter again.
    job = wait_until(lambda: Job.objects.filter(document_key="pricing", failed=1,
                                                state__in=["finished", "failed"]).first(),
                     timeout=30, message="the job did not end")
    assert (job.total, job.done, job.failed) == (1, 0, 1)
    # The worker itself lives on and still works: a later publication goes through.
    assert worker.process is not None and worker.process.poll() is None
    publish("pricing", "r3", facts=[fact()])
    wait_until(lambda: Job.objects.filter(document_key="pricing", done=1,
                                          state="finished").exists(),
               timeout=60, message="the worker did no work after the dead letter")


def test_a_chunk_whose_worker_main_process_dies_under_it_comes_back_once_then_is_dead_lettered(
    start_worker: Any, publish: Any
) -> None:
    # No retry counts a dead main process: the message comes back from Redis after the
    # visibility timeout (8 s here), and the chunk's own count of its runs stops it.
    settings = {"REEVALUATION_CHUNK_MAX_RUNS": "1"}
    worker = start_worker(**settings)
    answer = an_answer_on_pricing(publish)

    with psycopg.connect(worker_database_url(), autocommit=True) as watcher, \
            psycopg.connect(worker_database_url()) as blocker:
        blocker.execute("SELECT 1 FROM reviews_answer WHERE id = %s FOR UPDATE", [answer.pk])
        publish("pricing", "r2", facts=[fact()])
        first_run = wait_until(lambda: waiting_on_a_lock(watcher), timeout=30,
                               message="the chunk never ran")
        worker.kill()  # the main process and its pool, as a host's out-of-memory killer may
        for pid in first_run:  # the killed run's query, left waiting on the lock
            watcher.execute("SELECT pg_terminate_backend(%s)", [pid])
        start_worker(**settings)

        letter = wait_until(
            lambda: DeadLetter.objects.filter(task_name="reviews.reevaluate_answers",
                                              error_type__endswith="ChunkNeverFinished").first(),
            timeout=60, message="the chunk that came back after its worker died is not a letter")
        time.sleep(2)
        assert waiting_on_a_lock(watcher) - first_run == set()  # not run a second time
        blocker.rollback()

    assert DeadLetter.objects.count() == 1
    assert letter.error_message == "never finished: its worker died under its one run"
    job = wait_until(lambda: Job.objects.filter(document_key="pricing", failed=1,
                                                state__in=["finished", "failed"]).first(),
                     timeout=30, message="the job did not end")
    assert (job.total, job.done, job.failed) == (1, 0, 1)
