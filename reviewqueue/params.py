"""Query parameters of list pages come from an allowlist; anything else is a 400.

A parameter the page does not know is refused rather than ignored, so that nobody can come to
rely on one that happens to be passed through to a query (`owner__password__startswith=...`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict


def param_problems(query: QueryDict, allowed: frozenset[str]) -> dict[str, str]:
    """Parameters the page does not know, and known ones given more than once, by name."""
    problems = dict.fromkeys(sorted(set(query) - allowed), "not a search parameter")
    problems.update({name: "given more than once" for name in sorted(set(query) & allowed)
                     if len(query.getlist(name)) > 1})
    return problems


def unexpected_params(query: QueryDict, allowed: frozenset[str]) -> list[str]:
    return [f"{name}: {problem}" for name, problem in param_problems(query, allowed).items()]


def refuse_unknown_params(request: HttpRequest, allowed: Iterable[str] = ()
                          ) -> HttpResponse | None:
    """A 400 naming the unknown (or repeated) parameters, or None when all is well.

    Plain text: the names come from the caller and are echoed back, never as HTML.
    """
    problems = unexpected_params(request.GET, frozenset(allowed))
    if not problems:
        return None
    return HttpResponseBadRequest("\n".join(problems) + "\n",
                                  content_type="text/plain; charset=utf-8")


class SearchDateField(forms.DateField):
    """A day of a search window (YYYY-MM-DD), within years a window can be moved around in:
    9999-12-31 plus a day, or 0001-01-01 minus a month, is past what a date can hold."""

    FIRST = dt.date(1970, 1, 1)
    LAST = dt.date(2999, 12, 31)

    def __init__(self, **kwargs: Any) -> None:
        bounds = f"Give a day between {self.FIRST} and {self.LAST}."
        super().__init__(
            required=False, input_formats=["%Y-%m-%d"],
            widget=forms.DateInput(attrs={"type": "date"}),
            validators=[MinValueValidator(self.FIRST, bounds),
                        MaxValueValidator(self.LAST, bounds)],
            **kwargs)
