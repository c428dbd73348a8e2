"""Small filters for the audit and insight pages."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import gettext as _

register = template.Library()

NO_VALUE = "\u2013"  # an en dash: shown where there is no number


@register.filter
def actor_name(actor: str) -> str:
    """An actor as a person reads it beside its type's pill: "user:alice" is "alice", and
    "user:alice token:rq_ab12" is "alice · token rq_ab12". A bare "worker" or "system"
    repeats its pill and shows as nothing."""
    if actor in ("worker", "system"):
        return ""
    person, _space, token = actor.partition(" token:")
    person = person.removeprefix("user:")
    return _("%(person)s · token %(token)s") % {"person": person, "token": token} if token \
        else person


@register.filter
def percent(value: Any, digits: int = 1) -> str:
    if value is None or value == "":
        return NO_VALUE
    return f"{float(value) * 100:.{int(digits)}f}%"


@register.filter
def duration(seconds: Any) -> str:
    """Seconds as the largest two units: 3 d 4 h, 2 h 5 min, 40 s."""
    if seconds is None or seconds == "":
        return NO_VALUE
    total = round(float(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    # In the reader's language: "3 d 4 h" is "3日 4時間" in Japanese.
    if days:
        return _("%(d)s d %(h)s h") % {"d": days, "h": hours}
    if hours:
        return _("%(h)s h %(m)s min") % {"h": hours, "m": minutes}
    if minutes:
        return _("%(m)s min %(s)s s") % {"m": minutes, "s": secs}
    return _("%(s)s s") % {"s": secs}
