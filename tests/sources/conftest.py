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
