"""Template helpers of the reviewer's workspace: relative times and the gate's words."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.timesince import timesince, timeuntil
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from reviewqueue.reviews import labels

register = template.Library()

# Django's timesince joins its units with gettext(", "). Named here, it is in the project's
# catalog, which gives it in Japanese as a space: "3日 22時間", as `duration` writes it.
gettext_noop(", ")


@register.filter
def ago(value: datetime | None) -> str:
    """'3 days ago' (or 'just now'), in the active language."""
    if value is None:
        return ""
    if (timezone.now() - value).total_seconds() < 60:
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(value, depth=1)}


@register.filter
def held_for(value: datetime | None) -> str:
    """How long an item has waited: '2 days, 3 hours'."""
    if value is None:
        return ""
    return timesince(value, depth=2)


@register.filter
def time_left(value: datetime | None) -> str:
    if value is None:
        return ""
    return timeuntil(value, depth=1)


@register.filter
def reason_label(code: str) -> str:
    return labels.reason_label(code)


@register.filter
def decision_label(code: str) -> str:
    return labels.decision_label(code)


@register.filter
def reason_tone(code: str) -> str:
    """A CSS tone per reason: what a reviewer must fix first stands out."""
    if code == "supported":
        return "sample"
    if code in ("conflicting_sources", "superseded_revision", "noncurrent_citation",
                "invalid_metadata"):
        return "review"
    return "abstain"


@register.filter
def show_value(value: Any) -> str:
    return labels.show_value(value)
