"""Whether a text says a value: the check behind the reviewer's edit ("the claim states what the
text no longer says") and the owner's correction ("the passage still says the old value")."""

from __future__ import annotations

import json
import re
import unicodedata

import gating


def says(text: str, value: object) -> bool:
    """Whether `text` says `value`, written as JSON writes a number and as it is for a string:
    a number not inside a longer one (14 is not said by "140", "2.14", "2,14" or "14.5"), a
    string not inside a longer word of Latin letters and digits ("EU" is not said by "EUR";
    Japanese, written without spaces, is matched anywhere). True, false, null and "" are never
    said: no text writes them so."""
    if unwritten(value):
        return False
    said = value if isinstance(value, str) else json.dumps(value)
    if not isinstance(value, str):
        pattern = rf"(?<![0-9.])(?<![0-9],){re.escape(said)}(?![0-9]|[.,][0-9])"
    else:
        head = r"(?<![A-Za-z0-9])" if said[0].isascii() and said[0].isalnum() else ""
        tail = r"(?![A-Za-z0-9])" if said[-1].isascii() and said[-1].isalnum() else ""
        pattern = f"{head}{re.escape(said)}{tail}"
    return re.search(pattern, text) is not None


def unwritten(value: object) -> bool:
    """True, false, null and "": values no text writes as such, so `says` never finds them."""
    return isinstance(value, bool) or value is None or value == ""


# Characters that are letters or symbols to Unicode but show nothing: Hangul fillers, the
# blank Braille pattern.
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _shows(char: str) -> bool:
    """Whether a reader sees `char`: a letter, number, punctuation mark or symbol that is not
    a blank glyph. Spaces, format and control characters (a soft hyphen, bidi marks) and a
    combining mark with nothing to sit on show nothing."""
    return unicodedata.category(char)[0] in "LNPS" and char not in _BLANK_GLYPHS


# What a marker may start with: a bracket, a full-width one, or a character reference to one.
_MAY_OPEN = frozenset("[\uff3b&")


def answer_is_blank(text: str) -> bool:
    """Whether an answer's text gives its reader nothing: empty, or only white space,
    invisible characters, citation markers ("[d1]") and HTML comments ("<!-- [d1] -->", which
    a reader never sees), however long. Ingest and edits refuse it: the gate checks the claims,
    never the wording, and would let it through."""
    for char in text:
        if char in _MAY_OPEN or (char == "<" and "<!--" in text):
            break  # perhaps a marker or a comment: the whole text is read below
        if _shows(char):
            return False  # the usual answer, which starts with a word
    if "<!--" in text:
        # Where the gate says a comment ends (code shows one as it is). Cut out, not blanked:
        # "[d<!-- -->1]" shows the reader "[d1]", a marker and nothing else.
        kept: list[str] = []
        last = 0
        for start, end in gating.comment_spans(text):
            kept.append(text[last:start])
            last = end
        text = "".join(kept) + text[last:]
    visible = "".join(char for char in text if unicodedata.category(char) != "Cf")
    for start, end in reversed(gating.marker_spans(visible)):
        visible = visible[:start] + visible[end:]
    return not any(_shows(char) for char in visible)
