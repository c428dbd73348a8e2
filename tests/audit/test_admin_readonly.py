"""The audit area of the Django admin: the quarantine keeps everything it was given, and the
audit log's list reads the log through its indexes, never from end to end."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.admin import ActionFamilyFilter
from reviewqueue.audit.models import AuditEvent, QuarantinedPayload
from reviewqueue.audit.services import Actor, audit_record

pytestmark = pytest.mark.django_db

QUARANTINE = "/admin/audit/quarantinedpayload/"
EVENTS = "/admin/audit/auditevent/"


@pytest.fixture
def refused(service_api: Any) -> QuarantinedPayload:
    """A body the API refused (an answer with no fields), kept in the quarantine."""
    assert service_api.post("/api/v1/answers", {"note": "no fields"},
                            format="json").status_code == 400
    return QuarantinedPayload.objects.get()


def test_a_quarantined_payload_cannot_be_deleted(
    admin_client: Client, refused: QuarantinedPayload
) -> None:
    response = admin_client.post(f"{QUARANTINE}{refused.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert QuarantinedPayload.objects.filter(pk=refused.pk).exists()


def test_the_quarantine_offers_no_bulk_delete(
    admin_client: Client, refused: QuarantinedPayload
) -> None:
    page = admin_client.get(QUARANTINE).content.decode()
    assert "delete_selected" not in page
    admin_client.post(QUARANTINE, {"action": "delete_selected", "post": "yes",
                                   "_selected_action": [refused.pk]})
    assert QuarantinedPayload.objects.filter(pk=refused.pk).exists()


def test_a_quarantined_payload_is_shown_but_not_editable(
    admin_client: Client, refused: QuarantinedPayload
) -> None:
    page = admin_client.get(f"{QUARANTINE}{refused.pk}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert admin_client.post(f"{QUARANTINE}{refused.pk}/change/",
                             {"status_code": 200}).status_code == 403


# --- The audit log's list ---------------------------------------------------------------------

@pytest.fixture
def log(db: Any) -> None:
    """Events of several families, actors and traces."""
    ada = Actor(AuditEvent.ActorType.USER, "user:ada")
    ada_token = Actor(AuditEvent.ActorType.SERVICE, "user:ada token:rq_abc1234")
    bob = Actor(AuditEvent.ActorType.USER, "user:bob")
    audit_record(actor=ada, action="token.revoked", object_type="api_token", object_id=1)
    audit_record(actor=ada_token, action="lease.claimed", object_type="answer",
                 object_id="t-1", trace_id="t-1")
    audit_record(actor=bob, action="user.deactivated", object_type="user", object_id="carol")
    audit_record(actor=bob, action="revision.published", object_type="revision",
                 object_id="pricing@r1", document_id="pricing")


def listed(client: Client, query: str) -> list[str]:
    response = client.get(f"{EVENTS}{query}")
    assert response.status_code == 200
    return sorted(event.action for event in response.context["cl"].result_list)


def test_the_list_filters_by_family_of_actions(admin_client: Client, log: None) -> None:
    assert listed(admin_client, "?family=token") == ["token.revoked"]
    assert listed(admin_client, "?family=revision") == ["revision.published"]


def test_the_action_filter_does_not_read_every_action_in_the_log(
    admin_client: Client, log: None
) -> None:
    """Django's filter for a plain text column runs SELECT DISTINCT over the whole table."""
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get(EVENTS).status_code == 200
    assert not [q["sql"] for q in captured.captured_queries if "DISTINCT" in q["sql"].upper()]


def test_the_list_offers_no_counts_next_to_the_filters(admin_client: Client, log: None) -> None:
    """Django's "Show counts" would count every choice of every filter over the whole log."""
    assert "Show counts" not in admin_client.get(EVENTS).content.decode()
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get(f"{EVENTS}?_facets=True").status_code == 200
    assert not [q["sql"] for q in captured.captured_queries if "FILTER (WHERE" in q["sql"]]


def test_the_search_finds_an_exact_trace_id(admin_client: Client, log: None) -> None:
    assert listed(admin_client, "?q=t-1") == ["lease.claimed"]
    assert listed(admin_client, "?q=t-") == []


def test_the_search_finds_a_person_with_their_tokens(admin_client: Client, log: None) -> None:
    assert listed(admin_client, "?q=user:ada") == ["lease.claimed", "token.revoked"]


def test_the_search_finds_an_exact_document(admin_client: Client, log: None) -> None:
    assert listed(admin_client, "?q=pricing") == ["revision.published"]


def test_the_search_finds_actions_by_their_start(admin_client: Client, log: None) -> None:
    assert listed(admin_client, "?q=revision.") == ["revision.published"]


def _reads_the_whole_log(queryset: Any) -> bool:
    """Whether PostgreSQL, forbidden sequential scans where anything else will do, still has
    to read the audit table from end to end for this query's WHERE clause."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    try:
        plan = queryset.order_by().values("pk").explain()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = on")
    return f"Seq Scan on {AuditEvent._meta.db_table}" in plan


@pytest.mark.parametrize("term", ["t-1", "user:ada", "pricing", "token."])
def test_a_search_term_is_looked_up_through_the_indexes(
    admin_user: Any, log: None, term: str
) -> None:
    model_admin = admin.site.get_model_admin(AuditEvent)
    request = RequestFactory().get(EVENTS, {"q": term})
    request.user = admin_user
    found, _duplicates = model_admin.get_search_results(
        request, AuditEvent.objects.all(), term)
    assert found.exists()
    assert not _reads_the_whole_log(found)


def test_the_family_filter_is_looked_up_through_the_index(admin_user: Any, log: None) -> None:
    request = RequestFactory().get(EVENTS, {"family": "token"})
    request.user = admin_user
    family = ActionFamilyFilter(request, {"family": ["token"]}, AuditEvent,
                                admin.site.get_model_admin(AuditEvent))
    found = family.queryset(request, AuditEvent.objects.all())
    assert [e.action for e in found] == ["token.revoked"]
    assert not _reads_the_whole_log(found)


def test_the_search_check_catches_a_search_no_index_serves(log: None) -> None:
    """The check above is worth something: a substring search does read the whole log."""
    assert _reads_the_whole_log(AuditEvent.objects.filter(actor__icontains="ada"))


# Lists whose filters may read their values from the table: it holds only failures (tasks that
# kept failing, alerts of a broken chain), which stay few.
FEW_ROWS = {"jobs.deadletter", "audit.auditalert"}


def test_no_admin_list_of_a_growing_table_reads_its_filter_values_from_the_table(
    admin_client: Client, refused: QuarantinedPayload
) -> None:
    from django.urls import reverse

    reading = {}
    for model in admin.site._registry:
        label = model._meta.label_lower
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(url).status_code == 200, url
        distinct = [q["sql"] for q in captured.captured_queries if "DISTINCT" in q["sql"].upper()]
        if distinct and label not in FEW_ROWS:
            reading[label] = distinct
    assert reading == {}
