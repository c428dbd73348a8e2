"""GET /healthz: database and broker status, for load balancers and humans."""

from __future__ import annotations

import time

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse


def _check_database() -> dict[str, object]:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}
    except Exception as exc:  # any failure means unhealthy; say which kind
        return {"ok": False, "error": type(exc).__name__}


def _check_broker() -> dict[str, object]:
    if not settings.REDIS_URL:
        return {"ok": True, "mode": "eager (embedded default, no broker)"}
    import redis

    started = time.perf_counter()
    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2
        )
        client.ping()
        return {"ok": True, "mode": "redis", "ms": round((time.perf_counter() - started) * 1000, 1)}
    except Exception as exc:
        return {"ok": False, "mode": "redis", "error": type(exc).__name__}


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _check_database(), "broker": _check_broker()}
    healthy = all(c["ok"] for c in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "fail", **checks}, status=200 if healthy else 503
    )
