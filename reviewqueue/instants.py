"""How every body the product sends writes an instant: ISO 8601 in UTC with a "Z", whatever
TIME_ZONE says (it sets which day it is, not how an instant is written), in the bodies its
serializers give and those written by hand alike: a client never meets "…+09:00" or "…+00:00"
in one body and "…Z" in the next (the API's serializers write theirs through
api_base.InstantField). And which day it is for what the sources say."""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.conf import settings
from django.utils import timezone


def today() -> date:
    """The day facts are in force on, for the gate and every page that says which have ended:
    today in TIME_ZONE, unless REEVALUATION_TODAY pins a date (drills and tests)."""
    pinned: date | None = settings.REEVALUATION_TODAY
    return pinned if pinned is not None else timezone.localdate()


def instant_text(value: datetime) -> str:
    return f"{value.astimezone(UTC).isoformat()[:-6]}Z"
