"""The item page: everything needed to judge a held answer without leaving the page."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.timesince import timesince
from hypothesis import given
from hypothesis import strategies as st

from reviewqueue.audit.services import SYSTEM
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.selectors.item import SentenceView, answer_sentences
from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest
from reviewqueue.sources.services import FactInput, PassageInput, RevisionInput, revision_publish
from reviewqueue.textdiff import diff_segments
from tests.reviews.conftest import HR_MARKER, current_verdict_id, days, fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def item_html(hold: Any, reviewer: Any, login: Any) -> str:
    trace = hold()
    response = login(reviewer).get(f"/answers/{trace}/")
    assert response.status_code == 200
    # Relative times keep their number and unit together with a no-break space.
    return response.content.decode().replace("\xa0", " ")


def shown(sentence: SentenceView) -> list[str]:
    """A sentence's parts in order: its own words as written, each citation as [id]."""
    return [part.text or f"[{part.cite}]" for part in sentence.parts]


def sentences_drawn(html: str) -> list[str]:
    """Each sentence of the answer as the page draws it, tags left out and each expandable
    citation written {id}: "14 days{d1}." when the chip stands before the full stop."""
    answer = html[html.index('<ol class="sentences">'):]
    answer = re.sub(r'<details class="cite" data-cite="([^"]*)"[^>]*>.*?</details>', r"{\1}",
                    answer[:answer.index("</ol>")], flags=re.S)
    items = re.findall(r'<li class="sentence"[^>]*>(.*?)</li>', answer, re.S)
    return [" ".join(re.sub(r"<[^>]*>", "", li).split()) for li in items]


def test_the_answer_is_split_into_sentences_with_their_citations(
    sources: Any, submit: Any, reviewer: Any, login: Any
) -> None:
    submit("s", as_of=None, answer="The trial lasts 14 days [d1]. In the EU it is longer [d2].",
           retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                      {"cite": "d2", "document_id": "pricing-eu", "revision": "r1",
                       "span": "p1"}])
    page = login(reviewer).get("/answers/s/").context["page"]
    assert [shown(s) for s in page.sentences] == [
        ["The trial lasts 14 days", "[d1]", "."], ["In the EU it is longer", "[d2]", "."]]
    assert [[p.citation.document_key for p in s.parts if p.cite] for s in page.sentences] == [
        ["pricing"], ["pricing-eu"]]


@pytest.mark.parametrize(("answer", "drawn"), [
    # Full-width brackets, as Japanese text writes them, and ids after a semicolon or a
    # Japanese comma are citations to the reader and to the gate (2026.12.8): each gets its chip.
    ("無料体験は14日間です\uff3bd1\uff3d。EUでは30日間です\uff3bd2\uff3d。",
     ["無料体験は14日間です{d1}。", "EUでは30日間です{d2}。"]),
    ("The trial lasts 14 days [d1; d2]. In the EU it is 30 days [d2\u3001d1].",
     ["The trial lasts 14 days{d1}{d2}.", "In the EU it is 30 days{d2}{d1}."]),
])
def test_wide_and_semicolon_markers_get_their_citations_on_the_page(
    sources: Any, submit: Any, reviewer: Any, login: Any, answer: str, drawn: list[str]
) -> None:
    submit("w", as_of=None, answer=answer,
           retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                      {"cite": "d2", "document_id": "pricing-eu", "revision": "r1",
                       "span": "p1"}])
    response = login(reviewer).get("/answers/w/")
    page = response.context["page"]

    assert sentences_drawn(response.content.decode()) == drawn
    assert page.uncited == []
    assert {p.citation.document_key for s in page.sentences for p in s.parts if p.cite} == {
        "pricing", "pricing-eu"}


