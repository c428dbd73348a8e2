"""Text PostgreSQL can store: no NUL character (text and jsonb refuse it) and no lone surrogate
(UTF-8 has none), though JSON can write both. Input holding one is refused by name; what is
kept whatever it holds (the quarantine, error messages) is made storable."""

from __future__ import annotations

import re
from typing import Any

NOT_STORABLE = re.compile("[\x00\ud800-\udfff]")
# Characters that show as nothing, or turn the text around them: control characters, zero-width
# spaces and joiners, bidirectional marks and overrides, the byte order mark. In an id or a
# principal they make two names that read the same ("pricing" and "pricing" with a zero-width
# space), or one that reads as another.
INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                       "\u2066-\u2069\ufeff]")


def storable(value: Any) -> Any:
    """`value` with every NUL and lone surrogate in its strings (keys too) made U+FFFD."""
    if isinstance(value, str):
        return NOT_STORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value
