"""A hand-built set of answers, verdicts and decisions whose figures are known in advance.

The records are written straight through the ORM, with the timestamps the scenario needs:
the point is to check the arithmetic of the metrics, not the flows that produce the records
(those have their own tests).
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _allow_orm_next_to_playwright(request: pytest.FixtureRequest,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Browser tests: Playwright's sync API runs an event loop, and Django refuses ORM calls
    made where one runs. Set for these tests only, so it never reaches another test (or a
    subprocess one starts, such as `check --deploy`, which rightly refuses the variable)."""
    if request.node.get_closest_marker("browser"):
        monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


SECRET_TEXT = "Secret answer text that must never reach a metric"
SECRET_QUESTION = "Secret question that must never reach a metric"
_ids = itertools.count(1)


def at(day: int, hour: int = 9, minute: int = 0) -> dt.datetime:
    """A moment in October 2026, UTC."""
    return dt.datetime(2026, 10, day, hour, minute, tzinfo=dt.UTC)


def used(*cites: str, withdrawn: str = "") -> list[dict[str, Any]]:
    return [{"cite": c, "document": f"doc-{c}", "revision": "r1",
             "current": None if c == withdrawn else "r1", **({"withdrawn": True}
                                                             if c == withdrawn else {})}
            for c in cites]


def finding(code: str, cite: str | None = None) -> dict[str, Any]:
    return {"code": code, "step": "4", "claim": 0, "evidence": [cite] if cite else [],
            "message": f"{code} {cite or ''}", "kb_documents": []}


def warning(code: str, *cites: str) -> dict[str, Any]:
    return {"code": code, "claim": None, "evidence": list(cites), "message": code}


def backdate(model: Any, pk: int, when: dt.datetime) -> None:
    """Give an append-only row (a verdict, a decision) the time it happened in the scenario,
    with the database's append-only triggers off for that one statement, as an owner of the
    database could; the application never does."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        model.objects.filter(pk=pk).update(created_at=when)
        cursor.execute("SET LOCAL session_replication_role = origin")


@dataclass
class Builder:
    reviewer: Any
    answers: dict[str, Any] = field(default_factory=dict)

    def answer(self, trace_id: str, *, when: dt.datetime, decision: str = "candidate",
               reason: str = "supported", release: str = "2026.10",
               reasons: list[str] | None = None, findings: list[dict[str, Any]] | None = None,
               warnings: list[dict[str, Any]] | None = None,
               revisions_used: list[dict[str, Any]] | None = None,
               next_boundary: dt.date | None = None) -> Any:
        from reviewqueue.reviews.models import Answer, AnswerVersion, Verdict

        status = {"candidate": "candidate", "review": "held", "abstain": "abstained"}[decision]
        answer = Answer.objects.create(
            trace_id=trace_id, question=SECRET_QUESTION, asked_by=["user:customer"],
            index_release=release, status=status, status_changed_at=when,
            body_digest="0" * 64,
        )
        version = AnswerVersion.objects.create(answer=answer, number=1, text=SECRET_TEXT,
                                               claims=[{"key": "k", "value": 1, "cite": "d1"}])
        verdict = Verdict.objects.create(
            answer=answer, version=version, decision=decision, reason=reason,
            reasons=reasons if reasons is not None else ([] if decision == "candidate"
                                                          else [reason]),
            findings=findings or [], warnings=warnings or [],
            fingerprint=f"{next(_ids):064d}", gate_version="test", as_of=when.date(),
            next_boundary=next_boundary,
            revisions_used=revisions_used if revisions_used is not None else used("d1"),
            trigger="ingest",
        )
        Answer.objects.filter(pk=answer.pk).update(created_at=when, current_verdict=verdict,
                                                   current_version=version)
        backdate(AnswerVersion, version.pk, when)
        backdate(Verdict, verdict.pk, when)
        answer.refresh_from_db()
        self.answers[trace_id] = answer
        return answer

    def later_verdict(self, answer: Any, *, when: dt.datetime, decision: str,
                      reason: str, trigger: str = "revision") -> Any:
        from reviewqueue.reviews.models import Verdict

        verdict = Verdict.objects.create(
            answer=answer, version=answer.current_version, decision=decision, reason=reason,
            reasons=[reason], fingerprint=f"{next(_ids):064d}", gate_version="test",
            as_of=when.date(), revisions_used=used("d1"), trigger=trigger,
        )
        backdate(Verdict, verdict.pk, when)
        return verdict

    def decide(self, answer: Any, action: str, *, when: dt.datetime,
               read_passages: bool = False, verdict: Any = None,
               gate_on_edit: str = "candidate") -> Any:
        """`gate_on_edit`: the verdict on an edit's new version; "review" keeps it held."""
        from reviewqueue.reviews.models import AnswerVersion, Decision, Verdict

        new_version = None
        if action == "edit":
            new_version = AnswerVersion.objects.create(
                answer=answer, number=answer.versions.count() + 1, text=SECRET_TEXT,
                claims=[{"key": "k", "value": 2, "cite": "d1"}])
            Verdict.objects.create(
                answer=answer, version=new_version, decision=gate_on_edit,
                reason="supported" if gate_on_edit == "candidate" else "conflicting_sources",
                fingerprint=f"{next(_ids):064d}", gate_version="test", as_of=when.date(),
                revisions_used=used("d1"), trigger="edit")
        decision = Decision.objects.create(
            answer=answer, verdict=verdict or answer.current_verdict,
            version=answer.current_version, action=action, reviewer=self.reviewer,
            reject_reason="wrong_value" if action == "reject" else "",
            read_passages=read_passages, comment=SECRET_TEXT, new_version=new_version,
        )
        backdate(Decision, decision.pk, when)
        return decision

    def queue(self, answer: Any, *, entered: dt.datetime, sample: bool = False,
              owner: bool = False) -> Any:
        from reviewqueue.reviews.models import OwnerQuestion, ReviewItem

        question = (OwnerQuestion.objects.create(answer=answer, asked_by=self.reviewer,
                                                 asked_at=entered, note="Which applies?")
                    if owner else None)
        return ReviewItem.objects.create(
            answer=answer, entered_at=entered, primary_reason=answer.current_verdict.reason,
            reasons=answer.current_verdict.reasons, index_release=answer.index_release,
            audit_sample=sample, waiting_for_owner=owner, owner_question=question,
        )


