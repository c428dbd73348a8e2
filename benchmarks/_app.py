"""Helpers for benchmarks that run against the real app: a scratch database and gunicorn."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import psycopg

ROOT = Path(__file__).resolve().parents[1]
ADMIN_URL = os.environ.get(
    "BENCH_ADMIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
SECRET = "benchmark-only-secret-key-0123456789-abcdefghijklmnop"


def scratch_database(name: str) -> str:
    """Drop and create database `name`; return its URL."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    base = ADMIN_URL.rsplit("/", 1)[0]
    return f"{base}/{name}"


def app_env(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL"}}
    env.update(
        DATABASE_URL=database_url,
        SECRET_KEY=SECRET,
        DEBUG="0",
        HTTPS="0",
        API_RATE_LIMIT="1000000/min",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="reviewqueue.settings",
        **extra,
    )
    return env


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name: [0] is the state, [1] the
    parent's pid, [11:15] utime, stime, cutime and cstime in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) used so far by process `root` and its descendants, ended
    ones included once their parent has reaped them; 0 if `root` is not on this machine."""
    ticks = 0
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            fields = _stat(pid)
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                pending += [int(child) for child in f.read().split()]
        except OSError:  # it ended between two reads
            continue
        # its own time, and what its reaped children used
        ticks += sum(int(n) for n in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def postmaster_pid(url: str) -> int:
    """The PostgreSQL server's main process: the parent of a backend."""
    with psycopg.connect(url) as conn:  # read while the backend is still there
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        try:
            return int(_stat(backend)[1])
        except OSError:  # PostgreSQL runs on another machine
            return 0


class Server(NamedTuple):
    port: int
    pid: int  # gunicorn's master process

    def worker_pids(self) -> list[int]:
        with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
            return [int(pid) for pid in f.read().split()]


@contextlib.contextmanager
def gunicorn(env: dict[str, str], workers: int = 4, timeout: int = 120,
             app: str = "reviewqueue.wsgi:application") -> Iterator[Server]:
    """The app (or another WSGI `app`) under gunicorn on a free port, once /healthz answers."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app,
         "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", "warning",
         "--timeout", str(timeout)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.3)
        yield Server(port, proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


class Client:
    """A keep-alive HTTP client for one benchmark thread."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def send(self, method: str, path: str, body: object) -> tuple[int, object]:
        return self.send_raw(method, path, json.dumps(body))

    def send_raw(self, method: str, path: str, body: str) -> tuple[int, object]:
        """`send` with a body already encoded, so the client's own JSON work is not timed."""
        self.conn.request(method, path, body=body, headers=self.headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None
