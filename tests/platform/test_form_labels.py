"""Every field a person fills in has a name a screen reader can say: a `<label for>` or a
`<label>` around it. Placeholders vanish as one types and are not names."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


class Fields(HTMLParser):
    """The page's fields, and whether each is labelled."""

    def __init__(self) -> None:
        super().__init__()
        self.labelled_ids: set[str] = set()
        self.depth_in_label = 0
        self.fields: list[tuple[str, bool]] = []  # (name, wrapped in a label)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "label":
            self.depth_in_label += 1
            if a.get("for"):
                self.labelled_ids.add(a["for"] or "")
        elif tag in ("input", "select", "textarea") and a.get("type") not in (
                "hidden", "submit", "button"):
            self.fields.append((a.get("id") or a.get("name") or "?", self.depth_in_label > 0))

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.depth_in_label -= 1


def unlabelled(page: str) -> list[str]:
    parser = Fields()
    parser.feed(page)
    return [name for name, wrapped in parser.fields
            if not wrapped and name not in parser.labelled_ids]


def test_every_field_of_an_owners_document_page_is_labelled(
    publish: Any, owner: Any, client: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "facts-0-value" in page
    assert unlabelled(page) == []


def test_every_field_of_the_webhooks_page_is_labelled(admin_client: Any) -> None:
    page = admin_client.get("/webhooks/").content.decode()
    assert unlabelled(page) == []
