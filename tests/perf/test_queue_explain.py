"""The queue reads answers through indexes, whatever the filter: no plan scans a whole table.

100,000 stored answers (one in four held and queued), built in SQL, analyzed; then every filter
the queue page and the queue API accept, alone and in the combinations the filter form offers,
runs through the real selectors while their SQL is captured, and each captured statement is
EXPLAINed. A sequential scan on the answers, their queue entries or their retrieved items would
read every row of a table that grows with the backlog: the test names the filter and shows the
plan.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.labels import REASONS
from reviewqueue.reviews.models import Answer, RetrievedItem, ReviewItem
from reviewqueue.reviews.selectors.queue import (
    Cursor,
    QueueFilters,
    next_unclaimed,
    queue_page,
)
from tests.perf.builders import held_copies

STORED = 100_000
HELD_EVERY = 4
PUBLIC_DOCUMENTS = 20
HR_DOCUMENTS = 3
# Tables that grow with the number of answers: none of them may be read from end to end.
GROWING = (Answer._meta.db_table, ReviewItem._meta.db_table, RetrievedItem._meta.db_table)


def _fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}


@pytest.fixture
def backlog(db: Any, publish: Callable[..., Any], submit: Callable[..., Any],
            make_user: Callable[..., Any], service_api: Any) -> Any:
    """alice (a reviewer outside hr) and 100,000 answers citing 23 documents; a 24th, cited
    by none, withdrawn (a document filter also matches a withdrawn document's last title)."""
    alice, bob = make_user("alice"), make_user("bob")
    for n in range(PUBLIC_DOCUMENTS):
        # Only kb-00 and kb-01 disagree, on trial_days: the template answer is held for it.
        publish(f"kb-{n:02d}", facts=[_fact("trial_days" if n < 2 else f"plan_{n}", 14 + n)])
    for n in range(HR_DOCUMENTS):
        publish(f"hr-{n}", facts=[_fact("probation_days", 90)], principals=["group:hr"])
    publish("kb-withdrawn", facts=[_fact("plan_withdrawn", 1)])
    assert service_api.delete("/api/v1/documents/kb-withdrawn").status_code in (200, 202)
    response = submit("perf-template", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "kb-00", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "kb-01", "revision": "r1", "span": "p1"},
    ])
    assert response.json()["status"] == "held", response.json()
    template = Answer.objects.get(trace_id="perf-template")
    held_copies(template, STORED - 1, "perf-", public_documents=PUBLIC_DOCUMENTS,
                hr_documents=HR_DOCUMENTS, held_every=HELD_EVERY, lessee_id=bob.pk)
    # A few leases of alice's own, for "mine".
    ReviewItem.objects.filter(id__in=ReviewItem.objects.order_by("id").values("id")[:30]) \
        .update(leased_by=alice, lease_until=template.created_at.replace(year=2999))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    assert Answer.objects.count() == STORED
    return alice


def _combinations() -> list[QueueFilters]:
    """Each filter alone (every reason, a public, an HR-only and an unknown document, a title
    every public document has, written in another case, a known and an unknown release, each
    claim and hand-off choice), then what the filter form combines: a common and an
    audit-sample reason, a public and an HR-only document, a release, claimed or not, replied
    to or not; and all five at once with an unused reason, "mine" and "waiting"."""
    alone = [QueueFilters(reason=r) for r in REASONS] + [
        QueueFilters(document="kb-03"), QueueFilters(document="hr-1"),
        QueueFilters(document="no-such-document"), QueueFilters(document="pricing AND plans"),
        QueueFilters(release="2026.03"),
        QueueFilters(release="no-such-release"), QueueFilters(claim="unclaimed"),
        QueueFilters(claim="mine"), QueueFilters(handoff="waiting"),
        QueueFilters(handoff="replied"), QueueFilters(order="newest"),
    ]
    # Newest first, read backwards along the same indexes, with what narrows most and least.
    newest = [QueueFilters(order="newest", reason="conflicting_sources", document="kb-03"),
              QueueFilters(order="newest", reason="supported", claim="unclaimed"),
              QueueFilters(order="newest", document="hr-1", release="2026.03"),
              QueueFilters(order="newest", handoff="replied", claim="mine")]
    combined = [
        QueueFilters(reason=r, document=d, release=rel, claim=c, handoff=h)
        for r, d, rel, c, h in itertools.product(
            ("", "conflicting_sources", "supported"), ("", "kb-03", "hr-1"), ("", "2026.03"),
            ("all", "unclaimed"), ("", "replied"))
    ] + [QueueFilters(reason="no_claims", document="kb-03", release="2026.03", claim="mine",
                      handoff="waiting")]
    seen: dict[QueueFilters, None] = {QueueFilters(): None}
    for f in alone + newest + combined:
        seen.setdefault(f)
    return list(seen)


