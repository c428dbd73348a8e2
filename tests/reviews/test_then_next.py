""""Then open the next answer": a reviewer triaging the queue who ticks it on the Decide box goes
from each decision straight to the next unclaimed answer under the queue's filters, claimed for
them, instead of back to the list. The choice is remembered for the next answers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.reviews.models import ReviewItem
from tests.reviews.test_decisions import page_post

pytestmark = pytest.mark.django_db

QUEUE = "reason=conflicting_sources&document=pricing"


def _then_values(html: str) -> list[str]:
    return re.findall(r'name="then" value="(\w+)"', html)


@pytest.fixture
def three_held(hold: Any, reviewer: Any, login: Any) -> Any:
    """t-1, t-2 and t-3 held, oldest first; alice's client."""
    for trace in ("t-1", "t-2", "t-3"):
        hold(trace)
    return login(reviewer)


def test_a_decision_with_then_next_opens_the_oldest_unclaimed_answer(
    three_held: Any, reviewer: Any
) -> None:
    client = three_held
    client.post("/answers/t-1/claim", {"back": QUEUE})
    response = page_post(client, "t-1", "approve", back=QUEUE, then="next")
    assert response.status_code == 302
    assert response["Location"].startswith("/answers/t-2/?")
    assert ReviewItem.objects.get(answer__trace_id="t-2").leased_by == reviewer
    page = client.get(response["Location"])
    html = page.content.decode()
    assert "Approved" in html and 'href="/answers/t-1/"' in html  # what was just done
    # The queue's filters still ride along, and the box is ticked on this answer too.
    assert 'name="back" value="reason=conflicting_sources&amp;document=pricing"' in html
    assert _then_values(html) == ["next", "next", "next"]
    assert re.search(r'data-then-next hidden><input type="checkbox" checked>', html)


def test_the_choice_is_remembered_until_the_reviewer_unticks_it(
    three_held: Any, hold: Any
) -> None:
    client = three_held
    client.post("/answers/t-1/claim")
    page_post(client, "t-1", "reject", reason="other", comment="Wrong", then="next")
    # A form sent without the field (as without JavaScript) follows the last choice.
    response = page_post(client, "t-2", "approve")
    assert response["Location"] == "/answers/t-3/"
    response = page_post(client, "t-3", "approve", then="queue")
    assert response["Location"] == "/"
    hold("t-4")
    assert _then_values(client.get("/answers/t-4/").content.decode()) == ["queue"] * 3


def test_next_keeps_to_the_queue_filters_and_says_when_nothing_is_left(
    hold: Any, reviewer: Any, login: Any
) -> None:
    hold("t-1")
    hold("eu-only", retrieved=[
        {"cite": "d1", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"}])
    client = login(reviewer)
    client.post("/answers/t-1/claim")
    back = "document=pricing&limit=2"
    response = page_post(client, "t-1", "approve", back=back, then="next")
    # The other held answer does not cite "pricing": the queue the reviewer came from is empty.
    assert response["Location"] == f"/?{back}"
    assert not ReviewItem.objects.filter(answer__trace_id="eu-only", leased_by=reviewer).exists()
    html = client.get(response["Location"]).content.decode()
    assert "Nothing unclaimed matches these filters." in html


def test_a_refused_decision_stays_on_the_answer_and_keeps_the_choice(
    hold: Any, reviewer: Any, login: Any
) -> None:
    hold("t-1")
    hold("t-2")
    client = login(reviewer)
    client.post("/answers/t-1/claim")
    response = page_post(client, "t-1", "reject", reason="", then="next")  # no reason given
    assert response.status_code == 400
    assert _then_values(response.content.decode()) == ["next"] * 3
    assert not ReviewItem.objects.filter(answer__trace_id="t-2", leased_by=reviewer).exists()
