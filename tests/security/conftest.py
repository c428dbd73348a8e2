"""Fixtures for the security suite: a small world every role can be pointed at, and the
figures the closing note of issue 8 asks for (printed at the end of the run)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

# Figures each test module adds to; printed by pytest_terminal_summary.
FIGURES: Counter[str] = Counter()

PASSWORD = "pw-for-tests-only"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.write_sep("-", "security figures")
        for name, value in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{name}: {value}")


@pytest.fixture(autouse=True)
def _async_switch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # Playwright's sync API runs an event loop in this thread; the ORM refuses to run next to
    # one unless told. Only for browser tests, so it never leaks into other tests.
    if request.node.get_closest_marker("browser"):
        monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def days(n: int) -> str:
    return (dt.date.today() + dt.timedelta(days=n)).isoformat()


def fact(key: str, value: Any, *, span: str = "p1", start: int = -30, end: int = 60
         ) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": days(start), "valid_until": days(end),
            "span": span}


def revision(*, owner: str, title: str, principals: list[str], passages: list[dict[str, str]],
             facts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"title": title, "url": "https://docs.example.test/x", "owner": owner,
            "updated_at": "2026-10-01T09:00:00Z", "allowed_principals": principals,
            "passages": passages, "facts": facts}


def held_answer(trace_id: str, retrieved: list[tuple[str, str]], *, question: str,
                text: str, asked_by: list[str], value: Any = 14) -> dict[str, Any]:
    return {
        "trace_id": trace_id,
        "question": question,
        "answer": text,
        "asked_by": asked_by,
        "index_release": "2026.10",
        "retrieved": [{"cite": cite, "document_id": doc, "revision": "r1", "span": "p1"}
                      for cite, doc in retrieved],
        "claims": [{"key": "trial_days", "value": value, "cite": retrieved[0][0]}],
    }


@dataclass
class World:
    users: dict[str, Any] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    conflict_id: int = 0
    hr_conflict_id: int = 0
    job_id: str = ""
    endpoint_id: int = 0
    deactivated_session: str = ""


def api_client(token: str | None = None) -> Any:
    from rest_framework.test import APIClient

    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def build_world(service_token_scopes: list[str] | None = None) -> World:
    """Documents owned by olivia (two public ones that disagree, one HR-only), a held public
    answer, a held HR answer, the conflicts between them, a job and a webhook endpoint."""
    from reviewqueue.accounts.models import Role
    from reviewqueue.accounts.services import token_issue, user_create_or_update
    from reviewqueue.audit.services import SYSTEM, Actor
    from reviewqueue.jobs.services import job_start_for_document
    from reviewqueue.reviews.models import Verdict
    from reviewqueue.sources.models import Conflict
    from reviewqueue.webhooks.models import WebhookEndpoint

    world = World()
    for name, role, groups in [
        ("alice", "reviewer", ()), ("hana", "reviewer", ("hr",)), ("olivia", "owner", ()),
        ("oscar", "owner", ()), ("ada", "admin", ()), ("rag-service", "service", ()),
        ("dora", "reviewer", ()),
    ]:
        world.users[name] = user_create_or_update(
            username=name, role=Role(role), groups=list(groups), password=PASSWORD, actor=SYSTEM)
    for name in ("rag-service", "alice", "hana", "ada", "olivia", "oscar", "dora"):
        world.tokens[name] = token_issue(user=world.users[name], actor=SYSTEM)

    service = api_client(world.tokens["rag-service"])

    def put(key: str, body: dict[str, Any]) -> None:
        response = service.put(f"/api/v1/documents/{key}/revisions/r1", body, format="json")
        assert response.status_code in (200, 201), response.content

    put("pricing", revision(owner="olivia", title="Pricing", principals=["*"],
                            passages=[{"span": "p1", "text": "The trial lasts 14 days."}],
                            facts=[fact("trial_days", 14)]))
    put("pricing-eu", revision(owner="olivia", title="Pricing EU", principals=["*"],
                               passages=[{"span": "p1", "text": "EU trial: 30 days."}],
                               facts=[fact("trial_days", 30)]))
    put("hr-handbook", revision(owner="olivia", title="HR handbook", principals=["group:hr"],
                                passages=[{"span": "p1", "text": "Probation is 90 days."}],
                                facts=[fact("probation_days", 90)]))
    put("hr-policy", revision(owner="olivia", title="HR policy", principals=["group:hr"],
                              passages=[{"span": "p1", "text": "Probation is 60 days."}],
                              facts=[fact("probation_days", 60)]))
    for trace_id, retrieved, asked_by, value in [
        ("t-public", [("d1", "pricing"), ("d2", "pricing-eu")], ["*"], 14),
        ("t-hr", [("d1", "hr-handbook"), ("d2", "hr-policy")], ["group:hr"], 90),
    ]:
        body = held_answer(trace_id, retrieved, question="How long?", text="It lasts [d1].",
                           asked_by=asked_by, value=value)
        if trace_id == "t-hr":
            body["claims"][0]["key"] = "probation_days"
        response = service.post("/api/v1/answers", body, format="json")
        assert response.status_code == 201 and response.json()["status"] == "held", \
            response.content
    world.conflict_id = Conflict.objects.get(documents__contains=["pricing"]).pk
    world.hr_conflict_id = Conflict.objects.get(documents__contains=["hr-handbook"]).pk
    job = job_start_for_document(document_key="pricing", trigger=Verdict.Trigger.MANUAL,
                                 actor=Actor.of_user(world.users["ada"]),
                                 user=world.users["ada"])
    world.job_id = str(job.pk)
    world.endpoint_id = WebhookEndpoint.objects.create(
        url="https://hooks.example.test/rq", secret="s" * 32, description="test",
        created_by=world.users["ada"]).pk
    # dora signs in, then is deactivated: her session and token must stop working.
    from django.test import Client

    from reviewqueue.accounts.services import user_deactivate

    browser = Client()
    browser.force_login(world.users["dora"])
    world.deactivated_session = browser.cookies["sessionid"].value
    user_deactivate(user=world.users["dora"], actor=SYSTEM)
    return world


@pytest.fixture(scope="module")
def world(django_db_setup: Any, django_db_blocker: Any) -> Iterator[World]:
    """Built once per module and committed; each test still runs in a transaction that is
    rolled back, so actions under test do not leak into the next one. Flushed at the end."""
    from django.core.management import call_command

    with django_db_blocker.unblock():
        from reviewqueue.celery import app

        previous = app.conf.task_always_eager
        app.conf.task_always_eager = True
        try:
            built = build_world()
        finally:
            app.conf.task_always_eager = previous
    yield built
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)
