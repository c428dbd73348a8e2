"""Back to the queue the reviewer came from: its filters and page survive opening an answer,
deciding it, releasing it or walking away through "Queue"."""

from __future__ import annotations

import html as html_module
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.messages import get_messages

from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

QUEUE = "reason=conflicting_sources&document=pricing&claim=unclaimed&limit=2"


def _back_of(location: str) -> str:
    return parse_qs(urlsplit(location).query)["back"][0]


def _open_from_queue(client: Any, trace: str, query: str = QUEUE) -> str:
    """Open an answer as the queue page does; the item page's URL."""
    html = client.get(f"/?{query}").content.decode()
    assert f'name="back" value="{query.replace("&", "&amp;")}"' in html
    response = client.post(f"/answers/{trace}/claim", {"back": query})
    assert response.status_code == 302
    return response["Location"]


def test_deciding_returns_to_the_same_filters_and_page(hold: Any, reviewer: Any,
                                                       login: Any) -> None:
    trace = hold()
    client = login(reviewer)
    item = _open_from_queue(client, trace)
    assert item.startswith(f"/answers/{trace}/?") and _back_of(item) == QUEUE
    html = client.get(item).content.decode()
    queue_link = f'href="/?{QUEUE.replace("&", "&amp;")}"'
    assert queue_link in html  # the "Queue" crumb (and the u key)
    assert html.count(f'name="back" value="{QUEUE.replace("&", "&amp;")}"') >= 4
    response = page_post(client, trace, "approve", back=QUEUE)
    assert response.status_code == 302 and response["Location"] == f"/?{QUEUE}"


def test_releasing_returns_to_the_same_filters(hold: Any, reviewer: Any, login: Any) -> None:
    trace = hold()
    client = login(reviewer)
    _open_from_queue(client, trace)
    response = client.post(f"/answers/{trace}/release", {"back": QUEUE})
    assert response["Location"] == f"/?{QUEUE}"


def test_the_next_button_carries_the_queue_it_was_pressed_on(hold: Any, reviewer: Any,
                                                            login: Any) -> None:
    trace = hold()
    response = login(reviewer).post("/next", {"document": "pricing", "back": QUEUE})
    assert response["Location"].startswith(f"/answers/{trace}/?")
    assert _back_of(response["Location"]) == QUEUE


def test_a_page_cursor_survives_the_round_trip(hold: Any, reviewer: Any,
                                               login: Any) -> None:
    for trace in ("c-0", "c-1", "c-2"):
        hold(trace)
    client = login(reviewer)
    first = client.get("/?limit=2").context
    query = urlsplit(first["next_url"]).query
    assert "cursor=" in query
    second = client.get(f"/?{query}").context["page"]
    trace = second.rows[0].answer.trace_id
    item = _open_from_queue(client, trace, query)
    assert _back_of(item) == query
    response = page_post(client, trace, "approve", back=query)
    assert response["Location"] == f"/?{query}"


@pytest.mark.parametrize("back", [
    "https://evil.example/",
    "//evil.example/x",
    "next=https://evil.example/&reason=conflicting_sources",
    "reason=a&reason=b&document=pricing",
])
def test_back_only_ever_leads_to_the_queue_with_its_own_parameters(
    hold: Any, reviewer: Any, login: Any, back: str
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    location = page_post(client, trace, "approve", back=back)["Location"]
    assert location.startswith("/") and not location.startswith("//")
    assert "evil" not in location
    assert location in ("/", "/?reason=conflicting_sources", "/?document=pricing")


def test_an_edit_the_gate_still_holds_is_a_warning_not_a_success(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    response = page_post(client, trace, "edit", answer="The trial lasts 14 days, in short [d1].",
                         back=QUEUE, **claims_form({"key": "trial_days", "value": "14",
                                                    "value_type": "number", "cite": "d1"}))
    assert response.status_code == 302
    assert _back_of(response["Location"]) == QUEUE  # still held: back to the answer
    [message] = list(get_messages(response.wsgi_request))
    assert message.level_tag == "warning"
    assert "The gate still holds it" in message.message


def test_re_evaluate_now_and_its_job_page_lead_back_to_the_same_queue(
    hold: Any, reviewer: Any, login: Any, django_capture_on_commit_callbacks: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        job_page = client.post(f"/answers/{trace}/reevaluate", {"back": QUEUE})["Location"]
    html = client.get(job_page).content.decode()
    link = re.search(r'<a href="([^"]+)" data-back-to-answer>', html)
    assert link is not None
    item = html_module.unescape(link.group(1))
    assert item.startswith(f"/answers/{trace}/?") and _back_of(item) == QUEUE


def test_next_with_nothing_waiting_returns_to_the_same_queue_page(
    sources: Any, reviewer: Any, login: Any
) -> None:
    response = login(reviewer).post("/next", {"reason": "conflicting_sources", "back": QUEUE})
    assert response["Location"] == f"/?{QUEUE}"


def test_a_row_links_to_its_answer_without_claiming_it(hold: Any, reviewer: Any,
                                                      login: Any) -> None:
    """The trace id is a plain link, so a reviewer can read an answer, or open it in a new tab,
    and leave it free for others; "Start reviewing" on its page claims it."""
    from reviewqueue.reviews.models import Answer

    trace = hold()
    client = login(reviewer)
    html = client.get(f"/?{QUEUE}").content.decode()
    link = re.search(rf'<a class="trace" href="([^"]+)"[^>]*>{trace}</a>', html)
    assert link is not None, html
    url = html_module.unescape(link.group(1))
    assert url.startswith(f"/answers/{trace}/?") and _back_of(url) == QUEUE
    page = client.get(url).content.decode()
    assert "Start reviewing" in page
    answer = Answer.objects.select_related("review_item").get(trace_id=trace)
    assert answer.review_item.leased_by_id is None
    assert "Free" in client.get(f"/?{QUEUE}").content.decode()
