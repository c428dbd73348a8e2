"""The inbox counts held answers through indexes: no plan reads a table that grows with answers.

100,000 stored answers (one in four held), built in SQL and analyzed, cite twenty public
documents; two of them disagree on the key every answer claims, so that conflict holds
thousands. The inbox's count statement is captured and EXPLAINed: a sequential scan on the
answers, their versions, their citations or their queue entries would read every row of a
table that grows with the backlog.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, ReviewItem
from tests.perf.builders import held_copies

pytestmark = pytest.mark.django_db

STORED = 100_000
GROWING = tuple(m._meta.db_table for m in (Answer, AnswerVersion, RetrievedItem, ReviewItem))


def _fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}


def test_the_inbox_counts_held_answers_without_reading_a_whole_table(
    client: Any, owner: Any, publish: Callable[..., Any], submit: Callable[..., Any],
    settings: Any,
) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    for n in range(20):
        # Only kb-00 and kb-01 disagree, on trial_days: the template answer is held for it.
        publish(f"kb-{n:02d}", facts=[_fact("trial_days" if n < 2 else f"plan_{n}", 14 + n)])
    response = submit("perf-template", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "kb-00", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "kb-01", "revision": "r1", "span": "p1"},
    ])
    assert response.json()["status"] == "held", response.json()
    held_copies(Answer.objects.get(trace_id="perf-template"), STORED - 1, "perf-",
                public_documents=20, hr_documents=3, held_every=4)

    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/owner/").content.decode()
    assert "holding 1000+ answers" in page
    [sql] = [q["sql"] for q in captured.captured_queries if "WITH held" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    scanned = [t for t in GROWING if re.search(rf"Seq Scan on {t}\b", plan)]
    assert not scanned, f"sequential scan on {', '.join(scanned)}:\n{plan}"
    assert "retrieved_by_document" in plan, plan
