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


def test_a_long_text_fact_left_untouched_does_not_refuse_a_correction_of_another(
    client: Any, owner: Any, publish: Any
) -> None:
    """A text with line breaks is shown JSON-quoted, each break written as two characters:
    1,990 characters with 30 breaks were 2,022 as typed, and every correction of the
    document was refused for a value the owner never touched."""
    from reviewqueue.sources.forms import as_input
    from reviewqueue.sources.models import Document

    terms = ("Refunds are granted within 30 days of purchase for annual plans.\n" * 31)[:1990]
    publish("terms", passages=[{"span": "p1", "text": "A plan has 5 seats."}], facts=[
        {"key": "refund_terms", "value": terms, "valid_from": "2026-01-01",
         "valid_until": None, "span": "p1"},
        {"key": "seats", "value": 5, "valid_from": "2026-01-01", "valid_until": None,
         "span": "p1"}])
    document = Document.objects.get(key="terms")
    long_text, seats = document.current_revision.facts.order_by("position")
    shown = as_input(long_text.value)
    assert len(shown) > 2000
    client.force_login(owner)
    form = {"revision": document.current_revision.revision,
            "facts-TOTAL_FORMS": "2", "facts-INITIAL_FORMS": "2",
            "facts-0-fact_id": str(long_text.pk), "facts-0-value": shown,
            "facts-0-valid_from": "2026-01-01", "facts-0-valid_until": "",
            "facts-1-fact_id": str(seats.pk), "facts-1-value": "6",
            "facts-1-valid_from": "2026-01-01", "facts-1-valid_until": "",
            "passage:p1": "A plan has 6 seats.", "note": ""}

    response = client.post("/owner/documents/terms/publish", form)

    assert response.status_code == 302, re.findall(r"At most [^<]*", response.content.decode())
    current = Document.objects.get(key="terms").current_revision
    assert current.facts.get(key="seats").value == 6
    assert current.facts.get(key="refund_terms").value == terms
    # A value over the limit is still refused, counted as the value's characters.
    longer = terms + "x" * 20
    form.update({"revision": current.revision, "facts-0-value": as_input(longer),
                 "facts-0-fact_id": str(current.facts.get(key="refund_terms").pk),
                 "facts-1-fact_id": str(current.facts.get(key="seats").pk)})
    refused = client.post("/owner/documents/terms/publish", form)
    assert refused.status_code == 400
    assert "At most 2,000 characters: this text has 2,010." in refused.content.decode()
