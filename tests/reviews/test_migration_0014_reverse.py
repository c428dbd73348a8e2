"""Undoing reviews 0014 (owner questions in a table of their own) would put each question back
in its queue entry's columns, which hold no reply: it is refused while a reply, or a question
about an answer no longer queued, would be lost."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from reviewqueue.reviews.models import OwnerQuestion, ReviewItem
from reviewqueue.sources.models import Document
from tests.reviews.conftest import bulk_held

pytestmark = pytest.mark.django_db

GUARD = importlib.import_module(
    "reviewqueue.reviews.migrations.0014_owner_questions").REFUSE_LOSING_QUESTIONS


def undo_refused() -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(GUARD)
    except DatabaseError as error:
        assert "reviews 0014 cannot be undone" in str(error)
        return True
    return False


def test_undoing_is_refused_while_a_reply_or_an_unqueued_question_would_be_lost(
    owner: Any, reviewer: Any
) -> None:
    Document.objects.create(key="pricing", owner=owner, allowed_principals=["*"])
    [item] = bulk_held(1)
    question = OwnerQuestion.objects.create(answer_id=item.answer_id, asked_by=reviewer,
                                            asked_at=timezone.now(), note="Which applies?")
    ReviewItem.objects.filter(pk=item.pk).update(waiting_for_owner=True,
                                                 owner_question=question)
    assert not undo_refused()  # the queue entry's columns can hold it

    OwnerQuestion.objects.filter(pk=question.pk).update(reply="14 days", replied_by=owner,
                                                        replied_at=timezone.now())
    assert undo_refused()

    OwnerQuestion.objects.filter(pk=question.pk).update(reply="", replied_by=None,
                                                        replied_at=None)
    ReviewItem.objects.filter(pk=item.pk).update(waiting_for_owner=False, owner_question=None)
    assert undo_refused()  # asked about an answer that left the queue
