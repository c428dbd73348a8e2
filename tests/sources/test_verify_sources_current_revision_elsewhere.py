"""`verify_sources` (and so `verify_audit`) checks each document's current revision and
withdrawal against what its last audit event left. The check compares the revision's id
string only, and reads the withdrawal from `current_revision` alone: a document pointed at
another document's revision with the same id, or marked withdrawn while it keeps its current
revision, passes, although the gate reads exactly those columns."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(publish: Any) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."}])
    publish("promo", "r1", facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "This autumn the trial lasts 30 days."}])


def as_the_database_owner(sql: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql)
        cursor.execute("SET LOCAL session_replication_role = origin")


def verify() -> str:
    out = StringIO()
    call_command("verify_sources", stdout=out)
    return out.getvalue()


def test_the_untouched_store_verifies(published: None) -> None:
    assert verify().startswith("Sources OK: 2 revisions")


def test_a_document_pointed_at_another_documents_revision_is_found(published: None) -> None:
    """The gate joins facts on `d.current_revision_id = r.id`: pricing now states promo's 30
    days, and its passages are promo's, while the log says pricing r1 (14 days) is current."""
    from reviewqueue.sources.selectors import current_documents

    as_the_database_owner(
        "UPDATE sources_document SET current_revision_id = (SELECT r.id FROM sources_revision r "
        "JOIN sources_document d ON d.id = r.document_id WHERE d.key = 'promo') "
        "WHERE key = 'pricing'")
    # What the gate reads now: pricing's "current revision r1" holds promo's fact.
    assert [f.value for f in current_documents(["pricing"])["pricing"].facts] == [30]

    with pytest.raises(CommandError) as refused:
        verify()
    assert "pricing:" in str(refused.value)


def test_a_document_withdrawn_in_the_table_only_by_its_date_is_found(published: None) -> None:
    """The gate takes a document with `withdrawn_at` set as withdrawn (every citation of it
    unresolved), whatever `current_revision` says; no event withdrew it."""
    as_the_database_owner("UPDATE sources_document SET withdrawn_at = now() WHERE key = 'pricing'")

    with pytest.raises(CommandError) as refused:
        verify()
    assert "pricing:" in str(refused.value)
