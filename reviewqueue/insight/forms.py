"""The insight window: which answers the figures cover. Only these parameters are accepted."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from reviewqueue.insight.selectors import Window, default_window
from reviewqueue.params import SearchDateField

WINDOW_PARAMS = frozenset({"since", "until", "release", "bucket"})
MAX_DAYS = 3 * 366
# Longer windows are drawn per week so a chart keeps a readable number of points.
DAILY_UP_TO_DAYS = 92


class WindowForm(forms.Form):
    since = SearchDateField(label=gettext_lazy("From"))
    until = SearchDateField(label=gettext_lazy("To"))
    release = forms.CharField(required=False, max_length=200, strip=True,
                              label=gettext_lazy("Index release"))
    bucket = forms.ChoiceField(required=False, label=gettext_lazy("Per"),
                               choices=[("", gettext_lazy("automatic")),
                                        ("day", gettext_lazy("day")),
                                        ("week", gettext_lazy("week"))])

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        default = default_window()
        until = data.get("until") or default.until
        if data.get("since") and not data.get("until"):
            # From that day on, as the audit log reads "From": up to today, within the span a
            # window may have (and the day itself, for a day still to come).
            until = max(data["since"], min(default.until,
                                           data["since"] + dt.timedelta(days=MAX_DAYS - 1)))
        since = data.get("since") or until - dt.timedelta(days=29)
        if since > until:
            self.add_error("until", _("Must not be before the first day."))
            return data
        days = (until - since).days + 1
        if days > MAX_DAYS:
            self.add_error("until", _("A window may span at most %(days)d days.")
                           % {"days": MAX_DAYS})
            return data
        bucket = data.get("bucket") or ("day" if days <= DAILY_UP_TO_DAYS else "week")
        if bucket == "day" and days > 2 * DAILY_UP_TO_DAYS:
            self.add_error("bucket", _("Per day works for up to %(days)d days; choose week.")
                           % {"days": 2 * DAILY_UP_TO_DAYS})
            return data
        data["window"] = Window(since=since, until=until, release=data.get("release") or "",
                                bucket=bucket)
        return data

    @property
    def window(self) -> Window:
        window: Window = self.cleaned_data["window"]
        return window
