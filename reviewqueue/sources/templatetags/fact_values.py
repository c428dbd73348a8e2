"""`{{ fact.value|typed }}`: a fact's value as the edit form shows it, so 14 and "14" differ."""

from __future__ import annotations

from typing import Any

from django import template

from reviewqueue.sources.forms import as_input

register = template.Library()


@register.filter
def typed(value: Any) -> str:
    return as_input(value)
