"""The inbox counts held answers through indexes: no plan reads a table that grows with answers.

100,000 stored answers (one in four held), built in SQL and analyzed, cite twenty public
documents; two of them disagree on the key every answer claims, so that conflict holds
thousands. The inbox's count statement is captured and EXPLAINed: a sequential scan on the
answers, their versions, their citations or their queue entries would read every row of a
table that grows with the backlog.

The count can start from either end, the citations of the owner's documents or the answers
queued for conflicting sources, and must start from the small one. Two lopsided stores check
it with EXPLAIN ANALYZE, by the rows each index gives: a document cited by many answers of
which a few are held for the conflict, and a large backlog held for other conflicts beside an
owner's document that a few answers cite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Answer, RetrievedItem, ReviewItem
from reviewqueue.sources.selectors import HELD_PROBE
from tests.perf.plans import GROWING, conflict_backlog, fact, nodes
from tests.reevaluation.builders import copy_answers

pytestmark = pytest.mark.django_db

# Reads of a citation or a queue item the count may spend on each answer it counts: finding
# it, checking it is held for a conflict, listing its documents. A handful, not the backlog.
PER_ANSWER = 5


def test_the_inbox_counts_held_answers_without_reading_a_whole_table(
    client: Any, owner: Any, publish: Callable[..., Any], submit: Callable[..., Any],
) -> None:
    conflict_backlog(publish, submit)

    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/owner/").content.decode()
    assert "holding 1000+ answers" in page
    [sql] = [q["sql"] for q in captured.captured_queries if "held AS MATERIALIZED" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    scanned = [t for t in GROWING if re.search(rf"Seq Scan on {t}\b", plan)]
    assert not scanned, f"sequential scan on {', '.join(scanned)}:\n{plan}"
    assert "retrieved_by_document" in plan, plan


def _held(submit: Callable[..., Any], trace_id: str, *documents: str, key: str) -> Answer:
    response = submit(trace_id, as_of=None, claims=[{"key": key, "value": 1, "cite": "d1"}],
                      retrieved=[{"cite": f"d{n}", "document_id": d, "revision": "r1",
                                  "span": "p1"} for n, d in enumerate(documents, 1)])
    assert response.json()["status"] == "held", response.json()
    return Answer.objects.get(trace_id=trace_id)


def _queue_copies(template: Answer, count: int, prefix: str, *, for_conflict: int) -> None:
    """`count` copies of `template`, all queued: the first `for_conflict` for conflicting
    sources, the others for a superseded revision."""
    floor = copy_answers(template, count, prefix)
    reason = ("CASE WHEN row_number() OVER (ORDER BY a.id) <= %s THEN 'conflicting_sources' "
              "ELSE 'superseded_revision' END")
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO "{ReviewItem._meta.db_table}" (answer_id, entered_at, primary_reason, '
            "reasons, index_release, audit_sample, waiting_for_owner) "
            f"SELECT a.id, now(), {reason}, ARRAY[{reason}]::varchar[], '', false, false "
            f'FROM "{Answer._meta.db_table}" a WHERE a.id > %s AND a.trace_id LIKE %s',
            [for_conflict, for_conflict, floor, f"{prefix}%"],
        )
        cursor.execute("ANALYZE")


def _counted(client: Any) -> tuple[str, dict[str, Any]]:
    """The inbox page, and the plan its count statement ran, with the rows each node read."""
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/owner/").content.decode()
    [sql] = [q["sql"] for q in captured.captured_queries if "held AS MATERIALIZED" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        [[document]] = cursor.fetchall()
    plan = document if isinstance(document, list) else json.loads(document)
    return page, plan[0]["Plan"]


def _rows_read(plan: dict[str, Any], model: type[Any]) -> int:
    """How many rows of the model's table the statement read, whatever the path: every row a
    scan returned or filtered out, on every loop, and every entry a bitmap gathered."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [table])
        indexes = {name for (name,) in cursor.fetchall()}
    read = 0
    for node in nodes(plan):
        if node.get("Relation Name") == table:
            read += (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
                     + node.get("Rows Removed by Index Recheck", 0)) * node["Actual Loops"]
        elif node["Node Type"] == "Bitmap Index Scan" and node["Index Name"] in indexes:
            read += node["Actual Rows"] * node["Actual Loops"]
    return read


def test_a_document_cited_by_many_answers_is_not_read_citation_by_citation(
    client: Any, owner: Any, make_user: Callable[..., Any], publish: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    # Three times as many citations as the probe counts; four answers held for the conflict,
    # the others for a superseded revision.
    template = _held(submit, "popular-0", "pricing", key="trial_days")
    _queue_copies(template, 3 * HELD_PROBE, "popular-", for_conflict=3)

    client.force_login(owner)
    page, plan = _counted(client)
    assert "holding 4 answers" in page
    # The probe's citations, then only the four answers: none of the others.
    assert _rows_read(plan, RetrievedItem) <= HELD_PROBE + PER_ANSWER * 4, json.dumps(plan)
    assert _rows_read(plan, ReviewItem) <= PER_ANSWER * 4, json.dumps(plan)


def test_a_backlog_held_for_other_conflicts_is_not_read_answer_by_answer(
    client: Any, owner: Any, make_user: Callable[..., Any], publish: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    make_user("oscar", "owner")
    # Documents no other test names: the answers held over a conflict's documents through the
    # knowledge base are found in a GIN index, read as a bitmap, which counts the entries of
    # rows other tests wrote and rolled back (until a vacuum) as entries read.
    publish("seat-sheet", facts=[fact("seats", 5)])
    publish("seat-offer", owner="oscar", facts=[fact("seats", 6)])
    publish("eu-terms", owner="oscar", facts=[fact("regions", 3)])
    publish("us-terms", owner="oscar", facts=[fact("regions", 4)])
    # Twice as many answers held for oscar's conflict as the probe counts; three cite
    # seat-sheet (and are held over seat-offer through the knowledge base).
    backlog = _held(submit, "backlog-0", "eu-terms", "us-terms", key="regions")
    _queue_copies(backlog, 2 * HELD_PROBE, "backlog-", for_conflict=2 * HELD_PROBE)
    for n in range(3):
        _held(submit, f"seats-{n}", "seat-sheet", key="seats")

    client.force_login(owner)
    page, plan = _counted(client)
    assert "holding 3 answers" in page
    # The probe stops one item past the three citations, and the knowledge base's index gives
    # the three again (those citing none of the documents would count too): none of the
    # others held.
    assert _rows_read(plan, ReviewItem) <= PER_ANSWER * 3, json.dumps(plan)
    assert _rows_read(plan, RetrievedItem) <= PER_ANSWER * 3, json.dumps(plan)
