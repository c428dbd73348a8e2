"""The retry policy every ReviewQueue task shares, and the dead letter at its end.

Use it as `@shared_task(base=ReliableTask, name=...)`. Transient database and broker errors
are retried with exponential backoff and full jitter, up to CELERY_TASK_MAX_RETRIES times;
so is a task whose worker process died under it. When a task fails for good (retries
exhausted, another error, a time limit) a DeadLetter is stored that an admin can see and send
again.
"""

from __future__ import annotations

import logging
from typing import Any

import kombu.exceptions
import redis.exceptions
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, WorkerLostError
from celery.signals import task_failure
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

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
    # A task whose worker process died under it (killed, out of memory, a crash in C code)
    # goes back as a retry, counted against max_retries, after this many seconds; once they
    # are spent it becomes a dead letter. Put back on the queue as it was, a message that
    # kills every worker taking it would come back for ever and take the fleet down with it.
    retry_on_worker_lost = True
    default_retry_delay = settings.CELERY_WORKER_LOST_RETRY_DELAY

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


@task_failure.connect
def dead_letter_after_worker_lost(sender: Any = None, task_id: str = "",
                                  exception: BaseException | None = None, args: Any = None,
                                  kwargs: Any = None, einfo: Any = None, **_: Any) -> None:
    """A task whose worker died once too often never reaches its own `on_failure`: the pool
    process that would run it is gone. The worker's main process reports it here instead
    (with the task's request as `sender.request`), and the dead letter is stored from there.
    Every other failure has had `on_failure` already."""
    if not isinstance(sender, ReliableTask) or not isinstance(exception, WorkerLostError):
        return
    try:
        sender.on_failure(exception, task_id, args or (), kwargs or {}, einfo)
    finally:
        # The main process forks the pool's next processes: leave them no connection of its own.
        connections.close_all()
