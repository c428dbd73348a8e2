# ruff: noqa: RUF001, RUF002, RUF003 - full-width brackets and commas are what is tested here
"""Markers written the ways a reader also reads as citations (gate 2026.12.8): ids separated by
a semicolon or by Japanese commas (``[d1; d9]``, ``[d1、d9]``, ``[d1，d9]``, ``[d1；d9]``),
full-width brackets (``［d9］``) and Markdown footnote references (``[^d9]``). Before, the gate
read none of them: a citation of an id never retrieved went out as a candidate, and a long
answer citing only this way abstained as uncited.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import gating
from gating import extract_markers, marker_spans, markers, split_sentences
from tests.gating.test_gate_markers_escaped import LONG_TAIL


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        # Separators: a semicolon, the Japanese comma (U+3001), the full-width comma and
        # semicolon (U+FF0C, U+FF1B), mixed at will, spaces around them or not.
        ("料金は14日間です[d1、d9]。", ["d1", "d9"]),
        ("料金は14日間です[d1，d9]。", ["d1", "d9"]),
        ("料金は14日間です[d1；d9]。", ["d1", "d9"]),
        ("The trial lasts 14 days [d1; d9].", ["d1", "d9"]),
        ("Three agree [d1; d2、d3].", ["d1", "d2", "d3"]),
        ("Three agree [ d1 ;d2 , d3 ].", ["d1", "d2", "d3"]),
        # An escaped semicolon is shown as one (CommonMark), as an escaped comma is.
        ("The trial lasts 14 days [d1\\; d9].", ["d1", "d9"]),
        # Full-width brackets (U+FF3B, U+FF3D), with any separator.
        ("料金は14日間です［d9］。", ["d9"]),
        ("料金は14日間です［d1、d2］［d3］。", ["d1", "d2", "d3"]),
        ("料金は14日間です［d1，d2；d3］。", ["d1", "d2", "d3"]),
        ("Fourteen days ［ d1, d2 ］.", ["d1", "d2"]),
        # Escapes inside them are read as with ASCII brackets: the reader sees ［pricing_faq］.
        ("料金は14日間です［pricing\\_faq］。", ["pricing_faq"]),
        ("料金は14日間です［d9\\］。", ["d9"]),
        # A full-width bracket opens no link: "(url)" after it is text.
        ("料金は14日間です［d9］(https://example.com)。", ["d9"]),
        # A mismatched pair still shows the reader a bracketed id: read as a marker, and since
        # CommonMark opens a link only at "[", "［d9](url)" is no link either.
        ("Seats are unlimited ［d9].", ["d9"]),
        ("Seats are unlimited [d9］.", ["d9"]),
        ("Seats are unlimited ［d9](https://example.com).", ["d9"]),
        # Character references naming these characters are read as them.
        ("Seats are unlimited &#xFF3B;d9&#xFF3D;.", ["d9"]),
        ("The trial lasts 14 days [d1&#59; d9].", ["d1", "d9"]),
        ("The trial lasts 14 days [d1&semi; d9].", ["d1", "d9"]),
        ("料金は14日間です[d1&#x3001;d9]。", ["d1", "d9"]),
        # A comment inside hides nothing of the marker.
        ("料金は14日間です［d<!-- x -->9］。", ["d9"]),
        ("料金は14日間です[d1、<!-- x -->d9]。", ["d1", "d9"]),
        # A Markdown footnote reference: shown as a superscript citation (or, with no
        # definition, as written).
        ("Enterprise plans get 90 days[^d9].", ["d9"]),
        ("Enterprise plans get 90 days [^d1][^d9].", ["d1", "d9"]),
        ("Enterprise plans get 90 days [\\^d9].", ["d9"]),
        ("Enterprise plans get 90 days [^d1; d9].", ["d1", "d9"]),
        # A footnote definition at a line start is read as a marker, as a link reference
        # definition ("[d9]: url", which CommonMark hides) always was: held, never passed.
        ("Ninety days [^d9].\n\n[^d9]: The enterprise price list.", ["d9"]),
        ("Ninety days.\n\n[^d9]: The enterprise price list.", ["d9"]),
        ("Ninety days.\n\n[d9]: https://example.com/prices", ["d9"]),
    ],
)
def test_markers_a_reader_sees_are_read_whatever_their_separator_or_brackets(text, ids):
    assert extract_markers(text) == ids


@pytest.mark.parametrize(
    "text",
    [
        # Code shows its brackets as code, whatever their width or separator.
        "Call `plans［0］` or `items[d1; d9]` or `notes[^d9]`.",
        "A fence:\n\n```\nitems［d9］\nitems[d1、d9]\n[^d9]\n```\n",
        "A tilde fence:\n~~~\nitems［d1；d9］\n~~~\n",
        # A comment hides them.
        "Nothing shown <!-- ［d9］ [d1; d9] [^d9] -->.",
        # A footnote label followed by a destination is a link, as "[d9](url)" is.
        "See [^d9](https://example.com).",
        # Prose in brackets, and lists with an empty or doubled separator.
        "Prose ［see above］ is no citation.",
        "Empty ［］ and ［、］ and [；] and [d1;] and [d1、、d2] and [^].",
        "A caret alone [^ ] or doubled [^^d9] cites nothing.",
        # A footnote reference has its caret right after the bracket.
        "Spaced [ ^d9] is prose.",
    ],
)
def test_what_shows_no_citation_stays_no_marker(text):
    assert extract_markers(text) == []


def test_a_wide_marker_spans_its_brackets_and_sentences_carry_it():
    answer = "無料体験は14日間です［d1、d2］。EUでは30日間です[d3; d4]。サポートは常時です[^d5]。"

    spans = [answer[start:end] for start, end in marker_spans(answer)]

    assert spans == ["［d1、d2］", "[d3; d4]", "[^d5]"]
    assert [s.markers for s in split_sentences(answer, cjk=True)] == [
        ("d1", "d2"), ("d3", "d4"), ("d5",)]
    assert [s.markers for s in split_sentences(answer)] == [("d1", "d2", "d3", "d4", "d5")]


@pytest.mark.parametrize("marker", ["［d1］", "［d1、d2］", "[d1; d2]", "[^d1]"])
def test_a_wide_marker_right_after_a_japanese_full_stop_belongs_to_that_sentence(marker):
    ascii_form = "[" + ", ".join(extract_markers(marker)) + "]"
    for form in (marker, ascii_form):
        answer = f"無料体験は14日間です。{form}EUでは30日間です。"
        sentences = split_sentences(answer, cjk=True)
        assert [(s.text, s.markers) for s in sentences] == [
            (f"無料体験は14日間です。{form}", tuple(extract_markers(marker))),
            ("EUでは30日間です。", ()),
        ]


def test_a_wide_marker_after_a_western_full_stop_belongs_to_the_sentence_before_it():
    sentences = split_sentences("Prices rose in May. ［d4］ They fell in June [d5; d6].")

    assert [(s.text, s.markers) for s in sentences] == [
        ("Prices rose in May. ［d4］", ("d4",)),
        ("They fell in June [d5; d6].", ("d5", "d6")),
    ]


WAYS_TO_CITE_D9 = ["[d1、d9]", "[d1，d9]", "[d1；d9]", "[d1; d9]", "［d9］", "［d1、d9］",
                   "［d9]", "[^d9]", "[d1; d2、d9]"]


@pytest.mark.parametrize("cited", WAYS_TO_CITE_D9)
def test_an_answer_citing_nothing_retrieved_this_way_abstains_as_with_a_comma(cases, cited):
    # The reviewer's case: claim t=14 cites d1, d1 supports it, the text also cites d9.
    evidence = [cases.item("d1"), cases.item("d2")]
    record = cases.record(evidence=evidence, answer=f"料金は14日間です{cited}。")
    with_comma = cases.record(evidence=evidence, answer="料金は14日間です[d1, d9]。")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert result["findings"][0]["step"] == "4"
    assert result["findings"][0]["evidence"] == ["d9"]
    assert result["findings"] == gating.evaluate_record(with_comma)["findings"]


@pytest.mark.parametrize("cited", ["［d1］", "[d1、d1]", "[d1; d1]", "［d1，d1］", "[^d1]"])
def test_a_long_answer_citing_only_this_way_counts_as_cited(cases, cited):
    record = cases.record(answer=f"The trial lasts 14 days {cited}." + LONG_TAIL)
    assert len(record["answer"]) > gating.UNCITED_MIN_CHARS

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("candidate", "supported")


@pytest.mark.parametrize("text", [
    # At the answer size limit: lists that never close, openers everywhere, and a run of
    # sentence marks followed by wide markers. Each is read in one pass (the pytest timeout
    # fails a quadratic reading).
    "［d1" + "、d1" * 60_000 + " no closing bracket, then ［d2］.",
    "[d1" + "; d1" * 50_000 + " no closing bracket, then [d2].",
    "［" * 200_000 + "［d2］",
    "[^" * 100_000 + "[^d2]",
    "［d1<!--" + "x" * 200_000 + "--> no closing bracket, then ［d2］.",
])
def test_long_unclosed_wide_markers_are_read_once(text):
    assert extract_markers(text) == ["d2"]


@pytest.mark.parametrize(("text", "count", "cjk_count"), [
    # Japanese marks end a sentence only with cjk, the wide markers after them going with it.
    ("。" * 100_000 + "［a］" * 30_000 + "x", 1, 2),
    # A full stop needs white space after its markers: "x" follows them here.
    ("." * 100_000 + "［a］" * 30_000 + "x", 1, 1),
])
def test_a_long_run_of_marks_and_wide_markers_is_read_once(text, count, cjk_count):
    assert len(split_sentences(text)) == count
    assert len(split_sentences(text, cjk=True)) == cjk_count


# -- what the gate read before 2026.12.8 it reads the same way ----------------------------------

# The patterns of gate 2026.12.7, verbatim: with them in place, the reader is the old one.
_OLD_ID = r"(?:[A-Za-z0-9_.:\-]|\\[_.:\-])+"
_OLD_HIDDEN_ID = r"(?:(?:[A-Za-z0-9_.:\-]|\\[_.:\-])\x00*+)++"
_OLD_BLOCK_START = r"\n(?=[ \t]{0,3}(?:[-*+]|[0-9]{1,9}[.)]|#{1,6})[ \t])"
_OLD_MARKER_RE = re.compile(rf"\[\s*({_OLD_ID}(?:\s*\\?,\s*{_OLD_ID})*)\s*(?:\\\]|\](?!\())")
_OLD = {
    "MARKER_RE": _OLD_MARKER_RE,
    "_ASCII_MARKER_RE": _OLD_MARKER_RE,
    "_HIDDEN_MARKER_RE": re.compile(
        rf"\[[\s\x00]*+({_OLD_HIDDEN_ID}(?:[\s\x00]*+\\?,[\s\x00]*+{_OLD_HIDDEN_ID})*+)"
        rf"[\s\x00]*+(?:\\\]|\](?!\())"),
    "_SPLIT_IDS": re.compile(r"\s*\\?,\s*"),
    "_END_RE": re.compile(
        r"""(?<![.!?])[.!?]++["'\u2019\u201d)]*+(?P<tail>(?:\s*\[[^\[\]\n]*\](?!\())*)(?=\s|$)"""
        r"""|\n\s*\n|""" + _OLD_BLOCK_START),
    "_CJK_END_RE": re.compile(
        r"""(?:(?<![.!?])[.!?]++["'\u2019\u201d)]*+"""
        r"""|(?P<cjk>(?<![\u3002\uff01\uff1f])[\u3002\uff01\uff1f]++"""
        r"""(?![\u3002\uff01\uff1f\u300d\u300f\uff09"'\u2019\u201d)])))"""
        r"""(?P<tail>(?:\s*\[[^\[\]\n]*\](?!\())*)(?(cjk)|(?=\s|$))|\n\s*\n|"""
        + _OLD_BLOCK_START),
}
_OLD_MARKER_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-, []\t")

