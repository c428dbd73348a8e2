from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy


class EndpointForm(forms.Form):
    url = forms.URLField(max_length=2000, assume_scheme="https", label=gettext_lazy("URL"),
                         help_text=gettext_lazy("Where ReviewQueue posts status changes."))
    description = forms.CharField(max_length=200, required=False,
                                  label=gettext_lazy("Description"))
    secret = forms.CharField(max_length=200, required=False, strip=True,
                             label=gettext_lazy("Signing secret"),
                             help_text=gettext_lazy("Leave empty to have one generated "
                                                    "(shown once)."))
