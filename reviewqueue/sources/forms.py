"""Forms of the owner's pages. Values are typed JSON scalars: 14 and "14" differ."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from gating import MAX_INT, MIN_INT
from reviewqueue.api_base import MAX_SCALAR_CHARS, scalar_problem
from reviewqueue.jsontext import read_json
from reviewqueue.params import DayField
from reviewqueue.sources.conflicts import (
    DISMISSAL_CODES,
    DISMISSAL_DETAIL_MAX_CHARS,
    same_value,
)
from reviewqueue.sources.selectors import document_keys_named
from reviewqueue.textlimit import LimitedText

# A document named in an admin's search or job form, by id or by title.
# How many ids an error lists when several documents share the title given.
MAX_IDS_LISTED = 20
DOCUMENT_HELP = _("A document id, or a document's title (exact, any case)")


def document_key_named(user: Any, text: str, *,
                       known: Iterable[QuerySet[Any]] = ()) -> str:
    """The id of the document `text` names, by its id or else by its title as `user` may
    read it (one query). Several documents with that title, or none, is a ValidationError
    for the admin to act on; a row in one of `known` makes `text` an id though no stored
    document has it."""
    keys = document_keys_named(user, text, limit=MAX_IDS_LISTED, known=known)
    if len(keys) == 1:
        return keys[0]
    if keys:
        listed = ", ".join(keys[:MAX_IDS_LISTED]) + (", …" if len(keys) > MAX_IDS_LISTED
                                                     else "")
        raise ValidationError(
            gettext("Several documents have the title “%(title)s”: %(ids)s. Enter the id of "
                    "the one you mean.") % {"title": text, "ids": listed}, code="ambiguous")
    raise ValidationError(
        "{} {}".format(gettext("There is no document %(key)s.") % {"key": text},
                       gettext("Neither a document id nor the title of a document you may "
                               "read matches it: a document you may not read is found by its "
                               "id.")),
        code="unknown")


DATE = forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")


# A conflict only opens over periods that overlap: values for periods that do not are told
# apart by their validity dates. One value that holds during part of the other's period (a
# promotion over the standard rule) is an exception, which the dates cannot say.
DISMISS_LABELS = {
    "different plans": _("Different plans or audiences"),
    "both valid": _("Both values are valid"),
    "different periods": _("One is an exception for part of the other's period"),
    "other": _("Other (explain below)"),
}
DISMISS_REASONS = [(code, DISMISS_LABELS[code]) for code in DISMISSAL_CODES]
# How a stored reason's code reads once the form is gone.
DISMISS_REASONS_SHOWN = {**dict(DISMISS_REASONS), "other": _("Other")}


def _plain_reading(text: str) -> Any:
    """What `text`, typed without quotes, stands for: JSON (`14`, `true`, `"x"`), digits
    typed full width by an input method (U+FF10 to U+FF19) as the number they show, else the
    text itself."""
    try:
        return read_json(text)
    except ValueError:
        pass
    try:
        number = read_json(unicodedata.normalize("NFKC", text))
    except ValueError:
        return text
    return number if isinstance(number, (int, float)) and not isinstance(number, bool) else text


def parse_value(raw: str) -> Any:
    """`14` is a number, `true` a boolean, `"14"` or any other text a string.

    The API's rules apply: a value the gate or PostgreSQL refuses (`NaN`, `1e400`, a whole
    number past 64 bits, `"\\u0000"`) would fail every later answer claiming that key.
    """
    value = _plain_reading(raw.strip())
    if not isinstance(value, (str, int, float, bool)):
        raise forms.ValidationError(_("A value is a single number, boolean or text."))
    if scalar_problem(value) is None:
        return value
    # Said in the owner's language (the API's own words are English).
    if not isinstance(value, str):
        raise forms.ValidationError(_(
            "Enter a number the gate can keep: a whole number between %(min)s and %(max)s, "
            "or a number with a fraction below 1e16 in size.") % {"min": MIN_INT, "max": MAX_INT})
    if len(value) > MAX_SCALAR_CHARS:
        raise forms.ValidationError(_("Keep a text value to %(max)s characters.")
                                    % {"max": MAX_SCALAR_CHARS})
    raise forms.ValidationError(_("Remove the NUL character or the broken character from "
                                  "the text."))


def as_input(value: Any) -> str:
    """`value` as typed in the edit form, which `parse_value` reads back to the same value:
    plain text as is; text that would read back as something else, JSON-quoted (`"14"`,
    full-width digits, `""`, `"  padded  "`, text with a line break, which a text input
    cannot hold)."""
    if isinstance(value, str) and value and value == value.strip() and "\n" not in value \
            and "\r" not in value:
        read = _plain_reading(value)  # `14`, `true`, `"x"`: read back as something else
        if type(read) is str and read == value:
            return value
    return json.dumps(value, ensure_ascii=False)


class FactValueField(LimitedText):
    """The limit is the value's, not the typing's: a text shown JSON-quoted (each line break
    as `\\n`) is longer as typed than the value it stands for. Measured as typed, a long text
    the owner never touched refused every correction of its document."""

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        return {**super().widget_attrs(widget), "data-limit-of": "value"}  # the counter's too

    def validate(self, value: Any) -> None:
        forms.CharField.validate(self, value)  # required: `""` is typed, not empty
        text = value.strip()
        try:
            typed = read_json(text)
        except ValueError:
            typed = text
        self.validate_length(typed if isinstance(typed, str) else text)

    def has_changed(self, initial: Any, data: Any) -> bool:
        """Whether `data` reads as another value than `initial`, the fact's value as the form
        shows it (which reads back to the stored value), compared as the gate and the
        conflicts compare values (`same_value`: 14 and "14" differ). The same value typed
        again, `14 ` or 14 in full-width digits over 14, is no change: published, it would send
        every answer quoting the document back to reviewers and reopen dismissed conflicts,
        for a document that says the same."""
        if initial is None or data is None:
            return super().has_changed(initial, data)
        try:
            return not same_value(parse_value(str(initial)), parse_value(data))
        except ValidationError:
            return super().has_changed(initial, data)  # an error the form reports


class FactEditForm(forms.Form):
    fact_id = forms.IntegerField(widget=forms.HiddenInput)
    # Not stripped: `"  padded  "` keeps its spaces; an empty string is typed as `""`.
    value = FactValueField(max_length=MAX_SCALAR_CHARS, label=_("Value"), strip=False)
    valid_from = DayField(label=_("Valid from"), widget=DATE)
    valid_until = DayField(label=_("Valid until"), required=False, widget=DATE)

    def clean_value(self) -> Any:
        raw = self.cleaned_data["value"]
        value = parse_value(raw)
        # A number or boolean typed over with plain text ("thirty" for 30) is a typo far more
        # often than a change of type, and every answer claiming the key would then disagree
        # with it: the text must be quoted to say the change is meant.
        before = self.initial.get("value")
        if isinstance(value, str) and before is not None and not raw.strip().startswith('"'):
            try:
                was = read_json(before)
            except ValueError:
                was = before  # plain text
            if isinstance(was, bool):
                raise forms.ValidationError(_(
                    "This fact is a boolean (true or false). To make it the text %(text)s, "
                    "write it in quotes: \"%(text)s\".") % {"text": value})
            if isinstance(was, (int, float)):
                raise forms.ValidationError(_(
                    "This fact is a number. To make it the text %(text)s, write it in quotes: "
                    "\"%(text)s\".") % {"text": value})
        if isinstance(value, float) and value.is_integer() and before is not None:
            # 30.0 over 30: the gate tells them apart (a claim of 30 no longer matches), so a
            # whole number stays one unless the owner writes it as one.
            try:
                was = read_json(before)
            except ValueError:
                was = None
            if isinstance(was, int) and not isinstance(was, bool):
                raise forms.ValidationError(_(
                    "This fact is a whole number: write %(whole)s. The gate tells %(whole)s "
                    "from %(typed)s, so every answer stating %(whole)s would be held.")
                    % {"whole": int(value), "typed": raw.strip()})
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        start, end = data.get("valid_from"), data.get("valid_until")
        if start and end and start > end:
            self.add_error("valid_until", _("Must not be before “valid from”."))
        return data


FactEditFormSet = forms.formset_factory(FactEditForm, extra=0, max_num=1000)


PASSAGE_FIELD = "passage:"  # + the span: the name of a passage's text in the form
PASSAGE_MAX_CHARS = 100_000


def passage_text(raw: str) -> str:
    """A passage's text as a browser posts it, as it is stored: a textarea sends each line
    break as CR LF."""
    return raw.replace("\r\n", "\n")


def passage_error(text: str) -> str:
    """Why a passage's new text cannot be published, or ""."""
    if not text.strip():
        return str(_("A passage cannot be empty."))
    if len(text) > PASSAGE_MAX_CHARS:
        return str(_("A passage has at most %(max)d characters.") % {"max": PASSAGE_MAX_CHARS})
    return ""


