"""What an owner sees of the answers a conflict holds: exact up to 1000, "1000+" beyond, and
only answers held for conflicting sources that cite the conflict's documents and claim its key.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.sources import selectors
from reviewqueue.sources.models import Conflict
from tests.reevaluation.builders import copy_answers

pytestmark = pytest.mark.django_db


def fact(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
            "span": "p1"}


def cites(*documents: str) -> list[dict[str, str]]:
    return [{"cite": f"d{n}", "document_id": d, "revision": "r1", "span": "p1"}
            for n, d in enumerate(documents, 1)]


def claims(*keys: str) -> list[dict[str, Any]]:
    return [{"key": key, "value": 14, "cite": "d1"} for key in keys]


@pytest.fixture(params=["queue", "citations"])
def read_from(request: Any, monkeypatch: Any) -> str:
    """Which end the counts start from. These stores hold no more answers queued for
    conflicting sources than citations of the owner's documents, so the queue; with the probe
    at zero, as when both ends are past what it counts, the citations. Both must agree."""
    if request.param == "citations":
        monkeypatch.setattr(selectors, "HELD_PROBE", 0)
    return str(request.param)


@pytest.fixture
def other_owner(make_user: Any) -> Any:
    return make_user("oscar", "owner")


@pytest.fixture
def two_conflicts(publish: Any, owner: Any, other_owner: Any) -> dict[str, Conflict]:
    """pricing (olivia's) and trial-promo (oscar's) disagree on trial_days and on seats."""
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30), fact("seats", 6)])
    return {c.key: c for c in Conflict.objects.all()}


def held(submit: Any, trace_id: str, **kwargs: Any) -> Answer:
    body = submit(trace_id, as_of=None, **kwargs).json()
    assert body["status"] == "held", body
    answer = Answer.objects.get(trace_id=trace_id)
    assert "conflicting_sources" in answer.review_item.reasons
    return answer


def queue_copies(template: Answer, count: int, prefix: str) -> None:
    """`count` copies of the held `template`, each queued as the template is."""
    copy_answers(template, count, prefix)
    item = template.review_item
    ReviewItem.objects.bulk_create(
        ReviewItem(answer_id=answer_id, entered_at=item.entered_at,
                   primary_reason=item.primary_reason, reasons=item.reasons,
                   index_release=item.index_release)
        # In id order, as the copies were made: rows that earlier tests rolled back can leave
        # an unordered read in another order.
        for answer_id in Answer.objects.filter(trace_id__startswith=prefix)
        .order_by("id").values_list("id", flat=True)
    )


def inbox_counts(client: Any, **headers: str) -> dict[int, str]:
    """What the inbox says each conflict holds, by conflict id."""
    response = client.get("/owner/", **headers)
    assert response.status_code == 200
    # "holding 3 answers you may read": the count and its noun.
    return {int(pk): text.removesuffix(" you may read") for pk, text in re.findall(
        r'data-conflict="(\d+)">.*?<span class="held-count">(.*?)</span>',
        response.content.decode(), re.S)}


def detail_count(client: Any, conflict: Conflict) -> str:
    """What the conflict's page says it holds ("3 answers", "1000+ answers")."""
    response = client.get(f"/owner/conflicts/{conflict.pk}/")
    assert response.status_code == 200
    found = re.search(r"This conflict is holding (.*?) you may read in the review queue\.",
                      response.content.decode())
    assert found
    return found.group(1)


def detail_listed(client: Any, conflict: Conflict) -> list[str]:
    """The trace ids of the held answers the conflict's page lists, in its order."""
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    listed = page.split("data-held-answers", 1)[1].split("</ul>", 1)[0] \
        if "data-held-answers" in page else ""
    return re.findall(r'<a href="/answers/([^/]+)/">', listed)


