"""A revision delivered late (older, by its `updated_at`, than one the store already has) is
kept but never replaces the newer one: the answers generated from it find it, the knowledge base
goes on saying what the newer revision says, the document keeps its owner, and the owner's page
and the audit log say so."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.accounts.services import user_deactivate
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM
from reviewqueue.reviews.models import Answer
from reviewqueue.sources.integrity import sources_check
from reviewqueue.sources.models import Document
from reviewqueue.sources.views import PASSAGE_FIELD
from tests.conftest import revision_body
from tests.sources.test_owner_input import publish_form

pytestmark = pytest.mark.django_db

NEWER = "2026-11-01T09:00:00Z"


def put(service_api: Any, revision: str, updated_at: str, **kwargs: Any) -> Any:
    body = dict(revision_body(**kwargs), updated_at=updated_at)
    return service_api.put(f"/api/v1/documents/pricing/revisions/{revision}", body,
                           format="json")


def days_fact(value: int) -> list[dict[str, Any]]:
    return [{"key": "trial_days", "value": value, "valid_from": "2026-01-01",
             "valid_until": None, "span": "p1"}]


def test_a_late_revision_is_kept_but_the_newer_one_stays_current(
    service_api: Any, owner: Any, client: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    assert put(service_api, "r2", NEWER, facts=days_fact(30)).status_code == 201
    # An answer generated from r1, which the store has not received yet: it waits for it.
    with django_capture_on_commit_callbacks(execute=True):
        submit("t-1", claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    waiting = Answer.objects.select_related("current_verdict").get(trace_id="t-1")
    assert waiting.current_verdict.reason == "invalid_metadata"

    with django_capture_on_commit_callbacks(execute=True):
        late = put(service_api, "r1", "2026-10-01T09:00:00Z", facts=days_fact(14))
    assert late.status_code == 201 and late.json()["current"] is False
    document = Document.objects.select_related("current_revision").get(key="pricing")
    assert document.current_revision.revision == "r2"
    # The answer found r1, and that r2 has replaced it.
    verdict = Answer.objects.select_related("current_verdict").get(
        trace_id="t-1").current_verdict
    assert (verdict.reason, verdict.trigger) == ("superseded_revision", "revision")

    event = AuditEvent.objects.filter(action="revision.published").latest("seq")
    assert event.after["revision"] == "r1" and event.after["current_revision"] == "r2"
    assert event.after["late_behind"] == "r2"
    assert sources_check().problems == []  # the late revision is the one logged

    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "received late: older than r2, so not made current" in page
    # The same body again is a replay, and still does not make it current.
    assert put(service_api, "r1", "2026-10-01T09:00:00Z", facts=days_fact(14)).status_code == 200
    assert Document.objects.get(key="pricing").current_revision.revision == "r2"
    # A newer revision after it: r1 was still received late, and History keeps saying so.
    assert put(service_api, "r3", "2026-12-01T09:00:00Z", facts=days_fact(30)).status_code == 201
    page = client.get("/owner/documents/pricing/").content.decode()
    assert page.count("data-late") == 1
    assert "received late: older than r2, so not made current" in page


def test_a_late_revision_naming_an_owner_who_has_left_since_is_kept_and_changes_no_owner(
    service_api: Any, owner: Any, make_user: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """r1 named olivia when it was written; r2, received first, handed the document to oscar,
    and olivia has left since. The document system's retried r1 still names her."""
    make_user("oscar", "owner")
    assert put(service_api, "r2", NEWER, owner="oscar", facts=days_fact(30)).status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        submit("t-1", claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    user_deactivate(user=owner, actor=SYSTEM)

    with django_capture_on_commit_callbacks(execute=True):
        late = put(service_api, "r1", "2026-10-01T09:00:00Z", owner="olivia",
                   facts=days_fact(14))
    assert late.status_code == 201, late.content
    assert late.json()["current"] is False
    document = Document.objects.select_related("current_revision", "owner").get(key="pricing")
    assert (document.current_revision.revision, document.owner.username) == ("r2", "oscar")
    # The answer generated from r1 no longer waits for it.
    verdict = Answer.objects.select_related("current_verdict").get(
        trace_id="t-1").current_verdict
    assert (verdict.reason, verdict.trigger) == ("superseded_revision", "revision")
    event = AuditEvent.objects.filter(action="revision.published").latest("seq")
    assert (event.after["revision_owner"], event.after["owner"]) == ("olivia", "oscar")
    assert sources_check().problems == []
    # Retried again, it is a replay.
    again = put(service_api, "r1", "2026-10-01T09:00:00Z", owner="olivia", facts=days_fact(14))
    assert again.status_code == 200, again.content


def test_only_a_late_revision_may_name_an_owner_who_has_left(
    service_api: Any, owner: Any, make_user: Any,
) -> None:
    make_user("oscar", "owner")
    put(service_api, "r2", NEWER, owner="oscar")
    user_deactivate(user=owner, actor=SYSTEM)
    assert put(service_api, "r1", "2026-10-01T09:00:00Z", owner="olivia").status_code == 201
    # As new as the current revision, or newer, it would make her the owner: refused.
    for revision, updated_at in (("r3", NEWER), ("r4", "2026-12-01T09:00:00Z")):
        response = put(service_api, revision, updated_at, owner="olivia")
        assert response.status_code == 400, revision
        assert response.json()["errors"] == [{"field": "owner",
                                              "message": "no active user named 'olivia'"}]
    document = Document.objects.select_related("current_revision", "owner").get(key="pricing")
    assert (document.current_revision.revision, document.owner.username) == ("r2", "oscar")
    assert document.revisions.count() == 2


def test_a_late_revision_leaves_a_withdrawn_document_withdrawn_and_restore_takes_the_newest(
    service_api: Any, owner: Any, client: Any,
) -> None:
    put(service_api, "r2", NEWER, title="Pricing, November")
    service_api.delete("/api/v1/documents/pricing")
    assert put(service_api, "r1", "2026-10-01T09:00:00Z",
               title="Pricing, October").json()["current"] is False
    assert Document.objects.get(key="pricing").withdrawn_at is not None
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "<h1>Pricing, November</h1>" in page and "Restore revision r2" in page
    restored = service_api.post("/api/v1/documents/pricing/restore")
    assert restored.json()["current_revision"] == "r2"


def test_a_revision_as_new_as_the_current_one_replaces_it(service_api: Any, owner: Any) -> None:
    """Two revisions of the same moment: the one published last is current, as before."""
    put(service_api, "r1", NEWER)
    assert put(service_api, "r2", NEWER).json()["current"] is True
    assert put(service_api, "r3", "2026-11-01T09:00:01Z").json()["current"] is True


def test_a_correction_on_the_page_is_current_even_behind_a_clock_ahead_of_ours(
    service_api: Any, owner: Any, client: Any,
) -> None:
    """The document system dated its revision hours ahead (its clock is fast, within the day
    the API allows): the owner's correction of it is still the newest revision, not one
    received late."""
    from datetime import timedelta

    from django.utils import timezone

    from reviewqueue.instants import instant_text

    put(service_api, "r1", instant_text(timezone.now() + timedelta(hours=20)),
        facts=days_fact(14))
    document = Document.objects.select_related("current_revision").get(key="pricing")
    fact = document.current_revision.facts.get()
    client.force_login(owner)
    client.post("/owner/documents/pricing/publish", publish_form(
        [fact], {"trial_days": "30"}, revision="r1", note="Now 30 days",
        **{f"{PASSAGE_FIELD}p1": "The free trial lasts 30 days."}))
    document.refresh_from_db()
    assert document.current_revision.revision != "r1"
    assert list(document.current_revision.facts.values_list("value", flat=True)) == [30]
