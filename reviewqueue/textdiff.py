"""Word-level differences between two texts: a passage as an answer quoted it and as the current
revision has it (the reviewer's page), or as one revision and the next say it (a document's
History)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass


@dataclass
class Segment:
    kind: str  # "same", "removed", "added"
    text: str


_TOKEN = re.compile(r"[A-Za-z0-9]+|\s+|.", re.S)


def diff_segments(old: str, new: str) -> tuple[list[Segment], list[Segment]]:
    """Word-level differences (character-level for scripts without spaces, such as Japanese)."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    # Match only what lies between the common beginning and end: a revision usually changes
    # a few words, and SequenceMatcher slows down a lot on the repeated words of a long
    # passage (spaces, "the", punctuation).
    start, shortest = 0, min(len(a), len(b))
    while start < shortest and a[start] == b[start]:
        start += 1
    end = 0
    while end < shortest - start and a[-1 - end] == b[-1 - end]:
        end += 1
    left: list[Segment] = []
    right: list[Segment] = []
    _add(left, "same", "".join(a[:start]))
    _add(right, "same", "".join(b[:start]))
    a_mid, b_mid = _diff_units(a[start:len(a) - end], b[start:len(b) - end])
    matcher = difflib.SequenceMatcher(a=a_mid, b=b_mid, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            _add(left, "same", "".join(a_mid[i1:i2]))
            _add(right, "same", "".join(b_mid[j1:j2]))
        else:
            _add(left, "removed", "".join(a_mid[i1:i2]))
            _add(right, "added", "".join(b_mid[j1:j2]))
    _add(left, "same", "".join(a[len(a) - end:]))
    _add(right, "same", "".join(b[len(b) - end:]))
    return left, right


# SequenceMatcher takes time in proportion to the product of the two lengths: past this many
# pairs of words (a rewrite of thousands of words), passages are compared sentence by sentence,
# and past it again, as one removed text and one added.
DIFF_BUDGET = 1_000_000
_SENTENCE = re.compile("[^.!?\u3002\uff01\uff1f\n]*(?:[.!?\u3002\uff01\uff1f\n]+\\s*|$)")


def _diff_units(a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
    if len(a) * len(b) <= DIFF_BUDGET:
        return a, b
    a_text, b_text = "".join(a), "".join(b)
    a_units = [u for u in _SENTENCE.findall(a_text) if u]
    b_units = [u for u in _SENTENCE.findall(b_text) if u]
    if len(a_units) * len(b_units) <= DIFF_BUDGET:
        return a_units, b_units
    return [a_text], [b_text]


def _add(segments: list[Segment], kind: str, text: str) -> None:
    if not text:
        return
    if segments and segments[-1].kind == kind:
        segments[-1].text += text
    else:
        segments.append(Segment(kind, text))
