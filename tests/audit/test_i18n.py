"""What the audit pages show people goes through gettext: the verification summary and its
problems (stored in English, which verify_audit prints), the search form, and labels instead of
the gate's codes. The Japanese texts themselves need the compiled catalogue; these tests check
the English page, and that every sentence a walk writes is recognised and translated."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.utils import translation

from reviewqueue.audit import chain as chain_module
from reviewqueue.audit.chain import Anchor, ChainReport, localized_detail, localized_problem, walk
from reviewqueue.audit.hashing import GENESIS_HASH, event_hash, hashed_fields_of
from tests.audit.conftest import verify

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def _rows(seqs: list[int], *, changed: tuple[int, ...] = (), relink: tuple[int, ...] = (),
          first_prev: str = GENESIS_HASH) -> list[dict[str, Any]]:
    """Events with these seqs, each linked to the one before it in the list; `changed` ones
    are edited after hashing, `relink` ones link to a wrong hash (and are hashed with it)."""
    rows, prev = [], first_prev
    for seq in seqs:
        row = {"seq": seq, "created_at": "2026-10-01T12:00:00+00:00", "actor_type": "worker",
               "actor": "worker", "action": "verdict.created", "object_type": "answer",
               "object_id": f"t-{seq}", "trace_id": f"t-{seq}", "document_id": "",
               "request_id": "", "before": {}, "after": {"n": seq},
               "prev_hash": "0" * 64 if seq in relink else prev}
        row["hash"] = event_hash(hashed_fields_of(row), row["prev_hash"])
        if seq in changed:
            row = {**row, "actor": "user:mallory"}
        prev = row["hash"]
        rows.append(row)
    return rows


def _reports() -> Iterator[ChainReport]:
    """A walk of every kind a run of the table can store: intact, empty, each problem."""
    intact = _rows([1, 2, 3])
    yield walk(intact)
    yield walk([])
    yield walk(intact, anchor=Anchor(2, intact[1]["hash"], "verified on 2026-10-01 02:30 UTC"))
    yield walk(intact, anchor=Anchor(3, intact[2]["hash"], "given with --anchor"))
    yield walk(intact, anchor=Anchor(1, intact[0]["hash"], "given with --anchor"),
               also=[Anchor(3, intact[2]["hash"], "given with --anchor")])  # two by hand
    yield walk(intact[:1])  # one event
    yield walk(_rows([1, 2, 3], changed=(2,)))  # one problem
    yield walk(_rows([1, 2, 3, 4], changed=(2, 3)))  # two problems
    yield walk(_rows([1, 3]))  # one event missing
    yield walk(_rows([1, 4, 5]))  # a range missing
    rows = _rows([1, 2, 3])
    yield walk([rows[0], rows[1], rows[1], rows[2]])  # a repeat: out of order
    yield walk(_rows([0, 1, 2]))  # seq below 1
    yield walk(_rows([1, 2, 3], relink=(3,)))  # a broken link to an event
    yield walk(_rows([1, 2], first_prev="1" * 64))  # a broken link to the start
    rows = _rows([1, 2, 3, 4])
    yield walk([rows[0], {**rows[2], "seq": 2}, {**rows[1], "seq": 3}, rows[3]])  # renumbered
    yield walk(intact, anchor=Anchor(2, "e" * 64, "verified on 2026-10-01 02:30 UTC"))
    yield walk(intact, anchor=Anchor(9, "e" * 64, "given with --anchor"))  # truncated
    yield walk([], anchor=Anchor(4, "e" * 64, "verified on 2026-10-01 02:30 UTC"))  # no event


def test_every_summary_and_problem_a_walk_writes_reads_as_stored_in_english() -> None:
    seen_problems = set()
    # In English whatever an earlier test's request left active in this thread.
    with translation.override("en"):
        for report in _reports():
            assert localized_detail(report.describe()) == report.describe()
            for finding in report.problems:
                assert localized_problem(finding.detail) == finding.detail
                seen_problems.add(finding.problem)
    assert seen_problems == {"changed", "missing", "out_of_order", "broken_link", "rewritten",
                             "truncated"}


def test_every_summary_and_problem_a_walk_writes_goes_through_gettext(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a gettext that marks what it translated, no English is left outside a mark: every
    sentence of every summary (and every anchor's source) is recognised and translated."""
    monkeypatch.setattr(chain_module, "_", lambda text: f"\u00ab{text}\u00bb")
    for report in _reports():
        shown = localized_detail(report.describe())
        assert shown.startswith("\u00ab"), shown
        outside = shown
        while re.search(r"\u00ab[^\u00ab\u00bb]*\u00bb", outside):
            outside = re.sub(r"\u00ab[^\u00ab\u00bb]*\u00bb", "", outside)
        assert not any(c.isalpha() for c in outside), shown
        for finding in report.problems:
            assert localized_problem(finding.detail).startswith("\u00ab"), finding.detail


def test_the_time_an_anchor_was_verified_is_shown_in_the_pages_time_zone() -> None:
    from django.utils import timezone

    intact = _rows([1, 2, 3])
    report = walk(intact, anchor=Anchor(2, "e" * 64, "verified on 2026-10-01 02:30 UTC"))
    with translation.override("en"), timezone.override("America/Los_Angeles"):
        shown = localized_detail(report.describe())
    assert "the one verified on 2026-09-30 19:30 PDT:" in shown
    assert "UTC" not in shown


def test_an_unknown_summary_is_shown_as_stored() -> None:
    assert localized_detail("Checked by hand: fine.") == "Checked by hand: fine."
    assert localized_problem("something else happened") == "something else happened"


@pytest.mark.django_db
def test_the_audit_page_shows_the_verification_and_the_search_in_words(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(2)
    verify()
    page = admin_client.get("/audit/", **EN).content.decode()
    assert "All 3 events check out, up to event #3" in page
    assert "(verify_audit command)" in page
    assert "Exact, or a prefix ending in * (revision.*)" in page
    assert ("A username (alice), or as logged: user:alice, service:rag-service, worker, "
            "system") in page
    assert "From <input" in page and "To <input" in page


@pytest.mark.django_db
def test_the_timeline_shows_reason_labels_not_codes(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    answer_story("t-story")
    page = admin_client.get("/audit/answers/t-story/", **EN).content.decode()
    assert ">Conflicting sources</span>" in page
    assert ">Needs review</span>" in page
    # The code is kept only as the label's title, for whoever searches by it.
    assert "<code>conflicting_sources</code>" not in page
    assert ">conflicting_sources<" not in page


@pytest.mark.parametrize("path", ["/audit/?since=1960-01-01", "/insight/?until=3000-01-01"])
def test_a_day_out_of_a_searchs_range_is_refused_in_the_pages_language(
    admin_client: Any, path: str
) -> None:
    page = admin_client.get(path, HTTP_ACCEPT_LANGUAGE="ja")
    assert page.status_code == 400
    text = page.content.decode()
    assert "1970-01-01" in text and "2999-12-31" in text
    assert "Give a day between" not in text
    english = admin_client.get(path, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Give a day between 1970-01-01 and 2999-12-31." in english


@pytest.mark.django_db
def test_a_log_of_one_event_is_said_to_check_out_in_the_singular(admin_client: Any) -> None:
    # The admin's account is the log's one event.
    run = verify()
    assert run.events_checked == 1
    page = admin_client.get("/audit/", **EN).content.decode()
    assert "The one event checks out, up to event #1 (hash " in page
    assert "All 1 events" not in page
    japanese = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "1 件すべて" not in japanese  # "all 1 events"
