"""Conflicts are judged on the gate's today: a drill that pins REEVALUATION_TODAY sees a
disagreement that ended before that day as over, on publish as in the daily close."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def test_a_disagreement_over_by_the_pinned_day_opens_no_conflict(
    publish: Any, settings: Any
) -> None:
    settings.REEVALUATION_TODAY = timezone.localdate() + dt.timedelta(days=90)
    publish("pricing", facts=[fact("trial_days", 14, end=60)])
    publish("promo", facts=[fact("trial_days", 30, end=60)])
    assert not Conflict.objects.filter(status=Conflict.Status.OPEN).exists()


def test_the_same_disagreement_still_in_force_opens_one(publish: Any) -> None:
    publish("pricing", facts=[fact("trial_days", 14, end=60)])
    publish("promo", facts=[fact("trial_days", 30, end=60)])
    assert Conflict.objects.get().status == Conflict.Status.OPEN
