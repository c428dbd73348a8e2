"""A fact an answer rests on ended yesterday, and the daily validity check has not
re-evaluated the answer yet (it runs a few minutes past each hour, or its worker is down). The
answer's page says its verdict is behind; the API, read by the upstream service, says so too:
`reevaluation_waiting_since` gives the start of the day the verdict fell behind on, rather than
null, which tells a client that nothing waits and the verdict it reads is current."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.instants import instant_text
from reviewqueue.reviews.models import Answer
from tests.reviews.conftest import days

pytestmark = pytest.mark.django_db


def test_a_validity_date_passed_before_the_daily_check_is_said_in_the_api(
    hold: Any, reviewer: Any, token_client: Any, settings: Any
) -> None:
    trace = hold()  # pricing's 14 days hold until 60 days from now
    boundary = Answer.objects.get(trace_id=trace).current_verdict.next_boundary
    assert boundary == dt.date.fromisoformat(days(61))
    api = token_client(reviewer)
    assert api.get(f"/api/v1/answers/{trace}").json()["reevaluation_waiting_since"] is None

    settings.REEVALUATION_TODAY = boundary  # the fact ended yesterday; no check has run

    body = api.get(f"/api/v1/answers/{trace}").json()
    midnight = timezone.make_aware(dt.datetime.combine(boundary, dt.time.min))
    assert body["reevaluation_waiting_since"] == instant_text(midnight)


def test_an_answer_asked_about_a_day_of_its_own_never_falls_behind(
    hold: Any, reviewer: Any, token_client: Any, settings: Any
) -> None:
    trace = hold(as_of=days(0))  # validity checked on that day, whatever day it is now
    settings.REEVALUATION_TODAY = dt.date.fromisoformat(days(61))

    body = token_client(reviewer).get(f"/api/v1/answers/{trace}").json()
    assert body["reevaluation_waiting_since"] is None
