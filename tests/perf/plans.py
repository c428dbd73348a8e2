"""What the plan tests share: a backlog of 100,000 answers held for one conflict, and the rows a
statement read of the tables that grow with it, from EXPLAIN ANALYZE."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection, transaction

from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, ReviewItem
from tests.perf.builders import held_copies

STORED = 100_000
GROWING = tuple(m._meta.db_table for m in (Answer, AnswerVersion, RetrievedItem, ReviewItem))


def fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}


def conflict_backlog(publish: Callable[..., Any], submit: Callable[..., Any]) -> None:
    """STORED answers (one in four held), built in SQL and analyzed, citing twenty public
    documents; only kb-00 and kb-01 disagree, on the key every answer claims, so that
    conflict holds thousands."""
    for n in range(20):
        publish(f"kb-{n:02d}", facts=[fact("trial_days" if n < 2 else f"plan_{n}", 14 + n)])
    response = submit("perf-template", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "kb-00", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "kb-01", "revision": "r1", "span": "p1"},
    ])
    assert response.json()["status"] == "held", response.json()
    held_copies(Answer.objects.get(trace_id="perf-template"), STORED - 1, "perf-",
                public_documents=20, hr_documents=3, held_every=4)


def nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from nodes(child)


def explained(sql: str) -> tuple[dict[str, int], str]:
    """The rows `sql` read of each growing table (returned or filtered out, on every loop),
    run with EXPLAIN ANALYZE, and its plan as text."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        [[document]] = cursor.fetchall()
        cursor.execute(f"EXPLAIN {sql}")
        text = "\n".join(row[0] for row in cursor.fetchall())
    plan = (document if isinstance(document, list) else json.loads(document))[0]["Plan"]
    read: dict[str, int] = {}
    for node in nodes(plan):
        if (table := node.get("Relation Name")) in GROWING:
            read[table] = read.get(table, 0) + (
                node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
                + node.get("Rows Removed by Index Recheck", 0)) * node["Actual Loops"]
    return read, text
