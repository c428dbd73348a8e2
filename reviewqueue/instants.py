"""How every body the product sends writes an instant: as DRF's DateTimeField writes the ones
its serializers give (ISO 8601 in the server's time zone, UTC as "Z"), so that a client never
meets "…+00:00" in one body and "…Z" in the next. And which day it is for what the sources say."""

from __future__ import annotations

from datetime import date, datetime

from django.conf import settings
from django.utils import timezone


def today() -> date:
    """The day facts are in force on, for the gate and every page that says which have ended:
    today in TIME_ZONE, unless REEVALUATION_TODAY pins a date (drills and tests)."""
    pinned: date | None = settings.REEVALUATION_TODAY
    return pinned if pinned is not None else timezone.localdate()


def instant_text(value: datetime) -> str:
    text = timezone.localtime(value).isoformat()
    return f"{text[:-6]}Z" if text.endswith("+00:00") else text
