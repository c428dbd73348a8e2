"""Dead letters are kept once resolved, so their table only grows; the statements that run on
every chunk and on the jobs page find the few letters they are about through an index, not by
reading every letter ever stored.

60,000 letters of 600 jobs, all resolved but three (a worker outage long ago, its answers
re-evaluated since), built in SQL and analyzed. Each statement is run with EXPLAIN (ANALYZE,
BUFFERS): the pages it touches must be a handful, not the table or a whole index. Then:

- a publication re-evaluates one answer: the chunk, once finished, resolves the letters of the
  answers it did (`chunk_finish`); that UPDATE looks the answers' letters up, it does not scan
  every letter ever stored, on every chunk of every job;
- an admin opens /jobs/, which says how many letters wait (counted up to 1,000): the count
  finds the three waiting letters without reading the 60,000 resolved ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.jobs.models import DeadLetter, Job

pytestmark = pytest.mark.django_db

LETTERS = 60_000
WAITING = 3
TABLE = DeadLetter._meta.db_table
# An index probe touches a few pages; the table or a whole index is hundreds.
PAGES = 30


@pytest.fixture
def letters(db: Any) -> None:
    jobs = Job._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO "{jobs}" (id, scope, document_key, trigger, state, total, done, '
            "failed, changed, actor_type, actor, created_at, cause) SELECT gen_random_uuid(), "
            "'document', 'kb-' || g, 'revision', 'finished', 100, 0, 100, 0, 'worker', "
            "'worker', now() - g * interval '1 hour', '' FROM generate_series(1, %s) g",
            [LETTERS // 100])
        cursor.execute(
            f'INSERT INTO "{TABLE}" (task_name, task_id, args, kwargs, error_type, '
            "error_message, attempts, failed_at, retry_count, job_id, answer_id, resolved_at) "
            "SELECT 'reviews.reevaluate_answers', 'task-' || g, '[]', '{}', 'OperationalError',"
            " 'server closed the connection', 3, now() - g * interval '1 minute', 0, j.id, "
            "1000000 + g, CASE WHEN g > %s THEN now() END FROM generate_series(1, %s) g "
            f'JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM "{jobs}") j '
            "ON j.n = g %% %s",
            [WAITING, LETTERS, LETTERS // 100])
        cursor.execute(f'ANALYZE "{TABLE}"')
    assert DeadLetter.objects.count() == LETTERS


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


def _run(sql: str) -> tuple[int, int]:
    """The statement run with EXPLAIN (ANALYZE, BUFFERS): the rows of the letters' table it
    read (returned or filtered out), and the pages it touched."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}")
        [[document]] = cursor.fetchall()
    plan = (document if isinstance(document, list) else json.loads(document))[0]["Plan"]
    rows = sum((n["Actual Rows"] + n.get("Rows Removed by Filter", 0)) * n["Actual Loops"]
               for n in _nodes(plan) if n.get("Relation Name") == TABLE)
    return rows, plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_finished_chunk_does_not_scan_every_dead_letter(
    letters: None, publish_doc: Callable[..., Any], ingest: Callable[..., Any],
    on_commit: Callable[[], Any],
) -> None:
    publish_doc("pricing")
    ingest("t-1")
    with CaptureQueriesContext(connection) as captured, on_commit():
        publish_doc("pricing", "r2")  # re-evaluates t-1 in one chunk
    [resolve] = [q["sql"] for q in captured.captured_queries
                 if q["sql"].startswith(f'UPDATE "{TABLE}"')]
    plan = _plan(resolve)  # before it runs: the plan it runs with
    _rows, pages = _run(resolve)
    assert pages <= PAGES, (
        f"every finished chunk touches {pages:,} pages of {LETTERS:,} dead letters to resolve "
        f"the letters of the answers it did:\n{resolve}\n{plan}")


def test_the_jobs_page_counts_the_waiting_letters_without_reading_the_resolved_ones(
    letters: None, admin_client: Any,
) -> None:
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get("/jobs/").status_code == 200
    [count] = [q["sql"] for q in captured.captured_queries
               if f'FROM "{TABLE}"' in q["sql"] and "COUNT(" in q["sql"].upper()]
    read, pages = _run(count)
    assert pages <= PAGES, (
        f"/jobs/ reads {read:,} dead letters ({pages:,} pages) to find the {WAITING} "
        f"waiting:\n{count}\n{_plan(count)}")
