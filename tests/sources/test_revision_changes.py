"""A document's history says what each revision changed from the one before it: the facts
that changed, were added or removed, the passages, the title and who may read it; never to
someone who may not read both revisions."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def page(client: Any) -> str:
    return client.get("/owner/documents/pricing/").content.decode()


def history(client: Any) -> list[str]:
    """The history's lines, newest first, as text."""
    found = re.search(r"<h2>History</h2>\s*<ul>(.*?)</ul>\s*(?:<h2|</main|<section|$)",
                      page(client), re.S)
    assert found is not None, page
    items = re.findall(r"<li[^>]*><code class=\"rev\">.*?(?=<li[^>]*><code class=\"rev\">|$)",
                       found.group(1), re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", item)).strip() for item in items]


def test_each_revision_says_what_it_changed(client: Any, publish: Any, owner: Any) -> None:
    publish(facts=[fact("trial_days", 14, end=None), fact("seats", 5, end=None)],
            passages=[{"span": "p1", "text": "The trial lasts 14 days."}])
    publish(revision="r2", facts=[{**fact("trial_days", 30, end=None), "valid_from": "2026-01-01"},
                                  fact("regions", "EU", end=None)],
            passages=[{"span": "p1", "text": "The trial lasts 30 days."},
                      {"span": "p2", "text": "EU only."}],
            principals=["group:staff"], title="Pricing")
    publish(revision="r3", facts=[{**fact("trial_days", 30, end=None), "valid_from": "2026-01-01"},
                                  fact("regions", "EU", end=None)],
            passages=[{"span": "p1", "text": "The trial lasts 30 days."},
                      {"span": "p2", "text": "EU only."}],
            principals=["group:staff"], title="Pricing")
    client.force_login(owner)

    r3, r2, r1 = history(client)
    assert r3.endswith("says the same as r2")
    assert "trial_days : 14 (" in r2 and "→ no end) → 30 (2026-01-01 → no end)" in r2
    assert "regions : new, EU (" in r2
    assert "seats : removed (was 5 (" in r2
    # A passage's change opens on its two texts, the words removed and added marked.
    assert "passage p1 changed The trial lasts 14 days. The trial lasts 30 days." in r2
    assert "passage p2 added EU only." in r2
    assert re.search(r'data-passage-change="p1">.*<del>14</del>.*<ins>30</ins>', page(client),
                     re.S)
    assert "title: “Pricing and plans” → “Pricing”" in r2
    assert "who may read it: * → group:staff" in r2
    assert "data-changes" not in r1 and "changed" not in r1  # the first says nothing


def test_no_change_is_shown_to_someone_who_may_not_read_the_revision_before(
    client: Any, publish: Any, owner: Any, make_user: Any
) -> None:
    """r1 was for managers only; r2 is for everyone. An admin outside managers reads r2,
    but r2's changes would say what r1 said."""
    publish(facts=[fact("trial_days", 14, end=None)], principals=["group:managers"])
    publish(revision="r2", facts=[fact("trial_days", 30, end=None)], principals=["*"])
    client.force_login(make_user("ada", "admin"))

    r2, _r1 = history(client)
    assert "trial_days" not in r2 and "data-changes" not in page(client)


def test_the_history_reads_its_changes_in_queries_that_do_not_grow_with_revisions(
    client: Any, publish: Any, owner: Any
) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/owner/documents/pricing/").status_code == 200
        return len(captured)

    client.force_login(owner)
    publish(facts=[fact("trial_days", 1, end=None)])
    publish(revision="r2", facts=[fact("trial_days", 2, end=None)])
    two = queries()
    for n in range(3, 9):
        publish(revision=f"r{n}", facts=[fact("trial_days", n, end=None)])
    assert queries() == two
    assert len(history(client)) == 8


def test_a_value_of_another_type_is_a_change_and_reordered_facts_are_not(
    client: Any, publish: Any, owner: Any
) -> None:
    publish(facts=[fact("seats", 1, end=None), fact("sso", "yes", end=None)])
    publish(revision="r2", facts=[fact("sso", "yes", end=None), fact("seats", True, end=None)])
    client.force_login(owner)

    r2, _r1 = history(client)
    assert "seats : 1 (" in r2 and "→ true (" in r2
    assert "sso" not in r2


def test_each_revision_gives_the_sources_own_date_and_a_long_note_folds(
    client: Any, publish: Any, owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from tests.sources.test_progress_page import publish_from_the_page

    publish(updated_at="2026-05-19T08:00:00Z")
    client.force_login(owner)
    publish_from_the_page(client, "30", django_capture_on_commit_callbacks,
                          {"note": "Why: " + "long reason " * 60})

    r2, r1 = history(client)
    # Received today, but the source's own date is what the document page says "Updated".
    assert "(the source says it was updated 2026-05-19)" in r1
    assert f"(the source says it was updated {timezone.localdate():%Y-%m-%d})" in r2
    folded = re.search(r'<details class="long-note"><summary>(.*?)</summary>', page(client))
    assert folded is not None and folded.group(1).startswith("Why: long reason")
    assert len(folded.group(1)) <= 200
