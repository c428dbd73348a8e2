"""The audit pages and exports at scale: a page reads a bounded number of rows through
indexes, never counts the log, and merges its parts in seq order without overlap or gap; the
export is formatted and streamed by PostgreSQL yet stays what it was."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record

pytestmark = pytest.mark.django_db

SEARCHES = [
    "", "before=30", "after=5", "trace_id=t-3", "actor=alice", "actor=user:alice token:rq_x1",
    "actor=worker", "action=lease.claimed", "action=lease.*", "document=pricing",
    "since=2026-01-01&until=2030-12-31", "since=2026-01-01&before=10",
    "actor=alice&since=2026-01-01",
    "actor=alice&since=2026-01-01&until=2030-12-31&before=30",
    "action=lease.claimed&since=2026-01-01&until=2030-12-31",
    "action=lease.*&since=2026-01-01", "document=pricing&until=2030-12-31",
    "trace_id=t-3&since=2026-01-01", "actor=alice&action=lease.claimed",
    "actor=worker&document=pricing&since=2026-01-01", "action=lease.*&document=pricing&after=5",
]


def _seqs(response: Any) -> list[int]:
    return [int(s) for s in re.findall(r">#(\d+)</a></td>", response.content.decode())]


def _body(response: Any) -> str:
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def _mixed(n: int) -> None:
    """n events by a person, her two tokens, a look-alike and the worker, in turn."""
    actors = [Actor("user", "user:alice"), Actor("service", "user:alice token:rq_x1"),
              Actor("worker", "worker"), Actor("service", "user:alice token:rq_y2"),
              Actor("user", "user:alicia")]
    for i in range(n):
        actor = actors[i % len(actors)]
        with transaction.atomic():
            audit_record(actor=actor, action="lease.claimed" if i % 2 else "lease.released",
                         object_type="answer", object_id=f"t-{i % 7}", trace_id=f"t-{i % 7}",
                         document_id="pricing" if i % 3 == 0 else "")


_LINKS = {"older": ("before", r"before=(\d+)\">Older"),
          "newer": ("after", r"after=(\d+)\">← Newer")}


def _follow(client: Any, query: str, page: Any, link: str) -> Any:
    """The page the "Older" or "Newer" link of `page` leads to; fails when it has none."""
    name, pattern = _LINKS[link]
    found = re.search(pattern, page.content.decode())
    assert found, f"no {link!r} link on the page"
    return client.get(f"/audit/?{query}&{name}={found.group(1)}")


def _all_pages(client: Any, query: str) -> list[int]:
    seen: list[int] = []
    url = f"/audit/?{query}"
    while True:
        response = client.get(url)
        assert response.status_code == 200
        seen += _seqs(response)
        older = re.search(r"before=(\d+)\">Older", response.content.decode())
        if not older:
            return seen
        url = f"/audit/?{query}&before={older.group(1)}"


@pytest.mark.parametrize("query", SEARCHES)
def test_a_page_runs_a_handful_of_queries_however_long_the_log(
    admin_client: Any, bulk: Callable[..., None], query: str
) -> None:
    _mixed(20)
    admin_client.get(f"/audit/?{query}")
    with CaptureQueriesContext(connection) as small:
        assert admin_client.get(f"/audit/?{query}").status_code == 200
    bulk(500)
    _mixed(20)
    with CaptureQueriesContext(connection) as large:
        assert admin_client.get(f"/audit/?{query}").status_code == 200
    # The most: a search on two fields paging newer, which also looks for an older event.
    assert len(large) == len(small) <= 17, [q["sql"][:120] for q in large]


@pytest.mark.parametrize("query", SEARCHES)
def test_no_page_counts_the_log(admin_client: Any, query: str, db: Any) -> None:
    _mixed(12)
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get(f"/audit/?{query}").status_code == 200
    counts = [q["sql"] for q in queries
              if "COUNT(" in q["sql"].upper() and "audit_auditevent" in q["sql"]]
    assert counts == []


def test_paging_a_person_and_her_tokens_merges_them_in_seq_order(
    admin_client: Any, db: Any
) -> None:
    _mixed(130)  # seq 2 to 131; seq 1 is the admin's account
    hers = list(AuditEvent.objects.filter(actor__startswith="user:alice")
                .exclude(actor="user:alicia").order_by("-seq").values_list("seq", flat=True))
    assert len(hers) > 60
    assert _all_pages(admin_client, "actor=alice") == hers


def test_paging_an_action_prefix_merges_the_actions_in_seq_order(
    admin_client: Any, db: Any
) -> None:
    _mixed(110)
    expected = list(range(111, 1, -1))
    assert _all_pages(admin_client, "action=lease.*") == expected
    newer = admin_client.get("/audit/?action=lease.*&after=61")
    assert _seqs(newer) == list(range(111, 61, -1))
    assert "Newer" not in newer.content.decode()


def test_a_document_search_shows_an_event_about_the_document_once(
    admin_client: Any, db: Any
) -> None:
    with transaction.atomic():
        audit_record(actor=Actor("user", "user:olivia"), action="revision.published",
                     object_type="document", object_id="pricing", document_id="pricing")
        audit_record(actor=Actor("user", "user:olivia"), action="document.withdrawn",
                     object_type="document", object_id="pricing")
        audit_record(actor=Actor("worker", "worker"), action="verdict.created",
                     object_type="answer", object_id="t-1", document_id="pricing")
    assert _seqs(admin_client.get("/audit/?document=pricing")) == [4, 3, 2]


def test_paging_a_date_range_has_no_overlap_or_gap(
    admin_client: Any, bulk: Callable[..., None]
) -> None:
    bulk(130, start=dt.datetime(2026, 10, 1, 12, tzinfo=dt.UTC))  # seq 2 to 131
    query = "since=2026-10-01&until=2026-10-01"
    assert _all_pages(admin_client, query) == list(range(131, 1, -1))
    back = admin_client.get(f"/audit/?{query}&after=81")
    assert _seqs(back) == list(range(131, 81, -1))
    assert "Newer" not in back.content.decode()
    middle = admin_client.get(f"/audit/?{query}&before=82").content.decode()
    assert "after=81" in middle


def _days_of_events(monkeypatch: pytest.MonkeyPatch, days: int) -> None:
    """Four events every six hours from 1 October 2036 on, through audit_record: alice, one of
    her tokens, the worker and a look-alike in turn, claiming or releasing, some on pricing.
    In the future: the fixtures' own events are dated today, and an event is never dated
    before the one it follows."""
    from django.utils import timezone

    actors = [Actor("user", "user:alice"), Actor("service", "user:alice token:rq_x1"),
              Actor("worker", "worker"), Actor("user", "user:alicia")]
    start = dt.datetime(2036, 10, 1, tzinfo=dt.UTC)
    for i in range(days * 4):
        monkeypatch.setattr(timezone, "now", lambda i=i: start + dt.timedelta(hours=6 * i))
        with transaction.atomic():
            audit_record(actor=actors[i % 4], action="lease.claimed" if i % 3 else "lease.released",
                         object_type="answer", object_id=f"t-{i % 5}", trace_id=f"t-{i % 5}",
                         document_id="pricing" if i % 2 else "")
    monkeypatch.undo()


def _newest_first(**conditions: Any) -> list[int]:
    return list(AuditEvent.objects.filter(**conditions).order_by("-created_at", "-seq")
                .values_list("seq", flat=True))


def _all_newer_pages(client: Any, query: str, after: int) -> list[int]:
    """From `after` up to the newest, following the Newer links, newest first."""
    pages: list[list[int]] = []
    url = f"/audit/?{query}&after={after}"
    while True:
        response = client.get(url)
        assert response.status_code == 200
        pages.append(_seqs(response))
        newer = re.search(r"after=(\d+)\">← Newer", response.content.decode())
        if not newer:
            return [seq for page in reversed(pages) for seq in page]
        url = f"/audit/?{query}&after={newer.group(1)}"


def test_paging_a_person_within_dates_has_no_overlap_or_gap(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _days_of_events(monkeypatch, 40)
    expected = _newest_first(actor__startswith="user:alice", created_at__gte=dt.datetime(
        2036, 10, 5, tzinfo=dt.UTC), created_at__lt=dt.datetime(2036, 11, 1, tzinfo=dt.UTC))
    expected = [seq for seq in expected
                if not AuditEvent.objects.filter(seq=seq, actor="user:alicia").exists()]
    assert len(expected) > 50
    query = "actor=alice&since=2036-10-05&until=2036-10-31"
    assert _all_pages(admin_client, query) == expected
    assert _all_newer_pages(admin_client, query, expected[-1]) == expected[:-1]


def test_paging_an_action_prefix_within_dates_has_no_overlap_or_gap(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _days_of_events(monkeypatch, 30)
    expected = _newest_first(action__startswith="lease.", created_at__gte=dt.datetime(
        2036, 10, 3, tzinfo=dt.UTC), created_at__lt=dt.datetime(2036, 10, 29, tzinfo=dt.UTC))
    assert len(expected) > 100
    assert _all_pages(admin_client, "action=lease.*&since=2036-10-03&until=2036-10-28") == (
        expected)


def test_paging_a_document_within_dates_shows_each_event_once(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _days_of_events(monkeypatch, 40)
    with transaction.atomic():  # about the document, naming none: found by its object
        audit_record(actor=Actor("user", "user:olivia"), action="document.withdrawn",
                     object_type="document", object_id="pricing")
    expected = _newest_first(document_id="pricing", created_at__gte=dt.datetime(
        2036, 10, 2, tzinfo=dt.UTC))
    withdrawn = AuditEvent.objects.get(action="document.withdrawn").seq
    assert _all_pages(admin_client, "document=pricing&since=2036-10-02") == [
        withdrawn, *expected]


def test_paging_two_fields_looks_at_a_bounded_window_per_page_without_gaps(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewqueue.audit import selectors

    _days_of_events(monkeypatch, 40)
    monkeypatch.setattr(selectors, "SCAN_WINDOW", 7)
    expected = [seq for seq in _newest_first(action="lease.claimed", document_id="pricing")
                if AuditEvent.objects.get(seq=seq).actor.startswith("user:alice ")]
    assert len(expected) > 5
    query = "actor=alice&action=lease.claimed&document=pricing"
    assert _all_pages(admin_client, query) == expected
    assert _all_newer_pages(admin_client, query, expected[-1]) == expected[:-1]


def test_a_page_of_two_fields_runs_as_many_queries_however_long_the_log(
    admin_client: Any, bulk: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewqueue.audit import selectors

    monkeypatch.setattr(selectors, "SCAN_WINDOW", 50)
    query = "actor=worker&action=lease.claimed&since=2026-01-01"
    _mixed(20)
    with CaptureQueriesContext(connection) as small:
        assert admin_client.get(f"/audit/?{query}").status_code == 200
    bulk(500)  # the worker's events, none of them a claim: the window runs out
    with CaptureQueriesContext(connection) as large:
        response = admin_client.get(f"/audit/?{query}")
    # No event to fetch: one query fewer.
    assert len(large) <= len(small)
    assert _seqs(response) == []
    page = response.content.decode()
    assert "Older" in page
    # Nothing found on this page is not nothing found: no "no event" and no slip to undo.
    assert "None of the events read for this page matches the whole search." in page
    assert "No event matches this search." not in page
    assert "data-retry" not in page


def test_a_cursor_that_names_no_event_still_pages_from_there(
    admin_client: Any, bulk: Callable[..., None]
) -> None:
    bulk(20)  # seq 2 to 21, 3 ms apart after the admin's account
    since = AuditEvent.objects.get(seq=1).created_at.date().isoformat()
    assert _seqs(admin_client.get(f"/audit/?since={since}&before=999")) == list(
        range(21, 0, -1))
    oldest = admin_client.get(f"/audit/?since={since}&after=0")
    assert _seqs(oldest) == list(range(21, 0, -1))
    # Nothing is older than the first event: no link to an empty page.
    older = re.compile(r"before=\d+\">Older")
    assert not older.search(oldest.content.decode())
    assert older.search(admin_client.get(f"/audit/?since={since}&after=1").content.decode())


# --- the export -----------------------------------------------------------------------------


AWKWARD = {"note": 'a "quote", a back\\slash,\na newline, a tab\t, é and 日本',
           "n": 1.5, "list": [1, None, True]}


def _awkward_events(db: Any) -> None:
    with transaction.atomic():
        audit_record(actor=Actor("user", "user:zoë"), action="conflict.dismissed",
                     object_type="conflict", object_id='7,"x"', document_id="pricing",
                     before={}, after=AWKWARD)
        audit_record(actor=Actor("user", "user:bob"), action="lease.claimed",
                     object_type="answer", object_id="-1+1", trace_id="@t")


def test_the_jsonl_export_keeps_awkward_values_as_stored(admin_client: Any, db: Any) -> None:
    _awkward_events(db)
    lines = _body(admin_client.get("/audit/export.jsonl")).split("\n")
    assert lines[-1] == ""
    rows = [json.loads(line) for line in lines[:-1]]
    event = AuditEvent.objects.get(seq=2)
    assert rows[1]["after"] == AWKWARD
    assert rows[1]["object_id"] == '7,"x"'
    assert rows[1]["actor"] == "user:zoë"
    assert rows[1]["created_at"] == event.created_at.isoformat()
    assert rows[2]["object_id"] == "-1+1"  # only the CSV defuses formulas
    assert list(rows[1]) == ["seq", "created_at", "actor_type", "actor", "action", "object_type",
                             "object_id", "trace_id", "document_id", "request_id", "before",
                             "after", "prev_hash", "hash"]


def test_the_csv_export_quotes_and_defuses_awkward_values(admin_client: Any, db: Any) -> None:
    _awkward_events(db)
    rows = list(csv.DictReader(io.StringIO(_body(admin_client.get("/audit/export.csv")),
                                           newline="")))
    assert json.loads(rows[1]["after"]) == AWKWARD
    assert rows[1]["object_id"] == '7,"x"'
    assert rows[2]["object_id"] == "'-1+1"
    assert rows[2]["trace_id"] == "'@t"
    assert rows[1]["created_at"] == AuditEvent.objects.get(seq=2).created_at.isoformat()


def test_a_time_on_the_second_is_exported_as_isoformat_writes_it(
    admin_client: Any, bulk: Callable[..., None], tmp_path: Path
) -> None:
    # bulk() adds 3 ms before each event: the first one falls exactly on 12:00:00.
    bulk(3, start=dt.datetime(2026, 10, 1, 11, 59, 59, 997000, tzinfo=dt.UTC))
    body = _body(admin_client.get("/audit/export.jsonl"))
    stamps = [json.loads(line)["created_at"] for line in body.splitlines()]
    assert stamps[1:] == ["2026-10-01T12:00:00+00:00", "2026-10-01T12:00:00.003000+00:00",
                          "2026-10-01T12:00:00.006000+00:00"]
    export = tmp_path / "audit.jsonl"
    export.write_text(body)
    out = io.StringIO()
    call_command("verify_audit", "--jsonl", str(export), stdout=out)
    assert "All 4 events check out" in out.getvalue()


def test_an_export_with_awkward_values_verifies_offline(
    admin_client: Any, db: Any, tmp_path: Path
) -> None:
    _awkward_events(db)
    export = tmp_path / "audit.jsonl"
    export.write_text(_body(admin_client.get("/audit/export.jsonl")))
    out = io.StringIO()
    call_command("verify_audit", "--jsonl", str(export), stdout=out)
    assert "All 3 events check out" in out.getvalue()


def test_a_large_export_arrives_in_several_blocks(
    admin_client: Any, bulk: Callable[..., None]
) -> None:
    bulk(3000)
    response = admin_client.get("/audit/export.jsonl")
    blocks = list(response.streaming_content)
    assert len(blocks) > 2
    assert sum(block.count(b"\n") for block in blocks) == 3001


def test_an_export_left_half_read_leaves_the_connection_usable(
    bulk: Callable[..., None]
) -> None:
    from reviewqueue.audit.selectors import EventFilter, export_blocks

    bulk(3000)
    blocks = export_blocks(EventFilter(), "csv")
    assert next(blocks).startswith(b"seq,created_at,")
    blocks.close()  # the client went away: the COPY is cancelled, its savepoint rolled back
    assert AuditEvent.objects.filter(action="verdict.created").count() == 3000


def test_newer_from_an_empty_page_of_a_two_field_search_comes_back_to_the_last_event(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A two-field search checks its second field over a window of events a page: when a
    window ends on a match, "Older" leads to an empty page, whose "Newer" left that match
    out (both cursors are exclusive)."""
    from reviewqueue.audit import selectors

    monkeypatch.setattr(selectors, "SCAN_WINDOW", 5)
    for i in range(10):
        with transaction.atomic():
            audit_record(actor=Actor("user", "user:alice"), action="lease.claimed",
                         object_type="answer", object_id=f"t-{i}", trace_id=f"t-{i}")
    expected = list(AuditEvent.objects.filter(actor="user:alice").order_by("-seq")
                    .values_list("seq", flat=True))
    query = "actor=alice&action=lease.claimed"
    assert _all_pages(admin_client, query) == expected
    last = admin_client.get(f"/audit/?{query}&before={expected[-1]}")
    assert _seqs(last) == []  # the window ended on the oldest match
    back = _follow(admin_client, query, last, "newer")
    assert expected[-1] in _seqs(back), (_seqs(back), expected)
    # And "Older" from an empty page of newer events comes back to the event it starts at.
    top = admin_client.get(f"/audit/?{query}&after={expected[0]}")
    assert _seqs(top) == []
    assert _seqs(_follow(admin_client, query, top, "older"))[0] == expected[0]


