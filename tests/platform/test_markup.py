"""Markup a screen reader or a filtering reviewer relies on: every aria-describedby names an
element of the page, the keyboard-help button has a name, an empty filtered queue says why."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

# The held answers of the reviewer's workspace tests.
from tests.reviews.conftest import hold, sources  # noqa: F401

pytestmark = pytest.mark.django_db


class Ids(HTMLParser):
    """The page's ids, and the ids each aria-describedby points at."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}  # id -> tag
        self.described_by: list[tuple[str, str]] = []  # (element id or name, target id)
        self.help_buttons: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids[a["id"] or ""] = tag
        for target in (a.get("aria-describedby") or "").split():
            self.described_by.append((a.get("id") or a.get("name") or tag, target))
        if tag == "button" and "data-help" in a:
            self.help_buttons.append(a)


def parse(page: str) -> Ids:
    parser = Ids()
    parser.feed(page)
    return parser


def dangling(page: str) -> list[tuple[str, str]]:
    parser = parse(page)
    return [(who, target) for who, target in parser.described_by if target not in parser.ids]


def test_the_audit_search_describes_its_fields_with_help_text_that_exists(
    admin_client: Any,
) -> None:
    page = admin_client.get("/audit/").content.decode()
    parser = parse(page)
    assert ("id_actor", "id_actor_helptext") in parser.described_by
    assert ("id_action", "id_action_helptext") in parser.described_by
    assert dangling(page) == []
    assert "A username (alice), or as logged" in page


def test_a_refused_audit_search_describes_its_field_with_the_error(admin_client: Any) -> None:
    response = admin_client.get("/audit/", {"action": "Not An Action!"})
    page = response.content.decode()
    parser = parse(page)
    assert ("id_action", "id_action_error") in parser.described_by, parser.described_by
    assert dangling(page) == []
    # The help text stays next to the error: it says what the field takes.
    assert "id_action_helptext" in parser.ids


def test_the_webhooks_form_describes_its_fields_with_help_text_that_exists(
    admin_client: Any,
) -> None:
    page = admin_client.get("/webhooks/").content.decode()
    parser = parse(page)
    assert ("id_url", "id_url_helptext") in parser.described_by
    assert ("id_secret", "id_secret_helptext") in parser.described_by
    assert dangling(page) == []


def test_a_refused_webhook_registration_describes_its_field_with_the_error(
    admin_client: Any,
) -> None:
    response = admin_client.post("/webhooks/", {"url": "not a url", "secret": ""})
    assert response.status_code == 400  # the form again, refused
    page = response.content.decode()
    parser = parse(page)
    assert ("id_url", "id_url_error") in parser.described_by, parser.described_by
    assert dangling(page) == []


def test_the_keyboard_help_button_is_named_for_what_it_opens(
    reviewer: Any, client: Any,
) -> None:
    client.force_login(reviewer)
    [button] = parse(client.get("/").content.decode()).help_buttons
    assert button["aria-label"] == "Keyboard shortcuts"


def test_the_keyboard_help_button_is_named_in_japanese_too(reviewer: Any, client: Any) -> None:
    client.force_login(reviewer)
    page = client.get("/", headers={"accept-language": "ja"}).content.decode()
    [button] = parse(page).help_buttons
    assert button["aria-label"] == "キーボードショートカット"


def test_a_filter_matching_nothing_says_so_and_offers_to_clear_it(
    hold: Any, reviewer: Any, client: Any,  # noqa: F811
) -> None:
    hold("t-1")
    client.force_login(reviewer)
    page = client.get("/", {"document": "refund"}).content.decode()
    assert "Nothing is waiting." not in page
    assert "No held answer matches these filters among those you may read." in page
    assert '<a href="/" data-clear-filters>' in page


def test_a_claim_filter_matching_nothing_offers_to_clear_it_too(
    hold: Any, reviewer: Any, client: Any,  # noqa: F811
) -> None:
    hold("t-1")
    client.force_login(reviewer)
    page = client.get("/", {"claim": "mine"}).content.decode()
    assert "Nothing is waiting." not in page
    assert "data-clear-filters" in page


def test_an_empty_queue_without_filters_says_nothing_is_waiting(
    reviewer: Any, client: Any,
) -> None:
    client.force_login(reviewer)
    page = client.get("/").content.decode()
    assert "Nothing is waiting." in page
    assert "No held answer matches these filters" not in page
    assert "data-clear-filters" not in page


def test_every_cell_of_a_queue_row_but_the_question_names_its_column(
    hold: Any, reviewer: Any, client: Any,  # noqa: F811
) -> None:
    """On a narrow screen the header row is gone; each cell says its column (app.css)."""
    hold("t-1")
    client.force_login(reviewer)
    page = client.get("/").content.decode()
    for label in ("Reasons", "Cited documents", "Held for", "Lease", "Index release"):
        assert f'data-label="{label}"' in page, label