def test_the_owner_sees_exactly_the_answers_each_conflict_holds(
    client: Any, publish: Any, submit: Any, owner: Any, two_conflicts: dict[str, Conflict],
    read_from: str,
) -> None:
    held(submit, "t-trial-1", retrieved=cites("pricing"), claims=claims("trial_days"))
    held(submit, "t-trial-2", retrieved=cites("trial-promo"), claims=claims("trial_days"))
    # Cites both documents: one answer all the same.
    held(submit, "t-both", retrieved=cites("pricing", "trial-promo"),
         claims=claims("trial_days"))
    held(submit, "t-seats", retrieved=cites("pricing"), claims=claims("seats"))
    client.force_login(owner)

    trial, seats = two_conflicts["trial_days"], two_conflicts["seats"]
    assert inbox_counts(client) == {trial.pk: "holding 3 answers", seats.pk: "holding 1 answer"}
    assert detail_count(client, trial) == "3 answers"
    assert detail_count(client, seats) == "1 answer"
    # And which they are, to open from the conflict's page.
    assert detail_listed(client, trial) == ["t-trial-1", "t-trial-2", "t-both"]
    assert detail_listed(client, seats) == ["t-seats"]


def test_answers_held_for_other_keys_documents_or_reasons_are_not_counted(
    client: Any, publish: Any, submit: Any, owner: Any, two_conflicts: dict[str, Conflict],
    read_from: str,
) -> None:
    # Held for another conflict, on documents of its own, while claiming seats too: the gate
    # compares that claim with the knowledge base, where pricing and trial-promo disagree on
    # seats, so the seats conflict holds it as well (tests/sources/test_held_counts_through_kb.py).
    publish("hr-a", facts=[fact("probation", 90)])
    publish("hr-b", facts=[fact("probation", 60)])
    held(submit, "t-hr", retrieved=cites("hr-a", "hr-b"), claims=claims("probation", "seats"))
    # Held for the seats conflict only: cites pricing but claims no trial_days.
    held(submit, "t-seats", retrieved=cites("pricing"), claims=claims("seats"))
    # Cites pricing and claims trial_days, but is queued for another reason only.
    other = held(submit, "t-other-reason", retrieved=cites("pricing"), claims=claims("trial_days"))
    ReviewItem.objects.filter(answer=other).update(primary_reason="invalid_metadata",
                                                   reasons=["invalid_metadata"])
    client.force_login(owner)

    trial, seats = two_conflicts["trial_days"], two_conflicts["seats"]
    probation = Conflict.objects.get(key="probation")
    # olivia owns hr-a and hr-b too: her inbox reads all three conflicts at once.
    assert inbox_counts(client) == {trial.pk: "holding 0 answers", seats.pk: "holding 2 answers",
                                    probation.pk: "holding 1 answer"}
    assert detail_count(client, trial) == "0 answers"
    assert detail_listed(client, trial) == []
    assert detail_listed(client, seats) == ["t-hr", "t-seats"]
    assert detail_listed(client, probation) == ["t-hr"]


def test_beyond_a_thousand_held_answers_the_owner_sees_1000_plus(
    client: Any, submit: Any, owner: Any, two_conflicts: dict[str, Conflict], read_from: str
) -> None:
    def page_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/owner/conflicts/{trial.pk}/").status_code == 200
        return len(queries)

    template = held(submit, "t-many", retrieved=cites("pricing"), claims=claims("trial_days"))
    trial, seats = two_conflicts["trial_days"], two_conflicts["seats"]
    client.force_login(owner)
    alone = page_queries()
    queue_copies(template, 999, "copy-a-")
    # The page lists the 20 longest waiting, in as many queries as for one.
    assert page_queries() == alone
    assert len(detail_listed(client, trial)) == 20
    assert "The 20 longest waiting are listed." in client.get(
        f"/owner/conflicts/{trial.pk}/").content.decode()
    assert inbox_counts(client)[trial.pk] == "holding 1000 answers"
    assert detail_count(client, trial) == "1000 answers"

    queue_copies(template, 500, "copy-b-")
    # seats: none of them claims it.
    assert inbox_counts(client) == {trial.pk: "holding 1000+ answers",
                                    seats.pk: "holding 0 answers"}
    assert detail_count(client, trial) == "1000+ answers"
    japanese = inbox_counts(client, HTTP_ACCEPT_LANGUAGE="ja")
    assert japanese[trial.pk] == "あなたが読める回答 1000+ 件を保留中"