def test_each_citation_is_drawn_where_its_marker_was_before_the_full_stop(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(answer="The trial lasts 14 days per month [d1]. Support is always open.")
    html = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert sentences_drawn(html) == ["The trial lasts 14 days per month{d1}.",
                                     "Support is always open. no citation"]
    # The chip expands in place, to the passage it cites.
    assert '14 days per month</span><details class="cite" data-cite="d1">' in html
    assert "<mark>The free trial lasts 14 days.</mark>" in html
    # Said again where the reviewer approves: the gate checked nothing of that sentence.
    approve = html.split('data-action="approve"', 1)[1].split("</form>", 1)[0]
    assert ('<p class="warn-text" data-uncited>Sentence 2 cites no source: no gate checked '
            "what it says.</p>") in approve


def test_a_list_item_that_cites_nothing_is_named_under_a_cited_one(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(answer="- The trial lasts 14 days per month [d1]\n- Support is always open")
    html = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert sentences_drawn(html) == ["- The trial lasts 14 days per month{d1}",
                                     "- Support is always open no citation"]
    assert ('<p class="warn-text" data-uncited>Sentence 2 cites no source: no gate checked '
            "what it says.</p>") in html


def test_script_in_the_answer_is_drawn_as_text(hold: Any, reviewer: Any, login: Any) -> None:
    trace = hold(answer='The trial lasts <script>alert("x")</script> 14 days [d1].')
    html = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert sentences_drawn(html) == [
        "The trial lasts &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; 14 days{d1}."]
    assert "<script>alert" not in html


def test_a_marker_expands_to_the_passage_with_its_source(item_html: str) -> None:
    assert '<details class="cite" data-cite="d1">' in item_html
    assert "<mark>The free trial lasts 14 days.</mark>" in item_html
    assert 'href="https://docs.example.test/pricing"' in item_html
    assert "Revision r1" in item_html
    # The fixtures' sources were updated on a fixed day; how long ago that is depends on today.
    since = timesince(dt.datetime(2026, 10, 1, 9, tzinfo=dt.UTC), depth=1).replace("\xa0", " ")
    assert ('<time datetime="2026-10-01T09:00:00+00:00" title="2026-10-01 09:00">'
            f"updated 2026-10-01 ({since} ago)</time>") in item_html
    assert "current, 60 days left" in item_html


def test_conflicting_sources_are_shown_side_by_side(hold: Any, reviewer: Any,
                                                    login: Any) -> None:
    trace = hold()
    page = login(reviewer).get(f"/answers/{trace}/").context["page"]
    (conflict,) = page.conflicts
    shown = {(s.document_key, s.fact.value, s.owner, s.passage.text) for s in conflict.sources}
    assert shown == {("pricing", 14, "olivia", "The free trial lasts 14 days."),
                     ("pricing-eu", 30, "olivia", "In the EU the free trial lasts 30 days.")}
    assert conflict.sentences == ["Sources in force disagree about claim 1 (trial_days = 14)."]


def test_a_side_that_speaks_of_a_subject_says_which(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    # The claim names no subject, so the EU-only value counts against it: the reviewer must
    # see that the two sources speak of different audiences.
    publish("pricing-eu", revision="r2", title="Pricing in the EU",
            facts=[fact("trial_days", 30, subject="EU <customers>")],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 days."}])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r2", "span": "p1"},
    ])
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert page.count("data-subject") == 1
    assert "<dd data-subject>EU &lt;customers&gt;</dd>" in page
    # Not a contradiction between the documents: no owner is told to resolve anything.
    assert "so no owner has anything to resolve" in page
    assert "No conflict record touches these sources." not in page
    # And the conflict's own sentence says the same, not that the documents disagree.
    assert ("<p>Sources in force give different values for claim 1 (trial_days = 14) because "
            "they speak of different subjects, and the claim names none: the answer has to say "
            "which applies.</p>") in page
    assert "Sources in force disagree about" not in page


def test_two_sources_disagreeing_on_one_subject_disagree_whatever_a_third_says(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    """pricing says 14 and partner-terms 30, with no subject: a contradiction an owner
    settles. The EU value beside them does not make it a matter of subjects."""
    publish("partner-terms", title="Partner terms", facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "Partners get a 30-day trial."}])
    publish("pricing-eu", revision="r2", title="Pricing in the EU",
            facts=[fact("trial_days", 21, subject="EU")],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 21 days."}])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r2", "span": "p1"},
    ])
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    assert "Partner terms" in page
    assert "<p>Sources in force disagree about claim 1 (trial_days = 14).</p>" in page
    assert "because they speak of different subjects" not in page


