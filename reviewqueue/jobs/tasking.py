"""The retry policy every ReviewQueue task shares, and the dead letter at its end.

Use it as `@shared_task(base=ReliableTask, name=...)`. Transient database and broker errors
are retried with exponential backoff and full jitter, up to CELERY_TASK_MAX_RETRIES times;
when a task fails for good (retries exhausted, another error, a time limit) a DeadLetter is
stored that an admin can see and send again.
"""

from __future__ import annotations

import logging
from typing import Any

import kombu.exceptions
import redis.exceptions
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

log = logging.getLogger(__name__)

# Errors of a broker that cannot be reached when a task is sent: Celery raises kombu's
# OperationalError once its publish retries are spent; redis-py's own errors can come through.
BROKER_ERRORS: tuple[type[BaseException], ...] = (
    kombu.exceptions.OperationalError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)

# Errors that a later attempt can plausibly fix: a lost or refused database connection,
# a deadlock or serialisation failure (psycopg raises both as OperationalError), a broker that
# is briefly unreachable.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    *BROKER_ERRORS,
)

# Errors a loop over many items must let through instead of counting against one item.
PASS_THROUGH_ERRORS: tuple[type[BaseException], ...] = (*TRANSIENT_ERRORS, SoftTimeLimitExceeded)


class ReliableTask(Task):
    """Autoretry on transient errors, then a dead letter."""

    autoretry_for = TRANSIENT_ERRORS
    retry_backoff = 2
    retry_backoff_max = settings.CELERY_TASK_RETRY_BACKOFF_MAX
    retry_jitter = True
    max_retries = settings.CELERY_TASK_MAX_RETRIES
    acks_late = True
    reject_on_worker_lost = True

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        from reviewqueue.jobs.services import dead_letter_record

        attempts = int(getattr(self.request, "retries", 0) or 0) + 1
        try:
            dead_letter_record(task_name=self.name, task_id=task_id or "", args=list(args or ()),
                               kwargs=dict(kwargs or {}), error=exc, attempts=attempts)
            self.after_dead_letter(args=list(args or ()), kwargs=dict(kwargs or {}))
        except Exception as store_error:  # the database may be what failed; say so in the log
            log.error("dead letter not stored", extra={
                "task": self.name, "task_id": task_id, "error_type": type(exc).__name__,
                "store_error": type(store_error).__name__,
            })

    def after_dead_letter(self, *, args: list[Any], kwargs: dict[str, Any]) -> None:
        """Hook for tasks that must close their bookkeeping when they fail for good."""
