"""Nightly verification of the audit chain, and its place in the beat schedule.

The Celery settings block belongs to another area, so the schedule entry is added here, when
the Celery app is configured. A key of the same name in CELERY_BEAT_SCHEDULE wins.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, Task, shared_task
from celery.schedules import crontab
from django.core.cache import cache

from reviewqueue.celery import app

log = logging.getLogger(__name__)

NIGHTLY_KEY = "verify-audit-chain-nightly"
# Set while a verification asked for on the audit page waits or runs (the page asks for no
# second one meanwhile: each is a walk of the whole log); cleared when it ends, and expires
# with the task's time limit should its worker die.
MANUAL_PENDING_KEY = "audit:verify:manual-pending"
MANUAL_PENDING_SECONDS = 3660
NIGHTLY_ENTRY = {
    "task": "audit.verify_chain",
    # After the validity sweep (00:05) so the night's re-evaluations are already in the chain.
    # Asked for every hour from 02:30 on, and run by the first that arrives: beat never sends
    # again a task whose send failed, so a broker down at 02:30 would otherwise lose the night.
    "schedule": crontab(hour="2-23", minute=30),
    "kwargs": {"trigger": "nightly", "once_a_day": True},
}

try:  # retries and a dead letter when the jobs area provides them
    from reviewqueue.jobs.tasking import ReliableTask as _BaseTask
except ImportError:  # pragma: no cover - the jobs area is optional for this module
    _BaseTask = Task  # type: ignore[misc]


@shared_task(
    base=_BaseTask,
    name="audit.verify_chain",
    # A walk over millions of events may take minutes. Acknowledge on receipt: a second copy
    # redelivered while the first still runs would only repeat a read, but it is wasted work,
    # and a run lost with its worker is made up by the next night's.
    acks_late=False,
    soft_time_limit=3600,
    time_limit=MANUAL_PENDING_SECONDS,
)
def verify_chain(trigger: str = "nightly", requested_by: str = "",
                 once_a_day: bool = False) -> dict[str, Any]:
    """Walk the chain and record the run. With ``once_a_day`` (beat's hourly asks), nothing
    is done once a nightly run has started today in TIME_ZONE."""
    from reviewqueue.audit.services import audit_verify

    if once_a_day and _nightly_run_today():
        return {"skipped": "a nightly verification already ran today"}
    try:
        run = audit_verify(trigger=trigger, requested_by=requested_by or "celery beat")
    finally:
        if trigger == "manual":
            cache.delete(MANUAL_PENDING_KEY)
    return {"ok": run.ok, "events": run.events_checked, "first_bad_seq": run.first_bad_seq,
            "problems": run.problem_count}


def _nightly_run_today() -> bool:
    from django.utils import timezone

    from reviewqueue.audit.models import VerificationRun

    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return VerificationRun.objects.filter(trigger="nightly", started_at__gte=midnight).exists()


def add_nightly_verification(sender: Celery, **kwargs: Any) -> None:
    schedule = dict(sender.conf.beat_schedule or {})
    schedule.setdefault(NIGHTLY_KEY, NIGHTLY_ENTRY)
    sender.conf.beat_schedule = schedule


# Beat and workers import this module through autodiscovery, after the app is configured; a
# process that imports it earlier gets the entry when configuration happens.
if app.configured:
    add_nightly_verification(app)
else:
    app.on_after_configure.connect(add_nightly_verification, weak=False)
