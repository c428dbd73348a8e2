"""The jobs page's "Re-evaluate document" form: a document named by its id or by its title."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from reviewqueue.jobs.models import Job
from reviewqueue.sources.forms import DOCUMENT_HELP, document_key_named

DOCUMENT_ID_MAX = Job._meta.get_field("document_key").max_length or 200


class DocumentJobForm(forms.Form):
    """`document_id` comes back cleaned as the id of a stored document: the text typed when
    a document has that id, otherwise the one document whose title it is."""

    document_id = forms.CharField(required=False, strip=True, help_text=DOCUMENT_HELP)

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_document_id(self) -> str:
        text: str = self.cleaned_data["document_id"]
        if not text:
            raise ValidationError(_("Name a document or choose every answer."), code="required")
        if len(text) > DOCUMENT_ID_MAX:
            raise ValidationError(_("A document id has at most %(max)d characters.")
                                  % {"max": DOCUMENT_ID_MAX}, code="max_length")
        return document_key_named(self.user, text)
