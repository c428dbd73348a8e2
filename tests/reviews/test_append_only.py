"""Verdicts and decisions are never updated or deleted (design invariant 1): the database
refuses it, whoever asks."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, transaction

from reviewqueue.reviews.models import Decision, Verdict
from tests.reviews.conftest import current_verdict_id

pytestmark = pytest.mark.django_db


def test_a_verdict_and_a_decision_cannot_be_changed_or_removed(
    hold: Any, reviewer: Any, token_client: Any
) -> None:
    trace = hold()
    token_client(reviewer).post(f"/api/v1/answers/{trace}/decisions", {
        "action": "reject", "reason": "incorrect", "verdict": current_verdict_id(trace)},
        format="json")
    decision = Decision.objects.get()
    for change in (lambda: Verdict.objects.filter(pk=decision.verdict_id).update(
                       decision="candidate"),
                   lambda: Decision.objects.filter(pk=decision.pk).update(reject_reason="other"),
                   lambda: Decision.objects.filter(pk=decision.pk).delete()):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            change()
    decision.refresh_from_db()
    assert decision.reject_reason == "incorrect"
    assert Verdict.objects.get(pk=decision.verdict_id).decision == "review"
