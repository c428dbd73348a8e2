"""The queue: only what the reviewer may read, filtered, oldest first, a keyset page at a time."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from reviewqueue.accounts.principals import user_principals
from reviewqueue.reviews.models import Answer, OwnerQuestion, ReviewItem
from reviewqueue.reviews.selectors import queue as queue_selectors
from reviewqueue.reviews.selectors.queue import (
    BadCursor,
    Cursor,
    QueueFilters,
    page_queryset,
    queue_page,
)
from reviewqueue.sources.models import Document
from tests.reviews.conftest import bulk_held, current_verdict_id, fact

pytestmark = pytest.mark.django_db


def traces(page: Any) -> list[str]:
    return [row.answer.trace_id for row in page.rows]


def page_for(user: Any, **kwargs: Any) -> Any:
    filters = kwargs.pop("filters", QueueFilters())
    return queue_page(principals=user_principals(user), filters=filters, user=user, **kwargs)


@pytest.fixture
def pricing_documents(owner: Any) -> None:
    """Documents written straight to the table for the bulk-created queue items."""
    Document.objects.create(key="pricing", owner=owner, allowed_principals=["*"])
    Document.objects.create(key="pricing-eu", owner=owner, allowed_principals=["*"])
    Document.objects.create(key="hr-handbook", owner=owner, allowed_principals=["group:hr"])


# --- Who sees what ----------------------------------------------------------------------------

def test_a_reviewer_sees_only_answers_whose_every_document_they_may_read(
    pricing_documents: Any, reviewer: Any, hr_reviewer: Any
) -> None:
    bulk_held(2, prefix="public", documents=("pricing",))
    bulk_held(2, prefix="mixed", documents=("pricing", "hr-handbook"))
    assert traces(page_for(reviewer)) == ["public-0", "public-1"]
    assert sorted(traces(page_for(hr_reviewer))) == ["mixed-0", "mixed-1", "public-0",
                                                     "public-1"]


def test_a_document_the_store_never_received_hides_the_answer(
    pricing_documents: Any, reviewer: Any
) -> None:
    bulk_held(1, prefix="unknown", documents=("pricing", "not-yet-received"))
    bulk_held(1, prefix="known", documents=("pricing",))
    assert traces(page_for(reviewer)) == ["known-0"]


def test_counts_only_include_what_the_reviewer_may_see(pricing_documents: Any,
                                                       reviewer: Any) -> None:
    bulk_held(3, prefix="public", documents=("pricing",))
    bulk_held(4, prefix="hr", documents=("hr-handbook",))
    counts = {c.reason: c.count for c in page_for(reviewer).counts}
    assert counts["conflicting_sources"] == 3


def test_the_queue_page_lists_rows_with_their_details(hold: Any, reviewer: Any,
                                                      login: Any) -> None:
    trace = hold()
    html = login(reviewer).get("/").content.decode()
    assert "How long is the free trial?" in html
    assert "Conflicting sources" in html
    assert "Pricing in the EU" in html
    assert "2026.10" in html
    assert trace in html


def test_the_queue_shows_who_holds_a_lease(hold: Any, reviewer: Any, bob: Any,
                                           login: Any) -> None:
    hold()
    login(bob).post("/answers/t-1/claim")
    html = login(reviewer).get("/").content.decode()
    assert 'class="lease-other">bob<' in html


def test_people_without_the_reviewer_role_do_not_see_the_queue(owner: Any, login: Any) -> None:
    response = login(owner).get("/")
    assert (response.status_code, response["Location"]) == (302, "/owner/")


def test_signed_out_visitors_are_sent_to_sign_in(client: Any) -> None:
    response = client.get("/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- Filters ----------------------------------------------------------------------------------

def test_filtering_by_reason(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(2, prefix="c", reason="conflicting_sources")
    bulk_held(1, prefix="s", reason="superseded_revision")
    page = page_for(reviewer, filters=QueueFilters(reason="superseded_revision"))
    assert traces(page) == ["s-0"]


def test_filtering_by_document(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(2, prefix="a", documents=("pricing",))
    bulk_held(1, prefix="b", documents=("pricing", "pricing-eu"))
    page = page_for(reviewer, filters=QueueFilters(document="pricing-eu"))
    assert traces(page) == ["b-0"]


def test_filtering_by_a_documents_title_as_the_queue_shows_it(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    hold("both")
    hold("one", retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1",
                            "span": "p1"}])
    client = login(reviewer)
    for typed in ("pricing-eu", "PRICING-EU", "Pricing in the EU", "pricing IN the eu"):
        assert traces(client.get("/", {"document": typed}).context["page"]) == ["both"], typed
    assert traces(client.get("/", {"document": "Pricing in"}).context["page"]) == []
    # The field says what it takes.
    assert 'placeholder="document id or title"' in client.get("/").content.decode()


def test_an_id_written_exactly_is_that_document_though_another_differs_only_in_case(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    publish("Pricing", title="Pricing, upper case", facts=[fact("trial_days", 14)])
    hold("lower")
    hold("upper", retrieved=[{"cite": "d1", "document_id": "Pricing", "revision": "r1",
                              "span": "p1"},
                             {"cite": "d2", "document_id": "pricing-eu", "revision": "r1",
                              "span": "p1"}])
    client = login(reviewer)
    assert traces(client.get("/", {"document": "pricing"}).context["page"]) == ["lower"]
    assert traces(client.get("/", {"document": "Pricing"}).context["page"]) == ["upper"]
    # With no exact id, any case still finds both.
    assert sorted(traces(client.get("/", {"document": "PRICING"}).context["page"])) == [
        "lower", "upper"]


def test_a_hidden_documents_id_does_not_take_the_filter_from_a_readable_title(
    hold: Any, publish: Any, reviewer: Any, login: Any, make_user: Any, token_client: Any
) -> None:
    # An HR document whose id is what the reviewer types, the title of a document they read:
    # were it matched as an exact id, the reviewer's rows would vanish, telling them it exists.
    publish("pricing-eu", "r2", title="Eurotrial", facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 days."}],
            updated_at="2026-10-02T09:00:00Z")
    hold("eu", retrieved=[{"cite": "d1", "document_id": "pricing-eu", "revision": "r2",
                           "span": "p1"}])
    make_user("hugo", "owner", groups=("hr",))
    publish("Eurotrial", owner="hugo", principals=["group:hr"], title="HR only",
            facts=[fact("bonus", 1)])

    page = login(reviewer).get("/", {"document": "Eurotrial"})
    assert traces(page.context["page"]) == ["eu"]
    api = token_client(reviewer, scopes=["review"]).get("/api/v1/queue",
                                                        {"document": "Eurotrial"})
    assert [row["trace_id"] for row in api.json()["results"]] == ["eu"]


def test_a_document_filter_that_names_nothing_offers_the_documents_containing_it(
    hold: Any, publish: Any, reviewer: Any, login: Any, owner: Any
) -> None:
    hold("both")
    publish("hr-handbook", title="Pricing for HR", principals=["group:hr"])
    client = login(reviewer)
    page = client.get("/", {"document": "pricing in", "reason": "conflicting_sources"})
    html = page.content.decode()
    assert "No document has the id or title “pricing in”." in html
    # The readable one, with the reader's other filters kept; nothing of the HR document.
    assert ('<a href="/?reason=conflicting_sources&amp;document=pricing-eu">Pricing in the '
            'EU</a>') in html
    assert "Pricing for HR" not in html
    # A document's exact id or title is found by the filter: no offer then.
    html = client.get("/", {"document": "pricing-eu", "claim": "mine"}).content.decode()
    assert "No document has the id or title" not in html
    assert "No document you may read" not in html
    # Nothing near it either: said, not left to the "no answer matches" line alone.
    html = client.get("/", {"document": "zzz"}).content.decode()
    assert "No document you may read has the id or title “zzz”, or one containing it." in html
    html = client.get("/", {"document": "Pricing for HR"}).content.decode()
    assert "No document you may read has the id or title “Pricing for HR”" in html


@pytest.fixture
def back_after_withdrawal(hold: Any, reviewer: Any, login: Any, service_api: Any,
                          django_capture_on_commit_callbacks: Any) -> str:
    """An answer the reviewer approved, back in the queue since `pricing` ("Pricing and
    plans"), which it cites, was withdrawn: the document has no current revision now."""
    trace = hold("back")
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    client.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": current_verdict_id(trace),
        "approve-held": "True", "then": "queue"})
    with django_capture_on_commit_callbacks(execute=True):
        assert service_api.delete("/api/v1/documents/pricing").status_code in (200, 202)
    assert Answer.objects.get(trace_id=trace).status == "held"
    return trace


