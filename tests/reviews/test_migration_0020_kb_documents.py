"""Reviews 0020 gives each queue entry the documents its hold rests on through the knowledge
base, and fills them in for the entries already queued from their answer's current verdict:
what the services write from now on (transitions.kb_documents_of), so that the owner inbox
counts the answers held that way before the migration as it counts those held after it."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.db import connection

from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.reviews.services.transitions import kb_documents_of

pytestmark = pytest.mark.django_db

FILL = importlib.import_module("reviewqueue.reviews.migrations.0020_review_item_kb_documents").FILL


def fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}


def held(submit: Any, trace_id: str, document: str) -> ReviewItem:
    response = submit(trace_id, as_of=None,
                      claims=[{"key": "trial_days", "value": 14, "cite": "d1"}],
                      retrieved=[{"cite": "d1", "document_id": document, "revision": "r1",
                                  "span": "p1"}])
    assert response.json()["status"] == "held", response.json()
    return ReviewItem.objects.get(answer__trace_id=trace_id)


def test_the_entries_queued_before_get_the_documents_their_verdict_names(
    publish: Any, submit: Any,
) -> None:
    publish("faq", facts=[fact("refund_days", 30)])
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("pricing-eu", facts=[fact("trial_days", 30)])
    through_kb = held(submit, "kb1", "faq")
    cited = held(submit, "cited", "pricing")
    # What ingest wrote: the conflict's documents neither cites, sorted, once each.
    assert through_kb.kb_documents == ["pricing", "pricing-eu"]
    assert cited.kb_documents == ["pricing-eu"]
    for item in (through_kb, cited):
        verdict = Answer.objects.get(pk=item.answer_id).current_verdict
        assert item.kb_documents == kb_documents_of(verdict.findings)

    # As before the migration: the column empty everywhere, then filled in.
    ReviewItem.objects.update(kb_documents=[])
    with connection.cursor() as cursor:
        cursor.execute(FILL)

    assert dict(ReviewItem.objects.values_list("answer__trace_id", "kb_documents")) == {
        "kb1": ["pricing", "pricing-eu"], "cited": ["pricing-eu"]}
