"""Citation markers in free answer text, and the sentences that carry them.

A marker is a bracketed list of ids: ``[d1]``, ``[d1, d2]`` or ``[d1][d2]``. Ids use the
characters ``A-Z a-z 0-9 _ . : -``. A bracket followed directly by ``(`` is a Markdown link
(``[docs](https://...)``), not a citation, and is ignored.
"""

from __future__ import annotations

import re

from gating.model import Sentence

_ID = r"[A-Za-z0-9_.:\-]+"
MARKER_RE = re.compile(rf"\[\s*({_ID}(?:\s*,\s*{_ID})*)\s*\](?!\()")
_SPLIT_IDS = re.compile(r"\s*,\s*")

# A sentence ends at . ! or ? (optionally followed by closing quotes or brackets), then any
# markers that follow the punctuation, then whitespace or the end of the text. A blank line ends
# a sentence too, punctuation or not.
_END_RE = re.compile(
    r"""[.!?]+["'\u2019\u201d)]*(?P<tail>(?:\s*\[[^\[\]\n]*\](?!\())*)(?=\s|$)|\n\s*\n""",
)
# Words after which a full stop usually does not end a sentence.
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "st", "no", "approx", "incl"}
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _ids_in(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for match in MARKER_RE.finditer(text):
        for ident in _SPLIT_IDS.split(match.group(1)):
            seen.setdefault(ident, None)
    return list(seen)


def extract_markers(text: str) -> list[str]:
    """Return the ids cited by markers in ``text``, each once, in order of first appearance."""
    if "[" not in text:
        return []
    return _ids_in(text)


def _is_abbreviation(text: str, dot: int) -> bool:
    """Whether the full stop at ``dot`` closes an abbreviation or an initial, not a sentence."""
    if text[dot] != ".":
        return False
    word = _WORD_BEFORE.search(text, 0, dot)
    if word is None:
        return False
    token = word.group(1).lower()
    # "e.g", "U.S": a dotted token is an abbreviation; so are the listed words.
    return "." in token or token in _ABBREVIATIONS


def split_sentences(text: str) -> list[Sentence]:
    """Split ``text`` into sentences, each with the ids of the markers inside or right after it.

    Offsets refer to ``text``; whitespace between sentences belongs to none of them.
    """
    sentences: list[Sentence] = []
    start = 0
    length = len(text)
    for match in _END_RE.finditer(text):
        if match.group("tail") is not None and _is_abbreviation(text, match.start()):
            continue
        end = match.end() if match.group("tail") is not None else match.start()
        _append(sentences, text, start, end)
        start = match.end()
    _append(sentences, text, start, length)
    return sentences


def _append(sentences: list[Sentence], text: str, start: int, end: int) -> None:
    # Trim surrounding whitespace so that the offsets frame the sentence itself.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        return
    chunk = text[start:end]
    markers = tuple(_ids_in(chunk)) if "[" in chunk else ()
    sentences.append(Sentence(text=chunk, markers=markers, start=start, end=end))