def test_a_withdrawn_cited_document_is_named_by_its_last_title(
    back_after_withdrawal: str, reviewer: Any, login: Any, token_client: Any
) -> None:
    html = login(reviewer).get("/").content.decode()
    row = html[html.find(f'data-trace="{back_after_withdrawal}"'):]
    cell = row[row.find('class="documents"'):][:300]
    assert ">Pricing and plans<" in cell, cell
    body = token_client(reviewer, scopes=["review"]).get("/api/v1/queue").json()
    assert body["results"][0]["documents"][0] == {"document_id": "pricing",
                                                  "title": "Pricing and plans"}


def test_the_document_filter_finds_a_withdrawn_document_by_its_last_title(
    back_after_withdrawal: str, reviewer: Any, login: Any, token_client: Any
) -> None:
    client = login(reviewer)
    for typed in ("pricing", "Pricing and plans", "PRICING AND PLANS"):
        page = client.get("/", {"document": typed}).context["page"]
        assert traces(page) == [back_after_withdrawal], typed
    api = token_client(reviewer, scopes=["review"]).get(
        "/api/v1/queue", {"document": "pricing and plans"})
    assert [row["trace_id"] for row in api.json()["results"]] == [back_after_withdrawal]


def test_a_document_filter_near_a_withdrawn_documents_title_offers_it(
    back_after_withdrawal: str, reviewer: Any, login: Any
) -> None:
    html = login(reviewer).get("/", {"document": "pricing and"}).content.decode()
    assert "No document has the id or title “pricing and”." in html
    assert '<a href="/?document=pricing">Pricing and plans</a>' in html


