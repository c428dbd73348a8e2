"""The API's JSON parser: DRF's, stricter in two ways. A body nested too deeply for Python's
decoder is refused as bad JSON (a 400 whose body goes to the quarantine) instead of failing as
a server error, and so is an object that gives one key twice: JSON decoders keep the last value
and drop the other without a word, so a client would never learn that half of what it sent was
ignored."""

from __future__ import annotations

import codecs
import json
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for `json.loads`: the object, or ValueError naming a repeated key."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {json.dumps(key, ensure_ascii=False)} appears twice "
                                 "in one object")
            seen.add(key)
    return data


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: dict[str, Any] | None = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json.loads(text, object_pairs_hook=unique_keys,
                              parse_constant=strict_constant if self.strict else None)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
