"""Forms of the item page: approve, reject and edit, each bound to the verdict it was shown with;
and the claims table's inputs, written directly."""

from __future__ import annotations

import html
import math
import re
from typing import Any

from django import forms
from django.forms import Select
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

import gating
from reviewqueue.api_base import FLOAT_LIMIT
from reviewqueue.jsontext import read_json
from reviewqueue.reviews.labels import REJECT_REASONS
from reviewqueue.reviews.services.decisions import MAX_COMMENT_CHARS, DecisionInput
from reviewqueue.storable import CONTROL, lookalike_problem
from reviewqueue.textlimit import LimitedText
from reviewqueue.textmatch import answer_is_blank

# A whole number, digits grouped with underscores as Python writes them (1_000) included:
# float() reads those too, and 1000.0 is not the 1000 a source states.
_INTEGER = re.compile(r"^[+-]?\d+(?:_\d+)*$")


class _DecisionForm(forms.Form):
    action = ""
    verdict = forms.IntegerField(widget=forms.HiddenInput, min_value=1, max_value=2**63 - 1)
    # Whether the page was drawn under the reviewer's own lease: if that lease has ended since
    # (an admin broke it), the decision is refused once rather than claiming the item again.
    held = forms.BooleanField(widget=forms.HiddenInput, required=False)
    comment = LimitedText(
        label=_("Comment"), required=False, max_length=MAX_COMMENT_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # A hidden field shows no errors of its own (a tampered or truncated form): said above
        # the form instead.
        for name in ("verdict", "held"):
            errors = self._errors.pop(name, None) if self._errors else None
            if errors:
                self.add_error(None, errors)
        return data

    def to_input(self, **extra: Any) -> DecisionInput:
        d = self.cleaned_data
        return DecisionInput(action=self.action, verdict_id=d["verdict"],
                             comment=d.get("comment") or "", lease_held=d.get("held", False),
                             **extra)


class ApproveForm(_DecisionForm):
    action = "approve"
    prefix = "approve"
    # Asked only when claims do not hold against their sources (`contradicted`, their numbers).
    despite = forms.BooleanField(label=_("Approve it all the same"), required=False)

    # Of those, `unchecked`: claims whose source could not be read, said apart (nobody knows
    # whether they hold).
    def __init__(self, *args: Any, contradicted: list[int] | None = None,
                 unchecked: list[int] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.contradicted = contradicted or []
        self.unchecked = [n for n in unchecked or [] if n in self.contradicted]
        self.refuted = [n for n in self.contradicted if n not in self.unchecked]

    @property
    def refuted_list(self) -> str:
        return ", ".join(str(number) for number in self.refuted)

    @property
    def unchecked_list(self) -> str:
        return ", ".join(str(number) for number in self.unchecked)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.contradicted and not data.get("despite"):
            self.add_error("despite", _(
                "Tick the box to approve an answer whose claims do not hold, or edit or reject "
                "it.") if self.refuted else _(
                "Tick the box to approve an answer whose claims cannot all be checked, or edit "
                "or reject it."))
        return data


class RejectForm(_DecisionForm):
    action = "reject"
    prefix = "reject"
    reason = forms.ChoiceField(label=_("Reason"), choices=[("", "—"), *REJECT_REASONS.items()])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # A comment refused already (too long) is there: asking for one would confuse.
        if data.get("reason") == "other" and not self.has_error("comment") \
                and not (data.get("comment") or "").strip():
            self.add_error("comment", _("Say why the answer is rejected."))
        return data

    def to_input(self, **extra: Any) -> DecisionInput:
        return super().to_input(reject_reason=self.cleaned_data["reason"])


class ClaimForm(forms.Form):
    """One claim row. The value's type matters to the gate: 14 and "14" are different claims."""

    TYPES = [("text", _("text")), ("number", _("number")), ("boolean", _("true/false"))]

    subject = LimitedText(label=_("Subject"), required=False, max_length=200)
    key = LimitedText(label=_("Key"), required=False, max_length=200)
    # A text value may hold line breaks: shown in a text area then (see _widget_html).
    value = LimitedText(label=_("Value"), required=False, max_length=2000, strip=False)
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

    @staticmethod
    def is_blank(data: dict[str, Any]) -> bool:
        """Nothing typed in the row (its type menu always has a value): the row is ignored."""
        return not any((data.get(name) or "").strip()
                       for name in ("subject", "key", "value", "cite"))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("DELETE"):
            # A row the reviewer removed is thrown away: nothing in it is theirs to fix.
            self._errors.clear()
            return data
        if self.is_blank(data):
            return data  # an empty row is ignored
        if not self.has_error("key") and not (data.get("key") or "").strip():
            self.add_error("key", _("Enter a key."))
        for name in ("subject", "key"):
            typed = (data.get(name) or "").strip()
            came = self.initial.get(name)
            if isinstance(came, str) and came and typed == _browser_lines(came).strip():
                # Left as it came, though stored before such names were refused (a tab or a
                # line break in it): it is the answer's own, and taken exactly as it came.
                data[name] = came
                continue
            # As the API refuses them: the gate matches keys character for character, so one
            # holding an invisible character or a decomposed accent matches no source, and one
            # holding a tab or a line break, which the page shows as a space, reads as another.
            if self.has_error(name) or not lookalike_problem(typed):
                continue
            if CONTROL.search(typed):
                self.add_error(name, _("Remove tabs and line breaks: the page shows them as a "
                                       "space, so as typed, it reads like another."))
            else:
                self.add_error(name, _("Remove invisible characters, or write each accented "
                                       "letter as one: as typed, it reads like another."))
        if not data.get("cite"):
            self.add_error("cite", _("Choose the source this claim cites."))
        if self.has_error("value"):
            return data  # refused as it was typed (too long): there is no value to read
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
            elif isinstance(number, float) and abs(number) >= FLOAT_LIMIT:
                # Stored, it would come back as a whole number: see scalar_problem.
                self.add_error("value", _("Write a number this large as a whole number, "
                                          "without a decimal point or an exponent."))
            elif isinstance(number, int) and not gating.MIN_INT <= number <= gating.MAX_INT:
                # The gate takes 64-bit whole numbers: said here, on the row, not later.
                self.add_error("value", _("Enter a whole number between %(min)s and %(max)s.")
                               % {"min": gating.MIN_INT, "max": gating.MAX_INT})
            else:
                data["parsed"] = number + 0  # -0.0 is 0.0, as it would be stored
        elif kind == "boolean":
            word = raw.strip().lower()
            if word not in ("true", "false"):
                self.add_error("value", _("Enter true or false."))
            else:
                data["parsed"] = word == "true"
        elif _looks_typed(raw) and not (self.initial.get("value_type") == "text"
                                        and _looks_typed(self.initial.get("value") or "")):
            # The menu starts at "text": 29 typed in a new row would be the text "29", which
            # no number in a source supports. Quotes say the text is meant.
            self.add_error("value", _(
                "%(value)s is a number or true/false, but the type is “text”. Choose its type, "
                "or, to claim the text, write it in quotes: \"%(value)s\".")
                % {"value": raw.strip()})
        elif not raw.strip() and not (self.initial.get("value_type") == "text"
                                      and isinstance(self.initial.get("value"), str)
                                      and _browser_lines(self.initial["value"]) == raw):
            # An empty text is a claim no source makes; the row's key was typed for a value.
            # (A claim that came in empty and is left as it was is kept.)
            self.add_error("value", _("Enter a value."))
        else:
            # Quotes typed to say "text" are taken off; a value left as it came keeps its own,
            # line breaks included: a browser sends each back as CR LF, which LimitedText
            # reads as LF, so "a\r\nb" (as ingest took it) would come back "a\nb", a claim
            # its source may no longer support, though nobody touched it.
            came = self.initial.get("value")
            # A value typed anew leaves out the spaces around it, which nobody sees and no
            # source states (as the owner's form reads plain text).
            data["parsed"] = (came if isinstance(came, str) and raw == _browser_lines(came)
                              else _unquoted(raw.strip()))
        return data


def _browser_lines(text: str) -> str:
    """`text` as it comes back from a text area, read by LimitedText: a lone CR or a CR LF
    is one LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _looks_typed(text: str) -> bool:
    """Whether a text value reads as a number or boolean the gate takes (29, 2.5, true): not
    NaN, an infinity or a whole number past 64 bits, which only text can hold."""
    try:
        value = read_json(text)
    except ValueError:
        return False
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return gating.MIN_INT <= value <= gating.MAX_INT
    return isinstance(value, float) and math.isfinite(value)


# Quotes a keyboard or an input method may type, opening and closing: straight, typographic
# (English, German), Japanese corner brackets and full-width.
_QUOTES = {('"', '"'), ("“", "”"), ("”", "”"), ("„", "“"), ("「", "」"), ("『", "』"),
           ("\uff02", "\uff02")}


def _unquoted(text: str) -> str:
    """A text value written in quotes to say it is text ("29", “29” or 「29」): the text inside
    them."""
    stripped = text.strip()
    if (len(stripped) >= 2 and (stripped[0], stripped[-1]) in _QUOTES
            and _looks_typed(stripped[1:-1])):
        return stripped[1:-1]
    return text


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
            if not data or self._should_delete_form(form) or ClaimForm.is_blank(data):
                continue
            claim = {"key": data["key"].strip(), "value": data["parsed"], "cite": data["cite"]}
            if (data.get("subject") or "").strip():
                claim["subject"] = data["subject"].strip()
            out.append(claim)
        return out


ClaimFormSet = forms.formset_factory(ClaimForm, formset=_ClaimFormSet, extra=1, can_delete=True,
                                     max_num=gating.MAX_CLAIMS, validate_max=True)


class EditForm(_DecisionForm):
    action = "edit"
    prefix = "edit"
    answer = LimitedText(label=_("Answer text"), strip=False, max_length=200_000,
                         widget=forms.Textarea(attrs={"rows": 6}),
                         error_messages={"required": _("Enter the answer text.")})
    # Shown only once an edit was refused for it: see decisions.claims_unsaid.
    claims_checked = forms.BooleanField(label=_("The claims are right as they are"),
                                        required=False)

    def clean_answer(self) -> str:
        text: str = self.cleaned_data["answer"]
        if answer_is_blank(text):
            if "[" in text or "<!--" in text:  # something was typed, which shows nothing
                raise forms.ValidationError(_(
                    "Enter the answer text. Citation markers and HTML comments alone show the "
                    "reader nothing."), code="required")
            raise forms.ValidationError(_("Enter the answer text."), code="required")
        return text

    def to_input(self, **extra: Any) -> DecisionInput:
        return super().to_input(text=self.cleaned_data["answer"],
                                claims_checked=self.cleaned_data["claims_checked"], **extra)


def claim_formset(*, data: Any = None, claims: list[dict[str, Any]] | None = None,
                  cites: list[str]) -> Any:
    # Posted rows keep the initial claims too: a claim that came in with an empty value may be
    # left as it was (see ClaimForm.clean), which a row can only tell against its initial.
    initial = [ClaimForm.initial_for(c) for c in claims or []]
    return ClaimFormSet(data=data, initial=initial, prefix="claims", cites=cites)


# --- The claims table, written directly ------------------------------------------------------

def _escape(value: Any) -> str:
    """conditional_escape without its lazy-argument wrapper, which costs more than the escape
    itself when called a few thousand times per page."""
    return str(value) if hasattr(value, "__html__") else html.escape(str(value))


def _attrs(attrs: dict[str, Any]) -> str:
    """Widget attributes as django/forms/widgets/attrs.html writes them."""
    return "".join(
        "" if value is False else f" {name}" if value is True
        else f' {name}="{_escape(value)}"'
        for name, value in attrs.items()
    )


# Past this many retrieved ids, each row's cited id is a text box offering the ids from one list
# on the page (CITE_LIST, a <datalist>): a menu in every row repeats every id in every row, and
# 1,000 claims over 1,000 ids made a 56 MB page.
LONG_CITE_MENU = 30
CITE_LIST = "claim-cites"


def cite_list(cites: list[str]) -> list[str] | None:
    """The ids the page lists once for every row's cited-id box, when there are that many."""
    return cites if len(cites) > LONG_CITE_MENU else None


def _widget_html(field: Any, menus: dict[str, list[tuple[str, str, str]] | None]
                 ) -> SafeString:
    """What `{{ field }}` renders for a text input, checkbox or select, written directly.

    Django renders each widget and each <option> through a template, about a millisecond
    apiece: the claims table of a 50-citation answer has 50 rows, each with a menu of the 50
    citations, which cost more than the rest of the page and grew with the square of the
    citations. Names, values, attributes and what is selected still come from the field and
    its widget; a menu's options are escaped once per table (`menus`, by field name: every
    row of the table offers the same choices) and reused by every row.
    """
    widget = field.field.widget
    attrs = field.build_widget_attrs({}, widget)
    if field.auto_id and "id" not in widget.attrs:
        attrs.setdefault("id", field.auto_id)
    attrs = {**widget.attrs, **attrs}
    if isinstance(widget, Select):
        if field.name not in menus:
            choices = list(widget.choices)
            flat = not widget.allow_multiple_selected and not any(
                isinstance(label, (list, tuple)) for _value, label in choices)
            menus[field.name] = [
                (str(value), f'\n  <option value="{_escape(value)}"',
                 f">{_escape(label)}</option>")
                for value, label in choices
            ] if flat else None
        menu = menus[field.name]
        if menu is None:
            return mark_safe(str(field))
        chosen = widget.format_value(field.value())
        picked = chosen[0] if chosen else None
        if field.name == "cite" and len(menu) > LONG_CITE_MENU + 1:  # the blank "—" too
            return mark_safe(f'<input type="text" name="{_escape(field.html_name)}"'
                             f' value="{_escape(picked or "")}" list="{CITE_LIST}"'
                             f' autocomplete="off" spellcheck="false"{_attrs(attrs)}>')
        options, found = [], False
        for value, head, tail in menu:
            selected = not found and value == picked
            found = found or selected
            options.append(f"{head} selected{tail}" if selected else head + tail)
        return mark_safe(f'<select name="{_escape(field.html_name)}"'
                         f'{_attrs(attrs)}>{"".join(options)}\n</select>')
    context = widget.get_context(field.html_name, field.value(), attrs)["widget"]
    if context["type"] == "text" and context["value"] and (
            "\n" in context["value"] or "\r" in context["value"]):
        # A text input drops line breaks: a value holding some would be changed by any edit.
        # (The line break after the tag is the one a browser drops; the value's own are kept.)
        return mark_safe(f'<textarea name="{_escape(context["name"])}" rows="2"'
                         f'{_attrs(context["attrs"])}>\n{_escape(context["value"])}</textarea>')
    value = "" if context["value"] is None else f' value="{_escape(context["value"])}"'
    return mark_safe(f'<input type="{_escape(context["type"])}" '
                     f'name="{_escape(context["name"])}"{value}{_attrs(context["attrs"])}>')


CLAIM_FIELDS = ("subject", "key", "value", "value_type", "cite", "DELETE")


def claim_rows(formset: Any) -> list[tuple[Any, dict[str, SafeString]]]:
    """Each claim row of the edit table, (form, its inputs already written): see _widget_html.

    A bound formset (a refused POST) shows its own forms, with their errors. An unbound one
    (every GET) has nothing but initial values: one form, the formset's `empty_form`, is
    pointed at each row's prefix and initial values in turn instead of building one form per
    claim (each a deep copy of every field), and the row's form is None (no errors).
    """
    menus: dict[str, list[tuple[str, str, str]] | None] = {}
    if formset.is_bound:
        return [(form, {name: _widget_html(form[name], menus) for name in CLAIM_FIELDS})
                for form in formset]
    initial = formset.initial or []
    form = formset.empty_form
    rows: list[tuple[Any, dict[str, SafeString]]] = []
    for i in range(formset.total_form_count()):
        form.prefix = formset.add_prefix(i)
        form.initial = initial[i] if i < len(initial) else {}
        rows.append((None, {name: _widget_html(form.fields[name].get_bound_field(form, name),
                                               menus)
                            for name in CLAIM_FIELDS}))
    return rows


def blank_row(formset: Any) -> int | None:
    """The index of the empty row that ends the claim editor (the formset's extra form, nothing
    typed in it), or None. The page hides it while "Add a claim" can add rows, and shows it
    when that button is first pressed."""
    last = formset.total_form_count() - 1
    if last < formset.initial_form_count():
        return None
    if formset.is_bound and formset.forms[last].has_changed():
        return None
    return last
