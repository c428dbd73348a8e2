"""Shared fixtures: named personas and helpers to publish revisions and submit answers.

Tests under tests/gating never touch Django; everything else runs on PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

AS_OF = "2026-10-20"


def _django_ready() -> bool:
    try:
        import django  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(autouse=True)
def fast_password_hashing(request: pytest.FixtureRequest) -> None:
    """Personas get passwords: the production hasher spends about half a second on each, most
    of the suite's time. Tests that never touch Django (tests/gating) are left alone."""
    if _django_ready() and "tests/gating/" not in request.node.path.as_posix():
        request.getfixturevalue("settings").PASSWORD_HASHERS = [
            "django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(db: Any) -> Callable[..., Any]:
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.services import user_create_or_update
    from reviewqueue.audit.services import SYSTEM

    def make(
        username: str,
        role: str = "reviewer",
        groups: tuple[str, ...] = (),
        password: str = "pw-for-tests-only",
    ) -> Any:
        return user_create_or_update(
            username=username, role=Role(role), groups=list(groups), password=password, actor=SYSTEM
        )

    return make


@pytest.fixture
def owner(make_user: Callable[..., Any]) -> Any:
    return make_user("olivia", "owner")


@pytest.fixture
def reviewer(make_user: Callable[..., Any]) -> Any:
    return make_user("alice", "reviewer")


@pytest.fixture
def hr_reviewer(make_user: Callable[..., Any]) -> Any:
    return make_user("hana", "reviewer", groups=("hr",))


@pytest.fixture
def admin_user(make_user: Callable[..., Any]) -> Any:
    return make_user("ada", "admin")


@pytest.fixture
def admin_client(admin_user: Any) -> Any:
    """ada, signed in: an admin is staff and superuser (adduser --role admin)."""
    from django.test import Client

    client = Client()
    client.force_login(admin_user)
    return client


@pytest.fixture
def service(make_user: Callable[..., Any]) -> Any:
    return make_user("rag-service", "service")


def _token_client(user: Any, scopes: list[str] | None = None) -> Any:
    from rest_framework.test import APIClient

    from reviewqueue.accounts.services import token_issue
    from reviewqueue.audit.services import SYSTEM

    raw = token_issue(user=user, actor=SYSTEM, scopes=scopes)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    client.raw_token = raw  # type: ignore[attr-defined]
    return client


@pytest.fixture
def token_client() -> Callable[..., Any]:
    return _token_client


@pytest.fixture
def service_api(service: Any) -> Any:
    return _token_client(service)


def revision_body(
    *,
    owner: str = "olivia",
    facts: list[dict[str, Any]] | None = None,
    principals: list[str] | None = None,
    title: str = "Pricing and plans",
    passages: list[dict[str, str]] | None = None,
    updated_at: str = "2026-10-01T09:00:00Z",
) -> dict[str, Any]:
    return {
        "title": title,
        "url": "https://docs.example.test/pricing",
        "owner": owner,
        "updated_at": updated_at,
        "allowed_principals": principals or ["*"],
        "passages": passages
        if passages is not None
        else [{"span": "p1", "text": "The free trial lasts 14 days."}],
        "facts": facts
        if facts is not None
        else [
            {
                "key": "trial_days",
                "value": 14,
                "valid_from": "2026-10-01",
                "valid_until": "2026-10-31",
                "span": "p1",
            }
        ],
    }


def answer_body(
    trace_id: str = "t-1",
    *,
    claims: list[dict[str, Any]] | None = None,
    retrieved: list[dict[str, Any]] | None = None,
    answer: str = "The free trial lasts 14 days [d1].",
    asked_by: list[str] | None = None,
    as_of: str | None = AS_OF,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "trace_id": trace_id,
        "question": "How long is the free trial?",
        "answer": answer,
        "asked_by": asked_by if asked_by is not None else ["user:customer-7"],
        "index_release": "2026.10",
        "retrieved": retrieved
        if retrieved is not None
        else [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}],
        "claims": claims
        if claims is not None
        else [{"key": "trial_days", "value": 14, "cite": "d1"}],
    }
    if as_of is not None:
        body["as_of"] = as_of
    return body


@pytest.fixture
def publish(service_api: Any, owner: Any) -> Callable[..., Any]:
    """Publish a revision through the API, as the document system would."""

    def do(document_id: str = "pricing", revision: str = "r1", **kwargs: Any) -> Any:
        response = service_api.put(
            f"/api/v1/documents/{document_id}/revisions/{revision}",
            revision_body(**kwargs),
            format="json",
        )
        assert response.status_code in (200, 201), response.content
        return response

    return do


@pytest.fixture
def submit(service_api: Any) -> Callable[..., Any]:
    def do(trace_id: str = "t-1", **kwargs: Any) -> Any:
        return service_api.post("/api/v1/answers", answer_body(trace_id, **kwargs), format="json")

    return do


@pytest.fixture
def today() -> dt.date:
    from django.utils import timezone

    return timezone.localdate()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> None:
    """Let the test runner TRUNCATE the append-only audit table between transactional tests.

    The trigger still refuses UPDATE and DELETE; only sessions of this throw-away database get
    the switch that permits TRUNCATE.
    """
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        name = connection.settings_dict["NAME"]
        cursor.execute(f"ALTER DATABASE \"{name}\" SET reviewqueue.allow_audit_truncate = 'on'")
    connection.close()


@pytest.fixture(autouse=True)
def _celery_eager_unless_worker(request: Any) -> Any:
    """Run Celery tasks in process, except in tests marked `worker`, which start a real worker;
    give every test a fresh in-memory cache.

    The suite runs with REDIS_URL set (CI does); without this, a publish in an ordinary test
    would hand its fan-out to a broker no worker is listening on.
    """
    if "tests/gating" in str(request.node.path).replace("\\", "/"):
        yield
        return
    from reviewqueue.celery import app

    # Each test gets an empty cache of its own: throttles and counters must not carry over
    # from another test (or from an earlier run, when the cache is a shared Redis).
    settings = request.getfixturevalue("settings")
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": request.node.nodeid}}
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = request.node.get_closest_marker("worker") is None
    yield
    app.conf.task_always_eager = previous
    # A page requested in Japanese leaves Japanese active in this thread (the locale middleware
    # sets it and nothing resets it between tests, as a new request would): the next test's
    # text built outside a request would come out in Japanese.
    from django.utils import translation

    translation.deactivate()


def frozen_and_walked(start: str) -> tuple[int, int]:
    """In a fresh process, as a server or a worker starts one: run the statements `start`, then
    count the objects gc.freeze keeps out of the collector's passes and those it still walks."""
    from django.conf import settings

    script = f"import gc; {start}; print(gc.get_freeze_count(), len(gc.get_objects()))"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "reviewqueue.settings"}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=120, cwd=settings.BASE_DIR)
    assert result.returncode == 0, result.stderr
    frozen, walked = map(int, result.stdout.split())
    return frozen, walked
