"""COPY is told each column's type, and what it writes reads back as it was given."""

from __future__ import annotations

import datetime as dt

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.copying import FEW, _plan, built, copy_instances
from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, ReviewItem, Verdict

AWKWARD = ["a,b", 'c"d', "{e}", "NULL", "", "back\\slash", "tab\there", "line\nbreak", "日本語",
           " spaced "]


@pytest.mark.parametrize("model", [Answer, AnswerVersion, RetrievedItem, Verdict, ReviewItem,
                                   AuditEvent], ids=lambda m: m.__name__)
def test_every_table_a_batch_copies_into_has_its_column_types(model: type) -> None:
    # Without them psycopg picks a writer for every value, looking inside every list.
    for with_pk in (True, False):
        assert _plan(model, with_pk).copy_types is not None


@pytest.mark.django_db
def test_values_copied_with_their_types_read_back_as_given() -> None:
    now = dt.datetime(2026, 12, 7, 9, 30, 15, 123456, tzinfo=dt.UTC)
    answers = [
        built(Answer, id=9_000 + i, trace_id=f"copy-{i}", question=AWKWARD[i % len(AWKWARD)],
              asked_by=[*AWKWARD[i:], AWKWARD[i % len(AWKWARD)]], index_release="r",
              as_of=dt.date(2026, 1, 1 + i) if i % 2 else None, status_changed_at=now,
              body_digest="d" * 64, current_version_id=None, current_verdict_id=None)
        for i in range(FEW + 2)
    ]
    copy_instances(answers)
    stored = {a.id: a for a in Answer.objects.filter(trace_id__startswith="copy-")}
    assert len(stored) == len(answers)
    for given in answers:
        got = stored[given.id]
        assert (got.question, got.asked_by, got.as_of, got.status_changed_at) == (
            given.question, given.asked_by, given.as_of, now)
