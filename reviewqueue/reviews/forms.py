"""Forms of the item page: approve, reject and edit, each bound to the verdict it was shown with."""

from __future__ import annotations

import math
import re
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from reviewqueue.reviews.labels import REJECT_REASONS
from reviewqueue.reviews.services.decisions import MAX_COMMENT_CHARS, DecisionInput

_INTEGER = re.compile(r"^[+-]?\d+$")


class _DecisionForm(forms.Form):
    action = ""
    verdict = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    comment = forms.CharField(
        label=_("Comment"), required=False, max_length=MAX_COMMENT_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def to_input(self, **extra: Any) -> DecisionInput:
        d = self.cleaned_data
        return DecisionInput(action=self.action, verdict_id=d["verdict"],
                             comment=d.get("comment") or "", **extra)


class ApproveForm(_DecisionForm):
    action = "approve"
    prefix = "approve"


class RejectForm(_DecisionForm):
    action = "reject"
    prefix = "reject"
    reason = forms.ChoiceField(label=_("Reason"), choices=[("", "—"), *REJECT_REASONS.items()])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("reason") == "other" and not (data.get("comment") or "").strip():
            self.add_error("comment", _("Say why the answer is rejected."))
        return data

    def to_input(self, **extra: Any) -> DecisionInput:
        return super().to_input(reject_reason=self.cleaned_data["reason"])


class ClaimForm(forms.Form):
    """One claim row. The value's type matters to the gate: 14 and "14" are different claims."""

    TYPES = [("text", _("text")), ("number", _("number")), ("boolean", _("true/false"))]

    subject = forms.CharField(label=_("Subject"), required=False, max_length=200)
    key = forms.CharField(label=_("Key"), required=False, max_length=200)
    value = forms.CharField(label=_("Value"), required=False, max_length=2000, strip=False)
    value_type = forms.ChoiceField(label=_("Type"), choices=TYPES, initial="text")
    cite = forms.ChoiceField(label=_("Cited id"), required=False)

    def __init__(self, *args: Any, cites: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["cite"].choices = [("", "—"), *((c, f"[{c}]") for c in cites or [])]

    @staticmethod
    def initial_for(claim: dict[str, Any]) -> dict[str, Any]:
        value = claim.get("value")
        if isinstance(value, bool):
            shown, kind = ("true" if value else "false"), "boolean"
        elif isinstance(value, (int, float)):
            shown, kind = str(value), "number"
        else:
            shown, kind = str(value), "text"
        return {"subject": claim.get("subject") or "", "key": claim.get("key", ""),
                "value": shown, "value_type": kind, "cite": claim.get("cite", "")}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not (data.get("key") or "").strip():
            return data  # an empty row is ignored (or is a deleted one)
        if not data.get("cite"):
            self.add_error("cite", _("Choose the source this claim cites."))
        raw = data.get("value") or ""
        kind = data.get("value_type")
        if kind == "number":
            text = raw.strip()
            try:
                number: int | float = int(text) if _INTEGER.match(text) else float(text)
            except ValueError:
                number = math.nan
            if isinstance(number, float) and not math.isfinite(number):
                self.add_error("value", _("Enter a number, such as 14 or 2.5."))
            else:
                data["parsed"] = number
        elif kind == "boolean":
            word = raw.strip().lower()
            if word not in ("true", "false"):
                self.add_error("value", _("Enter true or false."))
            else:
                data["parsed"] = word == "true"
        else:
            data["parsed"] = raw
        return data


class _ClaimFormSet(forms.BaseFormSet):
    def __init__(self, *args: Any, cites: list[str] | None = None, **kwargs: Any) -> None:
        self.cites = cites or []
        super().__init__(*args, **kwargs)

    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        return {**super().get_form_kwargs(index), "cites": self.cites}

    def claims(self) -> list[dict[str, Any]]:
        out = []
        for form in self.forms:
            data = form.cleaned_data
            if not data or self._should_delete_form(form) or not (data.get("key") or "").strip():
                continue
            claim = {"key": data["key"].strip(), "value": data["parsed"], "cite": data["cite"]}
            if (data.get("subject") or "").strip():
                claim["subject"] = data["subject"].strip()
            out.append(claim)
        return out


ClaimFormSet = forms.formset_factory(ClaimForm, formset=_ClaimFormSet, extra=1, can_delete=True,
                                     max_num=200, validate_max=True)


class EditForm(_DecisionForm):
    action = "edit"
    prefix = "edit"
    answer = forms.CharField(label=_("Answer text"), strip=False, max_length=200_000,
                             widget=forms.Textarea(attrs={"rows": 6}))

    def to_input(self, **extra: Any) -> DecisionInput:
        return super().to_input(text=self.cleaned_data["answer"], **extra)


def claim_formset(*, data: Any = None, claims: list[dict[str, Any]] | None = None,
                  cites: list[str]) -> Any:
    initial = [ClaimForm.initial_for(c) for c in claims or []]
    return ClaimFormSet(data=data, initial=None if data is not None else initial,
                        prefix="claims", cites=cites)
