"""Helpers for the audit tests: a small chain, a switch that lets a test tamper with history
the way someone with direct database access could, and a fast bulk loader for big chains."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


@pytest.fixture
def chain(db: Any) -> Callable[[int], list[Any]]:
    """Append n events through audit_record, as the application does."""
    from django.db import transaction

    from reviewqueue.audit.services import WORKER, audit_record

    def append(n: int = 6) -> list[Any]:
        events = []
        for i in range(n):
            with transaction.atomic():
                events.append(audit_record(
                    actor=WORKER, action="verdict.created", object_type="answer",
                    object_id=f"t-{i}", trace_id=f"t-{i}",
                    before={"status": "held", "step": i},
                    after={"status": "candidate", "step": i + 1},
                ))
        return events

    return append


@contextmanager
def tampering() -> Iterator[Any]:
    """Run raw SQL with the append-only triggers switched off for this transaction only, as
    an attacker with superuser access could. The test database user is a superuser."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        try:
            yield cursor
        finally:
            # SET LOCAL lasts to the end of the outer (test) transaction, not the savepoint.
            cursor.execute("SET LOCAL session_replication_role = origin")


@pytest.fixture
def tamper() -> Callable[[], Any]:
    return tampering


def verify() -> Any:
    from reviewqueue.audit.services import audit_verify

    return audit_verify(trigger="command", requested_by="test")


@pytest.fixture
def reviewer_client(reviewer: Any) -> Any:
    from django.test import Client

    client = Client()
    client.force_login(reviewer)
    return client


COPY_COLUMNS = ("seq", "created_at", "actor_type", "actor", "action", "object_type",
                "object_id", "trace_id", "document_id", "request_id", "before", "after",
                "prev_hash", "hash")


def bulk_append(count: int, *, start: dt.datetime | None = None) -> None:
    """Append `count` events with a correct chain computed here, loaded with COPY: a hundred
    thousand events take a couple of seconds instead of minutes through audit_record."""
    from django.db import connection

    from reviewqueue.audit.hashing import GENESIS_HASH, event_hash, hashed_fields_of
    from reviewqueue.audit.models import AuditEvent

    tail = AuditEvent.objects.order_by("-seq").values_list("seq", "hash", "created_at").first()
    seq, prev_hash = (tail[0], tail[1]) if tail else (0, GENESIS_HASH)
    moment = start or (tail[2] if tail else dt.datetime(2026, 10, 1, tzinfo=dt.UTC))
    columns = ", ".join(COPY_COLUMNS)
    with connection.cursor() as cursor, cursor.cursor.copy(
        f"COPY audit_auditevent ({columns}) FROM STDIN"
    ) as copy:
        for _ in range(count):
            seq += 1
            moment += dt.timedelta(milliseconds=3)
            row = {
                "seq": seq, "created_at": moment, "actor_type": "worker", "actor": "worker",
                "action": "verdict.created", "object_type": "answer",
                "object_id": f"bulk-{seq}", "trace_id": f"bulk-{seq}", "document_id": "",
                "request_id": "", "before": {"status": "held", "verdict": seq},
                "after": {"status": "candidate", "verdict": seq + 1, "cause": "revision"},
            }
            digest = event_hash(hashed_fields_of(row), prev_hash)
            copy.write_row([
                seq, moment, "worker", "worker", row["action"], "answer", row["object_id"],
                row["trace_id"], "", "", json.dumps(row["before"]), json.dumps(row["after"]),
                prev_hash, digest,
            ])
            prev_hash = digest


@pytest.fixture
def bulk() -> Callable[..., None]:
    return bulk_append


PASSAGE_TEXT = "Secret passage: the free trial lasts 14 days for everyone."
ANSWER_TEXT = "Secret answer text: the trial lasts 14 days [d1] or 30 days [d2]."


@pytest.fixture
def answer_story(
    publish: Callable[..., Any], submit: Callable[..., Any], reviewer: Any,
    django_capture_on_commit_callbacks: Any,
) -> Callable[[str], Any]:
    """An answer held on arrival for conflicting sources, re-evaluated when one source
    published a new revision, then approved by a reviewer: two verdicts, one decision."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.models import Answer
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    def fact(value: int) -> list[dict[str, Any]]:
        return [{"key": "trial_days", "value": value, "valid_from": "2026-01-01",
                 "valid_until": None, "span": "p1"}]

    def tell(trace_id: str = "t-story", comment: str = "") -> Any:
        passages = [{"span": "p1", "text": PASSAGE_TEXT}]
        with django_capture_on_commit_callbacks(execute=True):
            publish("pricing", "r1", facts=fact(14), passages=passages)
            publish("pricing-eu", "r1", facts=fact(30), passages=passages)
        response = submit(trace_id, answer=ANSWER_TEXT, as_of=None, retrieved=[
            {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
            {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
        ], claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
        assert response.json()["status"] == "held", response.content
        with django_capture_on_commit_callbacks(execute=True):
            publish("pricing-eu", "r2", facts=fact(21), passages=passages)
        answer = Answer.objects.get(trace_id=trace_id)
        assert answer.status == "held"
        answer_decide(trace_id=trace_id, user=reviewer, actor=Actor.of_user(reviewer),
                      data=DecisionInput(action="approve", verdict_id=answer.current_verdict_id,
                                         comment=comment))
        answer.refresh_from_db()
        assert answer.status == "approved"
        return answer

    return tell


@pytest.fixture
def edited_answer(publish: Callable[..., Any], submit: Callable[..., Any], reviewer: Any) -> Any:
    """t-1, held for conflicting sources, then edited by a reviewer: version 1 as submitted,
    version 2 the reviewer's. Returns the decision's result (decision, verdict)."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.models import Answer
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    for document, days in (("pricing", 14), ("pricing-eu", 30)):
        publish(document, "r1", facts=[{"key": "trial_days", "value": days, "span": "p1",
                                        "valid_from": "2026-01-01", "valid_until": None}])
    assert submit("t-1", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
    ]).json()["status"] == "held"
    answer = Answer.objects.get(trace_id="t-1")
    return answer_decide(trace_id="t-1", user=reviewer, actor=Actor.of_user(reviewer),
                         data=DecisionInput(action="edit", verdict_id=answer.current_verdict_id,
                                            text="In the US the trial lasts 14 days [d1].",
                                            claims=[{"key": "trial_days", "value": 14,
                                                     "cite": "d1"}]))


def body_shown(client: Any, payload: Any) -> str:
    """The quarantined body as the admin page shows it to `client`'s admin (HTML-escaped)."""
    page = client.get(f"/admin/audit/quarantinedpayload/{payload.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    start = html.index('<pre class="quarantined-body">')
    return str(html[start:html.index("</pre>", start)])
