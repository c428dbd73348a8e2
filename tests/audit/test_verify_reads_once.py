"""The chain walk reads each event once: every keyset chunk starts where the last one ended,
through the index on seq, instead of reading the log from its start again (quadratic)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.services import _chain_rows

pytestmark = pytest.mark.django_db


def test_each_chunk_of_the_walk_starts_at_the_last_event_read(
    bulk: Callable[..., None]
) -> None:
    bulk(3000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE audit_auditevent")
    with CaptureQueriesContext(connection) as queries:
        assert sum(1 for _ in _chain_rows(chunk=500)) == 3000
    last = queries.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT TEXT) {last}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Cond: (seq >=" in plan, plan
    removed = [int(line.split(":")[1]) for line in plan.splitlines()
               if "Rows Removed by Filter" in line]
    assert all(n <= 1 for n in removed), plan
