"""A conflict's page lists the 20 longest-waiting answers it holds without reading every answer.

100,000 stored answers (one in four held), built in SQL and analyzed, cite twenty public
documents; two of them disagree on the key every answer claims, so that conflict holds
thousands. The owner opens the conflict's page, which shows the values side by side, then the
20 held answers that waited longest. The statement that finds those 20 is captured and run with
EXPLAIN ANALYZE: it must not scan a table that grows with the answers, and the rows it reads
must stay near the 20 it shows, not the thousands of answers citing the two documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.sources.models import Conflict
from tests.perf.plans import GROWING, conflict_backlog, explained

pytestmark = pytest.mark.django_db

# Rows of one growing table the list may read: the queue walked oldest first until 20 match,
# with a probe or two per row. About one held answer in twelve matches here; the answers
# citing the two documents are some 20,000 citations, 100,000 answers.
BOUND = 2_000


def test_the_longest_waiting_answers_are_found_without_reading_every_answer(
    client: Any, owner: Any, publish: Callable[..., Any], submit: Callable[..., Any],
) -> None:
    conflict_backlog(publish, submit)
    conflict = Conflict.objects.get()

    client.force_login(owner)
    with CaptureQueriesContext(connection) as captured:
        page = client.get(f"/owner/conflicts/{conflict.pk}/")
    assert page.status_code == 200
    listed = re.findall(r'href="/answers/(perf-\d+)/', page.content.decode())
    assert len(set(listed)) == 20, listed
    [sql] = [q["sql"] for q in captured.captured_queries
             if "jsonb_path_exists" in q["sql"] and "LIMIT 20" in q["sql"]]
    read, text = explained(sql)
    scanned = [t for t in GROWING if re.search(rf"Seq Scan on {t}\b", text)]
    assert not scanned and max(read.values()) <= BOUND, (
        f"the conflict page reads {read} rows (sequential scan on {scanned}) to show 20 "
        f"answers:\n{text}")
