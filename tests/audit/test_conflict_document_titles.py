"""Documents in the audit list: a conflict's events name each document of the conflict with
its title, as the row names the document whose publication caused it (a title the admin may not
read stays out); a document's events link to its page, whose History says what changed."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def opened_row(client: Any) -> str:
    page = client.get("/audit/", {"action": "conflict.opened"}).content.decode()
    rows = re.findall(r"<tr>(.*?)</tr>", page, re.S)
    [row] = [r for r in rows if "conflict.opened" in r]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))


def test_both_documents_of_an_opened_conflict_are_named_with_their_titles(
    client: Any, publish: Any, make_user: Any
) -> None:
    make_user("olivia", "owner")
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)], title="Pricing and plans")
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)],
            title="Autumn trial promotion", principals=["group:marketing"])
    client.force_login(make_user("ada", "admin", groups=("marketing",)))

    row = opened_row(client)
    assert "doc trial-promo · Autumn trial promotion" in row
    assert "doc pricing · Pricing and plans" in row

    client.force_login(make_user("adam", "admin"))
    row = opened_row(client)
    assert "doc pricing · Pricing and plans" in row
    assert "trial-promo" in row and "Autumn trial promotion" not in row


def test_a_document_event_links_to_the_documents_page_where_its_history_says_what_changed(
    client: Any, publish: Any, make_user: Any
) -> None:
    make_user("olivia", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("pricing", revision="r2", facts=[fact("trial_days", 30)])
    client.force_login(make_user("ada", "admin"))

    page = client.get("/audit/", {"action": "revision.published"}).content.decode()
    assert page.count('document:<a href="/owner/documents/pricing/">pricing</a>') == 2
    document = client.get("/owner/documents/pricing/").content.decode()
    assert "data-changes" in document and "trial_days" in document
