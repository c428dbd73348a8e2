"""A marker inside an HTML comment is not a citation (gate 2026.12.5): the rendered answer shows
nothing of ``<!-- [d1] -->``, yet the gate read the marker there, so a long answer whose only
citation was hidden in a comment went out as a candidate instead of abstaining as uncited.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gating
from gating import extract_markers, marker_spans, markers, split_sentences
from tests.gating.test_gate_markers_escaped import LONG_TAIL


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("The trial is 30 days. <!-- [d1] -->", []),
        ("The trial is 30 days <!--[d1]-->.", []),
        # A comment may span lines, and blank lines: it ends at the first "-->".
        ("The trial is 30 days.\n<!--\nsource: [d1]\n\n[d2]\n-->\n", []),
        # A "--" inside a comment ends nothing; "-->" does.
        ("The trial is 30 days <!-- [d1] -- [d2] --> [d3].", ["d3"]),
        # "<!-->" and "<!--->" are whole (empty) comments: what follows them is shown.
        ("The trial is 30 days <!--> [d1].", ["d1"]),
        ("The trial is 30 days <!---> [d1].", ["d1"]),
        ("Shown [d1] <!-- hidden [d2] --> shown [d3] <!-- hidden [d4] -->.", ["d1", "d3"]),
        # Text after "-->" on the same line is shown, even when the comment opened the line.
        ("<!-- note --> The trial is 30 days [d1].", ["d1"]),
    ],
)
def test_a_marker_inside_an_html_comment_is_not_read(text, ids):
    assert extract_markers(text) == ids


@pytest.mark.parametrize(
    "text",
    [
        "The trial is 30 days. <!-- [d1]",
        "The trial is 30 days.\n<!--\n[d1]\n\nMore prose [d2].",
        "The trial is 30 days <!-- unclosed, then a blank line\n\nand [d1] -- > [d2].",
    ],
    ids=["inline", "opening-a-line", "across-a-blank-line"],
)
def test_an_unclosed_comment_hides_everything_after_it(text):
    # A renderer that passes the opener through leaves the rest of the page inside the
    # comment; the gate reads none of it, so that no citation a reader may not see counts.
    assert extract_markers(text) == []


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        # In code a comment opener is code: what follows it is prose.
        ("Write `<!--` to open a comment [d1].", ["d1"]),
        ("Comments look like `<!-- [d9] -->` in HTML [d1].", ["d1"]),
        ("```html\n<!-- [d9]\n```\nThe trial is 30 days [d1].", ["d1"]),
        ("~~~\n<!-- [d9] -->\n~~~\n[d1]", ["d1"]),
        # An escaped "<" opens no comment (CommonMark shows "<!--").
        ("Escaped \\<!-- [d1] -->.", ["d1"]),
        # Whichever starts first wins, as in CommonMark: a backtick inside a comment opens no
        # code span, and "-->" inside a code span closes no comment.
        ("Hidden <!-- `x` [d9] --> shown [d1].", ["d1"]),
        ("Hidden <!-- `a --> b` [d1].", ["d1"]),
        ("Code `a <!-- b` [d1] -->.", ["d1"]),
        ("Hidden <!-- [d9] `a --> b` --> [d1].", ["d1"]),
    ],
)
def test_comments_and_code_are_read_together(text, ids):
    assert extract_markers(text) == ids


def test_a_comment_is_blanked_in_marker_spans_and_sentences_with_offsets_kept():
    answer = "The trial is 30 days. <!-- [d1] --> Support answers in 8 hours [d2]."

    sentences = split_sentences(answer)

    assert marker_spans(answer) == [(answer.index("[d2]"), answer.index("[d2]") + 4)]
    assert [(s.text, s.markers) for s in sentences] == [
        ("The trial is 30 days.", ()),
        ("<!-- [d1] --> Support answers in 8 hours [d2].", ("d2",)),
    ]
    assert all(answer[s.start : s.end] == s.text for s in sentences)


def test_a_sentence_that_is_only_a_comment_cites_nothing():
    sentences = split_sentences("The trial is 30 days. <!-- [d1] -->")

    assert [(s.text, s.markers) for s in sentences] == [
        ("The trial is 30 days.", ()),
        ("<!-- [d1] -->", ()),
    ]


def test_a_long_answer_whose_only_citation_is_in_a_comment_is_not_a_candidate(cases):
    claims, evidence, options = gating.parse_record(
        cases.record(answer="The trial lasts 14 days." + LONG_TAIL + " <!-- [d1] -->"))
    assert len(options.answer_text or "") > gating.UNCITED_MIN_CHARS

    verdict = gating.evaluate(claims, evidence, options)

    assert (verdict.decision, verdict.reason) == ("abstain", "uncited_answer")


def test_the_same_answer_with_the_marker_shown_is_a_candidate(cases):
    claims, evidence, options = gating.parse_record(
        cases.record(answer="The trial lasts 14 days [d1]." + LONG_TAIL + " <!-- note -->"))

    verdict = gating.evaluate(claims, evidence, options)

    assert (verdict.decision, verdict.reason) == ("candidate", "supported")


def test_a_marker_in_a_comment_citing_nothing_retrieved_does_not_hold_the_answer(cases):
    # The reader sees only "[d1]", which is supported: the hidden id is no citation.
    record = cases.record(answer="The trial lasts 14 days [d1]. <!-- see [d9] -->")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("candidate", "supported")


def test_a_marker_after_a_comment_citing_nothing_retrieved_still_abstains(cases):
    record = cases.record(answer="The trial lasts 14 days [d1]. <!-- note --> See [d9].")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert result["findings"][0]["evidence"] == ["d9"]


def test_many_comment_openers_are_read_in_one_pass():
    # At the size limit, openers everywhere and one closer at the end: each opener must not
    # look for its own closer again (quadratic in the text).
    text = "<!-- [d1] " * 20_000 + "--> [d2]."

    assert extract_markers(text) == ["d2"]


class _Counted:
    """A compiled pattern that counts the characters its searches read."""

    def __init__(self, pattern):
        self.pattern, self.read = pattern, 0

    def search(self, text, pos=0, endpos=None):
        end = len(text) if endpos is None else endpos
        found = self.pattern.search(text, pos, end)
        self.read += (found.end() if found else end) - pos
        return found


def _work(text):
    """What reading `text` costs the marker reader, the same on every machine: the lines of
    gating/markers.py run, and the characters its searches for comment and paragraph ends
    read."""
    patterns = {name: _Counted(getattr(markers, name))
                for name in ("_COMMENT_END", "_PARAGRAPH_END")}
    lines = 0

    def in_markers(frame, event, arg):
        nonlocal lines
        lines += event == "line"
        return in_markers

    def calls(frame, event, arg):
        return in_markers if frame.f_code.co_filename == markers.__file__ else None

    with pytest.MonkeyPatch.context() as patch:
        for name, counted in patterns.items():
            patch.setattr(markers, name, counted)
        sys.settrace(calls)
        try:
            extract_markers(text)
            split_sentences(text)
        finally:
            sys.settrace(None)
    return lines + sum(counted.read for counted in patterns.values())


@pytest.mark.parametrize("filler", ["<!-- a --!>", "<!----!>x", "`a` ", "]((a)", "](a (",
                                    "](<a ", "](a 'b", "](", "[a<!--x-->", "[d<!-- x. -->1]. ",
                                    "\\[d](", "&#91;d&#93;(", "x](", "&#91;", "\uff3bd](",
                                    "[^d](", "[d\u3001<!--x-->"])
def test_reading_grows_as_the_text_does(filler):
    # Each of these once made every comment opener, backtick run or "](" read on to the end
    # of the text: minutes at the answer size limit. Twice the text must cost about twice.
    def text(size):
        return "[d1] " + filler * (size // len(filler)) + " [d2]."

    assert _work(text(20_000)) < 2.5 * _work(text(10_000))


@pytest.mark.parametrize("text", [".." * 100_000 + "x", "." * 100_000 + "[a]" * 30_000 + "x",
                                  "\u3002" * 200_000 + "\u300d"])
def test_a_long_run_of_sentence_marks_is_read_once(text):
    # Tried again from each mark of the run, this took about half an hour (the pytest timeout
    # fails it): the review page splits every answer it shows into sentences.
    assert len(split_sentences(text)) == len(split_sentences(text, cjk=True)) == 1


def test_a_nul_joins_no_marker():
    # CommonMark shows U+0000 as U+FFFD: only a comment the reader never sees joins a marker,
    # even in a text that holds both.
    assert extract_markers("[d\x001] [d<!-- -->2]") == ["d2"]


def test_a_long_comment_after_an_opening_bracket_is_read_in_one_pass():
    # At the size limit: the comment's hidden characters are read once, not shared out again
    # and again between the parts of a marker that never closes (quadratic: minutes here).
    text = "[d1<!--" + "x" * 200_000 + "--> no closing bracket, then [d2]."

    assert extract_markers(text) == ["d2"]


def test_a_long_comment_still_makes_an_answer_without_markers_long(cases):
    # Step 7b counts the text as written: hiding it in a comment does not shorten an answer
    # below the length at which it needs a marker.
    record = cases.record(answer="The trial lasts 14 days. <!--" + LONG_TAIL + " -->")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "uncited_answer")


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("No comment [d1].", []),
        ("<!-- [d1] -->", ["<!-- [d1] -->"]),
        ("Shown <!-- a --> shown <!--> too <!-- b", ["<!-- a -->", "<!-->", "<!-- b"]),
        # Code shows a comment as it is; an escaped opener opens nothing.
        ("`<!-- [d1] -->` and \\<!-- [d2] -->", []),
        ("```\n<!-- [d1] -->\n```\n<!-- [d2] -->", ["<!-- [d2] -->"]),
    ],
)
def test_comment_spans_are_the_comments_a_reader_never_sees(text, hidden):
    assert [text[start:end] for start, end in gating.comment_spans(text)] == hidden


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        # A comment inside a marker hides nothing of it (gate 2026.12.6): the reader sees the
        # marker whole, and so does the gate.
        ("The trial is 30 days [d<!-- -->1].", ["d1"]),
        ("The trial is 30 days [<!-- a -->d1<!-- b -->].", ["d1"]),
        ("The trial is 30 days [d1,<!-- -->\nd2] and [d<!--\n-->3].", ["d1", "d2", "d3"]),
        # Only where every reading hides the comment: CommonMark ends a paragraph at a blank
        # line, and shows a comment that only "--!>" closes as text.
        ("The trial is 30 days [d<!--\n\n-->3].", []),
        ("The trial is 30 days [d<!-- --!>3].", []),
        ("Escaped [pricing\\<!-- -->_faq].", []),
        # A comment between the bracket and "(" makes no link: CommonMark wants them adjacent.
        ("The trial is 30 days [d1]<!-- -->(per the FAQ).", ["d1"]),
        # A comment inside a link's text leaves it a link.
        ("See [d<!-- -->1](https://example.org/faq).", []),
        # A browser ends a comment at "--!>" and shows what follows; "<!--!>" ends nothing.
        ("Hidden <!-- [d9] --!> shown [d1] --> [d2].", ["d1", "d2"]),
        ("Hidden <!--!> [d9] --> shown [d1].", ["d1"]),
        ("Hidden <!---!> [d9] --> shown [d1].", ["d1"]),
    ],
)
def test_what_a_comment_leaves_shown_is_read(text, ids):
    assert extract_markers(text) == ids


def test_a_marker_split_by_a_comment_keeps_its_whole_span_and_sentence():
    answer = "The trial is 30 days [d<!-- x -->1]. Support answers in 8 hours [d2]."

    sentences = split_sentences(answer)

    start = answer.index("[d<!--")
    assert marker_spans(answer) == [(start, answer.index("].") + 1),
                                    (answer.index("[d2]"), answer.index("[d2]") + 4)]
    assert [s.markers for s in sentences] == [("d1",), ("d2",)]


@pytest.mark.parametrize(
    "answer", ["The trial is 30 days [d<!-- x. -->1]. Next [d2].",
               "The trial is 30 days. [d<!-- ] -->1] Next [d2]."])
def test_a_sentence_does_not_end_inside_a_comment(answer):
    sentences = split_sentences(answer)

    assert [s.markers for s in sentences] == [("d1",), ("d2",)]
    assert (sentences[0].start, sentences[0].end) == (0, answer.index("Next") - 1)


def test_a_marker_split_by_a_comment_citing_nothing_retrieved_abstains(cases):
    # The reader sees "[d9]", a citation of nothing the answer retrieved: before 2026.12.6 the
    # gate read no marker there and passed the answer as supported.
    record = cases.record(answer="The trial lasts 14 days [d1]. See also [d<!-- -->9].")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert result["findings"][0]["evidence"] == ["d9"]


_PROSE = st.sampled_from(["[", "]", "[d", "1]", "d", "1", ",", " ", ".", "\n", "x", "[d1]"])
_COMMENT = st.text(alphabet="ab [d9]", max_size=6).map(lambda inner: f"<!--{inner}-->")


@settings(max_examples=500)
@given(st.lists(st.one_of(_PROSE, _COMMENT), max_size=16))
@example(["[d", "<!---->", "1]"])
def test_markers_are_read_as_if_the_comments_were_cut_out(pieces):
    # What a reader sees of text and comments is the text alone, joined where the comments
    # stood: the gate reads the same markers in both.
    text = "".join(pieces)
    cut = "".join(piece for piece in pieces if not piece.startswith("<!--"))

    assert extract_markers(text) == extract_markers(cut)