class CorrectionNoteForm(forms.Form):
    note = LimitedText(
        max_length=5000,
        required=False,
        label=_("Note for this revision"),
        widget=forms.Textarea(attrs={"rows": 2}),
    )


class EndValidityForm(forms.Form):
    fact_id = forms.IntegerField(widget=forms.HiddenInput)
    last_day = DayField(label=_("Last valid day"), widget=DATE)
    note = LimitedText(
        max_length=5000,
        required=False,
        label=_("Note"),
        widget=forms.TextInput(attrs={"placeholder": _("Note (optional)")}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The page has one of these forms per fact: the fact's id keeps element ids unique.
        fact_id = str(self["fact_id"].value())
        self.auto_id = f"id_end_{fact_id}_%s" if fact_id.isdigit() else "id_end_%s"


class DismissForm(forms.Form):
    # The revisions the person judged: a dismissal never covers ones they did not see.
    signature = forms.CharField(widget=forms.HiddenInput, max_length=64)
    # No reason is preset: a dismissal is recorded under the reason the owner chose.
    reason = forms.ChoiceField(
        choices=[("", "—"), *DISMISS_REASONS], label=_("Why these values do not conflict"),
        error_messages={"required": _("Choose why these values do not conflict.")},
        help_text=_("A value that holds only during part of the other's period, such as a "
                    "promotion, is an exception: during its period it prevails, and an answer "
                    "stating the other value on one of its days stays held. If instead the "
                    "stored dates are wrong and the periods do not overlap, correct the dates "
                    "on the documents: the conflict then closes by itself."))
    # Stored after the reason's code ("different plans: ..."), which conflict_dismiss
    # leaves room for: what is typed here is kept whole.
    detail = LimitedText(
        max_length=DISMISSAL_DETAIL_MAX_CHARS,
        required=False,
        label=_("Justification"),
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # A justification refused already (too long) is there: asking for one would confuse.
        if data.get("reason") == "other" and not self.has_error("detail") \
                and not (data.get("detail") or "").strip():
            self.add_error("detail", _("Explain why the values do not conflict."))
        return data

    def reason_shown(self) -> str:
        """The reason as it was chosen, in words: what a refused dismissal gives back."""
        return str(DISMISS_REASONS_SHOWN.get(self.data.get("reason", ""), ""))

    def justification(self) -> str:
        reason, detail = self.cleaned_data["reason"], self.cleaned_data["detail"].strip()
        return f"{reason}: {detail}" if detail else reason
