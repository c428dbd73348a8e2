from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy

from reviewqueue.textlimit import LimitedText


class EndpointForm(forms.Form):
    url = forms.URLField(max_length=2000, assume_scheme="https", label=gettext_lazy("URL"),
                         help_text=gettext_lazy("Where ReviewQueue posts status changes."))
    # Limits said as data-limit, never maxlength: a pasted secret cut short by the browser
    # would sign every delivery with a secret the receiver does not hold.
    description = LimitedText(max_length=200, required=False,
                              label=gettext_lazy("Description"))
    secret = LimitedText(max_length=200, required=False, strip=True,
                         label=gettext_lazy("Signing secret"),
                         help_text=gettext_lazy("Leave empty to have one generated "
                                                "(shown once)."))
