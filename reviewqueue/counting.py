"""Counts that stop at a cap.

A COUNT(*) over a whole table costs what the table costs: nothing with a hundred rows, seconds
with millions of audit events. Pages count at most a cap of rows (a COUNT over a subquery that
ends in LIMIT) and say "1000+" beyond it.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

COUNT_CAP = 1000


class AtLeast(int):
    """A count that stopped at its cap: compares and pluralises as the number counted, and
    reads as "1000+" (templates, messages) when there are more."""

    capped: bool = False

    def __new__(cls, value: int, *, capped: bool = False) -> AtLeast:
        count = super().__new__(cls, value)
        count.capped = capped
        return count

    @classmethod
    def of(cls, found: int, cap: int = COUNT_CAP) -> AtLeast:
        """The count of rows read with a LIMIT of cap + 1: the extra row says there are more."""
        return cls(min(found, cap), capped=found > cap)

    def __str__(self) -> str:
        return f"{int(self)}+" if self.capped else str(int(self))


def bounded_count(queryset: QuerySet[Any], cap: int = COUNT_CAP) -> AtLeast:
    """The number of rows of `queryset`, counted up to `cap`; more read as "cap+"."""
    return AtLeast.of(queryset.order_by()[:cap + 1].count(), cap)
