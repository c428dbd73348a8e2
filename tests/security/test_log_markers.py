"""Logs carry ids, reasons and timings — never passage text, answer text, comments or tokens.

Unique markers are planted in everything that must not be logged; the main flows run (publish,
ingest, review decisions on the API and the pages, re-evaluation, webhooks, refused payloads,
bad tokens, failed sign-ins); every log record is then rendered the way production renders it
(the JSON formatter) and the way a traceback-printing handler would, and no marker may appear.
"""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from tests.conftest import answer_body, revision_body
from tests.security.conftest import FIGURES, days

PREFIX = "ZZMARK"


class Markers:
    def __init__(self) -> None:
        self.planted: dict[str, str] = {}

    def __call__(self, kind: str) -> str:
        value = f"{PREFIX}{kind.upper()}{uuid.uuid4().hex[:12]}"
        self.planted[value] = kind
        return value


class EverythingHandler(logging.Handler):
    """Keeps every record, formatted as the JSON log line and as plain text with traceback."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        from reviewqueue.logs import JsonFormatter, RequestIdFilter

        self.json = JsonFormatter()
        self.plain = logging.Formatter("%(name)s %(levelname)s %(message)s")
        self.addFilter(RequestIdFilter())
        self.stream = io.StringIO()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.stream.write(self.json.format(record) + "\n")
        self.stream.write(self.plain.format(record) + "\n")
        # Anything a handler could print from the record: args and extra attributes.
        self.stream.write(repr(record.args) + repr(vars(record).get("msg")) + "\n")


@pytest.fixture
def captured() -> Iterator[EverythingHandler]:
    handler = EverythingHandler()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def _fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": days(-30), "valid_until": days(60),
            "span": "p1"}


def test_no_marker_reaches_the_logs(
    db: Any, captured: EverythingHandler, make_user: Callable[..., Any],
    token_client: Callable[..., Any], django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.accounts.models import ApiToken
    from reviewqueue.accounts.services import token_rotate, tokens_revoke
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.reviews.models import Answer
    from reviewqueue.webhooks.models import WebhookDelivery, WebhookEndpoint

    mark = Markers()
    make_user("olivia", "owner")
    service_user = make_user("rag-service", "service")
    reviewer = make_user("alice", "reviewer")
    service = token_client(service_user)
    mark.planted[service.raw_token] = "token"
    reviewer_api = token_client(reviewer)
    mark.planted[reviewer_api.raw_token] = "token"
    reviewer_page = Client()
    reviewer_page.force_login(reviewer)
    # Deliveries are attempted (and refused: an internal address) in process.
    WebhookEndpoint.objects.create(url="http://127.0.0.1:9/hook", secret="k" * 32)

    def run(call: Callable[[], Any]) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return call()

    def publish(key: str, rev: str, value: Any, passage: str, title: str = "Pricing") -> None:
        body = revision_body(title=title, facts=[_fact("trial_days", value)],
                             passages=[{"span": "p1", "text": passage}])
        body["note"] = mark("note")
        response = run(lambda: service.put(f"/api/v1/documents/{key}/revisions/{rev}", body,
                                           format="json"))
        assert response.status_code in (200, 201), response.content

    # 1. Publish two disagreeing documents whose passages carry markers.
    publish("pricing", "r1", 14, f"Trial is 14 days. {mark('passage')}")
    publish("pricing-eu", "r1", 30, f"EU trial is 30 days. {mark('passage')}")

    # 2. Ingest held answers with marked questions and texts.
    def submit(trace_id: str) -> None:
        body = answer_body(trace_id, answer=f"It is 14 days [d1]. {mark('answer')}",
                           retrieved=[
                               {"cite": "d1", "document_id": "pricing", "revision": "r1",
                                "span": "p1"},
                               {"cite": "d2", "document_id": "pricing-eu", "revision": "r1",
                                "span": "p1"}],
                           asked_by=["*"], as_of=None)
        body["question"] = f"How long? {mark('question')}"
        response = run(lambda: service.post("/api/v1/answers", body, format="json"))
        assert response.status_code == 201 and response.json()["status"] == "held", \
            response.content

    for trace_id in ("t-approve", "t-reject", "t-edit", "t-page"):
        submit(trace_id)

    def verdict(trace_id: str) -> int:
        return Answer.objects.get(trace_id=trace_id).current_verdict_id

    # 3. Decisions over the API, with marked comments and an edited text.
    for trace_id, body in [
        ("t-approve", {"action": "approve", "comment": mark("comment")}),
        ("t-reject", {"action": "reject", "reason": "other", "comment": mark("comment")}),
        ("t-edit", {"action": "edit", "comment": mark("comment"),
                    "answer": f"It is 14 days [d1]. {mark('answer')}",
                    "claims": [{"key": "trial_days", "value": 14, "cite": "d1"}]}),
    ]:
        run(lambda t=trace_id: reviewer_api.post(f"/api/v1/answers/{t}/claim"))
        response = run(lambda t=trace_id, b=body: reviewer_api.post(
            f"/api/v1/answers/{t}/decisions", {**b, "verdict": verdict(t)}, format="json"))
        assert response.status_code in (201, 400, 409), response.content

    # ... and on the item page, including a refused form.
    run(lambda: reviewer_page.post("/answers/t-page/claim"))
    response = run(lambda: reviewer_page.post("/answers/t-page/decide", {
        "action": "reject", "reject-verdict": verdict("t-page"), "reject-reason": "",
        "reject-comment": mark("comment")}))
    assert response.status_code == 400
    response = run(lambda: reviewer_page.post("/answers/t-page/decide", {
        "action": "approve", "approve-verdict": verdict("t-page"),
        "approve-comment": mark("comment")}))
    assert response.status_code in (302, 409)

    # 4. A new revision: every answer citing it is re-evaluated (eagerly, after commit).
    publish("pricing", "r2", 21, f"Trial is now 21 days. {mark('passage')}")

    # 5. Refused payloads that carry markers: unknown field, bad principal, conflict, too big.
    bad = answer_body("t-bad", answer=mark("answer"))
    bad[mark("field")] = mark("answer")
    assert run(lambda: service.post("/api/v1/answers", bad, format="json")).status_code == 400
    bad = answer_body("t-bad2", answer=mark("answer"), asked_by=[mark("principal")])
    assert run(lambda: service.post("/api/v1/answers", bad, format="json")).status_code == 400
    clash = answer_body("t-approve", answer=mark("answer"))
    assert run(lambda: service.post("/api/v1/answers", clash, format="json")).status_code == 409
    batch = {"answers": [answer_body("t-b1", answer=mark("answer"), claims=[]),
                         {"trace_id": "t-b2", "question": mark("question")}]}
    assert run(lambda: service.post("/api/v1/answers/batch", batch,
                                    format="json")).status_code == 200
    huge = json.dumps(answer_body("t-huge", answer=mark("answer") + "x" * 6_000_000))
    response = run(lambda: service.post("/api/v1/answers", huge,
                                        content_type="application/json"))
    assert response.status_code == 413
    bad_revision = revision_body(passages=[{"span": "p1", "text": mark("passage")}],
                                 principals=[mark("principal")])
    assert run(lambda: service.put("/api/v1/documents/pricing/revisions/r9", bad_revision,
                                   format="json")).status_code == 400
    assert run(lambda: reviewer_api.post(
        "/api/v1/answers/t-edit/decisions",
        {"action": "approve", "verdict": 1, "comment": mark("comment"),
         "answer": mark("answer")}, format="json")).status_code == 400
    assert run(lambda: reviewer_api.post(
        "/api/v1/answers/t-edit/decisions", "{" + mark("answer"),
        content_type="application/json")).status_code == 400
    assert reviewer_page.get(f"/?document={mark('query')}").status_code in (200, 400)

    # 6. Tokens: unknown, revoked and rotated ones; a failed sign-in with a marked password.
    stranger = token_client(service_user)
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {mark('token')}")
    assert stranger.get("/api/v1/answers/t-approve").status_code == 401
    first = ApiToken.objects.filter(user=service_user, revoked_at__isnull=True).earliest("id")
    rotated = token_rotate(user=service_user, actor=SYSTEM, prefix=first.prefix)  # `service`'s
    mark.planted[rotated] = "token"
    assert service.get("/api/v1/answers/t-approve").status_code == 401
    tokens_revoke(actor=SYSTEM, user=service_user)
    anonymous = Client()
    anonymous.post("/accounts/login/", {"username": "alice", "password": mark("password")})

    # The webhooks were recorded, and their bodies carry ids only.
    deliveries = list(WebhookDelivery.objects.values_list("payload", flat=True))
    assert deliveries
    payloads = json.dumps(deliveries)
    assert PREFIX not in payloads

    # The capture itself works: a marker logged on purpose is found.
    canary = f"{PREFIX}CANARY{uuid.uuid4().hex}"
    logging.getLogger("reviewqueue.test").debug("canary", extra={"note": canary})
    logs = captured.stream.getvalue()
    assert canary in logs
    leaked = sorted({kind for value, kind in mark.planted.items() if value in logs})
    FIGURES["log records checked for markers"] += captured.count
    FIGURES["markers planted"] += len(mark.planted)
    assert captured.count > 0
    assert leaked == [], "\n".join(line for line in logs.splitlines()
                                   if any(v in line for v in mark.planted))[:4000]
