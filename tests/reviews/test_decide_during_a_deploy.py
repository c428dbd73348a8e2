"""A rolling deploy: a web process still on the previous gate takes a reviewer's decision on a
verdict the new gate gave. It cannot tell that verdict fresh (the gate version is part of the
fingerprint), and must not put its own older verdict in its place."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

import gating
from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.services.decisions import DecisionInput, StaleVerdict, answer_decide
from tests.reviews.conftest import current_verdict_id

pytestmark = pytest.mark.django_db


def test_a_decision_on_a_process_of_the_previous_gate_leaves_the_newer_verdict_current(
    hold: Any, reviewer: Any
) -> None:
    trace = hold()
    seen = current_verdict_id(trace)

    with mock.patch("gating.engine.GATE_VERSION", "2026.12.7"), pytest.raises(StaleVerdict):
        answer_decide(trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                      data=DecisionInput(action="approve", verdict_id=seen))

    answer = Answer.objects.get(trace_id=trace)
    assert answer.current_verdict_id == seen
    assert answer.current_verdict.gate_version == gating.GATE_VERSION
    assert not Verdict.objects.filter(gate_version="2026.12.7").exists()
    assert answer.status == "held"

    # On a process of the new release, the same decision is taken.
    answer_decide(trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                  data=DecisionInput(action="approve", verdict_id=seen))
    assert Answer.objects.get(trace_id=trace).status == "approved"
