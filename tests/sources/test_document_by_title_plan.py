"""An admin names a document by its title (exact, any case) in the audit search and on the
jobs page: the lookup reads the revisions through their UPPER(title) index and the documents
through their keys, never a whole table. Its one statement is captured and EXPLAINed with
sequential scans forbidden wherever anything else will do: a plan that still scans a table
has no index to answer it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviewqueue.audit.selectors import events_naming_document
from reviewqueue.sources.models import Document, Revision
from reviewqueue.sources.selectors import document_keys_named

pytestmark = pytest.mark.django_db

TABLES = (Document._meta.db_table, Revision._meta.db_table)



def _others(owner: Any, count: int) -> None:
    """`count` documents with a revision each, titled apart, stored in bulk."""
    documents = Document.objects.bulk_create(
        [Document(key=f"policy-{n:04d}", owner=owner, allowed_principals=["*"])
         for n in range(count)])
    revisions = Revision.objects.bulk_create(
        [Revision(document=d, revision="r1", seq=1, title=f"Policy {n:04d}",
                  updated_at=timezone.now(), allowed_principals=["*"], body_digest="0" * 64)
         for n, d in enumerate(documents)])
    for document, revision in zip(documents, revisions, strict=True):
        document.current_revision = revision
    Document.objects.bulk_update(documents, ["current_revision"])


@pytest.fixture
def library(publish: Callable[..., Any], service_api: Any, owner: Any) -> None:
    """Documents titled alike and not, one of them withdrawn (its title is its last one's),
    among enough others that a title names a few revisions of many, as it does in use."""
    _others(owner, 500)
    publish("pricing", title="Pricing and plans")
    publish("pricing", "r2", title="Pricing and plans, 2026")
    publish("handbook", title="Employee Handbook")
    publish("handbook-2025", title="Employee handbook")
    publish("old-handbook", title="EMPLOYEE HANDBOOK")
    service_api.delete("/api/v1/documents/old-handbook")
    with connection.cursor() as cursor:
        # On statistics of these rows, not of a larger table an earlier test analyzed.
        cursor.execute(f"ANALYZE {', '.join(TABLES)}")


def _lookup_plan(user: Any, text: str, **kwargs: Any) -> tuple[list[str], str]:
    """What document_keys_named answers, and the plan of its statement."""
    with CaptureQueriesContext(connection) as captured:
        keys = document_keys_named(user, text, **kwargs)
    # The user's principals may take a query of their own (their groups); the lookup is one.
    [sql] = [q["sql"] for q in captured.captured_queries if Revision._meta.db_table in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        try:
            cursor.execute(f"EXPLAIN {sql}")
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("SET LOCAL enable_seqscan = on")
    return keys, plan


def _scanned(plan: str) -> list[str]:
    return [t for t in TABLES if re.search(rf"Seq Scan on {t}\b", plan)]


def test_a_title_is_looked_up_through_the_title_index(
    admin_user: Any, library: None
) -> None:
    keys, plan = _lookup_plan(admin_user, "employee HANDBOOK")
    assert keys == ["handbook", "handbook-2025", "old-handbook"]
    assert "revision_title_upper" in plan, plan
    assert not _scanned(plan), plan


def test_an_id_is_looked_up_without_reading_every_document(
    admin_user: Any, library: None
) -> None:
    keys, plan = _lookup_plan(admin_user, "pricing")
    assert keys == ["pricing"]
    assert not _scanned(plan), plan


def test_the_audit_searchs_lookup_reads_no_whole_table_either(
    admin_user: Any, library: None
) -> None:
    keys, plan = _lookup_plan(admin_user, "Pricing and plans, 2026",
                              known=events_naming_document("Pricing and plans, 2026"))
    assert keys == ["pricing"]
    assert "revision_title_upper" in plan, plan
    assert not _scanned(plan), plan


def test_a_superseded_title_names_no_document(admin_user: Any, library: None) -> None:
    assert document_keys_named(admin_user, "pricing AND plans") == []