def test_a_single_source_and_unused_documents_are_pointed_out(item_html: str) -> None:
    assert "rests on a single source: [d1]" in item_html
    assert "Retrieved but not used by any claim" in item_html
    assert "[d2] Pricing in the EU" in item_html


def test_one_document_retrieved_in_many_chunks_is_one_source_named_in_short(
    sources: Any, submit: Any, reviewer: Any, login: Any
) -> None:
    chunks = [{"cite": f"c{i}", "document_id": "pricing", "revision": "r1"}
              for i in range(1, 13)]
    submit("chunks", as_of=None, retrieved=chunks, answer="The trial lasts 14 days [c1].",
           claims=[{"key": "trial_days", "value": 14, "cite": "c1"}])
    page = login(reviewer).get("/answers/chunks/").content.decode()
    assert ("Claim 1 (trial_days = 14) rests on a single document, retrieved as [c1], [c2], "
            "[c3], [c4], [c5], [c6], [c7], [c8], [c9], [c10] and 2 more.") in page
    assert "[c11]," not in page.split("data-single-source", 1)[1].split("</div>", 1)[0]
    # Its verdict used one revision, listed once.
    history = page.split("Verdict history", 1)[1]
    assert history.count('<span class="rev">pricing@r1</span>') == 1


def test_every_finding_is_explained_in_a_sentence(item_html: str) -> None:
    assert "sources in force give different values" in item_html


def test_the_verdict_history_lists_trigger_decision_and_revisions(item_html: str) -> None:
    assert "Ingested" in item_html
    assert "pricing@r1" in item_html and "pricing-eu@r1" in item_html


def test_a_superseded_passage_is_compared_with_the_current_one(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial lasts 14 calendar days."}])
    submit("old", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}])
    page = login(reviewer).get("/answers/old/").context["page"]
    assert page.verdict.reason == "superseded_revision"
    (diff,) = page.diffs
    assert (diff.old_revision, diff.new_revision) == ("r1", "r2")
    assert [s.text for s in diff.new if s.kind == "added"] == ["calendar "]
    html = login(reviewer).get("/answers/old/").content.decode()
    assert "<ins>calendar </ins>" in html
    # The edit form says up front that an edit cannot clear "Source revised".
    assert "an edit still stays held, for you to approve once saved." in html


def test_the_edit_form_promises_nothing_about_revised_sources_when_none_was(
    item_html: str
) -> None:
    assert "The gate checks the edit at once" in item_html
    assert "data-edit-stays-held" not in item_html


def test_a_revision_that_only_moves_an_end_date_shows_it_beside_the_quoted_one(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    publish("pricing", revision="r2", facts=[fact("trial_days", 14, end=20),
                                             fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                      {"span": "p2", "text": "Support is available 24/7."}])
    submit("old", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}])
    page = login(reviewer).get("/answers/old/").context["page"]
    (diff,) = page.diffs
    # Only the cited fact, whose end moved; support_hours is neither quoted nor claimed.
    (change,) = diff.facts
    assert change.what == "trial_days" and not change.value_changed and change.validity_changed
    assert (change.before.valid_until.isoformat(), change.after.valid_until.isoformat()) == (
        days(60), days(20))
    assert diff.passage_same
    html = login(reviewer).get("/answers/old/").content.decode()
    # Only the end is marked as changed.
    for end in (days(20), days(60)):
        assert (f'<span class="validity"><span>{days(-30)}</span> → '
                f'<span class="changed">{end}</span></span>') in html
    assert "The quoted passage is the same in both revisions." in html
    assert "<ins>" not in html


def test_a_revision_that_only_rewords_the_passage_says_no_fact_changed(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "A free trial lasts fourteen days (14)."}])
    submit("reworded", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}])
    html = login(reviewer).get("/answers/reworded/").content.decode()
    section = html[html.index("What changed in the sources"):html.index("Verdict history")]
    assert ("No fact behind this citation changed, the facts the answer's claims use "
            "included.") in section
    assert "<ins>" in section and "<del>" in section
    assert "fact-changes" not in section


