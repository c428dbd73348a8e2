"""The answers the owner's inbox lists under a fact that ends soon: each answer once, however
many times it retrieved the document, and only answers whose claims ask about that fact."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db



def expiring_rows(client: Any) -> dict[str, tuple[str, list[str]]]:
    """The inbox's expiring facts: by the fact as shown ("pro · price"), the count of answers
    resting on it and the trace ids listed."""
    page = client.get("/owner/").content.decode()
    table = re.search(r"<table [^>]*data-expiring>(.*?)</table>", page, re.S)
    assert table is not None, page
    rows = {}
    for row in re.findall(r"<tr[^>]*>\s*<td>(.*?)</tr>", table.group(1), re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", f"<td>{row}", re.S)
        name = re.sub(r"<[^>]+>", "", cells[1]).split(" = ")[0].strip()
        count = re.sub(r"<[^>]+>", " ", cells[3]).split()[0]
        rows[name] = (count, re.findall(r'<a href="/answers/[^"]*/">([^<]*)</a>', cells[3]))
    return rows


def test_an_answer_retrieving_the_document_twice_is_counted_once(
    client: Any, publish: Any, submit: Any, owner: Any,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, start=-30, end=5)],
            passages=[{"span": "p1", "text": "The trial lasts 14 days."},
                      {"span": "p2", "text": "Again: 14 days."}])
    response = submit(
        retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
                   {"cite": "d2", "document_id": "pricing", "revision": "r1", "span": "p2"}],
        claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                {"key": "trial_days", "value": 14, "cite": "d2"}],
        answer="The trial lasts 14 days [d1][d2].", asked_by=["*"], as_of=None)
    assert response.status_code in (200, 201), response.content
    client.force_login(owner)

    assert expiring_rows(client) == {"trial_days": ("1", ["t-1"])}


def test_an_answer_rests_on_the_fact_of_the_subject_it_claims(
    client: Any, publish: Any, submit: Any, owner: Any,
) -> None:
    publish("pricing", facts=[
        {**fact("price", 10, start=-30, end=5), "subject": "basic"},
        {**fact("price", 20, start=-30, end=5), "subject": "pro"},
    ])
    publish("faq", facts=[fact("support", "email", end=None)])

    def ask(trace_id: str, subject: str | None, value: int, cite: str = "d1") -> None:
        claim = {"key": "price", "value": value, "cite": cite,
                 **({"subject": subject} if subject else {})}
        response = submit(trace_id, claims=[claim], answer=f"It costs {value} [{cite}].",
                          retrieved=[
                              {"cite": "d1", "document_id": "pricing", "revision": "r1",
                               "span": "p1"},
                              {"cite": "d2", "document_id": "faq", "revision": "r1",
                               "span": "p1"}],
                          asked_by=["*"], as_of=None)
        assert response.status_code in (200, 201), response.content

    ask("t-pro", "pro", 20)
    ask("t-basic", "basic", 10)
    ask("t-any", None, 10)  # names no subject: asks about the price of every plan
    ask("t-faq", "pro", 20, cite="d2")  # claims the price from the faq, not from pricing
    client.force_login(owner)

    # Newest answer first, as the inbox lists them.
    assert expiring_rows(client) == {"basic · price": ("2", ["t-any", "t-basic"]),
                                     "pro · price": ("2", ["t-any", "t-pro"])}


def test_past_the_limit_the_facts_closest_to_today_are_listed_and_the_page_says_so(
    client: Any, publish: Any, owner: Any,
) -> None:
    """200 facts ended 20 days ago must not push out the one ending in 3 days."""
    old = [fact(f"old_{i:03d}", i, start=-900, end=-20) for i in range(200)]
    publish("big", facts=[*old, fact("urgent_key", 1, start=-30, end=3)])
    client.force_login(owner)

    rows = expiring_rows(client)
    page = client.get("/owner/").content.decode()

    assert len(rows) == 200 and "urgent_key" in rows
    assert "Only the 200 facts closest to today are listed" in page


def test_the_answer_count_is_a_lower_bound_only_when_the_scan_stopped_short(
    publish: Any, submit: Any, owner: Any, today: Any,
) -> None:
    from reviewqueue.sources.selectors import expiring_facts

    publish("pricing", facts=[fact("trial_days", 14, start=-30, end=5)])
    for trace_id in ("t-1", "t-2"):
        assert submit(trace_id, asked_by=["*"], as_of=None).status_code == 201

    [exact] = expiring_facts(owner, today=today, scan_limit=2).facts
    [short] = expiring_facts(owner, today=today, scan_limit=1).facts

    assert (exact.answer_count, exact.more) == (2, False)
    assert (short.answer_count, short.more) == (1, True)
    assert expiring_facts(owner, today=today).cut is False


def test_a_fact_that_ended_long_ago_is_listed_only_while_an_answer_on_it_is_held(
    client: Any, publish: Any, submit: Any, owner: Any,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, start=-400, end=-40),
                              fact("seats", 5, start=-400, end=-40),
                              fact("promo", 10, start=-400, end=-10)])

    def ask(trace_id: str, key: str, value: int) -> Any:
        response = submit(trace_id, claims=[{"key": key, "value": value, "cite": "d1"}],
                          answer=f"It is {value} [d1].", asked_by=["*"], as_of=None,
                          retrieved=[{"cite": "d1", "document_id": "pricing",
                                      "revision": "r1", "span": "p1"}])
        assert response.status_code in (200, 201), response.content
        return response.json()

    assert ask("t-trial", "trial_days", 14)["status"] == "held"
    client.force_login(owner)

    # seats ended 40 days ago and nothing waits on it; promo ended within the 30 days.
    assert expiring_rows(client) == {"trial_days": ("1", ["t-trial"]), "promo": ("0", [])}

    from reviewqueue.reviews.models import Answer
    Answer.objects.filter(trace_id="t-trial").update(status=Answer.Status.REJECTED)
    assert expiring_rows(client) == {"promo": ("0", [])}


def test_a_drill_date_the_gate_uses_is_the_inbox_and_document_pages_today_too(
    client: Any, publish: Any, submit: Any, owner: Any, settings: Any,
) -> None:
    """REEVALUATION_TODAY pins the gate's today 20 days ahead: the fact ending in 5 days has
    ended by then, for the owner's pages as for the gate. The inbox says so, and the document
    page marks it ended and offers no end-validity form for it."""
    import datetime as dt

    from django.utils import timezone

    publish("pricing", facts=[fact("trial_days", 14, start=-30, end=5)])
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert "(in 5 days)" in page
    settings.REEVALUATION_TODAY = timezone.localdate() + dt.timedelta(days=20)
    page = client.get("/owner/").content.decode()
    assert "(ended 15 days ago)" in page and "(in 5 days)" not in page
    document = client.get("/owner/documents/pricing/").content.decode()
    assert "data-ended" in document and 'name="last_day"' not in document
