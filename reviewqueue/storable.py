"""Text PostgreSQL can store: no NUL character (text and jsonb refuse it) and no lone surrogate
(UTF-8 has none), though JSON can write both. Input holding one is refused by name; what is
kept whatever it holds (the quarantine, error messages) is made storable."""

from __future__ import annotations

import re
from typing import Any

NOT_STORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: Any) -> Any:
    """`value` with every NUL and lone surrogate in its strings (keys too) made U+FFFD."""
    if isinstance(value, str):
        return NOT_STORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value
