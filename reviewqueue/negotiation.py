"""The API's content negotiation (its own module: DRF imports it while its views load)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class JSONWhateverAccepted(DefaultContentNegotiation):
    """The view's first renderer (JSON) when the client accepts none of them: a client whose
    Accept names only text/html, or a format it mistyped, gets the body the schema documents
    rather than a 406 with no body it can read."""

    def select_renderer(self, request: Any, renderers: list[Any],
                        format_suffix: str | None = None) -> tuple[Any, str]:
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (NotAcceptable, Http404):  # DRF's answer to a ?format= no renderer has
            return renderers[0], renderers[0].media_type
