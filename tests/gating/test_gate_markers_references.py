"""A marker is read as CommonMark shows it when its brackets are written as character
references or its opening bracket is escaped (gate 2026.12.7): ``&#91;d9&#93;`` and
``\\[d9](url)`` show the reader ``[d9]``, yet the gate read no marker there, so an answer citing
nothing it retrieved went out as a candidate.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import gating
from gating import extract_markers, marker_spans, split_sentences

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        # Character references show the character they name, outside code.
        ("Seats are unlimited &#91;d9&#93;.", ["d9"]),
        ("Seats are unlimited &#x5B;d9&#x5d;.", ["d9"]),
        ("Seats are unlimited &lbrack;d9&rsqb;.", ["d9"]),
        ("The trial lasts 14 days [d1&#44; d9].", ["d1", "d9"]),
        ("The trial lasts 14 days [&#100;1].", ["d1"]),
        ("The trial lasts 14 days [d1&comma;&#32;d9].", ["d1", "d9"]),
        # A bracket so written is text, never a link's: "(url)" after it is text too.
        ("Seats &#91;d9&#93;(https://example.com).", ["d9"]),
        ("Seats &#91;d9](https://example.com).", ["d9"]),
        ("Seats [d9&#93;(https://example.com).", ["d9"]),
        # An escaped opening bracket opens no link either.
        ("Seats are unlimited \\[d9](https://example.com/seats).", ["d9"]),
        ("Seats are unlimited \\[d9]().", ["d9"]),
        ("[d1](https://a) \\[d2](https://b) [d3](https://c)", ["d2"]),
        # Unchanged: a link is no marker, an escaped backslash escapes nothing after it, a
        # reference in code is code, and one naming no marker character is left as it is.
        ("See [docs](https://example.com) [d1].", ["d1"]),
        ("See \\\\[d9](https://example.com).", []),
        ("Write `&#91;d9&#93;` for a bracket [d1].", ["d1"]),
        ("R&amp;D [d1] and &copy; [d&amp;2].", ["d1"]),
        ("Seats &#91;d9 &#12345; x&#93;.", []),
    ],
)
def test_references_and_escaped_openers_are_read_as_shown(text, ids):
    assert extract_markers(text) == ids


def test_a_marker_written_with_references_spans_them_whole():
    answer = "Seats are unlimited &#91;d9&#93;. The trial lasts 14 days [d1&#44; d2]."

    spans = [answer[start:end] for start, end in marker_spans(answer)]
    sentences = split_sentences(answer)

    assert spans == ["&#91;d9&#93;", "[d1&#44; d2]"]
    assert [s.markers for s in sentences] == [("d9",), ("d1", "d2")]


@pytest.mark.parametrize("cited", ["&#91;d9&#93;", "\\[d9](https://example.com/seats)",
                                   "[d1&#44; d9]"])
def test_an_answer_citing_nothing_retrieved_this_way_abstains(cases, cited):
    # Before 2026.12.7 the gate read no marker there: the answer passed as supported.
    record = cases.record(answer=f"The trial lasts 14 days [d1]. Seats are unlimited {cited}.")

    result = gating.evaluate_record(record)

    assert (result["decision"], result["reason"]) == ("abstain", "unknown_citation")
    assert result["findings"][0]["evidence"] == ["d9"]


def test_an_optional_field_left_null_next_to_facts_is_no_error(cases):
    fact = cases.item()
    del fact["id"]
    item = {"id": "d1", "subject": None, "key": None, "value": None, "valid_from": None,
            "valid_until": None, "facts": [fact]}

    result = gating.evaluate_record(cases.record(evidence=[item]))

    assert (result["decision"], result["reason"]) == ("candidate", "supported")


def test_evaluate_refuses_a_line_with_more_than_json_whitespace_after_the_value(cases):
    line = (json.dumps(cases.record()) + "\u00a0\n").encode()
    run = subprocess.run([sys.executable, "-m", "gating", "evaluate"], input=line,
                         capture_output=True, cwd=ROOT, check=False)

    assert run.returncode == 1
    assert b'"error":"line 1: not valid JSON' in run.stdout
