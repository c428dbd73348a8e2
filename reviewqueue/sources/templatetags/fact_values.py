"""`{{ fact.value|typed }}`: a fact's value as the edit form shows it, so 14 and "14" differ;
`{{ conflict.dismissal_reason|dismissal }}`: why a conflict was dismissed, in words."""

from __future__ import annotations

from typing import Any

from django import template

from reviewqueue.sources.forms import DISMISS_REASONS_SHOWN, as_input

register = template.Library()


@register.filter
def typed(value: Any) -> str:
    return as_input(value)


@register.filter
def dismissal(reason: str) -> str:
    """A stored dismissal reason ("different periods: the promo ends in May") with its code
    said in the reader's language: "They apply to different periods: the promo ends in May".
    Without its final full stop: the sentence it is quoted in ends with one."""
    code, sep, detail = reason.partition(": ")
    label = DISMISS_REASONS_SHOWN.get(code)
    shown = reason if label is None else f"{label}: {detail}" if sep else str(label)
    return shown if shown.endswith("..") else shown.removesuffix(".")
