from __future__ import annotations

from django import forms


class EndpointForm(forms.Form):
    url = forms.URLField(max_length=2000, assume_scheme="https",
                         help_text="Where ReviewQueue posts status changes.")
    description = forms.CharField(max_length=200, required=False)
    secret = forms.CharField(max_length=200, required=False, strip=True,
                             help_text="Leave empty to have one generated (shown once).")
