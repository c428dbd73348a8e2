"""Account events: failed sign-ins feed the login throttle and are logged (without secrets)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver

from reviewqueue.accounts.services import language_remember
from reviewqueue.accounts.throttle import login_failure_record, login_failures_clear

log = logging.getLogger("reviewqueue.auth")


@receiver(user_login_failed)
def _on_login_failed(
    sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
) -> None:
    username = str(credentials.get("username", ""))[:150]
    login_failure_record(username, request)
    # What was typed is logged only when it names an account: otherwise it may be a password
    # typed into the wrong field. A digest still tells repeated tries of one name apart.
    known = get_user_model().objects.filter(username=username).exists()
    log.warning("sign-in failed", extra={
        "username": username if known else "(no such account)",
        "typed_sha256": hashlib.sha256(username.encode()).hexdigest()[:12]})


@receiver(user_logged_in)
def _on_logged_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    login_failures_clear(user.get_username(), request)
    # The language the sign-in page was read in is the one mail to them is written in, until
    # they choose another. (A sign-in made in code carries no request language.)
    language = getattr(request, "LANGUAGE_CODE", None)
    if language:
        language_remember(user=user, language=language)
