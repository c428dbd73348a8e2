"""Markers are read as CommonMark shows them (gate 2026.12.4): a backslash escape inside a
marker (``\\[d9\\]``, ``[pricing\\_faq]``) is shown without its backslash, so the reader sees
``[d9]`` and ``[pricing_faq]``. The gate saw no marker there: a visible citation of an id nothing
retrieved went out as a candidate, and a long answer whose markers all carried an escape
abstained as uncited.
"""

from __future__ import annotations

import pytest

import gating
from gating import extract_markers

LONG_TAIL = (
    " The plan renews every month unless it is cancelled before the renewal date, and the"
    " trial applies once per customer account in every region we serve, whichever plan the"
    " customer starts on."
)


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        # CommonMark shows "\[" as "[" and "\]" as "]": the reader sees [d9].
        ("Enterprise plans get 90 days \\[d9\\].", ["d9"]),
        ("Enterprise plans get 90 days [d9\\].", ["d9"]),
        # "\_" is shown as "_": the reader sees [pricing_faq].
        ("The trial lasts 14 days [pricing\\_faq].", ["pricing_faq"]),
        ("Both say so [d1\\, d2].", ["d1", "d2"]),
        # An escaped closing bracket ends no link text: the reader sees "[d9](per the policy)".
        ("Enterprise plans get 90 days [d9\\](per the policy).", ["d9"]),
        # An escaped backslash is shown as one: "[d9\]" names no id.
        ("Enterprise plans get 90 days [d9\\\\].", []),
    ],
)
def test_a_marker_written_with_backslash_escapes_is_read_as_the_reader_sees_it(text, ids):
    assert extract_markers(text) == ids


def test_an_escaped_marker_citing_nothing_retrieved_abstains(cases):
    # The reader sees "[d9]", a citation of nothing retrieved, next to a supported claim.
    record = cases.record(
        answer="The trial lasts 14 days [d1]. Enterprise plans get 90 days \\[d9\\].")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert result["findings"][0]["evidence"] == ["d9"]


def test_a_long_answer_whose_marker_escapes_an_underscore_is_not_uncited(cases):
    record = cases.record(
        claims=[cases.claim(cite="pricing_faq")],
        evidence=[cases.item("pricing_faq")],
        answer="The trial lasts 14 days [pricing\\_faq]." + LONG_TAIL,
    )
    assert len(record["answer"]) > gating.UNCITED_MIN_CHARS

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("candidate", "supported")
