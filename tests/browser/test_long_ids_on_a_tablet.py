"""Long ids on a tablet or a small laptop (768 and 1024 px wide), between the phone's cards and
the wide layout: a document id of a file name or more, an index release of a full build
version. Each breaks inside its card or cell rather than widening the page (README: "long URLs
or ids break rather than widen it")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TABLET = 768
SMALL_LAPTOP = 1024
# A file name as a document system would give it (68 characters), and a longer path (108).
FILE_ID = "sharepoint.pricing.EMEA_Pricing_and_Packaging_Q3-2026_FINAL_v7.docx"
PATH_ID = ("confluence.EMEA.Sales-Operations.Pricing_and_Packaging.Regional_Addenda."
           "EU_Trial_Terms_2026-Q3_FINAL_v12.pdf")
RELEASE = "2026.11.07-rc3+build.20261107T090000Z.4bf92f3577b34da6"

# How far the page scrolls sideways (its width past the window's), and how far each element
# matching `selector` runs past the box `box` that holds it (0 or less: inside it).
OVER_JS = """([selector, box]) => ({
  page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  over: [...document.querySelectorAll(selector)].map(el => Math.round(
    el.getBoundingClientRect().right - el.closest(box).getBoundingClientRect().right)),
})"""


def overflow(page: Any, selector: str, box: str) -> dict[str, Any]:
    measured = page.evaluate(OVER_JS, [selector, box])
    assert measured["over"], f"nothing matches {selector}"
    return measured


@pytest.fixture
def conflict_with_a_file_id(publish: Any, owner: Any) -> int:
    """The file-named document disagrees with the EU pricing page over the trial's length."""
    from reviewqueue.sources.models import Conflict

    publish(FILE_ID, title="EMEA pricing and packaging, Q3 2026", facts=[fact("trial_days", 14)])
    publish("pricing-eu", title="Pricing in the EU", facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 days."}])
    return Conflict.objects.get().pk


@pytest.mark.parametrize("width", [TABLET, SMALL_LAPTOP])
def test_a_long_document_id_stays_inside_its_card_in_the_owner_inbox(
    conflict_with_a_file_id: int, sign_in: Any, width: int
) -> None:
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size({"width": width, "height": 900})
    measured = overflow(page, ".source-card code.rev", ".source-card")
    assert measured["page"] <= 0, f"the inbox scrolls sideways by {measured['page']} px"
    assert max(measured["over"]) <= 0, f"an id runs past its card by {measured['over']} px"


@pytest.mark.parametrize("width", [TABLET, SMALL_LAPTOP])
def test_a_long_document_id_stays_inside_its_card_on_the_conflicts_page(
    conflict_with_a_file_id: int, sign_in: Any, live_server: Any, width: int
) -> None:
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/owner/conflicts/{conflict_with_a_file_id}/")
    measured = overflow(page, ".source-card code.rev", ".source-card")
    assert measured["page"] <= 0, f"the conflict scrolls sideways by {measured['page']} px"
    assert max(measured["over"]) <= 0, f"an id runs past its card by {measured['over']} px"


def test_a_long_index_release_does_not_widen_the_queue_on_a_small_laptop(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    from reviewqueue.reviews.models import Answer, ReviewItem

    hold()
    # As the upstream service would send it (a build's full version); set here directly.
    Answer.objects.update(index_release=RELEASE)
    ReviewItem.objects.update(index_release=RELEASE)
    page = sign_in("alice")
    page.set_viewport_size({"width": SMALL_LAPTOP, "height": 800})
    measured = overflow(page, "table.queue td.release a", "table.queue")
    assert measured["page"] <= 0, f"the queue scrolls sideways by {measured['page']} px"
    assert max(measured["over"]) <= 0, f"the release runs past the queue by {measured['over']}"


def test_a_long_document_id_does_not_widen_the_jobs_list_on_a_tablet(
    publish: Any, admin_user: Any, sign_in: Any, live_server: Any
) -> None:
    publish(PATH_ID, title="EU trial terms")  # starts a job re-evaluating what cites it
    page = sign_in("ada")
    page.set_viewport_size({"width": TABLET, "height": 900})
    page.goto(f"{live_server.url}/jobs/")
    measured = overflow(page, "table.jobs td code", "td")
    assert measured["page"] <= 0, f"the jobs list scrolls sideways by {measured['page']} px"
    assert max(measured["over"]) <= 0, f"the id runs past its cell by {measured['over']} px"


def test_a_long_document_id_does_not_widen_an_answers_audit_timeline_on_a_tablet(
    publish: Any, submit: Any, admin_user: Any, sign_in: Any, live_server: Any
) -> None:
    publish(PATH_ID, title="EU trial terms")
    response = submit("t-long-id", retrieved=[
        {"cite": "d1", "document_id": PATH_ID, "revision": "r1", "span": "p1"}])
    assert response.status_code in (200, 201), response.content
    page = sign_in("ada")
    page.set_viewport_size({"width": TABLET, "height": 900})
    page.goto(f"{live_server.url}/audit/answers/t-long-id/")
    measured = overflow(page, "table.revisions td:nth-child(2) a", "td")
    assert measured["page"] <= 0, f"the timeline scrolls sideways by {measured['page']} px"
    assert max(measured["over"]) <= 0, f"the id runs past its cell by {measured['over']} px"
