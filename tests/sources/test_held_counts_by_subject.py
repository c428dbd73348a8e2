"""A conflict holds the answers whose claims ask about it as the gate pairs them: the same key
and the same subject, or no subject at all (such a claim asks about every subject)."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.sources.models import Conflict
from tests.sources.test_held_counts import cites, detail_count, fact, held, inbox_counts
from tests.sources.test_held_counts import read_from as read_from  # a fixture: both ends

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("read_from")]


def priced(subject: str, value: int) -> dict[str, Any]:
    return {**fact("price", value), "subject": subject}


@pytest.fixture
def price_conflicts(publish: Any, owner: Any, make_user: Any) -> dict[str, Conflict]:
    """pricing (olivia's) and promo (oscar's) disagree on the price of basic and of pro."""
    make_user("oscar", "owner")
    publish("pricing", facts=[priced("basic", 10), priced("pro", 20)])
    publish("promo", owner="oscar", facts=[priced("basic", 12), priced("pro", 25)])
    return {c.subject: c for c in Conflict.objects.all()}


def claim(value: int, subject: str | None = None) -> list[dict[str, Any]]:
    return [{"key": "price", "value": value, "cite": "d1",
             **({"subject": subject} if subject else {})}]


def test_an_answer_about_pro_is_held_by_the_pro_conflict_only(
    client: Any, submit: Any, owner: Any, price_conflicts: dict[str, Conflict],
) -> None:
    held(submit, "t-pro", retrieved=cites("pricing"), claims=claim(20, "pro"),
         answer="Pro costs 20 [d1].")
    client.force_login(owner)

    basic, pro = price_conflicts["basic"], price_conflicts["pro"]
    assert inbox_counts(client) == {basic.pk: "holding 0 answers", pro.pk: "holding 1 answer"}
    assert detail_count(client, basic) == "0 answers"
    assert detail_count(client, pro) == "1 answer"


def test_an_answer_naming_no_subject_is_held_by_the_conflict_of_every_subject(
    client: Any, submit: Any, owner: Any, price_conflicts: dict[str, Conflict],
) -> None:
    held(submit, "t-any", retrieved=cites("pricing"), claims=claim(10),
         answer="It costs 10 [d1].")
    client.force_login(owner)

    basic, pro = price_conflicts["basic"], price_conflicts["pro"]
    assert inbox_counts(client) == {basic.pk: "holding 1 answer", pro.pk: "holding 1 answer"}
