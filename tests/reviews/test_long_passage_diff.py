"""What changed in a long rewritten passage: the item page compares it in bounded work.

A word-by-word comparison of two rewritten 30,000-character passages took the page ten seconds
(and every decision on the item too). Past `DIFF_BUDGET` pairs of words the passages are
compared sentence by sentence, and past it again as one removed text and one added. Both texts
are always rebuilt whole from the segments."""

from __future__ import annotations

import difflib
from typing import Any
from unittest import mock

import pytest

from reviewqueue import textdiff
from reviewqueue.textdiff import DIFF_BUDGET, diff_segments


def _text(words: int, tag: str) -> str:
    sentences = [f"Rule {n} of {tag} says the limit is {n * 7} units today." for n in
                 range(words // 11)]
    return " ".join(sentences)


def _compare(old: str, new: str) -> tuple[Any, Any, list[int]]:
    sizes: list[int] = []
    real = difflib.SequenceMatcher

    def measured(*, a: Any, b: Any, autojunk: bool) -> Any:
        sizes.append(len(a) * len(b))
        return real(a=a, b=b, autojunk=autojunk)

    with mock.patch.object(textdiff.difflib, "SequenceMatcher", side_effect=measured):
        left, right = diff_segments(old, new)
    return left, right, sizes


@pytest.mark.parametrize("words", [5_000, 20_000])
def test_a_rewritten_long_passage_is_compared_within_the_budget(words: int) -> None:
    old, new = _text(words, "the old policy"), _text(words, "the new policy")

    left, right, sizes = _compare(old, new)

    assert max(sizes) <= DIFF_BUDGET
    assert "".join(s.text for s in left) == old
    assert "".join(s.text for s in right) == new
    assert {s.kind for s in left} >= {"removed"} and {s.kind for s in right} >= {"added"}


def test_sentences_left_alone_stay_marked_the_same() -> None:
    old = _text(5_000, "the old policy")
    new = old.replace("Rule 3 of the old policy", "Rule 3 of the new policy")
    new = new.replace("Rule 400 of the old policy", "Rule 400 of the newer policy")

    left, right, _ = _compare(old, new)

    same = "".join(s.text for s in left if s.kind == "same")
    removed = "".join(s.text for s in left if s.kind == "removed")
    # Far enough apart for the sentence-level comparison: the sentences in between are the
    # same, and only the two changed sentences are marked.
    assert "Rule 200 of the old policy says the limit is 1400 units today." in same
    assert "Rule 200" not in removed
    assert "old" in removed and "new" in "".join(s.text for s in right if s.kind == "added")
    assert "".join(s.text for s in left) == old and "".join(s.text for s in right) == new


def test_a_short_change_is_still_compared_word_by_word() -> None:
    left, right, sizes = _compare("The trial lasts 14 days.", "The trial lasts 30 days.")

    assert [(s.kind, s.text) for s in left] == [("same", "The trial lasts "), ("removed", "14"),
                                                ("same", " days.")]
    assert [(s.kind, s.text) for s in right] == [("same", "The trial lasts "), ("added", "30"),
                                                 ("same", " days.")]
    assert sizes == [1]
