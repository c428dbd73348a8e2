"""Account events: failed sign-ins feed the login throttle and are logged (without secrets)."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver

from reviewqueue.accounts.throttle import login_failure_record, login_failures_clear

log = logging.getLogger("reviewqueue.auth")


@receiver(user_login_failed)
def _on_login_failed(
    sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
) -> None:
    username = str(credentials.get("username", ""))[:150]
    login_failure_record(username, request)
    log.warning("sign-in failed", extra={"username": username})


@receiver(user_logged_in)
def _on_logged_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    login_failures_clear(user.get_username(), request)