def test_older_from_an_empty_page_of_newer_events_comes_back_to_the_only_match(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewqueue.audit import selectors

    monkeypatch.setattr(selectors, "SCAN_WINDOW", 5)
    alice = Actor("user", "user:alice")
    with transaction.atomic():  # the one match, and the oldest of alice's events
        audit_record(actor=alice, action="lease.claimed", object_type="answer",
                     object_id="t-0", trace_id="t-0")
    for i in range(1, 9):  # more of alice's events than a window, none matching
        with transaction.atomic():
            audit_record(actor=alice, action="lease.released", object_type="answer",
                         object_id=f"t-{i}", trace_id=f"t-{i}")
    match = AuditEvent.objects.get(action="lease.claimed").seq
    query = "actor=alice&action=lease.claimed"

    # The reader pages "Older" until the page that shows the match...
    url = f"/audit/?{query}"
    while True:
        page = admin_client.get(url)
        if match in _seqs(page):
            break
        older = re.search(r"before=(\d+)\">Older", page.content.decode())
        assert older, "the match is never reached"
        url = f"/audit/?{query}&before={older.group(1)}"
    # ...then "Newer": the window of newer events holds no match (an empty page)...
    empty = _follow(admin_client, query, page, "newer")
    assert _seqs(empty) == []
    # ...and "Older" from there must come back to the match it started after.
    assert match in _seqs(_follow(admin_client, query, empty, "older"))


def test_newer_from_an_empty_page_of_older_events_comes_back_to_the_only_match(
    admin_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first page's window (5 events) ends on the only match; "Older" from it leads to an
    empty page, whose "Newer" must lead back to that match."""
    from reviewqueue.audit import selectors

    monkeypatch.setattr(selectors, "SCAN_WINDOW", 5)
    alice = Actor("user", "user:alice")
    for i in range(8):  # older than the match, none matching
        with transaction.atomic():
            audit_record(actor=alice, action="lease.released", object_type="answer",
                         object_id=f"o-{i}", trace_id=f"o-{i}")
    with transaction.atomic():
        audit_record(actor=alice, action="lease.claimed", object_type="answer",
                     object_id="t-0", trace_id="t-0")
    for i in range(4):  # newer than the match: the first window is these four and the match
        with transaction.atomic():
            audit_record(actor=alice, action="lease.released", object_type="answer",
                         object_id=f"n-{i}", trace_id=f"n-{i}")
    match = AuditEvent.objects.get(action="lease.claimed").seq
    query = "actor=alice&action=lease.claimed"

    first = admin_client.get(f"/audit/?{query}")
    assert _seqs(first) == [match]
    empty = _follow(admin_client, query, first, "older")
    assert _seqs(empty) == []
    assert match in _seqs(_follow(admin_client, query, empty, "newer"))