# Pieces of the forms read before, none of the new characters among them.
_PIECE = st.sampled_from([
    "[", "]", "[d", "1]", "d", "1", "d1", ",", "\\,", " ", ".", "!", "?", "\n", "\n\n", "x",
    "[d1]", "[d1, d2]", "[d1][d2]", "\\[", "\\]", "\\_", "`", "(", ")", "](", "](x)",
    "<!--", "-->", "<!-- [d9] -->", "&#91;", "&#93;", "&#44;", "&amp;", "\u3002", "\uff01",
    "\u300d", "- ", "1. ", "[^1]", "^", "[x](y)", ":", "\u3000",
])


def _reading(text):
    return (extract_markers(text), marker_spans(text), split_sentences(text),
            split_sentences(text, cjk=True))


@settings(max_examples=600)
@given(st.lists(_PIECE, max_size=20))
@example(["[d1]", "\u3002", "[d2]"])
@example(["x", ".", " ", "[d1, d2]", "\n\n", "<!--", "[d", "-->", "1]"])
def test_texts_without_the_new_forms_read_exactly_as_before(pieces):
    text = "".join(pieces)
    assume("[^" not in text)  # a footnote reference: a new form, read since 2026.12.8

    assert _reads_as_before(text)


def _reads_as_before(text):
    now = _reading(text)
    with pytest.MonkeyPatch.context() as patch:
        for name, pattern in _OLD.items():
            patch.setattr(markers, name, pattern)
        patch.setattr(markers, "_MARKER_CHARS", _OLD_MARKER_CHARS)
        patch.setattr(markers, "_NAMED", {name: char for name, char in markers._NAMED.items()
                                          if char in _OLD_MARKER_CHARS})
        before = _reading(text)
    return now == before


@pytest.mark.parametrize("text", ["[d1; d2]", "[^d1]", "\uff3bd1\uff3d", "[d1\u3001d2]",
                                  "A. \uff3bd1\uff3d B."])
def test_the_old_reading_is_what_the_property_compares_with(text):
    # The property above holds only where the forms are old: the new ones read differently.
    assert not _reads_as_before(text)


_WIDE = {",": ["、", "，", "; ", "；"], "[": ["［"], "]": ["］"]}


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["[d1]", "[d1, d2]", "[ d3 ,d4 ]", "x", " ", ". ", "。"]),
                max_size=12), st.randoms(use_true_random=False))
def test_a_marker_written_wide_cites_what_its_ascii_form_cites(pieces, rng):
    text = "".join(pieces)
    wide = "".join(rng.choice(_WIDE[char]) if char in _WIDE else char for char in text)

    assert extract_markers(wide) == extract_markers(text)
    assert [s.markers for s in split_sentences(wide, cjk=True)] == [
        s.markers for s in split_sentences(text, cjk=True)]
