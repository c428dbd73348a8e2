"""Stored snapshots of the insight figures, so no page counts a table while someone waits.

The figures (`selectors.insight_metrics`) count every held answer in the queue and every first
verdict of a window: fine with a hundred rows, seconds with millions. A Celery task computes
them and stores the result in the cache; the insight page, GET /api/v1/metrics and /metrics
only read what is stored, and say when it was computed.

- The default window (the last 30 days) is refreshed by beat every minute
  (CELERY_BEAT_SCHEDULE "refresh-insight-metrics").
- Another window is computed when someone first asks for it; until the worker has stored it,
  the page says the figures are being computed. A snapshot older than STALE_AFTER is still
  shown, with its time, while a fresh one is requested.

Requests enqueue with `transaction.on_commit`, at most once per window every QUEUED_FOR
seconds. Without a broker (the demo) Celery runs the task in process, so there the figures
are computed during the request that asks for them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reviewqueue.insight.selectors import Window, insight_metrics

REFRESH_EVERY = 60  # seconds, the beat interval of the default window
STALE_AFTER = 3 * REFRESH_EVERY  # older than this, a fresh snapshot is requested
KEEP_FOR = 24 * 3600  # a stale snapshot still beats none when the worker is down
QUEUED_FOR = 2 * REFRESH_EVERY  # one request per window in flight
_PREFIX = "insight:snapshot:v1"


def _key(w: Window) -> str:
    release = hashlib.sha256(w.release.encode()).hexdigest()[:16] if w.release else "-"
    return f"{_PREFIX}:{w.since.isoformat()}:{w.until.isoformat()}:{release}:{w.bucket}"


@dataclass(frozen=True)
class Snapshot:
    """The figures of one window as stored by the worker, or None while being computed."""

    window: Window
    metrics: dict[str, Any] | None
    requested: bool  # a (re)computation was asked for by this read

    @property
    def computed_at(self) -> dt.datetime | None:
        if self.metrics is None:
            return None
        return parse_datetime(self.metrics["generated_at"])

    def age_seconds(self, now: dt.datetime | None = None) -> float | None:
        computed = self.computed_at
        if computed is None:
            return None
        return max(0.0, ((now or timezone.now()) - computed).total_seconds())

    @property
    def stale(self) -> bool:
        age = self.age_seconds()
        return age is not None and age > STALE_AFTER

    @property
    def status(self) -> str:
        if self.metrics is None:
            return "computing"
        return "refreshing" if self.stale else "ready"


def snapshot_refresh(w: Window, now: dt.datetime | None = None) -> dict[str, Any]:
    """Compute the figures of `w` and store them. Run by the worker, never by a page."""
    metrics = insight_metrics(w, now)
    key = _key(w)
    cache.set(key, metrics, timeout=KEEP_FOR)
    cache.delete(f"{key}:queued")
    return metrics


def snapshot_read(w: Window) -> Snapshot:
    """The stored figures of `w`; asks the worker for them when missing or stale."""
    key = _key(w)
    stored = Snapshot(w, cache.get(key), requested=False)
    if (stored.metrics is None or stored.stale) and cache.add(f"{key}:queued", 1, QUEUED_FOR):
        _enqueue(w)
        # Without a broker the task has already run in process: read what it stored.
        return Snapshot(w, cache.get(key) or stored.metrics, requested=True)
    return stored


def _enqueue(w: Window) -> None:
    from reviewqueue.insight.tasks import refresh_metrics

    kwargs = {"since": w.since.isoformat(), "until": w.until.isoformat(),
              "release": w.release, "bucket": w.bucket}
    # A broker that cannot be reached must not fail the page that asked (robust: logged).
    transaction.on_commit(lambda: refresh_metrics.delay(**kwargs), robust=True)
