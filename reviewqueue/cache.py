"""The cache: Redis, or this process's memory while Redis cannot be reached.

Redis is the broker and the cache. The cache holds throttles (API requests per token, failed
sign-ins), the insight snapshot and a flag against two verifications at once: nothing that
must outlive Redis. Had every read of it failed with Redis, every API call and sign-in would
have failed too (a 500), although a change committed while the broker is down keeps its job
for `jobs.resume_stalled`. While Redis is unreachable each process keeps those in its own
memory: the throttles still count, per process, and the pages answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
WARN_EVERY_SECONDS = 60
# After a failure Redis is left alone this long: one that accepts connections and never
# answers would otherwise cost every call its timeout.
RETRY_AFTER_SECONDS = 15


class RedisOrLocalCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        # A Redis that does not answer costs each call at most these, not a hung request.
        params = {**params, "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2,
                                        **params.get("OPTIONS", {})}}
        super().__init__(server, params)
        self._local = LocMemCache("reviewqueue-while-redis-is-down", {})
        self._warned_at = 0.0
        self._down_until = 0.0

    def _fallback(self, name: str, exc: Exception) -> Any:
        now = time.monotonic()
        self._down_until = now + RETRY_AFTER_SECONDS
        if now - self._warned_at > WARN_EVERY_SECONDS:
            self._warned_at = now
            log.warning("cache unreachable: this process keeps it in memory", extra={
                "operation": name, "error": type(exc).__name__})
        return getattr(self._local, name)


def _either(name: str) -> Callable[..., Any]:
    def method(self: RedisOrLocalCache, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() < self._down_until:
            return getattr(self._local, name)(*args, **kwargs)
        try:
            return getattr(RedisCache, name)(self, *args, **kwargs)
        except UNREACHABLE as exc:
            return self._fallback(name, exc)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in ("add", "get", "set", "touch", "delete", "get_many", "has_key", "incr",
              "set_many", "delete_many", "clear"):
    setattr(RedisOrLocalCache, _name, _either(_name))
