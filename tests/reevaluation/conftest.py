"""Fixtures for re-evaluation, jobs and webhooks.

In-process tests run Celery eagerly (whatever REDIS_URL says) and publish through the API as
the document system would. Tests marked `worker` start real `celery -A reviewqueue worker`
processes against Redis db 15 (flushed first) and the test database.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER_REDIS_URL = os.environ.get("TEST_WORKER_REDIS_URL", "redis://127.0.0.1:6379/15")
OPEN_FACT = {"key": "trial_days", "value": 14, "valid_from": "2026-01-01", "valid_until": None,
             "span": "p1"}


def fact(value: Any = 14, *, key: str = "trial_days", valid_from: str = "2026-01-01",
         valid_until: str | None = None) -> dict[str, Any]:
    """A fact with an open end by default, so that the real date never moves a test answer."""
    return {"key": key, "value": value, "valid_from": valid_from, "valid_until": valid_until,
            "span": "p1"}


def celery_app() -> Any:
    from reviewqueue.celery import app

    return app


def _reset_broker_pools(app: Any) -> None:
    """Drop every broker connection and producer pool, so the next send uses the current
    broker_url (kombu keeps producer pools in a process-wide registry)."""
    import kombu.pools

    if app._pool is not None:
        app._pool.force_close_all()
    kombu.pools.reset()
    app._after_fork()


@pytest.fixture(autouse=True)
def _in_process_celery(request: pytest.FixtureRequest, settings: Any) -> Iterator[None]:
    """Run tasks eagerly unless the test talks to a real worker; allow loopback webhooks."""
    settings.WEBHOOK_ALLOW_PRIVATE_HOSTS = ["127.0.0.1"]
    settings.SECURE_SSL_REDIRECT = False  # the test client speaks plain http
    app = celery_app()
    saved = (app.conf.task_always_eager, app.conf.broker_url)
    if request.node.get_closest_marker("worker") is None:
        app.conf.task_always_eager = True
        settings.CELERY_TASK_ALWAYS_EAGER = True
    yield
    app.conf.task_always_eager, app.conf.broker_url = saved


@pytest.fixture
def publish_doc(publish: Callable[..., Any], django_capture_on_commit_callbacks: Any
                ) -> Callable[..., Any]:
    """Publish a revision and run what it queues on commit (eager Celery)."""

    def do(document_id: str = "pricing", revision: str = "r1", *,
           facts: list[dict[str, Any]] | None = None, **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return publish(document_id, revision, facts=facts or [dict(OPEN_FACT)], **kwargs)

    return do


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """`with on_commit(): ...` runs the block's on-commit work (and the work it queues)."""

    def make() -> Any:
        return django_capture_on_commit_callbacks(execute=True)

    return make


@pytest.fixture
def ingest(owner: Any) -> Callable[..., Any]:
    from tests.reevaluation.builders import ingest as ingest_answer

    return ingest_answer


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]
    status: int

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Records every request; answers 500 to the first `fail_first` requests of each event."""

    url: str
    fail_first: int = 0
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def delivered(self) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.status == 200]

    def answer_for(self, event_id: str) -> int:
        with self.lock:
            seen = sum(1 for r in self.requests if r.json.get("event_id") == event_id)
        return 500 if seen < self.fail_first else 200


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(url="")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            try:
                event_id = json.loads(body).get("event_id", "")
            except ValueError:
                event_id = ""
            status = state.answer_for(event_id)
            with state.lock:
                state.requests.append(Received(body, dict(self.headers.items()), status))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/reviewqueue"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


# --- Real Celery workers ------------------------------------------------------------------------

def redis_client() -> Any:
    import redis

    return redis.Redis.from_url(WORKER_REDIS_URL, socket_connect_timeout=2, socket_timeout=5)


@contextmanager
def celery_sending_to(broker_url: str) -> Iterator[None]:
    """Make this (test) process send tasks to `broker_url` instead of running them."""
    app = celery_app()
    saved = (app.conf.task_always_eager, app.conf.broker_url)
    _reset_broker_pools(app)
    app.conf.task_always_eager = False
    app.conf.broker_url = broker_url
    try:
        yield
    finally:
        _reset_broker_pools(app)
        app.conf.task_always_eager, app.conf.broker_url = saved


def celery_on_redis() -> AbstractContextManager[None]:
    """Make this (test) process send tasks to the workers' Redis instead of running them."""
    return celery_sending_to(WORKER_REDIS_URL)


