"""Text PostgreSQL can store: no NUL character (text and jsonb refuse it) and no lone surrogate
(UTF-8 has none), though JSON can write both. Input holding one is refused by name; what is
kept whatever it holds (the quarantine, error messages) is made storable."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

NOT_STORABLE = re.compile("[\x00\ud800-\udfff]")
# Characters that show as nothing, or turn the text around them: control characters, the soft
# hyphen, zero-width spaces and joiners, bidirectional marks (the Arabic letter mark too) and
# overrides, the Mongolian vowel separator, the byte order mark and the tag characters. In an
# id, a key or a principal they make two names that read the same ("pricing" and "pricing"
# with a zero-width space), or one that reads as another.
_SHOWN_AS_NOTHING = ("\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
                     "\ufeff\U000e0000-\U000e007f")
INVISIBLE = re.compile(f"[\x00-\x1f\x7f-\x9f{_SHOWN_AS_NOTHING}]")
# The same, but for tabs and line breaks: a fact's key or subject is taken with one, which pages
# and mails show as a space.
INVISIBLE_BUT_SPACING = re.compile(f"[\x00-\x08\x0e-\x1f\x7f-\x9f{_SHOWN_AS_NOTHING}]")


def storable(value: Any) -> Any:
    """`value` with every NUL and lone surrogate in its strings (keys too) made U+FFFD."""
    if isinstance(value, str):
        return NOT_STORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


NOT_NFC = "Must be in Unicode normal form C (NFC): write each accented letter as one."


def lookalike_problem(value: str, names: str = "ids", *, spacing: bool = False) -> str | None:
    """Why a name (an id, a span, a fact's key or subject) could read the same as another that
    differs, or None. Such names are refused, not cleaned: a key cleaned on one side and kept
    on the other would silently match nothing, and a conflict between two sources would go
    unseen. With `spacing`, tabs and line breaks are taken (keys and subjects always took
    them). The fast intake path asks this too."""
    if (INVISIBLE_BUT_SPACING if spacing else INVISIBLE).search(value):
        return ("Must not contain control characters, zero-width characters or "
                f"bidirectional marks: they make {names} that read alike.")
    if not unicodedata.is_normalized("NFC", value):
        # "é" as one character or as e and an accent: two names that read the same.
        return NOT_NFC
    return None
