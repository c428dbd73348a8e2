"""Whether a text says a value: the check behind the reviewer's edit ("the claim states what the
text no longer says") and the owner's correction ("the passage still says the old value")."""

from __future__ import annotations

import json
import re

import gating
from reviewqueue.storable import INVISIBLE


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


# Past this many characters a text is taken to say something, without looking closer.
_SURELY_WORDS = 200


def answer_is_blank(text: str) -> bool:
    """Whether an answer's text gives its reader nothing: empty, or only white space,
    invisible characters and citation markers ("[d1]"). Ingest and edits refuse it: the gate
    checks the claims, never the wording, and would let it through."""
    stripped = text.strip()
    if len(stripped) > _SURELY_WORDS:
        return False
    visible = INVISIBLE.sub("", stripped)
    for start, end in reversed(gating.marker_spans(visible)):
        visible = visible[:start] + visible[end:]
    return not visible.strip()
