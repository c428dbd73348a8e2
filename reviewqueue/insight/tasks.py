"""Celery tasks of insight: a thin shell around reviewqueue.insight.snapshots."""

from __future__ import annotations

import datetime as dt

from celery import shared_task

from reviewqueue.jobs.tasking import ReliableTask


@shared_task(
    base=ReliableTask,
    name="insight.refresh_metrics",
    # Beat sends the next one within a minute: a retry or a redelivered copy would only
    # repeat a read. A failure still ends as a dead letter, which /metrics counts.
    acks_late=False,
    max_retries=0,
)
def refresh_metrics(since: str = "", until: str = "", release: str = "",
                    bucket: str = "") -> str:
    """Compute and store the insight figures of one window; without arguments (beat), of the
    default window, the last 30 days."""
    from reviewqueue.insight.selectors import Window, default_window
    from reviewqueue.insight.snapshots import snapshot_refresh

    window = default_window()
    if since and until:
        window = Window(since=dt.date.fromisoformat(since), until=dt.date.fromisoformat(until),
                        release=release, bucket=bucket or "day")
    metrics = snapshot_refresh(window)
    return str(metrics["generated_at"])
