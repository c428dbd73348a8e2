"""Free text with a length limit: the server refuses an over-long text whole, naming the field,
and the form gives it back as typed.

The browser is told the limit as `data-limit`, for the counter static/js/common.js draws beside
the field ("2,125 / 2,000", marked when over), never as `maxlength`, which cuts a long paste
without a word.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.utils.formats import number_format
from django.utils.translation import gettext_lazy as _


def grouped(number: int) -> str:
    """A count as the counter beside a text area writes it: 2,125."""
    return number_format(number, force_grouping=True)


class LimitedText(forms.CharField):
    """A browser sends each line break of a text area as two characters (CRLF) but counts it
    as one: taken here as the browser (and the counter) counts it, so that a text within the
    limit is never refused, and a text sent back untouched equals what was shown. An
    over-long text is refused with both numbers written as the counter writes them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, MaxLengthValidator)]

    def validate(self, value: Any) -> None:
        super().validate(value)
        self.validate_length(value)

    def validate_length(self, value: str) -> None:
        if self.max_length is not None and len(value) > self.max_length:
            raise ValidationError(
                _("At most %(limit)s characters: this text has %(count)s."), code="max_length",
                params={"limit": grouped(self.max_length), "count": grouped(len(value))})

    def to_python(self, value: Any) -> str:
        text: str = super().to_python(value)
        return text.replace("\r\n", "\n")

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        attrs = super().widget_attrs(widget)
        if "maxlength" in attrs:
            attrs["data-limit"] = attrs.pop("maxlength")
        return attrs
