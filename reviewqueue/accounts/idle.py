"""Signing out a session left idle: SESSION_COOKIE_AGE (`SESSION_IDLE_SECONDS`) after the person
last did something, not after the page last spoke to the server.

An open item page renews its lease every minute; counted as activity, that kept the session
(and the lease) alive for as long as a tab stayed open on an unattended screen. Requests a page
sends by itself carry `X-Background: 1` (lease renewals with no keystroke, click or scroll since
the last one, progress polls) and leave the session's last activity where it was."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse

ACTIVE_AT = "active_at"


class IdleSignOutMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # A token client sends no session cookie: nothing to read for it.
        if settings.SESSION_COOKIE_NAME in request.COOKIES and request.user.is_authenticated:
            now = time.time()
            active_at = request.session.get(ACTIVE_AT)
            if active_at is not None and now - active_at > settings.SESSION_COOKIE_AGE:
                logout(request)  # the request goes on signed out: a page asks to sign in
            elif active_at is None or request.headers.get("X-Background") != "1":
                request.session[ACTIVE_AT] = now
        return self.get_response(request)
