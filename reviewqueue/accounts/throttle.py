"""Limits on guessing: failed sign-ins per username and per address, and API calls per token."""

from __future__ import annotations

import unicodedata
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import SimpleRateThrottle


def _client_address(request: Any) -> str:
    """The address failures are counted against. Behind the TLS proxy (BEHIND_TLS_PROXY, which
    sets SECURE_PROXY_SSL_HEADER) REMOTE_ADDR is the proxy's for every request, so counting it
    would let five failures from anyone refuse every sign-in: the client is the last address
    of X-Forwarded-For, the one the proxy appended (those before it are the client's to write).
    Without a proxy the header is anyone's to write and is ignored."""
    meta = getattr(request, "META", {})
    if settings.SECURE_PROXY_SSL_HEADER:
        forwarded = [a.strip() for a in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
        if forwarded[-1]:
            return forwarded[-1][:64]
    return str(meta.get("REMOTE_ADDR", "unknown"))


def _user_key(username: str) -> str:
    """The username's counter, under the name Django's sign-in form checks the password of:
    stripped and NFKC-normalised ("alice " and a full-width "alice" are alice), then lowered.
    Cut to the form's 150 characters only then: cut first, a name padded with spaces would
    count under "" while its password was checked."""
    return "login-fail:user:" + unicodedata.normalize("NFKC", username.strip()).lower()[:150]


def _limits(username: str, request: Any) -> list[tuple[str, int]]:
    """The counters a failure adds to, each with the count that blocks: the username's, low,
    so one account's password is not guessed; and the client address's, much higher, so one
    client cannot try a password on every account, while the typos of one person behind an
    office's shared address do not lock out all their colleagues."""
    return [(_user_key(username), settings.LOGIN_FAILURE_LIMIT),
            (f"login-fail:addr:{_client_address(request)}",
             settings.LOGIN_FAILURE_ADDRESS_LIMIT)]


def login_failure_record(username: str, request: Any) -> None:
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    for key, _limit in _limits(username, request):
        if cache.add(key, 1, timeout=window):
            continue
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)


def login_failures_clear(username: str, request: Any) -> None:
    cache.delete(_user_key(username))


def login_blocked(username: str, request: Any) -> bool:
    return any((cache.get(key) or 0) >= limit for key, limit in _limits(username, request))


class TokenRateThrottle(SimpleRateThrottle):
    """Requests per token (or per signed-in user) per period: API_RATE_LIMIT, e.g. 1200/min."""

    scope = "token"

    def get_rate(self) -> str:
        return str(settings.API_RATE_LIMIT)

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        token = getattr(request, "auth", None)
        if token is not None and getattr(token, "pk", None):
            return f"throttle:token:{token.pk}"
        if request.user and request.user.is_authenticated:
            return f"throttle:user:{request.user.pk}"
        return f"throttle:anon:{self.get_ident(request)}"