def test_a_rows_document_and_release_links_keep_the_other_filters(
    hold: Any, reviewer: Any, login: Any
) -> None:
    hold("both")  # index release 2026.10
    html = login(reviewer).get("/", {"reason": "conflicting_sources", "claim": "all",
                                     "release": "2026.10"}).content.decode()
    assert ('href="?reason=conflicting_sources&amp;release=2026.10&amp;document=pricing-eu"'
            in html)
    assert 'href="?reason=conflicting_sources&amp;release=2026.10"' in html  # the release


def test_a_filter_value_the_queue_does_not_know_is_said_to_be_left_out(
    reviewer: Any, login: Any
) -> None:
    response = login(reviewer).get("/", {"reason": "bogus<b>", "claim": "theirs"})
    html = response.content.decode()
    assert ("Not a value this filter knows, so it was left out: reason=bogus&lt;b&gt;, "
            "claim=theirs.") in html


def test_filtering_by_index_release(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(1, prefix="old", release="2026.09")
    bulk_held(1, prefix="new", release="2026.10")
    assert traces(page_for(reviewer, filters=QueueFilters(release="2026.09"))) == ["old-0"]


def test_filtering_unclaimed_and_mine(pricing_documents: Any, reviewer: Any,
                                      bob: Any) -> None:
    items = bulk_held(4, prefix="q")
    later = timezone.now() + dt.timedelta(minutes=10)
    earlier = timezone.now() - dt.timedelta(minutes=10)
    ReviewItem.objects.filter(pk=items[0].pk).update(leased_by=reviewer, lease_until=later)
    ReviewItem.objects.filter(pk=items[1].pk).update(leased_by=bob, lease_until=later)
    ReviewItem.objects.filter(pk=items[2].pk).update(leased_by=bob, lease_until=earlier)
    assert traces(page_for(reviewer, filters=QueueFilters(claim="mine"))) == ["q-0"]
    assert traces(page_for(reviewer, filters=QueueFilters(claim="unclaimed"))) == ["q-2", "q-3"]
    assert len(page_for(reviewer, filters=QueueFilters(claim="all")).rows) == 4


def test_filters_come_from_the_query_string(pricing_documents: Any, reviewer: Any,
                                            login: Any) -> None:
    bulk_held(1, prefix="old", release="2026.09")
    bulk_held(1, prefix="new", release="2026.10")
    html = login(reviewer).get("/?release=2026.09").content.decode()
    assert "old-0" in html and "new-0" not in html


# --- Order and pages --------------------------------------------------------------------------

def test_the_oldest_comes_first(pricing_documents: Any, reviewer: Any) -> None:
    items = bulk_held(3, prefix="o")
    ReviewItem.objects.filter(pk=items[2].pk).update(
        entered_at=items[0].entered_at - dt.timedelta(hours=1))
    assert traces(page_for(reviewer)) == ["o-2", "o-0", "o-1"]


def test_cursor_pages_walk_the_whole_queue_once(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(7, prefix="p")
    seen: list[str] = []
    page = page_for(reviewer, limit=3)
    seen += traces(page)
    while page.next_cursor:
        page = page_for(reviewer, limit=3, cursor=Cursor.decode(page.next_cursor))
        seen += traces(page)
    assert seen == [f"p-{i}" for i in range(7)]


@pytest.mark.parametrize("order", ["oldest", "newest"])
def test_pages_walk_the_queue_once_each_way_in_either_order(
    pricing_documents: Any, reviewer: Any, order: str
) -> None:
    items = bulk_held(7, prefix="w")
    # Two held at the same moment: the id breaks the tie, the same way in both directions.
    ReviewItem.objects.filter(pk=items[4].pk).update(entered_at=items[3].entered_at)
    filters = QueueFilters(order=order)
    expected = [f"w-{i}" for i in range(7)]
    if order == "newest":
        expected.reverse()
    pages = [page_for(reviewer, limit=3, filters=filters)]
    while pages[-1].next_cursor:
        pages.append(page_for(reviewer, limit=3, filters=filters,
                              cursor=Cursor.decode(pages[-1].next_cursor)))
    assert [t for page in pages for t in traces(page)] == expected
    # And back again from the last page, one page at a time.
    back = [pages[-1]]
    while back[-1].previous_cursor:
        back.append(page_for(reviewer, limit=3, filters=filters,
                             cursor=Cursor.decode(back[-1].previous_cursor)))
    assert [traces(page) for page in back] == [traces(page) for page in reversed(pages)]


def test_newest_first_is_a_choice_the_page_keeps(
    pricing_documents: Any, reviewer: Any, login: Any
) -> None:
    bulk_held(5, prefix="nf")
    client = login(reviewer)
    response = client.get("/?order=newest&limit=2")
    page = response.content.decode()
    assert "Held answers whose sources you may read, newest first." in page
    assert '<option value="newest" selected>Newest first</option>' in page
    assert [row.answer.trace_id for row in response.context["page"].rows] == ["nf-4", "nf-3"]
    assert "order=newest" in response.context["next_url"]
    # "Next" hands out the newest unclaimed answer under that order.
    response = client.post("/next", {"order": "newest"})
    assert response["Location"] == "/answers/nf-4/"
    assert "so it was left out: order=sideways." in client.get("/?order=sideways").content.decode()


def test_rows_entered_at_the_same_moment_are_not_skipped(pricing_documents: Any,
                                                         reviewer: Any) -> None:
    items = bulk_held(5, prefix="tie")
    ReviewItem.objects.filter(pk__in=[i.pk for i in items]).update(
        entered_at=items[0].entered_at)
    first = page_for(reviewer, limit=2)
    second = page_for(reviewer, limit=2, cursor=Cursor.decode(first.next_cursor))
    third = page_for(reviewer, limit=2, cursor=Cursor.decode(second.next_cursor))
    assert traces(first) + traces(second) + traces(third) == [f"tie-{i}" for i in range(5)]
    assert third.next_cursor is None


def test_previous_goes_back_one_page(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(5, prefix="b")
    first = page_for(reviewer, limit=2)
    assert first.previous_cursor is None
    second = page_for(reviewer, limit=2, cursor=Cursor.decode(first.next_cursor))
    back = page_for(reviewer, limit=2, cursor=Cursor.decode(second.previous_cursor))
    assert traces(back) == traces(first)
    assert back.previous_cursor is None


def test_back_on_the_first_page_the_pager_offers_no_first_page(
    pricing_documents: Any, reviewer: Any, login: Any
) -> None:
    bulk_held(5, prefix="p")
    client = login(reviewer)
    second = client.get("/?limit=2").context["next_url"]
    page = client.get(second)
    assert page.context["first_url"] == "/?limit=2"  # page 2: "First page" is offered
    back = client.get(page.context["previous_url"])
    assert "First page" not in back.content.decode() and back.context["previous_url"] is None
    assert "p-0" in back.content.decode()


def test_the_page_links_carry_the_filters(pricing_documents: Any, reviewer: Any,
                                          login: Any) -> None:
    bulk_held(3, prefix="f", release="2026.09")
    response = login(reviewer).get("/?release=2026.09&limit=2")
    assert "release=2026.09" in response.context["next_url"]
    assert "cursor=" in response.context["next_url"]


def test_a_tampered_cursor_is_refused() -> None:
    with pytest.raises(BadCursor):
        Cursor.decode("not-a-cursor")
    with pytest.raises(BadCursor):
        Cursor.decode(Cursor(timezone.now(), 1).encode()[:-4])


@given(st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1),
                    timezones=st.just(dt.UTC)),
       st.integers(min_value=1, max_value=2**62), st.booleans())
def test_a_cursor_survives_encoding(when: dt.datetime, item_id: int, backwards: bool) -> None:
    cursor = Cursor(when, item_id, backwards)
    assert Cursor.decode(cursor.encode()) == cursor


# --- Counts -----------------------------------------------------------------------------------

def test_counts_per_reason(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(2, prefix="c", reason="conflicting_sources")
    bulk_held(3, prefix="s", reason="superseded_revision")
    counts = {c.reason: (c.count, c.capped) for c in page_for(reviewer).counts}
    assert counts["conflicting_sources"] == (2, False)
    assert counts["superseded_revision"] == (3, False)
    assert counts["invalid_metadata"] == (0, False)


def test_counts_stop_at_the_cap(pricing_documents: Any, reviewer: Any,
                                monkeypatch: Any) -> None:
    monkeypatch.setattr(queue_selectors, "COUNT_CAP", 3)
    bulk_held(5, prefix="c")
    page = page_for(reviewer)
    count = next(c for c in page.counts if c.reason == "conflicting_sources")
    assert (count.count, count.capped, count.shown) == (3, True, "3+")


def test_counts_follow_the_other_filters(pricing_documents: Any, reviewer: Any) -> None:
    bulk_held(2, prefix="a", release="2026.09")
    bulk_held(3, prefix="b", release="2026.10")
    page = page_for(reviewer, filters=QueueFilters(release="2026.09"))
    assert page.total.count == 2


# --- "Next" -----------------------------------------------------------------------------------

def test_next_claims_the_oldest_unclaimed_item_and_opens_it(
    pricing_documents: Any, reviewer: Any, bob: Any, login: Any
) -> None:
    items = bulk_held(3, prefix="n")
    ReviewItem.objects.filter(pk=items[0].pk).update(
        leased_by=bob, lease_until=timezone.now() + dt.timedelta(minutes=5))
    response = login(reviewer).post("/next")
    assert response.status_code == 302 and response["Location"] == "/answers/n-1/"
    assert ReviewItem.objects.get(pk=items[1].pk).leased_by == reviewer


def test_next_skips_answers_waiting_for_their_owner(
    pricing_documents: Any, reviewer: Any, login: Any
) -> None:
    """The reviewer sent the oldest to the owner: until the owner acts, it is not handed out."""
    items = bulk_held(2, prefix="w")
    question = OwnerQuestion.objects.create(answer_id=items[0].answer_id, asked_by=reviewer,
                                            asked_at=items[0].entered_at, note="Which applies?")
    ReviewItem.objects.filter(pk=items[0].pk).update(waiting_for_owner=True,
                                                     owner_question=question)
    response = login(reviewer).post("/next")
    assert response["Location"] == "/answers/w-1/"
    response = login(reviewer).post("/next", follow=True)  # w-1 is now hers
    assert "Nothing unclaimed is waiting for you." in response.content.decode()


def test_next_goes_on_past_answers_colleagues_took_meanwhile(
    pricing_documents: Any, reviewer: Any, bob: Any, login: Any, monkeypatch: Any
) -> None:
    """Between reading the five oldest and claiming one, colleagues took all five: the sixth
    is still free, and "Next" opens it rather than saying nothing is waiting."""
    from reviewqueue.reviews.services import leases

    items = bulk_held(6, prefix="r")
    claim_next = leases.lease_claim_next

    def colleagues_first(*, candidates: Any, **kwargs: Any) -> Any:
        if not ReviewItem.objects.filter(leased_by=bob).exists():
            ReviewItem.objects.filter(answer__in=candidates).update(
                leased_by=bob, lease_until=timezone.now() + dt.timedelta(minutes=5))
        return claim_next(candidates=candidates, **kwargs)

    monkeypatch.setattr(leases, "lease_claim_next", colleagues_first)
    response = login(reviewer).post("/next")
    assert response.status_code == 302 and response["Location"] == "/answers/r-5/"
    assert ReviewItem.objects.get(pk=items[5].pk).leased_by == reviewer


def test_next_with_nothing_unclaimed_says_so(pricing_documents: Any, reviewer: Any,
                                             login: Any) -> None:
    response = login(reviewer).post("/next", follow=True)
    assert "Nothing unclaimed is waiting for you." in response.content.decode()
    # Under filters, nothing may still wait beyond them: the message says which it is.
    response = login(reviewer).post("/next", {"reason": "conflicting_sources"}, follow=True)
    page = response.content.decode()
    assert "Nothing unclaimed matches these filters." in page
    assert "Nothing unclaimed is waiting for you." not in page


# --- Cost -------------------------------------------------------------------------------------

def test_the_queue_page_runs_as_many_queries_for_100_rows_as_for_10(
    pricing_documents: Any, reviewer: Any, login: Any
) -> None:
    client = login(reviewer)
    bulk_held(10, prefix="ten", documents=("pricing", "pricing-eu"))
    client.get("/?limit=100")  # warm the session
    with CaptureQueriesContext(connection) as ten:
        assert len(client.get("/?limit=100").context["page"].rows) == 10
    bulk_held(90, prefix="ninety", documents=("pricing", "pricing-eu"))
    with CaptureQueriesContext(connection) as hundred:
        assert len(client.get("/?limit=100").context["page"].rows) == 100
    assert len(ten.captured_queries) == len(hundred.captured_queries)


def test_the_queue_api_runs_as_many_queries_for_100_rows_as_for_10(
    pricing_documents: Any, reviewer: Any, token_client: Any
) -> None:
    api = token_client(reviewer)
    bulk_held(10, prefix="ten")
    api.get("/api/v1/queue?limit=100")
    with CaptureQueriesContext(connection) as ten:
        api.get("/api/v1/queue?limit=100")
    bulk_held(90, prefix="ninety")
    with CaptureQueriesContext(connection) as hundred:
        assert len(api.get("/api/v1/queue?limit=100").json()["results"]) == 100
    assert len(ten.captured_queries) == len(hundred.captured_queries)


def _plan(qs: Any) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
    return qs.explain()


def test_the_queue_query_reads_the_age_index(pricing_documents: Any, reviewer: Any) -> None:
    items = bulk_held(50, prefix="x")
    filters = QueueFilters()
    principals = user_principals(reviewer)
    first = page_queryset(principals=principals, filters=filters, user=reviewer)[:51]
    deep = page_queryset(principals=principals, filters=filters, user=reviewer,
                         cursor=Cursor(items[40].entered_at, items[40].pk))[:51]
    assert "review_item_age" in _plan(first)
    assert "review_item_age" in _plan(deep)


def test_the_reason_filter_reads_the_reason_index(pricing_documents: Any,
                                                  reviewer: Any) -> None:
    bulk_held(20, prefix="x")
    qs = page_queryset(principals=user_principals(reviewer),
                       filters=QueueFilters(reason="conflicting_sources"), user=reviewer)[:51]
    assert "review_item_reason_age" in _plan(qs)


def test_the_release_filter_reads_the_release_index(pricing_documents: Any,
                                                    reviewer: Any) -> None:
    bulk_held(20, prefix="x")
    qs = page_queryset(principals=user_principals(reviewer),
                       filters=QueueFilters(release="2026.10"), user=reviewer)[:51]
    assert "review_item_release_age" in _plan(qs)


# --- The API ----------------------------------------------------------------------------------

def test_the_queue_api_lists_rows_with_a_next_link(pricing_documents: Any, reviewer: Any,
                                                   token_client: Any) -> None:
    bulk_held(3, prefix="api", documents=("pricing", "pricing-eu"))
    api = token_client(reviewer)
    body = api.get("/api/v1/queue?limit=2").json()
    assert [r["trace_id"] for r in body["results"]] == ["api-0", "api-1"]
    row = body["results"][0]
    assert row["primary_reason"] == "conflicting_sources"
    assert [d["document_id"] for d in row["documents"]] == ["pricing", "pricing-eu"]
    assert row["lease"] is None
    assert body["counts"]["conflicting_sources"] == {"count": 3, "capped": False}
    rest = api.get(body["next"]).json()
    assert [r["trace_id"] for r in rest["results"]] == ["api-2"]
    assert rest["next"] is None and rest["previous"]


def test_the_queue_api_filters(pricing_documents: Any, reviewer: Any,
                               token_client: Any) -> None:
    bulk_held(1, prefix="a", documents=("pricing",))
    bulk_held(1, prefix="b", documents=("pricing-eu",))
    body = token_client(reviewer).get("/api/v1/queue?document=pricing-eu").json()
    assert [r["trace_id"] for r in body["results"]] == ["b-0"]


@pytest.mark.parametrize("query", ["reason=bogus", "claim=theirs", "cursor=%%%", "limit=0"])
def test_the_queue_api_refuses_bad_parameters(reviewer: Any, token_client: Any,
                                              query: str) -> None:
    response = token_client(reviewer).get(f"/api/v1/queue?{query}")
    assert response.status_code == 400
    assert response.json()["errors"]


def test_the_queue_api_is_for_reviewers(service_api: Any) -> None:
    assert service_api.get("/api/v1/queue").status_code == 403


# --- Language ---------------------------------------------------------------------------------

def test_the_queue_speaks_japanese_to_a_japanese_browser(reviewer: Any, login: Any) -> None:
    html = login(reviewer, HTTP_ACCEPT_LANGUAGE="ja").get("/").content.decode()
    assert 'lang="ja"' in html
    assert "レビュー待ち" in html


def test_the_chosen_language_wins_over_the_browser(reviewer: Any, login: Any) -> None:
    client = login(reviewer, HTTP_ACCEPT_LANGUAGE="en")
    client.post("/language", {"language": "ja", "next": "/"})
    assert "レビュー待ち" in client.get("/").content.decode()
