"""Whether a body sent again is the body first sent, field by field.

Two bodies are compared as JSON data, as the gate reads them: 14 and 14.0 differ, as do 1 and
true. Only a field that holds a set (who may read, who asked) says the same whatever the
order of its members.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any


def fields_differing(stored: dict[str, Any], sent: dict[str, Any], *,
                     sets: Collection[str] = ()) -> list[str]:
    """The names of the fields of `sent` whose data differs from `stored`'s, in `sent`'s
    order; the fields named in `sets` are compared as sets."""
    def data(name: str, value: Any) -> str:
        return json.dumps(sorted(set(value)) if name in sets else value, sort_keys=True,
                          ensure_ascii=False)

    return [name for name, value in sent.items() if data(name, stored[name]) != data(name, value)]
