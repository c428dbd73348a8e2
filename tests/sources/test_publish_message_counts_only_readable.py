"""The message an owner's correction ends with counts the held answers reviewers sent to the
owners that cite the document. Only answers the owner may read may be counted: one that also
retrieved a document they may not read is not theirs to know of, let alone that a reviewer
asked its owners about it. Nor one that only retrieved the document: its new revision does
not end that wait."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import ReviewItem
from reviewqueue.reviews.services.handoff import review_item_send_to_owner
from tests.reviews.conftest import fact, login  # noqa: F401  (fixture)
from tests.sources.test_owner_fixes import PASSAGES_CHECKED, posted_back

pytestmark = pytest.mark.django_db


def test_a_correction_says_nothing_of_a_hand_off_the_owner_may_not_read(
    publish: Any, service_api: Any, make_user: Any, owner: Any, login: Any,  # noqa: F811
) -> None:
    hana = make_user("hana", "reviewer", groups=("hr",))
    holly = make_user("holly", "owner", groups=("hr",))
    # olivia's public pricing; holly's HR-only policy, which disagrees.
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("hr-policy", owner="holly", principals=["group:hr"], title="HR policy",
            facts=[fact("trial_days", 90)],
            passages=[{"span": "p1", "text": "The HR trial lasts 90 days."}])
    # An HR answer retrieves both: olivia, who is not in group hr, may not read it.
    body = {"trace_id": "t-hr", "question": "How long is the HR trial?",
            "answer": "It lasts 90 days [d1].", "asked_by": ["group:hr"],
            "index_release": "2026.10",
            "retrieved": [{"cite": "d1", "document_id": "hr-policy", "revision": "r1",
                           "span": "p1"},
                          {"cite": "d2", "document_id": "pricing", "revision": "r1",
                           "span": "p1"}],
            "claims": [{"key": "trial_days", "value": 90, "cite": "d1"}]}
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.json()["status"] == "held", response.content
    # hana asks the owners; only holly may read the answer, so only holly is asked.
    review_item_send_to_owner(trace_id="t-hr", user=hana, note="Which trial applies?",
                              actor=Actor.of_user(hana))
    assert ReviewItem.objects.get(answer__trace_id="t-hr").owner_question.owners == [holly.pk]
    assert login(owner).get("/answers/t-hr/").status_code == 404

    client = login(owner)
    action = "/owner/documents/pricing/publish"
    page = client.get("/owner/documents/pricing/").content.decode()
    response = client.post(action, posted_back(page, action, **{"facts-0-value": "15"},
                                                **PASSAGES_CHECKED), follow=True)
    shown = response.content.decode()
    assert "Published revision" in shown
    # Not "1 held answer citing this document waits for an owner's reply": olivia may not
    # read it, and was not asked about it.
    assert "waits for an owner" not in shown


def test_a_correction_counts_only_hand_offs_whose_wait_it_ends(
    publish: Any, service_api: Any, make_user: Any, owner: Any, reviewer: Any,
    login: Any, django_capture_on_commit_callbacks: Any,  # noqa: F811
) -> None:
    make_user("oscar", "owner")
    publish("pricing", owner="oscar", facts=[fact("trial_days", 14)])
    publish("pricing-eu", owner="oscar", facts=[fact("trial_days", 30)])
    publish("faq", facts=[fact("support_hours", "24/7")],
            passages=[{"span": "p1", "text": "Support is available 24/7."}])
    # Both retrieve olivia's faq; t-cites also cites it, by a marker in its text.
    for trace_id, text in (("t-retrieves", "It lasts 30 days [d2]."),
                           ("t-cites", "It lasts 30 days [d2], with support 24/7 [d3].")):
        body = {"trace_id": trace_id, "question": "How long is the EU trial?", "answer": text,
                "asked_by": ["*"], "index_release": "2026.10",
                "retrieved": [{"cite": c, "document_id": d, "revision": "r1", "span": "p1"}
                              for c, d in (("d1", "pricing"), ("d2", "pricing-eu"),
                                           ("d3", "faq"))],
                "claims": [{"key": "trial_days", "value": 30, "cite": "d2"}]}
        response = service_api.post("/api/v1/answers", body, format="json")
        assert response.json()["status"] == "held", response.content
        review_item_send_to_owner(trace_id=trace_id, user=reviewer,
                                  note="Which trial applies?", actor=Actor.of_user(reviewer))

    client = login(owner)
    action = "/owner/documents/faq/publish"
    page = client.get("/owner/documents/faq/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(action, posted_back(page, action, **{"facts-0-value": "9-17"},
                                                    **PASSAGES_CHECKED), follow=True)
    shown = response.content.decode()

    assert ("1 held answer citing this document waits for an owner&#x27;s reply: with its "
            "new verdict it goes back to the reviewers, and the hand-off ends.") in shown
    # And so it went: the answer that only retrieved the faq still waits.
    waiting = dict(ReviewItem.objects.values_list("answer__trace_id", "waiting_for_owner"))
    assert waiting == {"t-retrieves": True, "t-cites": False}
