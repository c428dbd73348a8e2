"""A fact that ends with the next one on its key starting only later leaves days on which the
document states nothing on that key: answers resting on it are held as "Source not in force"
from the day after it ends. The owner's inbox lists it among the facts that end, as it lists
one with nothing after it at all. One followed the very next day (or overlapped by a fact that
goes on) leaves no such day, and is not listed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reviews.conftest import fact
from tests.sources.test_expiring_answers import expiring_rows

pytestmark = pytest.mark.django_db


def test_a_fact_ending_before_a_gap_is_listed_as_ending(
    client: Any, publish: Any, owner: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, start=-30, end=5),
                              fact("trial_days", 30, start=60, end=None)])
    client.force_login(owner)

    assert list(expiring_rows(client)) == ["trial_days"]
    page = client.get("/owner/").content.decode()
    assert "(in 5 days)" in page


@pytest.mark.parametrize("successor", [
    {"start": 6, "end": None},     # from the next day: no day without a value
    {"start": -10, "end": None},   # already in force, and going on
])
def test_a_fact_another_takes_over_from_at_once_is_not_listed(
    client: Any, publish: Any, owner: Any, successor: dict[str, Any]
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, start=-30, end=5),
                              fact("trial_days", 30, **successor)])
    client.force_login(owner)

    page = client.get("/owner/").content.decode()
    assert "data-expiring" not in page
    assert "None of your facts ends in the next 30 days" in page
