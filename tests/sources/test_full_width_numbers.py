"""A Japanese input method types digits full width (U+FF10 to U+FF19): typed over a number,
the owner means that number, as the reviewer's claim editor already reads it (ClaimForm takes
full-width "14" as 14). The correction form instead takes it for text, and tells the owner to
write it in quotes to make it text: the opposite of what they meant."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sources.test_owner_input import current, fact, publish_form

pytestmark = pytest.mark.django_db


def full_width(digits: str) -> str:
    return "".join(chr(0xFF10 + int(d)) for d in digits)


@pytest.mark.parametrize("meant", [31, 120])
def test_full_width_digits_over_a_number_are_that_number(
    client: Any, publish: Any, owner: Any, meant: int
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    facts = list(current().facts.order_by("position"))
    client.force_login(owner)
    client.cookies["django_language"] = "ja"
    response = client.post("/owner/documents/pricing/publish",
                           publish_form(facts, {"trial_days": full_width(str(meant))},
                                        revision="r1"))
    assert response.status_code == 302, response.content.decode()[-3000:]
    value = current().facts.get(key="trial_days").value
    assert value == meant and type(value) is int


def test_a_text_of_full_width_digits_shows_quoted_and_an_untouched_one_stays_text(
    client: Any, publish: Any, owner: Any
) -> None:
    """The page shows a text that would read back as a number quoted, as it shows "14": the
    form posted back as it is drawn leaves the text a text."""
    from reviewqueue.sources.forms import as_input, parse_value

    text = full_width("31")
    assert as_input(text) == f'"{text}"'
    assert parse_value(as_input(text)) == text
    publish("pricing", facts=[fact("room", text), fact("trial_days", 14)])
    facts = list(current().facts.order_by("position"))
    client.force_login(owner)
    shown = client.get("/owner/documents/pricing/").content.decode()
    assert f'value="&quot;{text}&quot;"' in shown
    response = client.post("/owner/documents/pricing/publish",
                           publish_form(facts, {"room": as_input(text), "trial_days": "15"},
                                        revision="r1"))
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert current().facts.get(key="room").value == text
