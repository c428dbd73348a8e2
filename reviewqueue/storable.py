"""Text PostgreSQL can store: no NUL character (text and jsonb refuse it) and no lone surrogate
(UTF-8 has none), though JSON can write both. Input holding one is refused by name; what is
kept whatever it holds (the quarantine, error messages) is made storable."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

NOT_STORABLE = re.compile("[\x00\ud800-\udfff]")
# Tabs, line breaks and the other control characters (C0 and C1), and Unicode's line and
# paragraph separators: a page or a mail shows each as a space or as nothing, so "trial days"
# and "trial\tdays", or "trial_days" and "trial_\x85days", read the same.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Characters that show as nothing, or turn the text around them: the soft hyphen, zero-width
# spaces and joiners, bidirectional marks (the Arabic letter mark too) and overrides, the
# Mongolian vowel separator, the byte order mark and the tag characters. In an id, a key or a
# principal they make two names that read the same ("pricing" and "pricing" with a zero-width
# space), or one that reads as another.
_SHOWN_AS_NOTHING = ("\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
                     "\ufeff\U000e0000-\U000e007f")
INVISIBLE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_SHOWN_AS_NOTHING}]")


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


def lookalike_problem(value: str, names: str = "ids") -> str | None:
    """Why a name (an id, a span, a fact's key or subject, an index release) could read the
    same as another that differs, or None. Such names are refused, not cleaned: a key cleaned
    on one side and kept on the other would silently match nothing, and a conflict between two
    sources would go unseen. The fast intake path asks this too.

    Keys and subjects once took tabs and line breaks; rows stored then are still read as they
    are (the gate, the pages, the mails), and an edit may send such a name back as it came."""
    if INVISIBLE.search(value):  # one search for the names most bodies hold: none of either
        if CONTROL.search(value):
            return ("Must not contain tabs, line breaks or other control characters: a page "
                    f"shows them as a space or not at all, so they make {names} that read alike.")
        return ("Must not contain control characters, zero-width characters or "
                f"bidirectional marks: they make {names} that read alike.")
    if not unicodedata.is_normalized("NFC", value):
        # "é" as one character or as e and an accent: two names that read the same.
        return NOT_NFC
    return None
