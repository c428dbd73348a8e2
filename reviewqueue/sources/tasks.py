"""Celery tasks of the sources: thin shells around reviewqueue.sources.conflicts."""

from __future__ import annotations

import logging

from celery import shared_task

from reviewqueue.jobs.tasking import ReliableTask

log = logging.getLogger(__name__)


@shared_task(base=ReliableTask, name="sources.close_ended_conflicts")
def close_ended_conflicts() -> int:
    """Daily: close the conflicts whose documents disagreed only over periods that have
    ended. Safe to run more than once: the close is one transaction, so an attempt that a lost
    connection stopped left nothing behind, and a run after a complete one finds nothing left
    to close (its retries, and a dead letter sent again, close what has ended by their day)."""
    from reviewqueue.instants import today
    from reviewqueue.sources.conflicts import conflicts_close_ended
    from reviewqueue.sources.models import Conflict

    day = today()
    # The conflicts that go on without a document whose facts ended are not counted.
    closed = [change for change in conflicts_close_ended(today=day)
              if change.after == Conflict.Status.CLOSED]
    log.info("conflicts closed by date", extra={"day": day.isoformat(),
                                                "conflicts": [c.conflict.pk for c in closed]})
    return len(closed)
