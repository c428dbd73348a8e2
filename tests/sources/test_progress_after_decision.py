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
    client: Any, owner: Any, two_owners_disagree: Conflict,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
            "reason": "both valid", "signature": two_owners_disagree.signature})
    assert response.status_code == 302
    assert f"conflict={two_owners_disagree.pk}" in response["Location"]
    page = client.get(response["Location"]).content.decode()

    shown = section(page)
    assert shown.startswith("Dismissed trial_days")
    assert "An answer that retrieved both documents, even citing only one, still puts both " \
           "values before its reader" in shown
    assert f'href="/owner/conflicts/{two_owners_disagree.pk}/#held-answers"' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/reopen")
    assert response.status_code == 302
    shown = section(client.get(response["Location"]).content.decode())
    assert shown.startswith("Open trial_days")
    assert "The conflict is open again" in shown


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
