"""`verify_sources`: every stored revision against the audit event that published it, and every
document's access list against its current revision's."""

from __future__ import annotations

import html
import re
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from reviewqueue.audit.models import AuditAlert, AuditEvent
from reviewqueue.audit.tasks import verify_chain
from reviewqueue.sources.models import Document, Passage, Revision
from tests.conftest import revision_body
from tests.reviews.conftest import fact, owner_corrects

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(publish: Any, owner: Any, client: Any) -> None:
    publish("pricing", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."}])
    publish("hr-leave", revision="r1", principals=["group:hr"],
            facts=[fact("leave_days", 25)],
            passages=[{"span": "p1", "text": "Staff get 25 days of leave."}])
    publish("pricing", revision="r2", facts=[fact("trial_days", 21)],
            passages=[{"span": "p1", "text": "The free trial lasts 21 days."}])
    # An owner's correction is published the same way, and checked the same way.
    owner_corrects("pricing", owner, 30, "The free trial lasts 30 days.", note="30 days now")


def verify() -> str:
    out = StringIO()
    call_command("verify_sources", stdout=out)
    return out.getvalue()


def as_the_database_owner(sql: str, params: list[Any]) -> None:
    """What someone with the database's own rights could do: the triggers off, then a change."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_published_sources_verify(published: None) -> None:
    assert verify().strip() == ("Sources OK: 4 revisions match the audit events that published "
                                "them; 2 documents have the readers their current revision gives.")


def test_the_application_cannot_change_a_passage(published: None) -> None:
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        Passage.objects.filter(revision__document__key="pricing").update(text="Forever free.")


def test_a_passage_changed_in_the_database_is_found(published: None) -> None:
    as_the_database_owner(
        "UPDATE sources_passage SET text = %s WHERE revision_id = (SELECT id FROM "
        "sources_revision WHERE revision = 'r1' AND document_id = (SELECT id FROM "
        "sources_document WHERE key = 'pricing'))", ["The free trial lasts 90 days."])
    with pytest.raises(CommandError) as refused:
        verify()
    assert "Sources CHANGED: 1 problem" in str(refused.value)
    assert ("pricing@r1: its title, dates, passages or facts are not those it was published "
            "with") in str(refused.value)


def test_an_access_list_widened_in_the_database_is_found(published: None) -> None:
    Document.objects.filter(key="hr-leave").update(allowed_principals=["*"])
    as_the_database_owner("UPDATE sources_revision SET allowed_principals = %s WHERE "
                          "revision = 'r1' AND document_id = (SELECT id FROM sources_document "
                          "WHERE key = 'hr-leave')", [["*"]])
    with pytest.raises(CommandError) as refused:
        verify()
    assert "hr-leave@r1: may be read by ['*'], but was published for ['group:hr']" in str(
        refused.value)


def test_a_documents_own_access_list_changed_is_found(published: None) -> None:
    Document.objects.filter(key="hr-leave").update(allowed_principals=["*"])
    with pytest.raises(CommandError) as refused:
        verify()
    assert ("hr-leave: lets ['*'] read it, but its current revision r1 lets ['group:hr']"
            in str(refused.value))


def _refused() -> str:
    with pytest.raises(CommandError) as refused:
        verify()
    return str(refused.value)


def test_a_published_revision_deleted_from_the_store_is_found(published: None) -> None:
    """Answers generated from it would read it as never received."""
    r1 = Revision.objects.get(document__key="pricing", revision="r1")
    for table, column in (("sources_passage", "revision_id"), ("sources_fact", "revision_id"),
                          ("sources_revision", "id")):
        as_the_database_owner(f"DELETE FROM {table} WHERE {column} = %s", [r1.pk])

    said = _refused()

    assert "Sources CHANGED: 1 problem in 3 revisions and 2 documents" in said
    assert re.search(r"pricing@r1: audit event #\d+ published it, and it is no longer stored "
                     r"\(deleted\)", said), said


@pytest.mark.parametrize(("sql", "said"), [
    ("UPDATE sources_document SET current_revision_id = (SELECT id FROM sources_revision "
     "WHERE document_id = sources_document.id AND revision = 'r1') WHERE key = 'pricing'",
     "pricing: is revision r1, but its last audit event, #{seq}, left it revision {current}"),
    ("UPDATE sources_document SET current_revision_id = NULL, withdrawn_at = now() "
     "WHERE key = 'pricing'",
     "pricing: is withdrawn, but its last audit event, #{seq}, left it revision {current}"),
])
def test_a_document_rolled_back_or_withdrawn_in_the_table_is_found(
    published: None, sql: str, said: str
) -> None:
    """The gate would read the older facts, or none, while the log says the owner's
    correction is current."""
    last = AuditEvent.objects.filter(document_id="pricing").order_by("-seq").first()
    current = Document.objects.get(key="pricing").current_revision.revision  # the correction's
    as_the_database_owner(sql, [])

    assert said.format(seq=last.seq, current=current) in _refused()


def test_a_document_given_to_another_owner_in_the_table_is_found(
    published: None, make_user: Any
) -> None:
    oscar = make_user("oscar", "owner")
    as_the_database_owner("UPDATE sources_document SET owner_id = %s WHERE key = 'pricing'",
                          [oscar.pk])

    assert ("pricing: is owned by oscar, but its audit events give it to olivia"
            in _refused())


def test_withdrawn_restored_and_late_revisions_verify(
    published: None, service_api: Any
) -> None:
    """What the application does to a document's state is what its events say."""
    assert service_api.delete("/api/v1/documents/hr-leave").status_code == 200
    late = service_api.put("/api/v1/documents/pricing/revisions/r0", revision_body(
        updated_at="2020-01-01T00:00:00Z"), format="json")
    assert late.status_code == 201 and late.json()["current"] is False
    assert "Sources OK: 5 revisions" in verify()
    assert service_api.post("/api/v1/documents/hr-leave/restore").status_code == 200
    assert "Sources OK: 5 revisions" in verify()


# --- The audit chain's verification checks the sources too --------------------------------------


def audit_page(admin_client: Any) -> str:
    page = admin_client.get("/audit/")
    assert page.status_code == 200
    return page.content.decode()


def test_the_nightly_verification_shows_the_sources_unchanged(published: None,
                                                              admin_client: Any) -> None:
    assert verify_chain.apply(kwargs={"trigger": "nightly"}).get()["ok"] is True
    page = audit_page(admin_client)
    [shown] = re.findall(r'data-testid="sources-result">(.*?)</p>', page, re.S)
    assert " ".join(html.unescape(shown).split()) == (
        "<strong>Sources unchanged.</strong> 4 revisions match the audit events that published "
        "them. 2 documents have the readers their current revision gives.")
    assert AuditAlert.objects.count() == 0
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert "Sources OK: 4 revisions match" in out.getvalue()


def test_a_source_changed_in_the_database_is_on_the_audit_page_and_alerts_once(
    published: None, admin_client: Any
) -> None:
    Document.objects.filter(key="hr-leave").update(allowed_principals=["*"])
    verify_chain.apply(kwargs={"trigger": "nightly"}).get()
    page = audit_page(admin_client)
    assert "audit-status card is-broken" in page
    [shown] = re.findall(r'data-testid="sources-result">(.*?)</p>', page, re.S)
    assert " ".join(shown.split()) == (
        "<strong>Sources changed.</strong> 1 revision or document differs from what was "
        "published:")
    [listed] = re.findall(r'data-testid="sources-problems">(.*?)</ol>', page, re.S)
    assert ("<code>hr-leave</code>: the document lets others read it than its current "
            "revision does") in listed
    [alert] = AuditAlert.objects.all()
    assert alert.problem == "sources_changed"
    assert "hr-leave: lets ['*'] read it" in alert.message
    # The alert, on the same page, in the reader's language.
    alert_shown = page[page.index('data-alert="sources"'):page.index("Acknowledge</button>")]
    assert "Sources changed after they were published (1 difference):" in alert_shown
    assert ("<li>hr-leave: the document lets others read it than its current revision "
            "does</li>") in alert_shown
    # Found again the next night, the same difference raises no second alert.
    verify_chain.apply(kwargs={"trigger": "nightly"}).get()
    assert AuditAlert.objects.count() == 1
    # The command fails with it, though the chain itself is intact.
    with pytest.raises(CommandError) as refused:
        call_command("verify_audit", stdout=StringIO())
    assert "Audit check FAILED: the chain is intact, but stored sources or records" in str(
        refused.value)
    assert "Sources CHANGED: 1 problem in 4 revisions and 2 documents" in str(refused.value)


def test_the_audit_page_names_a_changed_revision_in_japanese(published: None,
                                                             admin_client: Any) -> None:
    as_the_database_owner(
        "UPDATE sources_passage SET text = %s WHERE revision_id = (SELECT id FROM "
        "sources_revision WHERE revision = 'r1' AND document_id = (SELECT id FROM "
        "sources_document WHERE key = 'pricing'))", ["The free trial lasts 90 days."])
    verify_chain.apply(kwargs={"trigger": "nightly"}).get()
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    [listed] = re.findall(r'data-testid="sources-problems">(.*?)</ol>', page, re.S)
    assert "<code>pricing@r1</code>: " in listed
    assert "published with" not in listed
    assert "Sources changed." not in page