def test_a_revised_source_no_claim_cites_is_not_said_to_leave_the_claims_facts_unchanged(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    # Its claim cites d1 (pricing); d2 (pricing-eu) is only retrieved.
    submit("both", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"}])
    publish("pricing-eu", revision="r2", title="Pricing in the EU",
            facts=[fact("trial_days", 28)])
    html = login(reviewer).get("/answers/both/").content.decode()
    section = html[html.index("What changed in the sources"):html.index("Verdict history")]
    assert "[d2] pricing-eu: r1 → r2" in section
    assert ("No claim cites this source, but the gate weighs it with the others. Facts of its "
            "quoted passage whose value or validity changed:") in section
    assert "claims use are unchanged" not in section


def test_another_chunk_of_a_cited_document_is_not_said_to_be_cited_by_no_claim(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    submit("chunks", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing", "revision": "r1", "span": "p2"}])
    publish("pricing", revision="r2", facts=[fact("trial_days", 21),
                                             fact("support_hours", "9-5", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 21 days."},
                      {"span": "p2", "text": "Support is available 9-5."}])
    page = login(reviewer).get("/answers/chunks/").context["page"]
    assert {d.cite: d.cited_by_claim for d in page.diffs} == {"d1": True, "d2": True}


def test_only_the_facts_of_the_claimed_subject_are_marked_claimed(
    submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    """The answer claims the pro plan's price; the basic plan's price, in the same passage,
    changed too, but no claim asks about it."""
    price = "monthly_price_usd"
    publish("plans", revision="r1", facts=[fact(price, 20, subject="basic"),
                                           fact(price, 50, subject="pro")])
    submit("pro", as_of=None, claims=[{"subject": "pro", "key": price, "value": 50,
                                       "cite": "d1"}],
           answer="Pro costs 50 dollars [d1].",
           retrieved=[{"cite": "d1", "document_id": "plans", "revision": "r1", "span": "p1"}])
    publish("plans", revision="r2", facts=[fact(price, 25, subject="basic"),
                                           fact(price, 55, subject="pro")])
    (diff,) = login(reviewer).get("/answers/pro/").context["page"].diffs
    assert {(c.what, c.used) for c in diff.facts} == {
        (f"pro.{price}", True), (f"basic.{price}", False)}


def test_a_fact_moved_to_another_passage_unchanged_is_no_change(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    # r2 splits the trial's period in two and moves the fact to a passage of its own.
    publish("pricing", revision="r2",
            facts=[fact("trial_days", 14, span="p3", end=None),
                   fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                      {"span": "p2", "text": "Support is available 24/7."},
                      {"span": "p3", "text": "Trial: 14 days."}])
    submit("old", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}])
    (diff,) = login(reviewer).get("/answers/old/").context["page"].diffs
    (change,) = diff.facts  # the end moved, not the fact's place, and nothing else
    assert (change.before.valid_until.isoformat(), change.after.valid_until) == (days(60), None)
    assert not change.value_changed and diff.passage_same


def test_a_fact_the_current_revision_no_longer_states_is_shown_as_gone(
    sources: Any, submit: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    publish("pricing", revision="r2", facts=[fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p2", "text": "Support is available 24/7."}])
    submit("old", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"}])
    page = login(reviewer).get("/answers/old/").context["page"]
    (diff,) = page.diffs
    (change,) = diff.facts
    assert (change.before.value, change.after) == (14, None)
    assert diff.new_missing
    html = login(reviewer).get("/answers/old/").content.decode()
    assert "Not stated" in html and "The current revision no longer has this passage." in html


@given(st.text(max_size=200), st.text(max_size=200))
def test_diff_segments_rebuild_both_texts(before: str, after: str) -> None:
    old, new = diff_segments(before, after)
    assert "".join(s.text for s in old) == before
    assert "".join(s.text for s in new) == after
    assert {s.kind for s in old} <= {"same", "removed"}
    assert {s.kind for s in new} <= {"same", "added"}


@pytest.mark.parametrize(("answer", "parts"), [
    ("Fourteen days [d1][d2].", [["Fourteen days", "[d1]", "[d2]", "."]]),
    ("Fourteen days [d1, d2] for teams.", [["Fourteen days", "[d1]", "[d2]", " for teams."]]),
    ("[d1] Fourteen days.", [["[d1]", " Fourteen days."]]),
    # Written after the full stop, the citation stays after it.
    ("Fourteen days. [d1] Thirty in the EU.", [["Fourteen days.", "[d1]"],
                                               ["Thirty in the EU."]]),
    # Japanese: no space after 。, the citation before it as written.
    ("無料体験は14日間です[d1]。EUでは30日間です[d2]。",
     [["無料体験は14日間です", "[d1]", "。"], ["EUでは30日間です", "[d2]", "。"]]),
    # What the gate does not read as a marker is the answer's own text, shown as written.
    ("Use `refunds[r9]`  as the key [d1].", [["Use `refunds[r9]`  as the key", "[d1]", "."]]),
    ("See [the policy](https://example.com/p[1]) [d2].",
     [["See [the policy](https://example.com/p[1])", "[d2]", "."]]),
    ("Write `a  ,  b` [d1].", [["Write `a  ,  b`", "[d1]", "."]]),
    # Code is read in the whole answer, as the gate reads it, even where a sentence ends in it.
    ("Run `x. [d1] y` now [d2].", [["Run `x. [d1]"], ["y` now", "[d2]", "."]]),
    # A comment inside a marker hides nothing of it: the reader sees [d1], drawn as such.
    ("Fourteen days [d<!-- x -->1].", [["Fourteen days", "[d1]", "."]]),
    # Full-width brackets, semicolons, Japanese commas and footnote references are markers.
    ("無料体験は14日間です。\uff3bd1\uff3dEUでは30日間です[d2; d3]。",
     [["無料体験は14日間です。", "[d1]"], ["EUでは30日間です", "[d2]", "[d3]", "。"]]),
    ("Fourteen days [d1\u3001d2] for teams[^d3].",
     [["Fourteen days", "[d1]", "[d2]", " for teams", "[d3]", "."]]),
])
def test_only_the_markers_the_gate_reads_become_citations_in_their_place(
    answer: str, parts: list[list[str]]
) -> None:
    assert [shown(s) for s in answer_sentences(answer, {})] == parts


def test_the_item_page_is_404_for_an_unknown_answer(reviewer: Any, login: Any) -> None:
    assert login(reviewer).get("/answers/nope/").status_code == 404


def test_the_item_page_speaks_japanese(hold: Any, reviewer: Any, login: Any) -> None:
    trace = hold()
    html = login(reviewer, HTTP_ACCEPT_LANGUAGE="ja").get(f"/answers/{trace}/").content.decode()
    assert "承認" in html
    assert "矛盾する情報源" in html


# --- Cost -------------------------------------------------------------------------------------

def _publish_public(owner: Any, key: str, revision: str, passages: tuple[Any, ...],
                   facts: tuple[Any, ...]) -> None:
    revision_publish(document_key=key, revision=revision, actor=SYSTEM, data=RevisionInput(
        title=key, owner=owner.username, updated_at=timezone.now(), allowed_principals=("*",),
        passages=passages, facts=facts))


def _answer_with_citations(owner: Any, trace_id: str, n: int) -> None:
    for i in range(n):
        _publish_public(
            owner, f"doc-{trace_id}-{i}", "r1",
            (PassageInput("p0", "Before."), PassageInput("p1", f"Fact {i}."),
             PassageInput("p2", "After.")),
            (FactInput(key=f"k{i}", value=i, valid_from=_date(-5), valid_until=_date(5),
                       span="p1"),
             FactInput(key="shared", value=i, valid_from=_date(-5), valid_until=None,
                       span="p1")))
    text = " ".join(f"Fact number {i} holds [c{i}]." for i in range(n))
    answer_ingest(actor=SYSTEM, data=AnswerInput(
        trace_id=trace_id, question="Many facts?", answer=text, asked_by=("*",),
        index_release="x", as_of=None,
        retrieved=tuple(RetrievedInput(f"c{i}", f"doc-{trace_id}-{i}", "r1", "p1")
                        for i in range(n)),
        # One claim on a key every document disagrees about: a conflict with n sources.
        claims=tuple([{"key": f"k{i}", "value": i, "cite": f"c{i}"} for i in range(n)]
                     + [{"key": "shared", "value": 0, "cite": "c0"}]),
    ))


def _date(offset: int) -> Any:
    return dt.date.fromisoformat(days(offset))


def test_the_item_page_runs_as_many_queries_for_50_citations_as_for_2(
    owner: Any, reviewer: Any, login: Any
) -> None:
    _answer_with_citations(owner, "two", 2)
    _answer_with_citations(owner, "fifty", 50)
    client = login(reviewer)
    client.get("/answers/two/")

    def count(trace: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(f"/answers/{trace}/")
        assert response.status_code == 200
        assert response.context["page"].verdict.reason == "conflicting_sources"
        return len(ctx.captured_queries)

    assert count("two") == count("fifty")


def test_the_item_page_runs_as_many_queries_for_50_revised_citations_as_for_2(
    owner: Any, reviewer: Any, login: Any
) -> None:
    for trace, n in (("two", 2), ("fifty", 50)):
        _answer_with_citations(owner, trace, n)
        for i in range(n):  # every cited document revised: each citation gets its changes
            _publish_public(owner, f"doc-{trace}-{i}", "r2",
                            (PassageInput("p1", f"Fact {i}, revised."),),
                            (FactInput(key=f"k{i}", value=i, valid_from=_date(-5),
                                       valid_until=_date(3), span="p1"),))
    client = login(reviewer)
    client.get("/answers/two/")

    def count(trace: str, n: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(f"/answers/{trace}/")
        diffs = response.context["page"].diffs
        assert len(diffs) == n and all(d.facts and not d.passage_same for d in diffs)
        return len(ctx.captured_queries)

    assert count("two", 2) == count("fifty", 50)


# --- Invariant 5: no passage text of a document the reader may not read -------------------------

@pytest.fixture
def hr_answer(hr_sources: Any, sources: Any, submit: Any) -> str:
    response = submit("hr-1", as_of=None, asked_by=["group:hr"], retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "hr-handbook", "revision": "r1", "span": "p1"},
    ])
    assert response.json()["status"] == "held"
    return "hr-1"


def test_a_reviewer_outside_hr_never_receives_the_hr_passage(
    hr_answer: str, reviewer: Any, login: Any, token_client: Any
) -> None:
    client = login(reviewer)
    api = token_client(reviewer)
    verdict = current_verdict_id(hr_answer)
    responses = [
        client.get("/"),
        client.get("/?document=hr-handbook"),
        client.get(f"/answers/{hr_answer}/"),
        client.post(f"/answers/{hr_answer}/claim", follow=True),
        client.post(f"/answers/{hr_answer}/renew"),
        client.post(f"/answers/{hr_answer}/leave", json.dumps({"until": "2026-12-02T10:00Z"}),
                    content_type="application/json"),
        client.post(f"/answers/{hr_answer}/expanded", json.dumps({"cite": "d2",
                    "verdict": verdict}), content_type="application/json"),
        client.post(f"/answers/{hr_answer}/decide", {"action": "approve",
                                                     "approve-verdict": verdict}),
        client.post("/next", follow=True),
        api.get("/api/v1/queue"),
        api.get("/api/v1/queue?document=hr-handbook"),
        api.get(f"/api/v1/answers/{hr_answer}"),
        api.post(f"/api/v1/answers/{hr_answer}/claim"),
        api.post(f"/api/v1/answers/{hr_answer}/release"),
        api.post(f"/api/v1/answers/{hr_answer}/decisions",
                 {"action": "approve", "verdict": verdict}, format="json"),
    ]
    for response in responses:
        assert HR_MARKER not in response.content.decode(), response.request
    assert client.get(f"/answers/{hr_answer}/").status_code == 404
    assert api.post(f"/api/v1/answers/{hr_answer}/claim").status_code == 404
    assert "hr-1" not in client.get("/").content.decode()


def test_an_answer_that_retrieved_nothing_is_seen_only_by_services_and_admins(
    sources: Any, submit: Any, reviewer: Any, owner: Any, admin_user: Any, login: Any,
    token_client: Any, service_api: Any
) -> None:
    # Nothing was retrieved, so no document says who may read it; the question still may be
    # private.
    response = submit("no-sources", as_of=None, asked_by=["group:hr"], retrieved=[],
                      claims=[], answer="Bob in HR is being let go.")
    assert response.json()["status"] == "abstained"
    for person in (reviewer, owner):
        assert token_client(person).get("/api/v1/answers/no-sources").status_code == 404
        assert login(person).get("/answers/no-sources/").status_code == 404
    assert service_api.get("/api/v1/answers/no-sources").status_code == 200
    assert token_client(admin_user).get("/api/v1/answers/no-sources").status_code == 200


def test_a_reviewer_in_hr_does_see_the_hr_passage(hr_answer: str, hr_reviewer: Any,
                                                  login: Any) -> None:
    html = login(hr_reviewer).get(f"/answers/{hr_answer}/").content.decode()
    assert HR_MARKER in html


def test_a_passage_of_an_older_restricted_revision_is_not_shown(
    publish: Any, submit: Any, reviewer: Any, login: Any
) -> None:
    # r1 was HR-only; r2 is public. The answer quotes r1.
    publish("policy", revision="r1", principals=["group:hr"], facts=[fact("k", 7777)],
            passages=[{"span": "p1", "text": f"Old restricted text {HR_MARKER}"}])
    publish("policy", revision="r2", principals=["*"], facts=[fact("k", 1)],
            passages=[{"span": "p1", "text": "New public text."}])
    submit("pol", as_of=None, claims=[{"key": "k", "value": 1, "cite": "d1"}],
           answer="K is one [d1].",
           retrieved=[{"cite": "d1", "document_id": "policy", "revision": "r1", "span": "p1"}])
    response = login(reviewer).get("/answers/pol/")
    assert response.status_code == 200
    html = response.content.decode()
    assert HR_MARKER not in html and "7777" not in html  # nor its fact's old value
    assert "That revision was restricted" in html
    assert response.context["page"].diffs == []


def test_the_findings_heading_says_held_only_while_the_answer_is_held(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    assert "Why it was held" in alice.get(f"/answers/{trace}/").content.decode()
    alice.post(f"/answers/{trace}/claim")
    alice.post(f"/answers/{trace}/decide", {"action": "approve",
                                            "approve-verdict": current_verdict_id(trace)})
    assert Answer.objects.get(trace_id=trace).status == "approved"
    page = alice.get(f"/answers/{trace}/").content.decode()
    assert "Why it was held" not in page and "What the gate found" in page


def test_a_citation_card_escapes_every_value_it_shows() -> None:
    import datetime as dt

    from django.utils import timezone

    from reviewqueue.reviews.selectors.item import CitationView, FactView, PassageView
    from reviewqueue.reviews.templatetags.review_tags import citation_card

    hostile = "<script>alert(1)</script>&\""
    card = CitationView(
        cite=hostile, document_key=hostile, status="ok", revision=hostile, title=hostile,
        url=f'https://docs.example.test/"{hostile}', updated_at=timezone.now(),
        current_revision=hostile, current_updated_at=timezone.now(), superseded=True,
        passage=PassageView("p1", hostile, before=hostile, after=hostile), passage_now=True,
        facts=[FactView(hostile, hostile, hostile, dt.date(2026, 1, 1), None, "p1", hostile,
                        hostile)])
    html = str(citation_card(hostile, card))
    assert "<script" not in html and 'test/"' not in html
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;"
    assert html.count(escaped) == 15, html
    assert "Replaced by revision " + escaped in html
    assert "2026-01-01 → no end" in html


def test_a_key_wraps_only_after_its_separators_and_stays_escaped() -> None:
    from reviewqueue.reviews.templatetags.review_tags import word_breaks

    assert word_breaks("data_retention.days/v-2") == "data_<wbr>retention.<wbr>days/<wbr>v-<wbr>2"
    assert word_breaks("trailing_") == "trailing_"  # nothing to break before
    assert word_breaks("<script>a_b</script>&") == (
        "&lt;script&gt;a_<wbr>b&lt;/<wbr>script&gt;&amp;")


def test_a_claim_its_source_holds_but_another_disputes_is_not_shown_as_settled(
    hold: Any, reviewer: Any, login: Any
) -> None:
    # d1 states 14 days, as the claim does; d2, cited by no claim, states 30.
    trace = hold()
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    [row] = re.findall(r'<tr class="(\w+)">\s*<td data-label="#">1</td>(.*?)</tr>', page, re.S)
    assert row[0] == "disputed"
    assert "✓" not in row[1]
    assert ("⚠ Its source holds it, but the gate found: Conflicting sources." in
            " ".join(row[1].split()))
    # The source that disagrees is not cited by a claim, but it is not beside the point.
    [unused] = re.findall(r'<ul class="unused">(.*?)</ul>', page, re.S)
    assert "[d2] Pricing in the EU" in unused
    assert "It disagrees with a claim: see Conflicting sources." in unused


def test_an_unused_source_that_agrees_with_the_claim_is_not_said_to_disagree(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    publish("pricing-faq", title="Pricing FAQ", facts=[fact("trial_days", 14)])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-faq", "revision": "r1", "span": "p1"},
        {"cite": "d3", "document_id": "pricing-eu", "revision": "r1", "span": "p1"}])
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    [unused] = re.findall(r'<ul class="unused">(.*?)</ul>', page, re.S)
    agrees, disagrees = unused.split("</li>")[:2]
    assert "[d2] Pricing FAQ" in agrees and "[d3] Pricing in the EU" in disagrees
    assert "It agrees with a claim that other sources dispute: see Conflicting sources." in agrees
    assert "disagrees" not in agrees
    assert "It disagrees with a claim: see Conflicting sources." in disagrees


def test_a_claim_that_holds_without_a_finding_is_shown_as_holding(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    # Held for its second claim's source only; the first claim holds and nothing disputes it.
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p2"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
    ], claims=[{"key": "support_hours", "value": "24/7", "cite": "d1"},
               {"key": "trial_days", "value": 30, "cite": "d2"}],
        answer="Support is 24/7 [d1]. The trial lasts 30 days [d2].")
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    [row] = re.findall(r'<tr class="(\w+)">\s*<td data-label="#">1</td>(.*?)</tr>', page, re.S)
    assert row[0] == "holds" and "✓ Holds." in row[1]


def test_a_moment_still_to_come_is_not_said_to_be_just_now() -> None:
    from reviewqueue.reviews.templatetags.review_tags import ago

    now = timezone.now()
    # Exactly 3 days back, at the same time of day: 3 calendar days at any hour.
    assert ago(now - dt.timedelta(days=3)) == "3\xa0days ago"
    assert ago(now - dt.timedelta(seconds=5)) == "just now"
    assert ago(now + dt.timedelta(seconds=5)) == "just now"  # clocks drift a little
    assert ago(now + dt.timedelta(days=365 * 73 + 30)) == "in 73\xa0years"


def test_many_claims_on_one_disputed_key_draw_the_sources_once(
    hold: Any, reviewer: Any, login: Any
) -> None:
    n = 12
    retrieved = [{"cite": f"d{i}", "document_id": "pricing", "revision": "r1", "span": "p1"}
                 for i in range(1, n + 1)]
    retrieved.append({"cite": "eu", "document_id": "pricing-eu", "revision": "r1", "span": "p1"})
    trace = hold(retrieved=retrieved,
                 answer=" ".join(f"The trial lasts 14 days [d{i}]." for i in range(1, n + 1)),
                 claims=[{"key": "trial_days", "value": 14, "cite": f"d{i}"}
                         for i in range(1, n + 1)])
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    section = page.split('id="conflicts-h"', 1)[1].split("</section>", 1)[0]
    # One card a document (not one a claim and id), and a sentence for each claim.
    cards = re.findall(r'<article class="source-card">.*?</article>', section, re.S)
    assert len(cards) == 2
    header = re.search(r'<span class="doc-key">([^<]*)</span>', cards[0])
    assert header is not None
    *cites, key = header.group(1).split()
    assert (sorted(cites), key) == (sorted(f"[d{i}]" for i in range(1, n + 1)), "pricing")
    assert [int(m) for m in re.findall(r"disagree about claim (\d+) ", section)] == list(
        range(1, n + 1))
