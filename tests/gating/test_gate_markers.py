"""Citation markers in answer text and the sentences that carry them."""

from __future__ import annotations

import pytest

from gating import Sentence, extract_markers, split_sentences


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("The trial lasts 14 days [d1].", ["d1"]),
        ("Two sources agree [d1, d2].", ["d1", "d2"]),
        ("Back to back [d1][d2] and spaced [ d3 ,d4 ].", ["d1", "d2", "d3", "d4"]),
        ("Ids may hold dots, colons and dashes [kb:pricing-faq.v2_1].", ["kb:pricing-faq.v2_1"]),
        ("Numbered style [1] works too [2].", ["1", "2"]),
        ("Repeats are listed once [d1] [d2] [d1].", ["d1", "d2"]),
        ("No markers at all.", []),
    ],
)
def test_markers_are_found_in_order_of_first_appearance(text, ids):
    assert extract_markers(text) == ids


@pytest.mark.parametrize(
    "text",
    [
        "See [the pricing page](https://example.com/pricing).",
        "A footnote[^1] is not a citation.",
        "Prose in brackets [see above] is not a citation.",
        "Empty brackets [] and [ , ] are not citations.",
    ],
)
def test_brackets_that_are_not_citations_are_ignored(text):
    assert extract_markers(text) == []


def test_each_sentence_carries_its_own_markers_with_offsets_into_the_answer():
    answer = "The trial lasts 14 days [d1]. Support answers within 8 hours.[d2][d3] Thanks!"

    sentences = split_sentences(answer)

    assert sentences == [
        Sentence("The trial lasts 14 days [d1].", ("d1",), 0, 29),
        Sentence("Support answers within 8 hours.[d2][d3]", ("d2", "d3"), 30, 69),
        Sentence("Thanks!", (), 70, 77),
    ]
    assert all(answer[s.start : s.end] == s.text for s in sentences)


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before_it():
    sentences = split_sentences("Prices rose in May. [d4] They fell in June.")

    assert [s.markers for s in sentences] == [("d4",), ()]


def test_abbreviations_and_decimals_do_not_end_a_sentence():
    text = "Plans, e.g. Pro, cost 9.50 U.S. dollars [d1]. Enterprise is quoted [d2]."

    sentences = split_sentences(text)

    assert [s.markers for s in sentences] == [("d1",), ("d2",)]


def test_a_blank_line_ends_a_sentence_without_punctuation():
    sentences = split_sentences("Heading without a stop [d1]\n\nBody text [d2].")

    assert [s.text for s in sentences] == ["Heading without a stop [d1]", "Body text [d2]."]


def test_text_without_sentence_ends_is_one_sentence_and_blank_text_is_none():
    assert split_sentences("  just words [d1]  ") == [Sentence("just words [d1]", ("d1",), 2, 17)]
    assert split_sentences(" \n ") == []
