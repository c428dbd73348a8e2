"""The item page's verdict history names each document by its title beside its id, as the audit
log and the jobs list do, and never by a title the reader may not read."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.sources.services import document_withdraw
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

PASSAGES = [{"span": "p1", "text": "The free trial lasts 14 days."}]


def history_table(page: str) -> str:
    """The verdict history's table, as HTML."""
    start = page.index('<table class="history')
    return page[start:page.index("</table>", start)]


def history_entries(page: str) -> list[str]:
    """Each entry of the verdict history as the reader sees it: text, tags left out."""
    body = history_table(page).split("<tbody>", 1)[1]
    rows = re.split(r"<tr\b[^>]*>", body)[1:]
    return [html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", row))).strip()
            for row in rows]


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Any:
    """Runs what a source change leaves for after its commit (the answers' re-evaluation),
    as the real request does once it commits."""
    return django_capture_on_commit_callbacks


def item_page(client: Any, trace: str) -> str:
    response = client.get(f"/answers/{trace}/")
    assert response.status_code == 200
    return response.content.decode()


def test_a_re_evaluation_after_a_revision_names_the_document_by_its_title(
    hold: Any, publish: Any, reviewer: Any, login: Any, committed: Any
) -> None:
    trace = hold()
    with committed(execute=True):
        publish("pricing", revision="r2", title="Pricing, 2027 edition",
                facts=[fact("trial_days", 14)], passages=PASSAGES)

    entries = history_entries(item_page(login(reviewer), trace))

    (revised,) = [e for e in entries if "Revision published" in e]
    assert "pricing@r1 → r2 · Pricing, 2027 edition" in revised
    assert "pricing-eu@r1 · Pricing in the EU" in revised


def test_a_title_with_markup_is_shown_as_text(
    hold: Any, publish: Any, reviewer: Any, login: Any, committed: Any
) -> None:
    trace = hold()
    with committed(execute=True):
        publish("pricing", revision="r2", title='<script>alert("r2")</script> & plans',
                facts=[fact("trial_days", 14)], passages=PASSAGES)

    table = history_table(item_page(login(reviewer), trace))

    assert "&lt;script&gt;alert(&quot;r2&quot;)&lt;/script&gt; &amp; plans" in table
    assert "<script>" not in table


def test_a_withdrawn_document_keeps_its_last_title(
    hold: Any, owner: Any, reviewer: Any, login: Any, committed: Any
) -> None:
    trace = hold()
    with committed(execute=True):
        document_withdraw(document_key="pricing-eu", actor=Actor.of_user(owner))

    entries = history_entries(item_page(login(reviewer), trace))

    (withdrawn,) = [e for e in entries if "Document withdrawn" in e]
    assert "pricing-eu@r1 · Pricing in the EU" in withdrawn


def test_a_document_the_reader_may_not_read_is_named_by_its_id_alone(
    hold: Any, hr_sources: None, reviewer: Any, login: Any
) -> None:
    # A verdict on record that names a document the reader may not read (the page itself is
    # only built when they may read every document the answer retrieved; a stored verdict is
    # not trusted to name only those).
    trace = hold()
    answer = Answer.objects.get(trace_id=trace)
    current = answer.current_verdict
    Verdict.objects.create(
        answer=answer, version=current.version, decision=current.decision,
        reason=current.reason, reasons=current.reasons, fingerprint="names-hr",
        gate_version=current.gate_version, as_of=current.as_of, trigger="manual",
        revisions_used=[*current.revisions_used,
                        {"cite": "d9", "document": "hr-handbook", "revision": "r1",
                         "current": "r1"}])

    page = item_page(login(reviewer), trace)
    entries = history_entries(page)

    (named,) = [e for e in entries if "hr-handbook" in e]
    assert "pricing@r1 · Pricing and plans" in named
    assert "hr-handbook@r1" in named
    assert "HR handbook" not in page


def test_an_earlier_restricted_revision_lends_the_entry_no_title(
    publish: Any, submit: Any, reviewer: Any, login: Any, committed: Any
) -> None:
    # The answer was taken from a revision only HR could read; the document is public now.
    publish("pricing", revision="r1", title="Reorganisation plan", principals=["group:hr"],
            facts=[fact("trial_days", 14)], passages=PASSAGES)
    submit("was-hr", as_of=None, asked_by=["group:hr"])
    with committed(execute=True):
        publish("pricing", revision="r2", title="Pricing and plans",
                facts=[fact("trial_days", 14)], passages=PASSAGES)

    page = item_page(login(reviewer), "was-hr")
    entries = history_entries(page)

    assert entries and all("pricing@r1" in e and "· Pricing and plans" in e for e in entries)
    assert "Reorganisation plan" not in page


def test_the_history_costs_the_same_queries_for_40_entries_as_for_2(
    hold: Any, owner: Any, reviewer: Any, login: Any, committed: Any
) -> None:
    trace = hold()
    # One document withdrawn: it has no current revision to take its title from.
    with committed(execute=True):
        document_withdraw(document_key="pricing-eu", actor=Actor.of_user(owner))
    client = login(reviewer)
    item_page(client, trace)

    def count(entries: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            page = item_page(client, trace)
        shown = history_entries(page)
        assert len(shown) == entries
        assert all("· Pricing and plans" in e and "· Pricing in the EU" in e for e in shown)
        return len(ctx.captured_queries)

    few = count(2)
    answer = Answer.objects.get(trace_id=trace)
    current = answer.current_verdict
    Verdict.objects.bulk_create([
        Verdict(answer=answer, version=current.version, decision=current.decision,
                reason=current.reason, reasons=current.reasons, fingerprint=f"more-{i}",
                gate_version=current.gate_version, as_of=current.as_of, trigger="manual",
                revisions_used=current.revisions_used)
        for i in range(38)
    ])

    assert count(40) == few
