"""An answer that says it quotes a passage its source revision does not contain.

The store has every passage of a revision it received, and revisions never change: a span the
revision lacks is a citation pointing at nothing. The gate makes the answer abstain
(unknown_citation), the same at ingest, on re-evaluation and at decision time; the pages and the
audit trail say which passage is missing.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services.evaluation import load_sources
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

PASSAGES = [{"span": "p1", "text": "The free trial lasts 14 days."}]


def _cite(span: str, revision: str = "r1") -> list[dict[str, Any]]:
    return [{"cite": "d1", "document_id": "pricing", "revision": revision, "span": span}]


def _findings(body: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(f["code"], f["claim"], f["message"]) for f in body["verdict"]["findings"]]


def test_a_span_the_revision_lacks_makes_the_answer_abstain(publish: Any, submit: Any) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)

    body = submit("t-p9", as_of=None, retrieved=_cite("p9")).json()

    assert (body["status"], body["verdict"]["reason"]) == ("abstained", "unknown_citation")
    assert ("unknown_citation", 0, "claim 0 cites d1: the revision it was taken from has no "
            "passage with the cited span") in _findings(body)


def test_a_span_the_revision_has_is_still_supported(publish: Any, submit: Any) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)

    body = submit("t-p1", as_of=None, retrieved=_cite("p1")).json()

    assert (body["status"], body["verdict"]["reason"]) == ("candidate", "supported")


def test_a_citation_without_a_span_is_not_checked_for_one(publish: Any, submit: Any) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)

    body = submit("t-none", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1"}]).json()

    assert (body["status"], body["verdict"]["reason"]) == ("candidate", "supported")


def test_the_span_is_looked_up_in_the_revision_the_answer_was_taken_from(
    publish: Any, submit: Any
) -> None:
    """r2 moved the text to p2: an answer from r1 quoting p1 is superseded (held), one from r1
    quoting p2 quotes what r1 never said."""
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)
    publish("pricing", "r2", facts=[fact("trial_days", 14, span="p2")],
            passages=[{"span": "p2", "text": "The free trial lasts 14 days."}])

    from_r1 = submit("t-r1-p1", as_of=None, retrieved=_cite("p1")).json()
    made_up = submit("t-r1-p2", as_of=None, retrieved=_cite("p2")).json()
    from_r2 = submit("t-r2-p2", as_of=None, retrieved=_cite("p2", "r2")).json()

    assert (from_r1["status"], from_r1["verdict"]["reason"]) == ("held", "superseded_revision")
    assert (made_up["status"], made_up["verdict"]["reason"]) == ("abstained",
                                                                 "unknown_citation")
    assert (from_r2["status"], from_r2["verdict"]["reason"]) == ("candidate", "supported")


def test_an_asker_who_may_not_read_the_document_gets_unauthorized_evidence(
    publish: Any, submit: Any
) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES,
            principals=["group:hr"])

    body = submit("t-hr", as_of=None, retrieved=_cite("p9"),
                  asked_by=["user:customer-7"]).json()

    assert (body["status"], body["verdict"]["reason"]) == ("abstained", "unauthorized_evidence")
    assert "unknown_citation" in [code for code, _, _ in _findings(body)]


def test_a_batch_gets_each_answer_its_own_verdict(publish: Any, service_api: Any) -> None:
    from tests.conftest import answer_body

    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)
    answers = [answer_body(f"b-{i}-{span}", as_of=None, retrieved=_cite(span))
               for i, span in enumerate(("p1", "p9", "p1"))]

    response = service_api.post("/api/v1/answers/batch", {"answers": answers}, format="json")

    assert response.status_code == 200, response.content
    assert dict(Answer.objects.values_list("trace_id", "status")) == {
        "b-0-p1": "candidate", "b-1-p9": "abstained", "b-2-p1": "candidate"}


def test_the_audit_trail_names_the_missing_passage(
    publish: Any, submit: Any, admin_client: Any
) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)
    submit("t-p9", as_of=None, retrieved=_cite("p9"))

    page = admin_client.get("/audit/answers/t-p9/")

    assert page.status_code == 200
    assert "Cited passage not found" in page.content.decode()


def test_the_sources_take_the_same_three_queries_with_spans(publish: Any) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)
    publish("pricing", "r2", facts=[fact("trial_days", 14)], passages=PASSAGES)
    cited = [("pricing", "r1", "p1"), ("pricing", "r2", "p1"), ("pricing", "r2", "p9"),
             ("pricing", "r7", "p1"), ("faq", "r1", "p1")]

    with CaptureQueriesContext(connection) as queries:
        sources = load_sources(cited, ["trial_days"])

    assert len(queries) == 3
    assert sources.received == {("pricing", "r2"): frozenset({"p1"}),
                                ("pricing", "r1"): frozenset({"p1"})}


def test_the_item_page_says_which_passage_is_missing(
    publish: Any, submit: Any, reviewer: Any, login: Any
) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)], passages=PASSAGES)
    submit("t-p9", as_of=None, retrieved=_cite("p9"))

    html = login(reviewer).get("/answers/t-p9/").content.decode()

    assert "This revision has no passage p9: the answer quotes something its source does not " \
        "contain." in html
    assert "The cited revision r1 has no passage p9." in html
    assert "No passage is cited." not in html
    assert "but the revision it names has no such passage" in html
    # The gate's own English message is folded away under the sentence in the reader's words.
    assert re.search(r'<details class="gate-detail"><summary>The gate\'s own words</summary>'
                     r'<p lang="en">[^<]*has no passage with the cited span', html)
