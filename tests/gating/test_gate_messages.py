"""What a finding's message shows of the values it names: two different values never read alike.

A reviewer decides from these messages; "sources disagree: X from d1; X from d2" with the same X
twice, or "the claim says X, but d1 gives X", cannot be acted on.
"""

from __future__ import annotations

import re

import gating

# A policy sentence as a RAG source states it: the two revisions differ only near the end.
POLICY = (
    "Refunds are available for annual plans bought directly from us, in full, within {} of "
    "purchase."
)


def _conflict_values(message: str) -> list[str]:
    """The values of a conflicting_sources message, in the order it names them."""
    listed = message.split("sources in force disagree: ", 1)[1]
    return [re.sub(r" from d[0-9]+$", "", part) for part in listed.split("; ")]


def _conflict(cases, first: object, second: object) -> str:
    record = cases.record(
        claims=[cases.claim(key="refunds", value=first)],
        evidence=[cases.item("d1", key="refunds", value=first),
                  cases.item("d2", key="refunds", value=second)],
    )
    result = gating.evaluate_record(record)
    assert result["reason"] == "conflicting_sources"
    return str(result["findings"][0]["message"])


def test_two_long_values_that_differ_late_read_differently_in_a_conflict(cases):
    message = _conflict(cases, POLICY.format("30 days"), POLICY.format("14 days"))

    first, second = _conflict_values(message)
    assert first != second
    assert "14 days" in message and "30 days" in message


def test_three_long_values_that_differ_late_read_differently_in_a_conflict(cases):
    record = cases.record(
        claims=[cases.claim(key="refunds", value=POLICY.format("30 days"))],
        evidence=[cases.item(f"d{n}", key="refunds", value=POLICY.format(f"{days} days"))
                  for n, days in ((1, 30), (2, 14), (3, 7))],
    )

    message = gating.evaluate_record(record)["findings"][0]["message"]

    assert len(set(_conflict_values(message))) == 3


def test_a_no_break_space_reads_differently_from_a_space(cases):
    # Text taken from a PDF or a web page often carries U+00A0 where a space was typed.
    message = _conflict(cases, "14 days", "14\u00a0days")

    # Values are shown as JSON, which can write any character as an escape; a reader sees it.
    assert sorted(_conflict_values(message)) == ['"14 days"', '"14\\u00a0days"']


def test_an_invisible_character_is_shown(cases):
    message = _conflict(cases, "14 days", "14 days\u200b")  # a zero-width space at the end

    assert sorted(_conflict_values(message)) == ['"14 days"', '"14 days\\u200b"']


def test_a_decomposed_accent_reads_differently_from_a_composed_one(cases):
    # "Café" typed on one system and saved decomposed (e + U+0301) on another.
    message = _conflict(cases, "Caf\u00e9 plan", "Cafe\u0301 plan")

    assert sorted(_conflict_values(message)) == ['"Cafe\\u0301 plan"', '"Caf\u00e9 plan"']


def test_an_unsupported_claim_shows_how_its_value_differs_from_the_cited_one(cases):
    record = cases.record(
        claims=[cases.claim(key="refunds", value=POLICY.format("30 days"))],
        evidence=[cases.item("d1", key="refunds", value=POLICY.format("14 days"))],
    )

    message = gating.evaluate_record(record)["findings"][0]["message"]

    said, given = re.fullmatch(r"claim 0 says refunds = (.*), but d1 gives (.*)", message).groups()
    assert said != given


def test_readable_text_is_shown_as_it_is(cases):
    message = _conflict(cases, "14日間", "30日間")

    assert sorted(_conflict_values(message)) == ['"14日間"', '"30日間"']
