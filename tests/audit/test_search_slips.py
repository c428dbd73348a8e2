"""Two slips in the audit search, which a search that finds nothing offers to undo: an action
typed without `*` must match whole, so its family is offered; a username typed in another case
is offered as the user has it."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.db import transaction

from reviewqueue.audit.services import SYSTEM, audit_record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def published() -> None:
    with transaction.atomic():
        audit_record(actor=SYSTEM, action="revision.published", object_type="document",
                     object_id="pricing", document_id="pricing")


@pytest.mark.parametrize("typed", ["revision", "revision.publish"])
def test_a_partial_action_that_finds_nothing_offers_its_family(
    admin_client: Any, typed: str
) -> None:
    page = admin_client.get("/audit/", {"action": typed, "actor": "system"}).content.decode()

    assert "No event matches this search." in page
    assert "An action without * must be named whole (revision.published)." in page
    assert 'href="?action=revision.%2A&amp;actor=system">Search revision.* instead' in page
    follow = admin_client.get("/audit/?" + html.unescape(
        "action=revision.%2A&amp;actor=system")).content.decode()
    assert "No event matches this search." not in follow
    assert "pricing" in follow


def test_a_family_search_or_one_that_finds_events_offers_nothing(admin_client: Any) -> None:
    for typed in ("answer.*", "revision.published"):
        page = admin_client.get("/audit/", {"action": typed}).content.decode()
        assert "data-retry" not in page


@pytest.mark.parametrize(("typed", "offered", "query"), [
    ("Ada", "ada", "actor=ada"), ("user:ADA", "user:ada", "actor=user%3Aada")])
def test_a_username_typed_in_another_case_is_offered_as_the_user_has_it(
    admin_client: Any, admin_user: Any, typed: str, offered: str, query: str
) -> None:
    from reviewqueue.audit.services import Actor

    with transaction.atomic():
        audit_record(actor=Actor.of_user(admin_user), action="token.issued",
                     object_type="token", object_id="rq_ab12")
    page = admin_client.get("/audit/", {"actor": typed}).content.decode()
    assert "No event matches this search." in page
    assert f'<a href="?{query}">Search {offered} instead</a>' in page
    follow = admin_client.get(f"/audit/?{query}").content.decode()
    assert "token.issued" in follow


def test_an_action_of_no_family_is_told_what_the_actions_start_with(admin_client: Any) -> None:
    page = admin_client.get("/audit/", {"action": "job"}).content.decode()
    assert "No event matches this search." in page
    assert "data-retry" not in page  # job.* would find nothing either
    assert "Actions start with answer., verdict., decision.," in page
    assert "reevaluation." in page
    # A family that exists, or no action searched at all: nothing to list.
    for search in ({"action": "revision.publish"}, {"action": "revision.*", "actor": "nobody"},
                   {"actor": "nobody"}):
        page = admin_client.get("/audit/", search).content.decode()
        assert "No event matches this search." in page
        assert "data-families" not in page, search
