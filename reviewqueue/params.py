"""Query parameters of list pages come from an allowlist; anything else is a 400.

A parameter the page does not know is refused rather than ignored, so that nobody can come to
rely on one that happens to be passed through to a query (`owner__password__startswith=...`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, gettext_noop

DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# In the API's language (English); pages translate them.
NOT_A_PARAMETER = gettext_noop("not a search parameter")
GIVEN_TWICE = gettext_noop("given more than once")


def param_problems(query: QueryDict, allowed: frozenset[str]) -> dict[str, str]:
    """Parameters the page does not know, and known ones given more than once, by name."""
    problems = dict.fromkeys(sorted(set(query) - allowed), NOT_A_PARAMETER)
    problems.update({name: GIVEN_TWICE for name in sorted(set(query) & allowed)
                     if len(query.getlist(name)) > 1})
    return problems


def unexpected_params(query: QueryDict, allowed: frozenset[str], *, shown: bool = False
                      ) -> list[str]:
    """"name: problem" for each, in English for the API, in the reader's language on a page
    (`shown`)."""
    return [f"{name}: {gettext(problem) if shown else problem}"
            for name, problem in param_problems(query, allowed).items()]


def refuse_unknown_params(request: HttpRequest, allowed: Iterable[str] = ()
                          ) -> HttpResponse | None:
    """A 400 page naming the unknown (or repeated) parameters, with a link to the same page
    without them, or None when all is well. The names come from the caller: the template
    escapes them."""
    known = frozenset(allowed)
    problems = param_problems(request.GET, known)
    if not problems:
        return None
    kept = {name: request.GET[name] for name in sorted(known & set(request.GET))
            if name not in problems}
    return render(request, "bad_params.html", {
        "problems": [(name, gettext(problem)) for name, problem in problems.items()],
        "without_url": f"{request.path}?{urlencode(kept)}" if kept else request.path,
    }, status=400)


def not_a_day(value: Any) -> forms.ValidationError:
    """The refusal of a typed value that is no day, quoting it: a date input empties itself on
    such a value (a browser with no date picker lets one be typed), so it is lost from sight."""
    typed = str(value).strip()
    return forms.ValidationError(
        gettext_lazy("Enter a valid date, such as 2026-12-31: “%(typed)s” is not one."),
        code="invalid", params={"typed": typed if len(typed) <= 40 else typed[:39] + "…"})


class DayField(forms.DateField):
    """A day written YYYY-MM-DD, as facts write theirs; a value that is not is quoted in its
    refusal (`not_a_day`). The language's other formats are not read: 3/4/26 is 4 March to
    one reader and 3 April to another, and a date input always sends YYYY-MM-DD."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("input_formats", ["%Y-%m-%d"])
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> dt.date | None:
        # strptime takes "2026-1-1" for %Y-%m-%d.
        if isinstance(value, str) and value.strip() and not DAY.fullmatch(value.strip()):
            raise not_a_day(value)
        try:
            return super().to_python(value)
        except forms.ValidationError as exc:
            if exc.code != "invalid":
                raise
            raise not_a_day(value) from exc


# Said in the reader's language when the error is shown, not when the form class is made.
_days_between = lazy(lambda first, last: gettext("Give a day between %(first)s and %(last)s.")
                     % {"first": first, "last": last}, str)


class SearchDateField(DayField):
    """A day of a search window (YYYY-MM-DD), within years a window can be moved around in:
    9999-12-31 plus a day, or 0001-01-01 minus a month, is past what a date can hold."""

    FIRST = dt.date(1970, 1, 1)
    LAST = dt.date(2999, 12, 31)

    def __init__(self, **kwargs: Any) -> None:
        bounds = _days_between(self.FIRST.isoformat(), self.LAST.isoformat())
        super().__init__(
            required=False,
            widget=forms.DateInput(attrs={"type": "date"}),
            validators=[MinValueValidator(self.FIRST, bounds),
                        MaxValueValidator(self.LAST, bounds)],
            **kwargs)
