"""The inbox lists a bounded number of conflicts and documents, and says so when it stops
short, rather than leaving the rest out silently."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.sources import views
from reviewqueue.sources.models import Document
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_conflicts(publish: Any) -> None:
    for key in ("trial_days", "seats", "refund_days"):
        publish(f"{key}-a", facts=[fact(key, 1)])
        publish(f"{key}-b", facts=[fact(key, 2)])


def test_the_inbox_says_when_it_lists_only_the_newest_conflicts(
    client: Any, owner: Any, three_conflicts: None, monkeypatch: Any
) -> None:
    monkeypatch.setattr(views, "INBOX_CONFLICTS", 2)
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert page.count("data-conflict=") == 2
    # The newest two: the oldest conflict is the one left out.
    assert "<code>refund_days</code>" in page and "<code>seats</code>" in page
    assert "<code>trial_days</code>" not in page
    assert "Only the 2 most recently opened conflicts are listed." in page


def test_the_inbox_says_nothing_when_everything_is_listed(
    client: Any, owner: Any, three_conflicts: None
) -> None:
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert page.count("data-conflict=") == 3
    assert "data-more-conflicts" not in page and "data-more-documents" not in page


def test_the_inbox_says_when_it_lists_only_the_first_documents(
    client: Any, owner: Any, three_conflicts: None, monkeypatch: Any
) -> None:
    monkeypatch.setattr(views, "INBOX_DOCUMENTS", 4)
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    listed = page[page.index('<ul class="doc-list">'):]
    listed = listed[:listed.index("</ul>")]
    assert [d for d in ("refund_days-a", "refund_days-b", "seats-a", "seats-b", "trial_days-a",
                        "trial_days-b") if f'href="/owner/documents/{d}/"' in listed] == [
        "refund_days-a", "refund_days-b", "seats-a", "seats-b"]
    assert "Only the first 4 documents by id are listed" in page


def test_my_documents_are_listed_by_title_with_their_ids(
    client: Any, owner: Any, three_conflicts: None
) -> None:
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    listed = page[page.index('<ul class="doc-list">'):]
    listed = listed[:listed.index("</ul>")]
    title = Document.objects.get(key="seats-a").current_revision.title
    assert re.search(rf'<a href="/owner/documents/seats-a/">{re.escape(title)}</a> '
                     r'<code class="muted small">seats-a</code>', listed)


def test_the_inbox_says_when_it_lists_only_the_conflicts_closed_last(
    client: Any, owner: Any, publish: Any, three_conflicts: None, monkeypatch: Any
) -> None:
    for key in ("trial_days", "seats", "refund_days"):  # each closes, in this order
        publish(f"{key}-b", "r2", facts=[fact(key, 1)])
    monkeypatch.setattr(views, "INBOX_CLOSED", 2)
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    closed = page[page.index("Closed in the last 30 days"):]
    closed = closed[:closed.index("</ul>")]
    assert re.findall(r"<code>(\w+)</code>", closed) == ["refund_days", "seats"]
    assert "Only the 2 conflicts closed most recently are listed." in page


def test_the_inbox_says_nothing_when_every_closed_conflict_is_listed(
    client: Any, owner: Any, publish: Any, three_conflicts: None
) -> None:
    for key in ("trial_days", "seats", "refund_days"):
        publish(f"{key}-b", "r2", facts=[fact(key, 1)])
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert page.count("/owner/conflicts/") == 3
    assert "data-more-closed" not in page
