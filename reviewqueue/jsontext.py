"""JSON encoders built once, and a reader of typed text.

`json.dumps` and `JSONEncoder.encode` build a new C encoder on every call, which costs about
as much as writing a small value; a 500-answer batch writes a few thousand. `encoder` builds
it once and gives the same text `JSONEncoder(...).encode` gives with the same options (a test
holds them to it), for values without reference cycles (no cycle check is made: every value
written here is a tree its caller built).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encoder(*, sort_keys: bool = False, ensure_ascii: bool = True,
            default: Callable[[Any], Any] = _not_serializable) -> Callable[[Any], str]:
    """Compact JSON (`,` and `:` with no spaces) with these options; NaN and infinities are
    written as `json` writes them."""
    make = json.encoder.c_make_encoder  # type: ignore[attr-defined]
    if make is None:  # pragma: no cover - CPython always has the C accelerator
        return json.JSONEncoder(sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=default,
                                separators=(",", ":")).encode
    write = make(None, default,
                 json.encoder.encode_basestring_ascii if ensure_ascii
                 else json.encoder.encode_basestring,
                 None, ":", ",", sort_keys, False, True)

    def encode(value: Any) -> str:
        return "".join(write(value, 0))

    return encode


def read_json(text: str) -> Any:
    """What `text` stands for as JSON, or ValueError where it is not JSON. Brackets nested
    deeper than Python's decoder goes (a text value of 1,500 `[`, which the API takes) are
    not JSON here either: the decoder raises RecursionError for them, not ValueError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