@pytest.fixture
def build(reviewer: Any) -> Builder:
    return Builder(reviewer=reviewer)


@pytest.fixture
def scenario(build: Builder) -> Builder:
    """Twelve answers received 5 and 6 October 2026 in two index releases, plus noise that
    the figures must ignore. The expected values are worked out in test_metrics.py."""
    b = build
    # Release 2026.09, 5 October: three held, one candidate.
    a1 = b.answer("a1", when=at(5), decision="review", reason="conflicting_sources",
                  release="2026.09", warnings=[warning("single_source", "d1")])
    a2 = b.answer("a2", when=at(5), decision="review", reason="conflicting_sources",
                  release="2026.09", revisions_used=used("d1", "d2", "d3"),
                  warnings=[warning("uncited_evidence", "d3")])
    a3 = b.answer("a3", when=at(5), decision="review", reason="superseded_revision",
                  release="2026.09")
    b.answer("a4", when=at(5), release="2026.09", warnings=[warning("single_source", "d1")])
    b.decide(a1, "approve", when=at(5, 10), read_passages=True)
    b.decide(a2, "edit", when=at(5, 11))
    b.decide(a3, "reject", when=at(5, 12), read_passages=True)

    # Release 2026.10, 6 October: two held, three abstained, three candidates.
    b1 = b.answer("b1", when=at(6), decision="review", reason="noncurrent_citation")
    b.answer("b2", when=at(6), decision="review", reason="invalid_metadata")
    b.answer("b3", when=at(6), decision="abstain", reason="unknown_citation",
             findings=[finding("unknown_citation", "d9")])
    b.answer("b4", when=at(6), decision="abstain", reason="unknown_citation",
             revisions_used=used("d1", withdrawn="d1"),
             findings=[finding("unknown_citation", "d1")])
    b.answer("b5", when=at(6), decision="abstain", reason="uncited_answer",
             revisions_used=used("d1", "d2"),
             warnings=[warning("uncited_evidence", "d1"), warning("uncited_evidence", "d2")])
    b6 = b.answer("b6", when=at(6))
    b7 = b.answer("b7", when=at(6))
    b.answer("b8", when=at(6))
    b.decide(b1, "approve", when=at(6, 13), read_passages=True)
    b.decide(b1, "reject", when=at(6, 15))  # a second decision: not the first
    b.decide(b6, "reject", when=at(6, 10))  # audit sample, rejected
    b.decide(b7, "approve", when=at(6, 10), read_passages=True)  # audit sample, approved

    # Noise: outside the window, and a re-evaluation verdict that is not a first verdict.
    b.answer("old", when=at(1), decision="review", reason="conflicting_sources",
             release="2026.08")
    b.later_verdict(b.answers["b8"], when=at(6, 20), decision="review",
                    reason="conflicting_sources")
    return b
