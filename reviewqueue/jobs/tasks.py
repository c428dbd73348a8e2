"""Celery tasks of re-evaluation jobs: thin shells around reviewqueue.jobs.services."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from reviewqueue.jobs.tasking import ReliableTask

log = logging.getLogger(__name__)


class FanOutTask(ReliableTask):
    def after_dead_letter(self, *, args: list[Any], kwargs: dict[str, Any]) -> None:
        from reviewqueue.jobs.services import job_mark_failed

        job_id = kwargs.get("job_id") or (args[0] if args else None)
        if job_id:
            job_mark_failed(job_id=str(job_id))


@shared_task(base=FanOutTask, name="jobs.fan_out_job")
def fan_out_job(job_id: str) -> int:
    """Split a job into chunks of answer ids and send one message per chunk."""
    from reviewqueue.jobs.services import job_fan_out

    job = job_fan_out(job_id=job_id)
    return job.total if job is not None else 0


@shared_task(base=ReliableTask, name="jobs.sweep_validity_boundaries")
def sweep_validity_boundaries() -> str | None:
    """Daily (and when a worker starts): answers whose validity boundary has come."""
    from reviewqueue.jobs.services import job_start_validity_sweep
    from reviewqueue.reviews.services import evaluation

    day = evaluation.today()
    job = job_start_validity_sweep(day=day)
    log.info("validity sweep", extra={"day": day.isoformat(),
                                      "job": str(job.pk) if job else None})
    return str(job.pk) if job else None


@shared_task(base=ReliableTask, name="jobs.resume_stalled")
def resume_stalled() -> int:
    from reviewqueue.jobs.services import jobs_resume_stalled

    return jobs_resume_stalled()


@shared_task(base=ReliableTask, name="jobs.reevaluate_dead_letter")
def reevaluate_dead_letter(dead_letter_id: int) -> bool:
    """Re-evaluate the one answer of a job's dead letter (an admin sent it again) and count
    it into the job."""
    from reviewqueue.jobs.services import dead_letter_reevaluate

    return dead_letter_reevaluate(dead_letter_id=dead_letter_id)
