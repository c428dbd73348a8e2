"""Fixtures of the owner pages' tests."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact


@pytest.fixture
def two_owners_disagree(make_user: Any, publish: Any, owner: Any) -> Conflict:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    return Conflict.objects.get()


@pytest.fixture
def promotion(make_user: Any, publish: Any, owner: Any) -> Conflict:
    """The standard trial (14 days, with no end) and a promotion (30 days) from five days ago
    for a month: an exception within the standard's period."""
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14, start=-300, end=None)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30, start=-5, end=30)],
            passages=[{"span": "p1", "text": "This month the trial lasts 30 days."}])
    return Conflict.objects.get()


@pytest.fixture
def owners_with_mail(owner: Any, make_user: Any) -> None:
    """olivia and oscar, owners with an address to mail."""
    owner.email = "olivia@example.test"
    owner.save(update_fields=["email"])
    oscar = make_user("oscar", "owner")
    oscar.email = "oscar@example.test"
    oscar.save(update_fields=["email"])
