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


def test_the_text_a_reviewer_approved_and_what_the_answer_retrieved_cannot_be_rewritten(
    hold: Any, reviewer: Any, token_client: Any
) -> None:
    """An edit adds a version: no statement rewrites a version's text or claims, nor the
    retrieved items its citations point at."""
    from django.db import connection

    from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem

    trace = hold()
    answer = Answer.objects.get(trace_id=trace)
    version = answer.current_version
    for change in (
        lambda: AnswerVersion.objects.filter(pk=version.pk).update(text="90 days [d1]."),
        lambda: RetrievedItem.objects.filter(answer=answer).update(revision="r9"),
        lambda: RetrievedItem.objects.filter(answer=answer).delete(),
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            change()
    for sql in ("UPDATE reviews_answerversion SET claims = '[]' WHERE id = %s",
                "DELETE FROM reviews_answerversion WHERE id = %s"):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), \
                connection.cursor() as cursor:
            cursor.execute(sql, [version.pk])
    version.refresh_from_db()
    assert version.text == AnswerVersion.objects.get(pk=version.pk).text != "90 days [d1]."
    assert {r.revision for r in answer.retrieved.all()} == {"r1"}
