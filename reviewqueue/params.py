"""Query parameters of list pages come from an allowlist; anything else is a 400.

A parameter the page does not know is refused rather than ignored, so that nobody can come to
rely on one that happens to be passed through to a query (`owner__password__startswith=...`).
"""

from __future__ import annotations

from collections.abc import Iterable

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
