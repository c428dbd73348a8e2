"""A hand-off sent from a second tab (or a page drawn before the first one went) does not
silently ask the owners a second time: the question already waiting stays the one they answer,
and the reviewer is told, with the note kept."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.reviews.models import OwnerQuestion

pytestmark = pytest.mark.django_db

NOTE = "Which trial length is right, 14 or 30 days?"


def send_form_fields(page: str, trace: str) -> dict[str, str]:
    """The hidden fields of the page's "Send to the owner" form, as a browser posts them."""
    form = page.split(f'action="/answers/{trace}/send-to-owner"', 1)[1].split("</form>", 1)[0]
    return {name: value for name, value in re.findall(
        r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form)
        if name != "csrfmiddlewaretoken"}


def test_a_hand_off_sent_again_from_a_second_tab_asks_nothing_twice(
    hold: Any, login: Any, reviewer: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    # Two tabs on the answer, both drawn before either sent the note.
    page = client.get(f"/answers/{trace}/").content.decode()
    assert "Send to the owner instead of deciding" in page
    fields = send_form_fields(page, trace)

    # The first tab sends the note, and shows the answer it leads back to.
    first = client.post(f"/answers/{trace}/send-to-owner", {**fields, "note": NOTE},
                        follow=True)
    assert "Sent to the owners." in first.content.decode()
    # The second sends it too, a moment later (the same note, or a reworded one).
    again = f"{NOTE} Sent again from the other tab."
    second = client.post(f"/answers/{trace}/send-to-owner", {**fields, "note": again})

    # One question waits for the owners; the second tab is told, not given "Sent".
    assert OwnerQuestion.objects.filter(answer__trace_id=trace).count() == 1
    assert second.status_code == 409
    html = second.content.decode()
    assert "Sent to the owners." not in html
    assert again in html  # what the second tab wrote is kept, to copy