def _describe(filters: QueueFilters, what: str) -> str:
    params = filters.as_params() or {"(no filter)": ""}
    return f"{what} with " + ", ".join(f"{k}={v}" if v else k for k, v in params.items())


def _plans(call: Callable[[], Any]) -> list[tuple[str, str]]:
    """Run `call`, then EXPLAIN every SELECT it ran: [(sql, plan)]."""
    with CaptureQueriesContext(connection) as captured:
        call()
    found = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            cursor.execute(f"EXPLAIN {sql}")
            found.append((sql, "\n".join(row[0] for row in cursor.fetchall())))
    return found


def _full_scans(plan: str) -> list[str]:
    return [t for t in GROWING if re.search(rf"Seq Scan on {t}\b", plan)]


def test_no_queue_filter_reads_a_whole_table(backlog: Any) -> None:
    alice = backlog
    principals = ["user:alice"]
    checks: list[tuple[str, Callable[[], Any]]] = []
    for filters in _combinations():
        def page(filters: QueueFilters = filters) -> Any:
            return queue_page(principals=principals, filters=filters, user=alice)

        checks.append((_describe(filters, "queue page"), page))
    # Deep pages, both directions, from a cursor in the middle of the backlog.
    middle = ReviewItem.objects.order_by("entered_at", "id")[STORED // HELD_EVERY // 2]
    for backwards in (False, True):
        cursor = Cursor(middle.entered_at, middle.pk, backwards)
        for filters in (QueueFilters(), QueueFilters(reason="conflicting_sources",
                                                     document="kb-03"),
                        QueueFilters(order="newest"),
                        QueueFilters(order="newest", reason="conflicting_sources")):
            def deep(filters: QueueFilters = filters, cursor: Cursor = cursor) -> Any:
                return queue_page(principals=principals, filters=filters, user=alice,
                                  cursor=cursor)

            direction = "backwards" if backwards else "forwards"
            checks.append((_describe(filters, f"queue page read {direction} from a cursor"),
                           deep))
    for filters in (QueueFilters(), QueueFilters(reason="supported", document="kb-03"),
                    QueueFilters(handoff="replied"), QueueFilters(order="newest")):
        def claim_next(filters: QueueFilters = filters) -> Any:
            return next_unclaimed(principals=principals, filters=filters, user=alice)

        checks.append((_describe(filters, '"Next"'), claim_next))

    failures, explained = [], 0
    for what, call in checks:
        for sql, plan in _plans(call):
            explained += 1
            scanned = _full_scans(plan)
            if scanned:
                failures.append(f"{what}: sequential scan on {', '.join(scanned)}\n"
                                f"SQL: {sql}\nPLAN:\n{plan}")
    assert explained >= len(checks), "the selectors ran no query"
    assert not failures, (
        f"{len(failures)} of {explained} plans read a whole table:\n"
        + "\n".join(f.split("\n", 1)[0] for f in failures)
        + "\n\nThe first plans:\n\n" + "\n\n".join(failures[:3]))
