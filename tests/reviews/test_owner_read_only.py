"""An owner follows the links of their inbox to the item page and reads it; they change
nothing there."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, ReviewItem
from tests.reviews.conftest import current_verdict_id

pytestmark = pytest.mark.django_db

ACTIONS = ("claim", "release", "renew", "leave", "expanded", "decide", "send-to-owner",
           "reevaluate")


def assert_read_only(html: str, trace_id: str) -> None:
    for action in ACTIONS:
        assert f"/answers/{trace_id}/{action}" not in html, action
    assert "data-action=" not in html
    assert "Start reviewing" not in html and "Break lease" not in html
    assert "Re-evaluate now" not in html


def test_an_owner_opens_an_answer_sent_to_them_from_their_inbox(
    hold: Any, reviewer: Any, owner: Any, login: Any
) -> None:
    trace = hold()
    alice = login(reviewer)
    alice.post(f"/answers/{trace}/claim")
    alice.post(f"/answers/{trace}/send-to-owner", {"note": "Which trial length holds?"})
    olivia = login(owner)
    assert f'href="/answers/{trace}/"' in olivia.get("/owner/").content.decode()
    response = olivia.get(f"/answers/{trace}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "How long is the free trial?" in html
    assert "The free trial lasts 14 days." in html
    assert "Which trial length holds?" in html
    assert "You are reading this answer as a document owner" in html
    assert 'href="/owner/">← Owner inbox' in html
    assert_read_only(html, trace)


def test_an_owner_sees_who_works_on_an_item_but_cannot_release_it(
    hold: Any, reviewer: Any, owner: Any, login: Any
) -> None:
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/claim")
    html = login(owner).get(f"/answers/{trace}/").content.decode()
    assert "alice is working on this" in html
    assert_read_only(html, trace)


def test_an_owner_reads_a_free_item_without_the_forms_to_decide(
    hold: Any, owner: Any, login: Any
) -> None:
    trace = hold()
    html = login(owner, HTTP_ACCEPT_LANGUAGE="ja").get(f"/answers/{trace}/").content.decode()
    assert "文書の所有者として閲覧しています" in html
    assert_read_only(html, trace)


def test_every_action_on_the_item_page_still_refuses_an_owner(
    hold: Any, owner: Any, login: Any
) -> None:
    trace = hold()
    client = login(owner)
    verdict = current_verdict_id(trace)
    bodies: dict[str, Any] = {
        "release": {"force": "1"},
        "decide": {"action": "approve", "approve-verdict": verdict},
        "send-to-owner": {"note": "look"},
    }
    for action in ACTIONS:
        if action in ("renew", "expanded"):
            response = client.post(f"/answers/{trace}/{action}", content_type="application/json",
                                   data=json.dumps({"cite": "d1", "verdict": verdict}))
        else:
            response = client.post(f"/answers/{trace}/{action}", bodies.get(action, {}))
        assert response.status_code == 403, action
    item = ReviewItem.objects.get(answer__trace_id=trace)
    assert item.leased_by is None and not item.waiting_for_owner
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_an_answer_the_owner_may_not_read_is_404(hr_sources: Any, sources: Any, submit: Any,
                                                 owner: Any, login: Any) -> None:
    response = submit("hr-1", as_of=None, asked_by=["group:hr"], retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "hr-handbook", "revision": "r1", "span": "p1"},
    ])
    assert response.json()["status"] == "held"
    client = login(owner)
    assert client.get("/answers/hr-1/").status_code == 404
    assert client.get("/answers/no-such/").status_code == 404


def test_a_user_without_a_reading_role_is_still_refused(hold: Any, make_user: Any,
                                                        login: Any) -> None:
    trace = hold()
    assert login(make_user("svc", "service")).get(f"/answers/{trace}/").status_code == 403


def test_an_owner_who_signs_in_lands_on_their_own_page(login: Any, owner: Any) -> None:
    response = login(owner).get("/", follow=True)
    assert response.redirect_chain == [("/owner/", 302)]
    assert response.status_code == 200
