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
        # A footnote reference shows the reader a citation, as [1] does (gate 2026.12.8).
        ("A footnote[^1] is a citation too.", ["1"]),
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


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Ask Dr. Lee. Then go.", 2),        # "Dr." is listed; "Lee." is a word
        ("See x.e.g. this. Done.", 2),      # a dotted run counts from its first letter
        ("Pay ..etc. now. Done.", 2),       # leading dots are not part of the word
        ("Un café. Deux.", 2),               # the word before the stop is ASCII letters only
        ("Fin 9. Suite.", 2),                # a number is no word
        ("Wait\n. Then.", 2),               # nor is a line break before the stop
    ],
)
def test_the_word_before_a_full_stop_decides_whether_it_ends_a_sentence(text, count):
    assert len(split_sentences(text)) == count


def test_an_answer_at_the_length_limit_splits_into_all_its_sentences():
    # 200,000 characters, a stop after an abbreviation in every sentence: the item page splits
    # every answer it shows, so each stop's look back must stay local.
    sentence = "Ask Dr. Lee, e.g. by mail, for the 14 days [d1]. "
    text = sentence * (200_000 // len(sentence))

    sentences = split_sentences(text, cjk=True)

    assert len(sentences) == 200_000 // len(sentence)
    assert sentences[-1].text == sentence.strip() and sentences[-1].markers == ("d1",)


def test_a_blank_line_ends_a_sentence_without_punctuation():
    sentences = split_sentences("Heading without a stop [d1]\n\nBody text [d2].")

    assert [s.text for s in sentences] == ["Heading without a stop [d1]", "Body text [d2]."]


def test_each_list_item_is_read_on_its_own_so_an_uncited_one_shows():
    text = ("Plans:\n- Trial: 14 days [d1]\n- Support: 24/7\n* Seats: 5 [d2]\n"
            "1. Refunds within 30 days [d3]\n  on request\n12) Invoices monthly\n"
            "## Notes\nA heading goes with its text [d4].")

    sentences = split_sentences(text)

    assert [(s.text, s.markers) for s in sentences] == [
        ("Plans:", ()),
        ("- Trial: 14 days [d1]", ("d1",)),
        ("- Support: 24/7", ()),
        ("* Seats: 5 [d2]", ("d2",)),
        ("1. Refunds within 30 days [d3]\n  on request", ("d3",)),
        ("12) Invoices monthly", ()),
        ("## Notes\nA heading goes with its text [d4].", ("d4",)),
    ]
    assert all(text[s.start : s.end] == s.text for s in sentences)
    assert split_sentences(text, cjk=True) == sentences


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("1. First [d1].\n2. Second [d2].", 2),  # an item's number ends no sentence
        ("In 2026. Prices rose [d1].", 2),        # a number's stop mid-line still does
        ("Minus:\n-5 degrees [d1]", 1),           # no space after the dash: no list item
        ("Stressed:\n*very* cold [d1]", 1),       # nor after the asterisk
        ("Code:\n    - indented four [d1]", 1),  # four spaces: code, not a list item
    ],
)
def test_only_a_list_item_or_heading_at_a_line_start_starts_a_sentence(text, count):
    assert len(split_sentences(text)) == count


def test_text_without_sentence_ends_is_one_sentence_and_blank_text_is_none():
    assert split_sentences("  just words [d1]  ") == [Sentence("just words [d1]", ("d1",), 2, 17)]
    assert split_sentences(" \n ") == []


@pytest.mark.parametrize(
    "text",
    [
        "See [FAQ](https://ex.com/faq[2]).",
        'See [FAQ](https://ex.com/faq[2] "the [3] FAQ").',
        "See [FAQ](<https://ex.com/faq [2]>).",
        "See [the wiki](https://en.wikipedia.org/wiki/Trial_(period)[7]).",
        "An image ![chart](https://ex.com/c.png?x=[1]) is not a citation.",
        "An autolink <https://ex.com/faq[2]> is not a citation.",
        "Call `plans[0]` to get the first plan.",
        "Double ``a ` b [x1]`` backticks make one code span.",
        "A fence:\n\n```python\nplans[0]\nitems[d1, d2]\n```\n",
        "A tilde fence:\n~~~\nplans[0]\n~~~~\nno marker here.",
        "An unclosed fence runs to the end:\n```\nplans[0]\n",
    ],
    ids=[
        "link-url",
        "link-title",
        "link-angle-url",
        "link-url-parens",
        "image-url",
        "autolink",
        "code-span",
        "double-backtick-span",
        "backtick-fence",
        "tilde-fence",
        "unclosed-fence",
    ],
)
def test_brackets_in_link_destinations_and_code_are_not_citations(text):
    assert extract_markers(text) == []


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("See [FAQ](https://ex.com/faq[2]) for details [d1].", ["d1"]),
        ("Call `plans[0]` as the docs say [d10].", ["d10"]),
        ("Per [d1] and [d10], use `x[d2]`.", ["d1", "d10"]),
        ("Lone backtick ` then a marker [d3].", ["d3"]),
        ("Unbalanced ``a` then a marker [d4].", ["d4"]),
        ("A bracket then prose (see [d5]) is still a marker.", ["d5"]),
        # Not links (a space in the destination, a blank line in the title): the reader sees
        # the brackets as typed, so the gate reads them.
        ("Not a link: [x](a [d6] b) has spaces in it.", ["x", "d6"]),
        ("The plan [d9](per the 2026 policy).", ["d9"]),
        ("```\nplans[0]\n```\nAfter the fence [d7].", ["d7"]),
        ("Inline ```code [d8]``` is a span, not a fence, and [d9] counts.", ["d9"]),
        ("```code [d8]``` opens no fence (a backtick in its info string) [d9].", ["d9"]),
        ('A [title](x "t"\n\n[d2] after a blank line is prose.', ["title", "d2"]),
        # A backslash-escaped backtick opens no code span (CommonMark): the span is `y`.
        ("Run \\`trial [d9] with `y`.", ["d9"]),
        ("See \\`the plan [d9]\\`.", ["d9"]),
        # A code span ends at a blank line, with CRLF line ends too.
        ("Use `x\r\n\r\n[d9] and `y`.", ["d9"]),
        # Inside a span a backslash escapes nothing: `a\` is a whole span.
        ("Code `a\\` then [d3].", ["d3"]),
    ],
)
def test_markers_outside_links_and_code_are_still_found(text, ids):
    assert extract_markers(text) == ids


def test_sentence_markers_skip_code_and_link_destinations_but_offsets_keep_the_text():
    answer = "Use `plans[0]` for the first plan [d1]. See [FAQ](https://ex.com/faq[2])."

    sentences = split_sentences(answer)

    assert [s.markers for s in sentences] == [("d1",), ()]
    assert all(answer[s.start : s.end] == s.text for s in sentences)
    assert sentences[0].text == "Use `plans[0]` for the first plan [d1]."


def test_a_visible_marker_citing_nothing_retrieved_abstains_even_next_to_backticks():
    import gating

    record = {
        "id": "escaped", "as_of": "2026-10-20",
        "answer": "The trial lasts 14 days [d1]. Run \\`trial [d9] with `y`.",
        "claims": [{"key": "trial_days", "value": 14, "cite": "d1"}],
        "evidence": [{"id": "d1", "key": "trial_days", "value": 14,
                      "valid_from": "2026-10-01", "valid_until": "2026-10-31"}],
    }
    result = gating.evaluate_record(record)
    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
