"""The Celery application. All Celery settings live in Django settings under CELERY_*.

Start a worker with `celery -A reviewqueue worker` and the scheduler with `celery -A reviewqueue
beat`. Both need REDIS_URL; without it, tasks run eagerly inside the web process.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun, worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewqueue.settings")

log = logging.getLogger(__name__)

app = Celery("reviewqueue")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def catch_up_when_a_worker_starts(sender: Any = None, **kwargs: Any) -> None:
    """Catch up on work a stopped fleet missed: a validity sweep and a conflict close that
    found no worker, and jobs whose messages were lost. All are safe to run more than once."""
    from django.conf import settings

    if not settings.REEVALUATION_CATCH_UP_ON_START:
        return
    try:
        app.send_task("jobs.sweep_validity_boundaries")
        app.send_task("sources.close_ended_conflicts")
        app.send_task("jobs.resume_stalled")
    except Exception as exc:  # the broker will be retried by beat; a worker must still start
        log.warning("catch-up not enqueued", extra={"error": type(exc).__name__})


@worker_process_init.connect
def keep_startup_objects(**kwargs: Any) -> None:
    """A process that runs tasks has loaded Django, the models and every task module: as the
    web app does once loaded (reviewqueue.gcpause), it keeps the collector's full passes off
    those, which live as long as the process."""
    from reviewqueue.gcpause import startup_objects_kept

    startup_objects_kept()


@task_prerun.connect
def start_on_a_sound_connection(task: Any = None, **kwargs: Any) -> None:
    """A task starts outside any transaction, on a connection that is not in the middle of a
    command. A soft time limit is an exception raised wherever the code is: inside a query, or
    inside transaction.atomic's own bookkeeping. The task that met it may then leave its
    connection marked as in a transaction nothing is in, or with a command half sent, and
    every later task of that process would fail on it. Such a connection is dropped here. (A
    task run eagerly, in the web process, runs inside its caller's transactions.)"""
    from reviewqueue.dbconnections import drop_unsound_connections

    if task is not None and not task.request.is_eager and (dropped := drop_unsound_connections()):
        log.warning("unsound database connection dropped", extra={
            "task": task.name, "connections": dropped})
