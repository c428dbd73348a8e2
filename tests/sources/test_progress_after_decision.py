"""After dismissing or reopening a conflict, the owner lands on the progress page, which says
what they decided and why some answers stay held, beside the re-evaluation it started."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.sources.models import Conflict

pytestmark = pytest.mark.django_db


def section(page: str) -> str:
    found = re.search(r"<section [^>]*data-decided-conflict>(.*?)</section>", page, re.S)
    assert found is not None, page
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(1))).strip()


def test_a_dismissal_lands_on_a_page_naming_the_conflict_and_what_stays_held(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-1", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "trial-promo", "revision": "r1", "span": "p1"}])
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
            "reason": "both valid", "signature": two_owners_disagree.signature})
    assert response.status_code == 302
    assert f"conflict={two_owners_disagree.pk}" in response["Location"]
    page = client.get(response["Location"]).content.decode()

    shown = section(page)
    assert shown.startswith("You dismissed the conflict trial_days")
    assert "An answer that retrieved both documents, even citing only one, still puts both " \
           "values before its reader" in shown
    assert "When this page was opened, 1 answer you may read was held over these values." \
        in shown
    assert f'href="/owner/conflicts/{two_owners_disagree.pk}/#held-answers"' in page
    dismissed_page = response["Location"]

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/reopen")
    assert response.status_code == 302
    shown = section(client.get(response["Location"]).content.decode())
    assert shown.startswith("You reopened the conflict trial_days")
    assert "The conflict is open again" in shown

    # The dismissal's page, opened again: what was done then, and that it has changed since.
    shown = section(client.get(dismissed_page).content.decode())
    assert shown.startswith("You dismissed the conflict trial_days")
    assert "It has changed since: it is now Open." in shown
    assert "still puts both values" not in shown


def test_a_link_naming_a_conflict_the_person_did_not_decide_says_nothing_of_it(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    client.force_login(owner)
    page = client.get(f"/owner/progress?documents=pricing&conflict={two_owners_disagree.pk}")
    assert page.status_code == 200
    assert "data-decided-conflict" not in page.content.decode()


def test_a_conflict_the_person_may_not_resolve_is_not_named(
    client: Any, make_user: Any, two_owners_disagree: Conflict,
) -> None:
    client.force_login(make_user("otto", "owner"))
    page = client.get(f"/owner/progress?conflict={two_owners_disagree.pk}")
    assert page.status_code == 200
    assert "data-decided-conflict" not in page.content.decode()
    assert "trial_days" not in page.content.decode()


def test_a_conflict_that_is_not_a_number_is_refused_naming_the_field(
    client: Any, owner: Any,
) -> None:
    client.force_login(owner)
    response = client.get("/owner/progress?conflict=12x")
    assert response.status_code == 400
    assert "conflict" in response.content.decode()
    assert "must be the number of a conflict, such as 12." in response.content.decode()
