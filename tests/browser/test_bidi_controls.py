"""An answer's text may carry a bidi control (U+202E reverses what follows it): it stays inside
the text, and the page's own label after the sentence keeps its place and reads as written."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_right_to_left_override_in_an_answer_does_not_reverse_the_pages_label(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any,
) -> None:
    hold("t-rlo", answer="The trial lasts 14 days [d1]. Then \u202eoverride text")
    page = sign_in(reviewer.username)
    page.goto(f"{live_server.url}/answers/t-rlo/")
    sentence = page.locator("li.sentence").nth(1)
    text, label = sentence.locator("span.text"), sentence.locator(".no-cite")
    expect(label).to_have_text("no citation")
    # Left to right as the page is: the sentence, then the label after it. Were the override
    # to run on past the text, the label would be drawn reversed, to the left of the text.
    assert text.bounding_box()["x"] < label.bounding_box()["x"]
    # Drawn as written: the first letter is the leftmost of the label's ink.
    first = page.evaluate("""(el) => {
        const range = document.createRange();
        const node = el.firstChild;
        range.setStart(node, 0); range.setEnd(node, 1);
        const last = document.createRange();
        last.setStart(node, node.length - 1); last.setEnd(node, node.length);
        return [range.getBoundingClientRect().x, last.getBoundingClientRect().x];
    }""", label.element_handle())
    assert first[0] < first[1]
