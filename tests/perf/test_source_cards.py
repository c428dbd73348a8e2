"""The item page writes its per-citation parts itself (the answer's sentences, the claims table,
each conflict's source cards: a conflict on a key 50 retrieved documents state shows 50 cards),
since a template loop over them cost a third of a 50-citation page: what it writes must be what
its template wrote, escaped the same way."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.template import Context, Template
from django.utils import timezone, translation

from reviewqueue.reviews.selectors.item import (
    ClaimRow,
    ConflictSource,
    FactView,
    PassageView,
    SentencePart,
    SentenceView,
)
from reviewqueue.reviews.templatetags.review_tags import (
    answer_sentences,
    claim_table_rows,
    conflict_source_card,
)

# What the item page's template wrote, before the tags wrote it (tests/perf/written_as).
WRITTEN_AS = Path(__file__).parent / "written_as"
TEMPLATE_CARD = (WRITTEN_AS / "conflict_source_card.html").read_text()

HOSTILE = '<script>alert("x")</script>&amp;\'"'
LATE = dt.datetime(2026, 10, 1, 23, 30, tzinfo=dt.UTC)  # 2 October in Tokyo


def _fact(**changes: object) -> FactView:
    fields: dict = {"subject": "", "key": "trial_days", "value": 14,
                    "valid_from": dt.date(2026, 1, 1), "valid_until": None, "span": "p1",
                    "state": "current", "phrase": "in force"}
    return FactView(**{**fields, **changes})


SOURCES = [
    ConflictSource(document_key="pricing", revision="r2", title="Pricing", owner="olivia",
                   updated_at=LATE, fact=_fact(), passage=PassageView("p1", "Trial: 14 days."),
                   cites=["d1", "d3"]),
    ConflictSource(document_key=HOSTILE, revision=HOSTILE, title=HOSTILE, owner=HOSTILE,
                   updated_at=None,
                   fact=_fact(subject=HOSTILE, value=HOSTILE, state=HOSTILE, phrase=HOSTILE,
                              valid_until=dt.date(2026, 12, 31)),
                   passage=PassageView("p1", HOSTILE), cites=[HOSTILE]),
    ConflictSource(document_key="faq", revision="r1", title="FAQ", owner="oscar"),
    ConflictSource(document_key=None, restricted=True),
]


def _rendered(template: str, context: dict, tag: Callable[[], str],
              language: str) -> tuple[str, str]:
    """What the template loop wrote, and what the tag writes, in `language` and Tokyo time."""
    with translation.override(language), timezone.override("Asia/Tokyo"):
        return Template(template).render(Context(context)), str(tag())


def _between_tags(html: str) -> str:
    return re.sub(r">\s+<", "><", re.sub(r"\s+", " ", str(html)).strip())


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("src", SOURCES, ids=["plain", "hostile", "no-fact", "restricted"])
def test_a_card_is_what_the_template_wrote(src: ConflictSource, language: str) -> None:
    expected, written = _rendered(TEMPLATE_CARD, {"src": src},
                                  lambda: conflict_source_card(src), language)
    assert _between_tags(written) == _between_tags(expected)
    assert "<script>" not in written


def test_the_update_is_the_day_in_the_reader_s_time_zone() -> None:
    with timezone.override("Asia/Tokyo"):
        assert "2026-10-02 (" in conflict_source_card(SOURCES[0])


# The answer's sentences and the claims table's rows, as the template wrote them.
TEMPLATE_SENTENCES = (WRITTEN_AS / "answer_sentences.html").read_text()
TEMPLATE_CLAIMS = (WRITTEN_AS / "claim_table_rows.html").read_text()

SENTENCES = [
    SentenceView([SentencePart(text="The trial lasts 14 days "), SentencePart(cite="d1"),
                  SentencePart(text=".")]),
    SentenceView([SentencePart(text=HOSTILE)]),
    SentenceView([SentencePart(text="Two sources"), SentencePart(cite=HOSTILE),
                  SentencePart(cite="d2"), SentencePart(text="!")]),
]
CLAIMS = [
    ClaimRow(1, "", "trial_days", 14, "d1", _fact(), True, "holds on its source"),
    ClaimRow(2, HOSTILE, HOSTILE, HOSTILE, HOSTILE, _fact(subject=HOSTILE, value=HOSTILE,
             phrase=HOSTILE, valid_until=dt.date(2026, 12, 31)), False, HOSTILE),
    ClaimRow(3, "plan.pro", "data_retention_days", 2.5, "d2", None, False, HOSTILE,
             checked=False),
    ClaimRow(1000, "", "k", True, "d3", _fact(), True, "holds", disputed=[HOSTILE, "conflict"]),
]


def _spaced(html: str) -> str:
    """Runs of whitespace as one space: the browser shows them so, and no more is removed,
    since a space between two inline elements shows."""
    return re.sub(r"\s+", " ", str(html)).strip()


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("sentences", [SENTENCES, []], ids=["sentences", "empty"])
def test_the_sentences_are_what_the_template_wrote(sentences: list, language: str) -> None:
    expected, written = _rendered(TEMPLATE_SENTENCES, {"page": {"sentences": sentences}},
                                  lambda: answer_sentences(sentences), language)
    assert _spaced(written) == _spaced(expected)
    assert "<script>" not in written


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_claim_rows_are_what_the_template_wrote(language: str) -> None:
    expected, written = _rendered(TEMPLATE_CLAIMS, {"page": {"claims": CLAIMS}},
                                  lambda: claim_table_rows(CLAIMS), language)
    assert _between_tags(written) == _between_tags(expected)
    assert "<script>" not in written
    assert written.count("<tr ") == len(CLAIMS)


def test_the_written_parts_speak_the_reader_s_language() -> None:
    """The words the tags write are translated as the template's were: "no citation", "The
    answer is empty." and a card's "Revision" were asked for only inside f-strings, which
    makemessages does not read, and fell out of the Japanese catalogue (the comparisons above
    pass all the same: the template's copies of the words fell out with them)."""
    uncited = [SentenceView([SentencePart(text="We host on Mars.")])]
    with translation.override("ja"):
        assert "引用なし" in answer_sentences(uncited)
        assert "回答は空です。" in answer_sentences([])
        assert "<dt>リビジョン</dt>" in conflict_source_card(SOURCES[0])


def test_a_fact_in_force_since_year_one_reads_as_the_template_wrote_it() -> None:
    """A fact "in force since always" (valid_from 0001-01-01, which the API takes) reads
    0001-01-01 as the template's date filter wrote it, not 1-01-01 (strftime's %Y)."""
    always = _fact(valid_from=dt.date(1, 1, 1))
    src = ConflictSource(document_key="founding", revision="v1", title="Founding facts",
                         owner="olivia", fact=always)
    claims = [ClaimRow(1, "", "trial_days", 21, "g1", always, True, "holds")]
    expected_card = Template(TEMPLATE_CARD).render(Context({"src": src}))
    expected_rows = Template(TEMPLATE_CLAIMS).render(Context({"page": {"claims": claims}}))
    assert "0001-01-01 →" in expected_card and "0001-01-01 →" in expected_rows
    assert _between_tags(conflict_source_card(src)) == _between_tags(expected_card)
    assert _between_tags(claim_table_rows(claims)) == _between_tags(expected_rows)
