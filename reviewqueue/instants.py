"""How every body the product sends writes an instant: as DRF's DateTimeField writes the ones
its serializers give (ISO 8601 in the server's time zone, UTC as "Z"), so that a client never
meets "…+00:00" in one body and "…Z" in the next."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone


def instant_text(value: datetime) -> str:
    text = timezone.localtime(value).isoformat()
    return f"{text[:-6]}Z" if text.endswith("+00:00") else text
