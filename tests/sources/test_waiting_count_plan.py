"""The answers waiting for their owners are a few hundred in a queue of tens of thousands: the
owner's pages find them without reading the whole queue or every citation of a document.

100,000 stored answers (one in four held, one held answer in 97 waiting for its owners, who
asked olivia), built in SQL and analyzed, cite twenty public documents: each document is cited
some 10,000 times. Each statement is captured and run with EXPLAIN ANALYZE:

- the inbox lists the answers sent to the owner ("Answers reviewers sent you"), the longest
  waiting first: it must not scan the queue for the few waiting;
- the owner ends a fact of one document from its page; before publishing, the page reads the
  held answers citing it that a reviewer sent to the owners (the message after the
  publication says how many go back to the reviewers): it must read about the answers waiting,
  not every citation of the document.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import OwnerQuestion, RetrievedItem, ReviewItem
from reviewqueue.sources.models import Fact
from tests.perf.plans import GROWING, conflict_backlog, explained

pytestmark = pytest.mark.django_db

# Rows of a growing table a statement may read: the answers waiting for owners (about 260
# here) with a probe or two each, not the 25,000 queued nor the 10,000 citations of a document.
BOUND = 2_000


@pytest.fixture
def backlog(owner: Any, publish: Callable[..., Any], submit: Callable[..., Any]) -> None:
    conflict_backlog(publish, submit)
    with connection.cursor() as cursor:
        # The questions the builder asked were of nobody: olivia was asked them.
        cursor.execute(f'UPDATE "{OwnerQuestion._meta.db_table}" '
                       "SET owners = ARRAY[%s]::bigint[]", [owner.pk])
        cursor.execute("ANALYZE")
    assert RetrievedItem.objects.filter(document_key="kb-07").count() > 9_000
    assert 200 < ReviewItem.objects.filter(waiting_for_owner=True).count() < 300


def test_the_inbox_lists_the_answers_sent_to_the_owner_without_scanning_the_queue(
    backlog: None, client: Any, owner: Any,
) -> None:
    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/owner/").status_code == 200
    listed = [q["sql"] for q in captured.captured_queries
              if '"waiting_for_owner"' in q["sql"] and '"owners" @>' in q["sql"]]
    assert listed
    for sql in listed:
        read, text = explained(sql)
        scanned = [t for t in GROWING if re.search(rf"Seq Scan on {t}\b", text)]
        assert not scanned and max(read.values()) <= BOUND, (
            f"listing the answers sent to the owner reads {read} rows (sequential scan on "
            f"{scanned}):\n{sql}\n{text}")


def test_the_waiting_count_does_not_read_every_citation_of_the_document(
    backlog: None, client: Any, owner: Any,
) -> None:
    fact = Fact.objects.get(revision__document__key="kb-07")

    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        response = client.post("/owner/documents/kb-07/end-validity",
                               {"fact_id": fact.pk, "last_day": "2026-06-30"})
    assert response.status_code == 302, response.content
    [sql] = [q["sql"] for q in captured.captured_queries
             if '"waiting_for_owner"' in q["sql"] and '"document_key" = ' in q["sql"]]
    read, text = explained(sql)
    assert max(read.values()) <= BOUND, (
        f"counting the answers sent to the owners reads {read} rows:\n{sql}\n{text}")
