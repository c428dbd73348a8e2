"""What the item page calls a verdict: "Supported" is the gate's reason for a candidate, "Audit
sample" is said only of an answer drawn as one; a refused decision says whether anything is
left to decide; Japanese answers are shown sentence by sentence."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.reviews.services.reevaluation import answer_reevaluate
from reviewqueue.sources.services import document_withdraw
from tests.reviews.conftest import current_verdict_id, fact

pytestmark = pytest.mark.django_db


def text_of(response: Any) -> str:
    return response.content.decode().replace("\xa0", " ")


def status_strip(html: str) -> str:
    start = html.index('<div class="status-strip">')
    return html[start:html.index("</div>", start)]


def history_reasons(html: str) -> list[str]:
    start = html.index('<table class="history')
    table = html[start:html.index("</table>", start)]
    # Decision and reason are the third and fourth cells of each row.
    rows = re.findall(r"<tr[^>]*>\s*<td[^>]*>.*?</td>\s*<td[^>]*>.*?</td>\s*<td[^>]*>(.*?)</td>"
                      r"\s*<td[^>]*>(.*?)</td>",
                      table, re.S)
    return [f"{decision} · {reason}" for decision, reason in rows]


def stale_banner(html: str) -> str:
    start = html.index("data-stale>") + len("data-stale>")
    return " ".join(html[start:html.index("</div>", start)].split())


@pytest.fixture
def agreeing(publish: Any) -> None:
    """One pricing document, so that nothing in the knowledge base disagrees with it."""
    publish("pricing", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."}])


@pytest.fixture
def candidate(agreeing: None, submit: Any) -> str:
    """An answer the gate lets through: one claim that its single source supports."""
    response = submit("c-1", as_of=None)
    assert response.status_code == 201, response.content
    return "c-1"


# --- Supported is not an audit sample -----------------------------------------------------------

def test_a_candidate_reads_supported_not_audit_sample(candidate: str, reviewer: Any,
                                                      login: Any) -> None:
    assert Answer.objects.get(trace_id=candidate).status == "candidate"
    html = text_of(login(reviewer).get(f"/answers/{candidate}/"))
    assert "Candidate · Supported" in status_strip(html)
    assert history_reasons(html) == ["Candidate · Supported"]
    assert "Audit sample" not in html


def test_an_audit_sample_says_so_next_to_its_supported_verdict(
    settings: Any, agreeing: None, submit: Any, reviewer: Any, login: Any
) -> None:
    settings.AUDIT_SAMPLE_RATE = 1.0
    assert submit("sample-1", as_of=None).json()["status"] == "held"
    client = login(reviewer)
    strip = status_strip(text_of(client.get("/answers/sample-1/")))
    assert "Candidate · Supported" in strip
    assert "Audit sample" in strip
    # The queue keeps calling the item what it is there for.
    queue = text_of(client.get("/"))
    assert 'primary">Audit sample</span>' in queue


def test_an_audit_sample_stays_for_its_reviewer_when_a_fresh_verdict_still_lets_it_through(
    settings: Any, agreeing: None, submit: Any, publish: Any
) -> None:
    settings.AUDIT_SAMPLE_RATE = 1.0
    assert submit("sample-2", as_of=None).json()["status"] == "held"
    settings.AUDIT_SAMPLE_RATE = 0.0
    # A second document agrees on the claimed key: the answer's gate input changes.
    publish("pricing-copy", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "Trials last 14 days."}])
    answer = Answer.objects.get(trace_id="sample-2")
    first = answer.current_verdict_id
    fresh = answer_reevaluate(answer_id=answer.pk, trigger="revision")
    assert fresh is not None and fresh.pk != first and fresh.decision == "candidate"
    answer.refresh_from_db()
    assert answer.status == "held" and answer.current_verdict_id == fresh.pk
    item = ReviewItem.objects.get(answer=answer)
    assert item.audit_sample and item.primary_reason == "supported"


def test_a_fresh_verdict_that_abstains_takes_an_audit_sample_out_of_the_queue(
    settings: Any, agreeing: None, submit: Any, publish: Any, owner: Any
) -> None:
    settings.AUDIT_SAMPLE_RATE = 1.0
    assert submit("sample-3", as_of=None).json()["status"] == "held"
    answer = Answer.objects.get(trace_id="sample-3")
    document_withdraw(document_key="pricing", actor=Actor.of_user(owner))
    answer_reevaluate(answer_id=answer.pk, trigger="revision")
    answer.refresh_from_db()
    assert answer.status == "abstained"
    assert not ReviewItem.objects.filter(answer=answer).exists()


def test_a_withdrawn_source_no_claim_uses_is_listed_as_withdrawn_and_holds_nothing(
    hold: Any, publish: Any, owner: Any, reviewer: Any, login: Any
) -> None:
    publish("billing", title="Billing terms", facts=[fact("grace_days", 30)])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
        {"cite": "d3", "document_id": "billing", "revision": "r1", "span": "p1"},
    ])
    answer = Answer.objects.get(trace_id=trace)
    document_withdraw(document_key="billing", actor=Actor.of_user(owner))
    answer_reevaluate(answer_id=answer.pk, trigger="withdrawal")

    html = text_of(login(reviewer).get(f"/answers/{trace}/"))

    # Still held for the conflict it had, not abstained for the withdrawn document.
    assert "Gate: Needs review · Conflicting sources" in status_strip(html)
    start = html.index('<ul class="unused">')
    unused = re.sub(r"<[^>]+>", "", html[start:html.index("</ul>", start)])
    assert "[d2] Pricing in the EU pricing-eu" in unused
    assert "[d3] Billing terms billing This document has been withdrawn." in unused
    assert unused.count("withdrawn") == 1


def test_a_held_answer_that_is_no_audit_sample_does_not_say_audit_sample(
    hold: Any, reviewer: Any, login: Any
) -> None:
    html = text_of(login(reviewer).get(f"/answers/{hold()}/"))
    # Beside the answer's status, which may already be Approved: the gate's word on it now.
    assert "Gate: Needs review · Conflicting sources" in status_strip(html)
    assert "Audit sample" not in html


# --- A refused decision: is there anything left to decide? --------------------------------------

def approve_after_eu_revision(hold: Any, publish: Any, client: Any, eu_days: int) -> Any:
    """Claim a held answer, let the EU document publish `eu_days`, then approve the verdict
    seen before."""
    trace = hold()
    client.post(f"/answers/{trace}/claim")
    seen = current_verdict_id(trace)
    publish("pricing-eu", revision="r2", title="Pricing in the EU",
            facts=[fact("trial_days", eu_days)],
            passages=[{"span": "p1", "text": f"In the EU the free trial lasts {eu_days} days."}])
    return client.post(f"/answers/{trace}/decide", {"action": "approve", "approve-verdict": seen})


def test_an_approval_refused_after_the_answer_left_the_queue_asks_for_nothing(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    # The EU document now agrees: the fresh verdict is a candidate and the answer leaves the queue.
    response = approve_after_eu_revision(hold, publish, login(reviewer), eu_days=14)
    assert response.status_code == 409
    banner = stale_banner(text_of(response))
    assert banner.startswith("<strong>The sources changed while you were reviewing.</strong>")
    assert ("Nothing was applied. The answer has left the queue with the fresh verdict "
            "Candidate · Supported; there is nothing to decide.") in banner
    assert "decide again" not in banner
    assert "Audit sample" not in banner
    assert Answer.objects.get(trace_id="t-1").status == "candidate"


def test_an_approval_refused_while_the_answer_stays_held_asks_to_decide_again(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    # A new EU revision that still disagrees: a fresh verdict, held for the same reason.
    response = approve_after_eu_revision(hold, publish, login(reviewer), eu_days=45)
    assert response.status_code == 409
    assert ("Nothing was applied. The fresh verdict is: Needs review · Conflicting sources. "
            "Check it below and decide again.") in stale_banner(text_of(response))
    assert Answer.objects.get(trace_id="t-1").status == "held"


# --- Japanese sentences -------------------------------------------------------------------------

def test_a_japanese_answer_is_shown_sentence_by_sentence_with_its_own_markers(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(answer="無料体験は14日間です[d1]。EUでは30日間です[d2]。")
    response = login(reviewer).get(f"/answers/{trace}/")
    page = response.context["page"]
    assert [[part.text or part.cite for part in s.parts] for s in page.sentences] == [
        ["無料体験は14日間です", "d1", "。"], ["EUでは30日間です", "d2", "。"]]
    html = text_of(response)
    assert html.count('<li class="sentence"') == 2
    # The citation before 。, as written.
    assert ('<span class="text">無料体験は14日間です</span>'
            '<details class="cite" data-cite="d1">') in html
    assert '</details><span class="text">。</span>' in html


def test_a_quotation_inside_a_japanese_sentence_does_not_end_it(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(answer="規約には「無料体験は14日間です。」とあります[d1]。EUでは30日間です[d2]。")
    page = login(reviewer).get(f"/answers/{trace}/").context["page"]
    assert [[part.text or part.cite for part in s.parts] for s in page.sentences] == [
        ["規約には「無料体験は14日間です。」とあります", "d1", "。"],
        ["EUでは30日間です", "d2", "。"]]
