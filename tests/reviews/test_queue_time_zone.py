"""The queue names the time zone of the times it shows, as the item page does.

A reviewer sees on the queue that bob has an answer "until 21:15", opens it and reads "bob is
working on this until 21:15 JST": the queue's own times (a lease's end, and the moment an answer
was held, in the "Held for" cell's tooltip) said no zone, on a server whose TIME_ZONE is not
the reader's, while every other page of the product names it.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.reviews.services.leases import lease_claim

pytestmark = pytest.mark.django_db


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_a_colleagues_lease_on_the_queue_names_its_time_zone_as_the_item_page_does(
    hold: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    trace = hold("t-leased")
    lease = lease_claim(answer=Answer.objects.get(trace_id=trace), user=bob,
                        actor=Actor.of_user(bob))
    until = f"{timezone.localtime(lease.until):%H:%M}"
    client = login(reviewer)

    item = client.get(f"/answers/{trace}/").content.decode()
    assert f"bob is working on this until {until} JST." in item

    queue = client.get("/").content.decode()
    assert f"until {until} JST" in queue


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_ones_own_lease_on_the_queue_names_its_time_zone(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold("t-mine")
    lease = lease_claim(answer=Answer.objects.get(trace_id=trace), user=reviewer,
                        actor=Actor.of_user(reviewer))
    queue = login(reviewer).get("/").content.decode()
    assert f"until {timezone.localtime(lease.until):%H:%M} JST" in queue


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_the_moment_an_answer_was_held_names_its_time_zone(
    hold: Any, reviewer: Any, login: Any
) -> None:
    hold("t-held")
    entered = ReviewItem.objects.get(answer__trace_id="t-held").entered_at
    queue = login(reviewer).get("/").content.decode()
    assert f'title="{timezone.localtime(entered):%Y-%m-%d %H:%M} JST"' in queue
