"""Every ended or ending fact of the owner is reachable: past the inbox's 200, the inbox links
to a full list, a keyset page at a time, the facts that ended longest ago first (those the
inbox leaves out, though answers are held on them)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

FULL = "/owner/facts/"


def publish_ended(publish: Any, submit: Any, n: int, *, document: str = "pricing",
                  owner: str = "olivia", trace_id: str = "t-held") -> None:
    """`n` facts about the price of `n` plans, the i-th ended 40 + i days ago (the last the
    longest ago), and one held answer resting on every one of them: its claim names no plan,
    so it asks about the price of each."""
    publish(document, owner=owner, facts=[
        {**fact("price", i, start=-900, end=-40 - i), "subject": f"plan{i:03d}"}
        for i in range(n)])
    response = submit(trace_id, claims=[{"key": "price", "value": 1, "cite": "d1"}],
                      answer="It costs 1 [d1].", asked_by=["*"], as_of=None,
                      retrieved=[{"cite": "d1", "document_id": document, "revision": "r1",
                                  "span": "p1"}])
    assert response.status_code in (200, 201), response.content
    assert response.json()["status"] == "held"


def listed(page: str) -> list[str]:
    """The facts a page's table lists, as shown ("plan007 · price")."""
    table = re.search(r"<table [^>]*data-expiring>(.*?)</table>", page, re.S)
    if table is None:
        return []
    names = []
    for row in re.findall(r"<tr[^>]*>\s*<td>(.*?)</tr>", table.group(1), re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", f"<td>{row}", re.S)
        names.append(re.sub(r"<[^>]+>", "", cells[1]).split(" = ")[0].strip())
    return names


def next_page(page: str) -> str | None:
    found = re.search(r'<a href="([^"]*)"[^>]*data-next-page', page)
    return found.group(1).replace("&amp;", "&") if found else None


def every_page(client: Any, **headers: Any) -> list[str]:
    """The facts of the full list, following "Next" from its first page to its last."""
    url: str | None = FULL
    names: list[str] = []
    for _ in range(100):
        if url is None:
            return names
        response = client.get(url, **headers)
        assert response.status_code == 200
        names += listed(response.content.decode())
        url = next_page(response.content.decode())
    raise AssertionError("the pages do not end")


def test_past_200_the_inbox_links_to_a_full_list_that_reaches_every_fact(
    client: Any, publish: Any, submit: Any, owner: Any, monkeypatch: Any,
) -> None:
    from reviewqueue.sources import views

    publish_ended(publish, submit, 205)
    client.force_login(owner)

    inbox = client.get("/owner/").content.decode()
    assert len(listed(inbox)) == 200
    # The five that ended longest ago are the ones cut, though the answer waits on them.
    assert "plan204 · price" not in listed(inbox)
    assert "Only the 200 facts closest to today are listed" in inbox
    assert re.search(rf'<a href="{FULL}"[^>]*data-all-facts', inbox)

    monkeypatch.setattr(views, "FACTS_PAGE", 50)
    names = every_page(client)
    assert len(names) == 205 and len(set(names)) == 205
    # Those that ended longest ago first: what the inbox leaves out leads the list.
    assert names[0] == "plan204 · price" and names[-1] == "plan000 · price"
    first = client.get(FULL).content.decode()
    assert "Extend or correct" in first and 't-held' in first


def test_without_a_cut_the_inbox_does_not_link_to_the_full_list(
    client: Any, publish: Any, submit: Any, owner: Any,
) -> None:
    publish_ended(publish, submit, 3)
    client.force_login(owner)
    inbox = client.get("/owner/").content.decode()
    assert len(listed(inbox)) == 3 and "data-all-facts" not in inbox
    # Opened by hand, the full list shows the same facts.
    assert sorted(every_page(client)) == sorted(listed(inbox))


def test_the_full_list_shows_only_the_owners_own_facts(
    client: Any, publish: Any, submit: Any, owner: Any, make_user: Any, reviewer: Any,
) -> None:
    other = make_user("oscar", "owner")
    publish_ended(publish, submit, 2)
    publish("theirs", owner="oscar", facts=[fact("their_key", 1, start=-30, end=-3)])
    client.force_login(owner)
    mine = client.get(FULL).content.decode()
    assert listed(mine) == ["plan001 · price", "plan000 · price"]
    assert "their_key" not in mine and "theirs" not in mine

    client.force_login(other)
    assert listed(client.get(FULL).content.decode()) == ["their_key"]

    client.force_login(reviewer)
    assert client.get(FULL).status_code == 403


def test_a_fact_ended_long_ago_with_nothing_held_on_it_is_not_listed(
    client: Any, publish: Any, owner: Any,
) -> None:
    """As in the inbox: the owner ended it, and nothing waits on it."""
    publish("pricing", facts=[fact("gone", 1, start=-400, end=-40),
                              fact("lately", 2, start=-400, end=-10)])
    client.force_login(owner)
    assert every_page(client) == ["lately"]


def test_the_full_lists_queries_do_not_grow_with_its_facts(
    client: Any, publish: Any, submit: Any, owner: Any, monkeypatch: Any,
) -> None:
    from reviewqueue.sources import views

    monkeypatch.setattr(views, "FACTS_PAGE", 20)
    client.force_login(owner)

    def queries() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as captured:
            response = client.get(FULL)
        assert response.status_code == 200
        return len(captured.captured_queries), len(listed(response.content.decode()))

    publish_ended(publish, submit, 5, document="few", trace_id="t-few")
    few, shown_few = queries()
    publish_ended(publish, submit, 60, document="many", trace_id="t-many")
    many, shown_many = queries()

    assert (shown_few, shown_many) == (5, 20)
    assert few == many


def test_a_page_link_that_does_not_parse_gives_the_first_page(
    client: Any, publish: Any, submit: Any, owner: Any,
) -> None:
    publish_ended(publish, submit, 2)
    client.force_login(owner)
    for after in ("yesterday", "2026-01-01.x", f"2026-01-01.{2**70}"):
        page = client.get(f"{FULL}?after={after}").content.decode()
        assert "That page link was not valid; here is the first page." in page
        assert listed(page) == ["plan001 · price", "plan000 · price"]
    assert client.get(f"{FULL}?page=2").status_code == 400


def test_the_full_list_renders_in_japanese(
    client: Any, publish: Any, submit: Any, owner: Any,
) -> None:
    publish_ended(publish, submit, 2)
    client.force_login(owner)
    response = client.get(FULL, HTTP_ACCEPT_LANGUAGE="ja")
    page = response.content.decode()
    assert response.status_code == 200
    assert "終了した事実、または 30 日以内に終了する事実" in page
    assert len(listed(page)) == 2
