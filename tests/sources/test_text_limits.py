"""A free-text field tells the browser its limit as data-limit (for the counter), never as
maxlength, which would cut a long paste without a word; the server refuses the text whole."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.sources.models import Conflict

pytestmark = pytest.mark.django_db


def limits(page: str) -> dict[str, str]:
    """name → data-limit of every field that has one; fails on any maxlength."""
    fields = re.findall(r"<(?:textarea|input)\b[^>]*>", page)
    assert not [field for field in fields if "maxlength" in field], page
    found = {}
    for field in fields:
        name, limit = re.search(r'name="([^"]+)"', field), re.search(r'data-limit="(\d+)"', field)
        if name and limit:
            found[name.group(1)] = limit.group(1)
    return found


def test_owner_pages_give_their_notes_limits_without_maxlength(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    client.force_login(owner)
    document = limits(client.get("/owner/documents/pricing/").content.decode())
    assert document["note"] == "5000" and document["facts-0-value"] == "2000"
    assert [name for name in document if name.startswith("end-") or name == "note"]
    conflict = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    assert limits(conflict)["detail"] == "2000"


def test_a_justification_over_the_limit_is_refused_and_given_back_whole(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    client.force_login(owner)
    typed = "j" * 2125
    response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
        "reason": "other", "detail": typed, "signature": two_owners_disagree.signature})
    page = response.content.decode()
    assert response.status_code == 400
    assert "At most 2,000 characters: this text has 2,125." in page
    assert re.search(rf">\s*{typed}</textarea>", page)
    two_owners_disagree.refresh_from_db()
    assert two_owners_disagree.status == Conflict.Status.OPEN


def test_the_reviewers_texts_have_limits_without_maxlength(
    client: Any, reviewer: Any, two_owners_disagree: Conflict, submit: Any,
) -> None:
    submit("t-1")  # held for the conflict
    client.force_login(reviewer)
    found = limits(client.get("/answers/t-1/").content.decode())
    assert found["approve-comment"] == found["reject-comment"] == "5000"
    assert found["edit-answer"] == "200000"


def test_a_line_break_counts_as_one_character_as_the_counter_counts_it(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    """A browser sends each line break as CR LF: 1,000 lines of one letter are 1,999
    characters to the person typing, 2,998 as sent."""
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
        "reason": "other", "detail": "\r\n".join("j" * 1000),
        "signature": two_owners_disagree.signature})
    assert response.status_code == 302, response.content.decode()[:2000]
    two_owners_disagree.refresh_from_db()
    assert two_owners_disagree.status == Conflict.Status.DISMISSED
