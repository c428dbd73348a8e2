"""A conflict's page lists the 20 longest-waiting answers it holds without reading every answer.

100,000 stored answers (one in four held), built in SQL and analyzed, cite twenty public
documents; two of them disagree on the key every answer claims, so that conflict holds
thousands. The owner opens the conflict's page, which shows the values side by side, then the
20 held answers that waited longest. The statement that finds those 20 is captured and run with
EXPLAIN ANALYZE: it must not scan a table that grows with the answers, and the rows it reads
must stay near the 20 it shows, not the thousands of answers citing the two documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, ReviewItem
from reviewqueue.sources.models import Conflict
from tests.perf.builders import held_copies

pytestmark = pytest.mark.django_db

STORED = 100_000
GROWING = tuple(m._meta.db_table for m in (Answer, AnswerVersion, RetrievedItem, ReviewItem))
# Rows of one growing table the list may read: the queue walked oldest first until 20 match,
# with a probe or two per row. About one held answer in twelve matches here; the answers
# citing the two documents are some 20,000 citations, 100,000 answers.
BOUND = 2_000


def _fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


def _rows_read(plan: dict[str, Any]) -> dict[str, int]:
    read: dict[str, int] = {}
    for node in _nodes(plan):
        table = node.get("Relation Name")
        if table in GROWING:
            read[table] = read.get(table, 0) + (
                node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
                + node.get("Rows Removed by Index Recheck", 0)) * node["Actual Loops"]
    return read


def test_the_longest_waiting_answers_are_found_without_reading_every_answer(
    client: Any, owner: Any, publish: Callable[..., Any], submit: Callable[..., Any],
) -> None:
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
    conflict = Conflict.objects.get()

    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        page = client.get(f"/owner/conflicts/{conflict.pk}/")
    assert page.status_code == 200
    listed = re.findall(r'href="/answers/(perf-\d+)/', page.content.decode())
    assert len(set(listed)) == 20, listed
    [sql] = [q["sql"] for q in captured.captured_queries
             if "jsonb_path_exists" in q["sql"] and "LIMIT 20" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        [[document]] = cursor.fetchall()
        cursor.execute(f"EXPLAIN {sql}")
        text = "\n".join(row[0] for row in cursor.fetchall())
    plan = (document if isinstance(document, list) else json.loads(document))[0]["Plan"]
    scanned = [t for t in GROWING if re.search(rf"Seq Scan on {t}\b", text)]
    read = _rows_read(plan)
    assert not scanned and max(read.values()) <= BOUND, (
        f"the conflict page reads {read} rows (sequential scan on {scanned}) to show 20 "
        f"answers:\n{text}")
