"""The audit search: a fixed set of query parameters, each validated; anything else is refused."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import RegexValidator
from django.http import QueryDict
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from reviewqueue.audit.selectors import EventFilter, events_naming_document
from reviewqueue.params import SearchDateField
from reviewqueue.sources.forms import DOCUMENT_HELP, document_key_named

FILTER_PARAMS = frozenset({"trace_id", "actor", "action", "document", "since", "until"})
PAGE_PARAMS = frozenset({"before", "after"})
MAX_RANGE_DAYS = 3660
class AuditSearchForm(forms.Form):
    trace_id = forms.CharField(required=False, max_length=200, strip=True,
                               label=gettext_lazy("Trace id"))
    actor = forms.CharField(
        required=False, max_length=200, strip=True, label=gettext_lazy("Actor"),
        help_text=gettext_lazy("A username (alice), or as logged: user:alice, "
                               "service:rag-service, worker, system"),
    )
    action = forms.CharField(
        required=False, max_length=64, strip=True, label=gettext_lazy("Action"),
        validators=[RegexValidator(
            r"^[a-z0-9_.]+\*?$",
            gettext_lazy("Use an action name such as answer.ingested, or revision.*"))],
        help_text=gettext_lazy("Exact, or a prefix ending in * (revision.*)"),
    )
    document = forms.CharField(required=False, max_length=200, strip=True,
                               label=gettext_lazy("Document"), help_text=DOCUMENT_HELP)
    since = SearchDateField(label=gettext_lazy("From"))
    until = SearchDateField(label=gettext_lazy("To"))
    before = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    after = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_document(self) -> str:
        """The document's id, looked up once here when a title was given: the search then
        reads the log's document index by id, as for an id typed in. An id the log names
        is searched even when no stored document has it."""
        text: str = self.cleaned_data["document"]
        if not text or self.user is None:
            return text
        return document_key_named(self.user, text, known=events_naming_document(text))

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        since, until = data.get("since"), data.get("until")
        if since and until:
            if since > until:
                self.add_error("until", _("Must not be before the first day."))
            elif (until - since).days > MAX_RANGE_DAYS:
                self.add_error("until", _("A range may span at most %(days)d days.")
                               % {"days": MAX_RANGE_DAYS})
        if data.get("before") is not None and data.get("after") is not None:
            raise forms.ValidationError(_("Give either before or after, not both."))
        return data

    def event_filter(self) -> EventFilter:
        d = self.cleaned_data
        return EventFilter(trace_id=d["trace_id"], actor=d["actor"], action=d["action"],
                           document=d["document"], since=d["since"], until=d["until"])

    def filter_query(self) -> str:
        """The filter as a query string, for pagination and export links."""
        query = QueryDict(mutable=True)
        for name in sorted(FILTER_PARAMS):
            value = self.cleaned_data.get(name)
            if value:
                query[name] = value.isoformat() if hasattr(value, "isoformat") else value
        return query.urlencode()
