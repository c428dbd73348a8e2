"""Each citation is drawn where the answer put its marker: a chip in the line of its sentence,
before the full stop, that opens on the cited passage in place."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_citation_stays_in_its_line_before_the_full_stop_and_opens_in_place(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    hold("t-inline", answer="The trial lasts 14 days per month [d1]. Teams get 30 days "
         "[d1, d2] in the EU.")
    page = sign_in("alice")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/answers/t-inline/")
    first, second = page.locator("li.sentence").all()
    words, stop = first.locator("span.text").all()
    chip = first.locator("details.cite > summary")
    expect(stop).to_have_text(".")
    # Closed, the chips are part of the line: its words and chips share one line, in the
    # order written, nothing pushed onto a line of its own.
    for sentence in (first, second):
        boxes = [part.bounding_box() for part in
                 sentence.locator(":scope > span.text, :scope > details.cite > summary").all()]
        middles = [box["y"] + box["height"] / 2 for box in boxes]
        assert max(middles) - min(middles) < 4, boxes
        assert [box["x"] for box in boxes] == sorted(box["x"] for box in boxes), boxes
    assert len(boxes) == 4  # "Teams get 30 days", [d1], [d2], " in the EU."
    # Open, the passage is shown right there, under the line it was opened from; the full
    # stop stays on that line, beside the chip, instead of falling under the card.
    chip.click()
    card = first.locator(".cite-card")
    expect(card.locator("mark")).to_have_text("The free trial lasts 14 days.")
    line = [words.bounding_box(), chip.bounding_box(), stop.bounding_box()]
    middles = [box["y"] + box["height"] / 2 for box in line]
    assert max(middles) - min(middles) < 4, line
    assert line[1]["x"] < line[2]["x"], line
    assert line[2]["y"] + line[2]["height"] <= card.bounding_box()["y"]
    # In the second sentence, opening [d1] leaves [d2] and the rest of the line where they
    # were; the next sentence starts under the card.
    second.locator("details.cite > summary").first.click()
    second_card = second.locator(".cite-card").first
    expect(second_card).to_be_visible()
    chips_and_words = [part.bounding_box() for part in second.locator(
        ":scope > span.text, :scope > details.cite > summary").all()]
    middles = [box["y"] + box["height"] / 2 for box in chips_and_words]
    assert max(middles) - min(middles) < 4, chips_and_words
    assert max(b["y"] + b["height"] for b in chips_and_words) <= second_card.bounding_box()["y"]
    assert card.bounding_box()["y"] + card.bounding_box()["height"] <= (
        second.bounding_box()["y"])


def test_a_source_cited_again_opens_on_its_passage_where_it_is_cited_again(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    """The page writes a source's card at its first chip only (a long passage cited by every
    sentence made pages of megabytes); a later chip of it opens on a copy, in its own line."""
    hold("t-again", answer="The trial lasts 14 days [d1]. Teams get 30 days [d2] in the EU. "
         "Every plan has a trial of 14 days [d1].")
    page = sign_in("alice")
    page.goto(f"{live_server.url}/answers/t-again/")
    last = page.locator("li.sentence").nth(2)
    last.locator("details.cite > summary").click()
    expect(last.locator(".cite-card mark")).to_have_text("The free trial lasts 14 days.")
    expect(last.locator(".cite-card .doc-key")).to_have_text("pricing")
    page.keyboard.press("Escape")
    page.locator("body").press("o")  # expand every passage: each opens on its own
    expect(page.locator("details.cite .cite-card mark")).to_have_count(3)
