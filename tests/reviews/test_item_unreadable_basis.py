"""The item page quotes the gate's own messages only when the reader may read every revision
the verdict was computed on.

A source restricted to HR was made public by a new revision; until the re-evaluation replaces
the verdict, that verdict's messages still quote the HR-only revision's value. The API already
said only that it was computed on a revision the caller may not read; the page showed it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

SECRET_VALUE = 7777


@pytest.fixture
def held_on_an_hr_revision(publish: Any, submit: Any) -> str:
    publish("policy", "r1", principals=["group:hr"], facts=[fact("k", SECRET_VALUE)],
            passages=[{"span": "p1", "text": "K is a secret."}])
    publish("policy2", "r1", facts=[fact("k", 5)], passages=[{"span": "p1", "text": "K is 5."}])
    response = submit("pol", as_of=None, asked_by=["group:hr"],
                      claims=[{"key": "k", "value": 5, "cite": "d2"}], answer="K is five [d2].",
                      retrieved=[{"cite": "d1", "document_id": "policy", "revision": "r1",
                                  "span": "p1"},
                                 {"cite": "d2", "document_id": "policy2", "revision": "r1",
                                  "span": "p1"}])
    assert response.json()["status"] == "held", response.json()
    # Made public; its re-evaluation has not run (it runs on commit).
    publish("policy", "r2", facts=[fact("k", 5)], passages=[{"span": "p1", "text": "K is 5."}])
    return "pol"


def test_a_verdict_on_a_revision_the_reader_may_not_read_shows_no_gate_message(
    held_on_an_hr_revision: str, reviewer: Any, hr_reviewer: Any, login: Any
) -> None:
    page = login(reviewer).get(f"/answers/{held_on_an_hr_revision}/")
    hr_page = login(hr_reviewer).get(f"/answers/{held_on_an_hr_revision}/")

    assert page.status_code == 200
    assert str(SECRET_VALUE) not in page.content.decode()
    assert str(SECRET_VALUE) in hr_page.content.decode()  # HR may read r1: nothing hidden
