"""Answers generated from a revision of an owner's document that ReviewQueue never received
wait, held as "Invalid source data", for a revision only the owner's document system can send:
the document's page tells its owner so, naming the revisions, where before it said nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/pricing/"


def cites(revision: str, document: str = "pricing") -> list[dict[str, str]]:
    return [{"cite": "d1", "document_id": document, "revision": revision, "span": "p1"}]


def said(page: str) -> str:
    found = re.search(r"<p[^>]*data-unreceived>(.*?)</p>", page, re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split()) if found else ""


def test_the_owner_is_told_which_revisions_held_answers_wait_for(
    publish: Any, submit: Any, client: Any, owner: Any
) -> None:
    publish("pricing", "v7", facts=[fact("trial_days", 14)])
    for trace, revision in (("t-1", "r1"), ("t-2", "r1"), ("t-3", "r2")):
        assert submit(trace, retrieved=cites(revision), as_of=None).json()["status"] == "held"
    client.force_login(owner)

    shown = said(client.get(PAGE).content.decode())

    assert shown == (
        "3 held answers were generated from revisions of this document that ReviewQueue never "
        "received: r1, r2. They wait, held as “Invalid source data”, until your document "
        "system sends those revisions or a reviewer decides on them.")


def test_the_revision_arriving_ends_the_wait_and_the_words(
    publish: Any, submit: Any, client: Any, owner: Any
) -> None:
    publish("pricing", "v7", facts=[fact("trial_days", 14)], updated_at="2026-09-01T09:00:00Z")
    submit("t-1", retrieved=cites("r1"), as_of=None)
    publish("pricing", "r1", facts=[fact("trial_days", 14)])
    client.force_login(owner)

    assert "data-unreceived" not in client.get(PAGE).content.decode()


def test_nothing_is_said_when_every_cited_revision_was_received(
    publish: Any, submit: Any, client: Any, owner: Any
) -> None:
    publish("pricing", "r1", facts=[fact("trial_days", 14)])
    submit("t-1", retrieved=cites("r1"), as_of=None)
    client.force_login(owner)

    assert "data-unreceived" not in client.get(PAGE).content.decode()


def test_an_answer_the_owner_may_not_read_is_not_counted(
    publish: Any, submit: Any, client: Any, owner: Any, make_user: Any
) -> None:
    make_user("hugo", "owner", groups=("hr",))
    publish("pricing", "v7", facts=[fact("trial_days", 14)])
    publish("hr-salaries", owner="hugo", principals=["group:hr"], facts=[fact("bonus", 3)])
    submit("t-1", retrieved=cites("r1"), as_of=None)
    hr = submit("t-hr", as_of=None, asked_by=["group:hr"], retrieved=[
        *cites("r1"), {"cite": "d2", "document_id": "hr-salaries", "revision": "r1",
                       "span": "p1"}]).json()
    assert (hr["status"], hr["verdict"]["reason"]) == ("held", "invalid_metadata")
    client.force_login(owner)

    assert said(client.get(PAGE).content.decode()).startswith(
        "1 held answer was generated from a revision of this document that ReviewQueue never "
        "received: r1. It waits")