def test_the_inbox_counts_held_answers_in_queries_that_do_not_grow_with_conflicts(
    client: Any, publish: Any, submit: Any, owner: Any, other_owner: Any
) -> None:
    def inbox_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/owner/").status_code == 200
        return len(queries)

    keys = ("trial_days", "seats", "regions", "retention")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    held(submit, "t-trial_days", retrieved=cites("pricing"), claims=claims("trial_days"))
    client.force_login(owner)
    one = inbox_queries()

    publish("pricing", revision="r2", facts=[fact(k, 14) for k in keys])
    publish("trial-promo", revision="r2", owner="oscar", facts=[fact(k, 30) for k in keys])
    assert Conflict.objects.exclude(status="closed").count() == len(keys)
    for key in keys[1:]:
        held(submit, f"t-{key}", retrieved=[{"cite": "d1", "document_id": "pricing",
                                             "revision": "r2", "span": "p1"}],
             claims=claims(key))
    assert inbox_queries() == one
    assert list(inbox_counts(client).values()) == ["holding 1 answer"] * len(keys)


def test_the_conflict_page_lists_its_own_subject_past_many_answers_about_another(
    client: Any, publish: Any, submit: Any, owner: Any, other_owner: Any,
) -> None:
    """Two plans disagree on trial_days: one conflict a plan. 150 answers about plan-b waited
    longest; the plan-a conflict's page still lists the plan-a answers, and those claiming
    trial_days with no subject (they ask about every plan)."""
    def plan_facts(value: int) -> list[dict[str, Any]]:
        return [{**fact("trial_days", value), "subject": plan} for plan in ("plan-a", "plan-b")]

    publish("pricing", facts=plan_facts(14))
    publish("trial-promo", owner="oscar", facts=plan_facts(30))
    plan_a = Conflict.objects.get(key="trial_days", subject="plan-a")
    plan_b = Conflict.objects.get(key="trial_days", subject="plan-b")

    def about(subject: str | None) -> list[dict[str, Any]]:
        return [{"key": "trial_days", "value": 14, "cite": "d1",
                 **({"subject": subject} if subject else {})}]

    queue_copies(held(submit, "t-b", retrieved=cites("pricing"), claims=about("plan-b")),
                 150, "t-b-")
    held(submit, "t-a", retrieved=cites("pricing"), claims=about("plan-a"))
    held(submit, "t-any", retrieved=cites("trial-promo"), claims=about(None))
    client.force_login(owner)

    assert detail_count(client, plan_a) == "2 answers"
    assert detail_listed(client, plan_a) == ["t-a", "t-any"]
    assert detail_count(client, plan_b) == "152 answers"  # 151 about plan-b, t-any
    assert detail_listed(client, plan_b)[:2] == ["t-b", "t-b-1"]
    assert len(detail_listed(client, plan_b)) == 20


def test_the_conflicting_values_come_before_the_list_of_held_answers(
    client: Any, submit: Any, owner: Any, two_conflicts: dict[str, Conflict]
) -> None:
    """The values side by side are what the owner came for; the held answers follow the
    actions, reached from the count's link."""
    template = held(submit, "t-order", retrieved=cites("pricing"), claims=claims("trial_days"))
    queue_copies(template, 30, "copy-o-")
    trial = two_conflicts["trial_days"]
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{trial.pk}/").content.decode()
    count = page.index("This conflict is holding 31 answers")
    link = page.index('<a href="#held-answers">See which answers</a>')
    sides = page.index('class="side-by-side"')
    dismiss = page.index("Dismiss the conflict")
    listed = page.index('id="held-answers"')
    assert count < link < sides < dismiss < listed < page.index("data-held-answers")
    assert len(detail_listed(client, trial)) == 20
