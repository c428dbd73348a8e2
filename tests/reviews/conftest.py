"""Fixtures for the reviewer's workspace: personas, sources valid today, held answers.

Dates are relative to today: decisions are checked against today's sources, so a fact that
expired last month would make every verdict stale.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tests.conftest import answer_body

HR_MARKER = "ZEBRA-7781-HR-ONLY"


def days(n: int) -> str:
    return (timezone.localdate() + dt.timedelta(days=n)).isoformat()


def fact(key: str = "trial_days", value: Any = 14, *, span: str = "p1", start: int = -30,
         end: int | None = 60, subject: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {"key": key, "value": value, "valid_from": days(start),
                            "valid_until": days(end) if end is not None else None, "span": span}
    if subject:
        body["subject"] = subject
    return body


def owner_corrects(key: str, owner: Any, value: Any, passage: str, note: str) -> None:
    """The owner corrects the one fact of the document's current revision to `value`, and its
    passage p1 to `passage`, from the owner's pages (a new revision, published as any other)."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.sources.models import Document
    from reviewqueue.sources.services import FactEdit, revision_publish_corrected

    document = Document.objects.get(key=key)
    trial = document.current_revision.facts.get()
    revision_publish_corrected(
        document=document, note=note, actor=Actor.of_user(owner), user=owner,
        edits=[FactEdit(fact_id=trial.pk, value=value, valid_from=trial.valid_from,
                        valid_until=trial.valid_until)],
        passages={"p1": passage})



@pytest.fixture
def bob(make_user: Callable[..., Any]) -> Any:
    return make_user("bob", "reviewer")


@pytest.fixture
def login() -> Callable[[Any], Client]:
    def do(user: Any, **headers: Any) -> Client:
        client = Client(**headers)
        client.force_login(user)
        return client

    return do


@pytest.fixture
def sources(publish: Callable[..., Any]) -> None:
    """Two public pricing documents that disagree on the trial length; `pricing` also states
    the support hours, which nobody disputes."""
    publish("pricing", facts=[fact("trial_days", 14), fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                      {"span": "p2", "text": "Support is available 24/7."}])
    publish("pricing-eu", title="Pricing in the EU", facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 days."}])


@pytest.fixture
def hold(sources: None, service_api: Any) -> Callable[..., str]:
    """Submit an answer the gate holds (by default for conflicting sources); returns its
    trace_id."""

    def do(trace_id: str = "t-1", *, question: str | None = None, **kwargs: Any) -> str:
        overrides: dict[str, Any] = {
            "retrieved": [
                {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
            ],
            "as_of": None,
        }
        overrides.update(kwargs)
        body = answer_body(trace_id, **overrides)
        if question is not None:
            body["question"] = question
        response = service_api.post("/api/v1/answers", body, format="json")
        assert response.status_code == 201, response.content
        assert response.json()["status"] == "held", response.json()
        return trace_id

    return do


@pytest.fixture
def hr_sources(publish: Callable[..., Any]) -> None:
    """An HR-only handbook whose passage carries a marker string nobody else may receive."""
    publish("hr-handbook", title="HR handbook", principals=["group:hr"],
            facts=[fact("trial_days", 90)],
            passages=[{"span": "p1", "text": f"Probation lasts 90 days. {HR_MARKER}"}])


def current_verdict_id(trace_id: str) -> int:
    from reviewqueue.reviews.models import Answer

    return Answer.objects.get(trace_id=trace_id).current_verdict_id


def bulk_held(n: int, *, documents: tuple[str, ...] = ("pricing",), reason: str =
              "conflicting_sources", release: str = "2026.10", prefix: str = "bulk",
              start: dt.datetime | None = None) -> list[Any]:
    """n held answers written straight to the tables (no gate run): for paging and counting."""
    from reviewqueue.reviews.models import (
        Answer,
        AnswerVersion,
        RetrievedItem,
        ReviewItem,
        Verdict,
    )

    now = start or timezone.now() - dt.timedelta(days=1)
    answers = Answer.objects.bulk_create([
        Answer(trace_id=f"{prefix}-{i}", question=f"Question {prefix} {i}?",
               asked_by=["*"], index_release=release, status="held", status_changed_at=now,
               body_digest="x")
        for i in range(n)
    ])
    versions = AnswerVersion.objects.bulk_create([
        AnswerVersion(answer=a, number=1, text="Answer [d1].",
                      claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
        for a in answers
    ])
    verdicts = Verdict.objects.bulk_create([
        Verdict(answer=a, version=v, decision="review", reason=reason, reasons=[reason],
                fingerprint=f"fp-{a.pk}", gate_version="test", as_of=now.date(),
                trigger="ingest")
        for a, v in zip(answers, versions, strict=True)
    ])
    for a, v, verdict in zip(answers, versions, verdicts, strict=True):
        a.current_version, a.current_verdict = v, verdict
    Answer.objects.bulk_update(answers, ["current_version", "current_verdict"])
    RetrievedItem.objects.bulk_create([
        RetrievedItem(answer=a, cite=f"d{j + 1}", document_key=key, revision="r1", span="p1")
        for a in answers for j, key in enumerate(documents)
    ])
    return ReviewItem.objects.bulk_create([
        ReviewItem(answer=a, entered_at=now + dt.timedelta(seconds=i), primary_reason=reason,
                   reasons=[reason], index_release=release)
        for i, a in enumerate(answers)
    ])