def worker_database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    auth = s["USER"] or "postgres"
    if s.get("PASSWORD"):
        auth += f":{s['PASSWORD']}"
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Worker:
    """One `celery -A reviewqueue worker` process group with its own log file; with `beat`,
    it also runs the periodic tasks of CELERY_BEAT_SCHEDULE."""

    def __init__(self, log_dir: Path, env: dict[str, str], *, beat: bool = False,
                 queues: str | None = None) -> None:
        name = uuid.uuid4().hex[:8]
        self.log_path = log_dir / f"worker-{name}.log"
        self.env = env
        self.beat_args = ["--beat", "--schedule", str(log_dir / f"beat-{name}")] if beat else []
        # Without -Q a worker takes every queue in CELERY_TASK_QUEUES.
        self.queue_args = ["-Q", queues] if queues else []
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, timeout: float = 30.0) -> Worker:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewqueue", "worker", "--loglevel=INFO",
             "--pool=prefork", "--concurrency=2", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"test-{uuid.uuid4().hex[:8]}@%h", *self.beat_args,
             *self.queue_args],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the worker exited at start:\n{self.log()[-3000:]}")
            if " ready." in self.log():
                return self
            time.sleep(0.1)
        pytest.fail(f"the worker did not become ready in {timeout} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole process group: the main process and its pool children."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@pytest.fixture
def start_worker(tmp_path: Path, transactional_db: Any) -> Iterator[Callable[..., Worker]]:
    """Start workers on Redis db 15 (flushed first) and the test database. A Redis that does
    not answer fails the test: these tests exist to prove the real thing works."""
    import redis

    try:
        redis_client().flushdb()
    except redis.exceptions.RedisError as exc:
        pytest.fail(f"Redis at {WORKER_REDIS_URL} is not reachable: {exc}")
    workers: list[Worker] = []
    base_env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": WORKER_REDIS_URL,
        "SECRET_KEY": os.environ.get("SECRET_KEY", "worker-test-secret-key-0123456789abcdef"),
        "CELERY_TASK_SOFT_TIME_LIMIT": "5",
        "CELERY_TASK_TIME_LIMIT": "6",
        # Short, so that messages of a killed worker come back within seconds.
        "CELERY_VISIBILITY_TIMEOUT": "8",
        "REEVALUATION_CHUNK_SIZE": "20",
        "WEBHOOK_ALLOW_PRIVATE_HOSTS": "127.0.0.1",
        "WEBHOOK_RETRY_BASE_SECONDS": "0.3",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    base_env.pop("REEVALUATION_TODAY", None)

    def start(*, beat: bool = False, queues: str | None = None, **extra_env: str) -> Worker:
        worker = Worker(tmp_path, {**base_env, **extra_env}, beat=beat, queues=queues)
        workers.append(worker)
        return worker.start()

    with celery_on_redis():
        yield start
        for worker in workers:
            worker.stop()


def wait_until(condition: Callable[[], Any], *, timeout: float, message: str,
               interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout} s: {message}")


def today() -> dt.date:
    from django.utils import timezone

    return timezone.localdate()


@pytest.fixture
def reevaluated() -> Iterator[list[int]]:
    """The answer ids re-evaluated (the gate itself is not run)."""
    from reviewqueue.reviews.services import reevaluation

    ids: list[int] = []
    with mock.patch.object(reevaluation, "answer_reevaluate",
                           side_effect=lambda **kwargs: ids.append(kwargs["answer_id"])):
        yield ids
