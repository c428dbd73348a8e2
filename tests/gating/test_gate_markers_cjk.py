"""Japanese sentence marks end sentences on request (for display); the default is unchanged."""

from __future__ import annotations

from gating import Sentence, split_sentences

JAPANESE = "無料体験は14日間です[d1]。EUでは30日間です[d2]。"


def test_by_default_only_western_punctuation_followed_by_space_ends_a_sentence():
    assert split_sentences(JAPANESE) == [Sentence(JAPANESE, ("d1", "d2"), 0, len(JAPANESE))]


def test_with_cjk_each_japanese_sentence_keeps_the_marker_before_its_full_stop():
    assert split_sentences(JAPANESE, cjk=True) == [
        Sentence("無料体験は14日間です[d1]。", ("d1",), 0, 16),
        Sentence("EUでは30日間です[d2]。", ("d2",), 16, 31),
    ]


def test_with_cjk_markers_right_after_the_mark_belong_to_its_sentence():
    sentences = split_sentences("本当ですか？！[d1]はい、本当です[d2]。", cjk=True)  # noqa: RUF001
    assert [(s.text, s.markers) for s in sentences] == [
        ("本当ですか？！[d1]", ("d1",)), ("はい、本当です[d2]。", ("d2",))]  # noqa: RUF001


def test_with_cjk_a_quotation_does_not_end_the_sentence_around_it():
    text = "規約には「14日間です。」とあります[d1]。"
    assert [s.text for s in split_sentences(text, cjk=True)] == [text]


def test_with_cjk_western_sentences_split_as_before():
    text = "The trial lasts 14 days [d1]. 日本語です[d2]。Support is 24/7 [d3]! e.g. this."
    assert [(s.text, s.markers) for s in split_sentences(text, cjk=True)] == [
        ("The trial lasts 14 days [d1].", ("d1",)), ("日本語です[d2]。", ("d2",)),
        ("Support is 24/7 [d3]!", ("d3",)), ("e.g. this.", ()),
    ]
