"""The audit pages: search, keyset paging, verification status, alerts, timeline."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from reviewqueue.audit.models import AuditAlert, AuditEvent, VerificationRun
from reviewqueue.audit.services import SYSTEM, Actor, Entry, audit_record, audit_record_many
from tests.audit.conftest import ANSWER_TEXT, PASSAGE_TEXT, verify

pytestmark = pytest.mark.django_db


def story_timeline(client: Any) -> str:
    """The timeline page of `answer_story`'s answer."""
    return client.get("/audit/answers/t-story/").content.decode()


def _seqs(response: Any) -> list[int]:
    return [int(s) for s in re.findall(r">#(\d+)</a></td>", response.content.decode())]


def _record(actor: Actor, action: str, **kwargs: Any) -> AuditEvent:
    defaults: dict[str, Any] = {"object_type": "answer", "object_id": "t-x"}
    with transaction.atomic():
        return audit_record(actor=actor, action=action, **{**defaults, **kwargs})


# --- who may look -------------------------------------------------------------------------------


def test_an_anonymous_visitor_is_sent_to_sign_in(client: Any) -> None:
    response = client.get("/audit/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("url", ["/audit/", "/audit/export.csv", "/audit/answers/t-1/"])
def test_a_reviewer_may_not_read_the_audit_log(reviewer_client: Any, url: str) -> None:
    assert reviewer_client.get(url).status_code == 403


def test_a_reviewer_may_not_start_a_verification(reviewer_client: Any) -> None:
    assert reviewer_client.post("/audit/verify").status_code == 403
    assert not VerificationRun.objects.exists()


# --- search -------------------------------------------------------------------------------------


def test_the_newest_events_come_first(admin_client: Any, chain: Callable[..., Any]) -> None:
    chain(3)
    response = admin_client.get("/audit/")
    assert response.status_code == 200
    assert _seqs(response) == [4, 3, 2, 1]


def test_search_by_trace_id(admin_client: Any, chain: Callable[..., Any]) -> None:
    chain(4)
    assert _seqs(admin_client.get("/audit/?trace_id=t-1")) == [3]


def test_search_by_actor_finds_the_person_and_their_tokens(admin_client: Any, db: Any) -> None:
    _record(Actor("user", "user:alice"), "lease.claimed")
    _record(Actor("service", "user:alice token:rq_AbCdEfG"), "answer.ingested")
    _record(Actor("user", "user:alicia"), "lease.claimed")
    _record(Actor("worker", "worker"), "verdict.created")
    assert _seqs(admin_client.get("/audit/?actor=alice")) == [3, 2]
    assert _seqs(admin_client.get("/audit/?actor=worker")) == [5]


def test_a_service_is_found_as_the_page_shows_it(admin_client: Any, db: Any) -> None:
    _record(Actor("service", "user:rag-service token:rq_AbCdEfG"), "answer.ingested")
    _record(Actor("service", "user:rag-service-2"), "answer.ingested")
    assert _seqs(admin_client.get("/audit/?actor=service:rag-service")) == [2]
    assert _seqs(admin_client.get("/audit/?actor=rag-service")) == [2]


def test_each_row_names_its_actor_once_and_links_to_their_events(admin_client: Any,
                                                                 db: Any) -> None:
    _record(Actor("user", "user:alice"), "lease.claimed")
    _record(Actor("service", "user:alice token:rq_AbCdEfG"), "answer.ingested")
    _record(Actor("worker", "worker"), "verdict.created")
    page = admin_client.get("/audit/").content.decode()
    cells = re.findall(r"<td><span class=\"pill pill-\w+\">(.*?)</td>", page)
    assert cells == [
        "worker</span>",
        'service</span> <a href="/audit/?actor=user:alice%20token:rq_AbCdEfG" '
        'title="Show this actor&#x27;s events: user:alice token:rq_AbCdEfG">'
        "alice · token rq_AbCdEfG</a>",
        'user</span> <a href="/audit/?actor=user:alice" '
        'title="Show this actor&#x27;s events: user:alice">alice</a>',
        "system</span>",  # the chain's first event
    ]
    assert _seqs(admin_client.get("/audit/?actor=user:alice%20token:rq_AbCdEfG")) == [3]


def test_search_by_action_exact_or_by_prefix(admin_client: Any, db: Any) -> None:
    _record(Actor("worker", "worker"), "revision.published", object_type="document",
            object_id="pricing")
    _record(Actor("worker", "worker"), "revision.withdrawn", object_type="document",
            object_id="pricing")
    _record(Actor("worker", "worker"), "verdict.created")
    assert _seqs(admin_client.get("/audit/?action=revision.published")) == [2]
    assert _seqs(admin_client.get("/audit/?action=revision.*")) == [3, 2]


def test_search_by_document(admin_client: Any, db: Any) -> None:
    _record(Actor("worker", "worker"), "revision.published", object_type="document",
            object_id="pricing", document_id="pricing")
    _record(Actor("worker", "worker"), "conflict.resolved", object_type="conflict",
            object_id="7", document_id="pricing")
    _record(Actor("worker", "worker"), "revision.published", object_type="document",
            object_id="handbook", document_id="handbook")
    assert _seqs(admin_client.get("/audit/?document=pricing")) == [3, 2]


def test_search_by_document_finds_its_conflicts_whoever_caused_them(
    admin_client: Any, publish: Callable[..., Any], make_user: Callable[..., Any], owner: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.sources.conflicts import conflict_dismiss
    from reviewqueue.sources.models import Conflict

    make_user("oscar", "owner")
    trial = [{"key": "trial_days", "value": 14, "valid_from": "2026-01-01", "span": "p1"}]
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", facts=trial)
        publish("handbook", facts=[{**trial[0], "key": "vacation_days"}])
        publish("trial-promo", owner="oscar", facts=[{**trial[0], "value": 30}])
        conflict = Conflict.objects.get()
        conflict_dismiss(conflict_id=conflict.pk, reason="both valid", user=owner,
                         actor=Actor.of_user(owner))
    opened = AuditEvent.objects.get(action="conflict.opened")
    dismissed = AuditEvent.objects.get(action="conflict.dismissed")
    # Opened by the promo's publication, which the event names; the dismissal names none.
    assert (opened.document_id, dismissed.document_id) == ("trial-promo", "")
    for document in ("pricing", "trial-promo"):
        page = admin_client.get(f"/audit/?document={document}")
        assert {opened.seq, dismissed.seq} <= set(_seqs(page)), document
        exported = admin_client.get(f"/audit/export.jsonl?document={document}")
        actions = b"".join(exported.streaming_content).decode()
        assert '"conflict.opened"' in actions and '"conflict.dismissed"' in actions
    handbook = set(_seqs(admin_client.get("/audit/?document=handbook")))
    assert not {opened.seq, dismissed.seq} & handbook
    # With another field, the document is still read through its parts.
    assert _seqs(admin_client.get("/audit/?document=pricing&action=conflict.*")) == [
        dismissed.seq, opened.seq]
    # The dismissal's row links to the conflict and names both documents.
    page = admin_client.get("/audit/?action=conflict.dismissed").content.decode()
    row = page.split(f">#{dismissed.seq}</a>", 1)[1].split("</tr>", 1)[0]
    assert f'conflict:<a href="/owner/conflicts/{conflict.pk}/">{conflict.pk}</a>' in row
    assert re.findall(r'doc <a href="/audit/\?document=([^"]+)">', row) == [
        "pricing", "trial-promo"]
    # The opening names the publication that caused it, then the other document.
    page = admin_client.get("/audit/?action=conflict.opened").content.decode()
    row = page.split(f">#{opened.seq}</a>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'doc <a href="/audit/\?document=([^"]+)">', row) == [
        "trial-promo", "pricing"]
    # A reopening by hand names both documents too.
    from reviewqueue.sources.conflicts import conflict_reopen

    with django_capture_on_commit_callbacks(execute=True):
        conflict_reopen(conflict_id=conflict.pk, actor=Actor.of_user(owner))
    reopened = AuditEvent.objects.get(action="conflict.reopened")
    page = admin_client.get("/audit/?action=conflict.reopened").content.decode()
    row = page.split(f">#{reopened.seq}</a>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'doc <a href="/audit/\?document=([^"]+)">', row) == [
        "pricing", "trial-promo"]


def test_a_document_that_left_a_conflict_still_finds_its_events(
    admin_client: Any, publish: Callable[..., Any], owner: Any,
) -> None:
    trial = {"key": "trial_days", "value": 14, "valid_from": "2026-01-01", "span": "p1"}
    publish("pricing", facts=[trial])
    publish("trial-promo", facts=[{**trial, "value": 30}])
    publish("eu-promo", facts=[{**trial, "value": 45}])  # joins the conflict
    publish("eu-promo", "r2", facts=[{**trial, "value": 14}])  # and leaves it
    opened = AuditEvent.objects.get(action="conflict.opened")
    assert opened.document_id == "trial-promo"
    assert opened.seq in _seqs(admin_client.get("/audit/?document=eu-promo"))


def test_search_by_date_range(admin_client: Any, bulk: Callable[..., None]) -> None:
    # Event 1 is the admin's account, created today; events 2 to 6 are dated 2026-10-01.
    bulk(5, start=dt.datetime(2026, 10, 1, 12, tzinfo=dt.UTC))
    today = AuditEvent.objects.get(seq=1).created_at.date()
    assert _seqs(admin_client.get("/audit/?since=2026-10-01&until=2026-10-01")) == [6, 5, 4, 3, 2]
    assert _seqs(admin_client.get(f"/audit/?since={today.isoformat()}")) == [1]
    assert _seqs(admin_client.get("/audit/?until=2026-09-30")) == []


@pytest.mark.parametrize("query, message", [
    ("limit=5", "limit: not a search parameter"),
    ("actor=a&actor=b", "actor: given more than once"),
    ("since=yesterday", "Enter a valid date, such as 2026-12-31: “yesterday” is not one."),
    ("since=2026-1-1", "Enter a valid date, such as 2026-12-31: “2026-1-1” is not one."),
    ("since=2026-10-05&until=2026-10-01", "Must not be before the first day"),
    ("action=DROP TABLE", "Use an action name"),
    ("before=10&after=3", "either before or after"),
])
def test_a_search_outside_the_allowed_parameters_is_refused(
    admin_client: Any, query: str, message: str
) -> None:
    response = admin_client.get(f"/audit/?{query}")
    assert response.status_code == 400
    assert message in response.content.decode()


# --- keyset paging ------------------------------------------------------------------------------


def test_pages_follow_seq_without_overlap_or_gap(
    admin_client: Any, bulk: Callable[..., None]
) -> None:
    bulk(119)  # 120 events with the admin's own
    first = admin_client.get("/audit/")
    assert _seqs(first) == list(range(120, 70, -1))
    assert "before=71" in first.content.decode()
    second = admin_client.get("/audit/?before=71")
    assert _seqs(second) == list(range(70, 20, -1))
    assert "after=70" in second.content.decode()
    third = admin_client.get("/audit/?before=21")
    assert _seqs(third) == list(range(20, 0, -1))
    assert "Older" not in third.content.decode()
    back = admin_client.get("/audit/?after=70")
    assert _seqs(back) == list(range(120, 70, -1))
    assert "Newer" not in back.content.decode()


def test_paging_keeps_the_search(admin_client: Any, bulk: Callable[..., None]) -> None:
    bulk(60)  # seq 2 to 61; seq 1 is the admin's account
    first = admin_client.get("/audit/?action=verdict.created").content.decode()
    assert "?action=verdict.created&amp;before=12" in first


def test_a_page_never_counts_the_whole_log(
    admin_client: Any, bulk: Callable[..., None]
) -> None:
    bulk(60)
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get("/audit/?before=40&action=verdict.created").status_code == 200
    counts = [q["sql"] for q in queries if "COUNT(" in q["sql"].upper()
              and "audit_auditevent" in q["sql"]]
    assert counts == []


# --- verification status and alerts -------------------------------------------------------------


def test_the_page_says_when_the_chain_was_never_verified(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(2)
    assert "has not been verified yet" in admin_client.get("/audit/").content.decode()


def test_the_page_shows_the_last_verification_and_its_date(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(2)
    run = verify()
    page = admin_client.get("/audit/").content.decode()
    assert "Intact." in page
    assert "All 3 events check out" in page
    assert f"Last verified {run.finished_at:%Y-%m-%d %H:%M}" in page


def test_an_admin_can_verify_from_the_page(admin_client: Any, chain: Callable[..., Any]) -> None:
    chain(2)
    response = admin_client.post("/audit/verify", follow=True)
    assert response.status_code == 200
    run = VerificationRun.objects.get()
    assert (run.ok, run.trigger, run.requested_by) == (True, "manual", "user:ada")
    page = response.content.decode()
    assert "All 3 events check out" in page
    assert page.count("Verification requested") == 1  # the message is shown once


def test_verifying_returns_to_the_filtered_list_or_the_timeline_it_was_asked_from(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    chain(2)
    filtered = "/audit/?actor=olivia&action=revision.*"
    page = admin_client.get(filtered).content.decode()
    assert '<input type="hidden" name="back" value="/audit/?actor=olivia&amp;action=revision.*">' \
        in page
    for back in (filtered, "/audit/answers/t-1/"):
        assert admin_client.post("/audit/verify", {"back": back})["Location"] == back
    # Never anywhere else: another site, or a page outside the audit area.
    for elsewhere in ("https://evil.example/audit/", "//evil.example/audit/", "/jobs/", ""):
        assert admin_client.post("/audit/verify", {"back": elsewhere})["Location"] == "/audit/"


def test_a_verification_is_not_asked_for_again_while_one_is_running(
    admin_client: Any, chain: Callable[..., Any]
) -> None:
    from django.core.cache import cache

    from reviewqueue.audit.tasks import MANUAL_PENDING_KEY

    chain(2)
    cache.set(MANUAL_PENDING_KEY, "user:ada")  # one asked for, still waiting for a worker
    try:
        page = admin_client.post("/audit/verify", follow=True).content.decode()
        assert "A verification is already running. Its result appears below when it is done." \
            in page
        assert not VerificationRun.objects.exists()
    finally:
        cache.delete(MANUAL_PENDING_KEY)
    # Once it has ended, another may be asked for; the run itself clears the mark.
    admin_client.post("/audit/verify")
    admin_client.post("/audit/verify")
    assert VerificationRun.objects.count() == 2
    assert cache.get(MANUAL_PENDING_KEY) is None


def test_a_broken_chain_shows_on_the_page_with_an_alert(
    admin_client: Any, chain: Callable[..., Any], tamper: Any
) -> None:
    chain(3)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    admin_client.post("/audit/verify")
    page = admin_client.get("/audit/").content.decode()
    assert "Broken." in page
    assert "Event #2 is the first bad event" in page
    assert 'role="alert"' in page
    assert AuditAlert.objects.get().first_bad_seq == 2


def test_acknowledging_an_alert_closes_it_and_is_audited(
    admin_client: Any, chain: Callable[..., Any], tamper: Any
) -> None:
    chain(3)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    verify()
    alert = AuditAlert.objects.get()
    response = admin_client.post(f"/audit/alerts/{alert.pk}/acknowledge")
    assert response.status_code == 302
    alert.refresh_from_db()
    assert alert.acknowledged_at is not None
    event = AuditEvent.objects.order_by("-seq").first()
    assert (event.action, event.actor, event.object_id) == (
        "audit.alert_acknowledged", "user:ada", str(alert.pk))


def test_acknowledging_twice_changes_nothing(
    admin_client: Any, chain: Callable[..., Any], tamper: Any
) -> None:
    chain(3)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    verify()
    alert = AuditAlert.objects.get()
    admin_client.post(f"/audit/alerts/{alert.pk}/acknowledge")
    events = AuditEvent.objects.count()
    admin_client.post(f"/audit/alerts/{alert.pk}/acknowledge")
    assert AuditEvent.objects.count() == events


# --- timeline -----------------------------------------------------------------------------------


def test_the_timeline_shows_every_verdict_with_its_revisions_and_the_decision(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    answer = answer_story("t-story")
    verdicts = list(answer.verdicts.order_by("id"))
    decision = answer.decisions.get()
    response = admin_client.get("/audit/answers/t-story/")
    assert response.status_code == 200
    page = response.content.decode()
    for verdict in verdicts:
        assert f"Verdict #{verdict.pk}" in page
    assert len(verdicts) == 2
    assert f"Decision #{decision.pk}" in page
    assert f"on verdict #{decision.verdict_id}" in page
    # The second verdict read pricing-eu at r2 while the answer came from r1.
    assert re.search(r"pricing-eu</a></td>\s*<td[^>]*>r1</td><td[^>]*>r2</td>"
                     r"<td[^>]*>Superseded</td>", page)
    assert "answer.ingested" in page
    assert "revision.published" in page  # the publication that caused the re-evaluation
    # The conflict that publication changed, though its event names only the other document.
    assert "conflict.changed" in page and "on a conflict of a cited document" in page
    # The summary counts the events the page lists, those of the cited documents included.
    listed = page.count('<li class="tl tl-event')
    assert listed >= 4 and f"{listed} audit events" in page
    # Ingest first, approval last.
    assert page.index(f"Verdict #{verdicts[0].pk}") < page.index(f"Verdict #{verdicts[1].pk}")
    assert page.index(f"Verdict #{verdicts[1].pk}") < page.index(f"Decision #{decision.pk}")


def test_the_timeline_never_shows_answer_or_passage_text(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    answer_story("t-story")
    page = story_timeline(admin_client)
    assert "Secret" not in page
    assert PASSAGE_TEXT not in page
    assert ANSWER_TEXT not in page


def test_the_timeline_marks_an_event_that_no_longer_matches_its_hash(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any
) -> None:
    answer_story("t-story")
    ingested = AuditEvent.objects.get(action="answer.ingested", trace_id="t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = %s",
                       [ingested.seq])
    page = story_timeline(admin_client)
    assert "does not match its hash" in page
    assert "does not link to the event before it" not in page


def test_the_timeline_says_when_an_event_lost_the_event_before_it(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any
) -> None:
    answer_story("t-story")
    ingested = AuditEvent.objects.get(action="answer.ingested", trace_id="t-story")
    assert ingested.seq > 1
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = %s", [ingested.seq - 1])
    page = story_timeline(admin_client)
    # Its own content still matches its hash: what broke is the link.
    assert "does not link to the event before it" in page
    assert "does not match its hash" not in page


def test_the_timeline_sets_each_decision_and_verdict_beside_the_event_that_recorded_it(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any, make_user: Any
) -> None:
    import hashlib

    make_user("bob", "reviewer")
    comment = "Checked with <b>sales</b>: 14 days applies"
    answer = answer_story("t-story", comment=comment)
    decision = answer.decisions.get()
    event = AuditEvent.objects.get(action="decision.approve", trace_id="t-story")
    assert event.after["comment_sha256"] == hashlib.sha256(comment.encode()).hexdigest()
    assert comment not in str(event.after)  # the log keeps no free text
    page = story_timeline(admin_client)
    assert "Checked with &lt;b&gt;sales&lt;/b&gt;: 14 days applies" in page
    checked = re.findall(r'data-against-log="(\w+)"', page)
    assert checked and set(checked) == {"same"}  # every verdict, and the decision
    assert len(checked) == answer.verdicts.count() + 1
    # Someone with the database rewrites the decision and its verdict; neither has a hash.
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_decision SET comment = 'Fine', read_passages = true, "
                       "reviewer_id = (SELECT id FROM auth_user WHERE username = 'bob') "
                       "WHERE id = %s", [decision.pk])
        cursor.execute("UPDATE reviews_verdict SET decision = 'candidate', reason = "
                       "'supported' WHERE id = %s", [decision.verdict_id])
    page = story_timeline(admin_client)
    changed = re.findall(r'<p class="error" data-against-log="changed">([^<]*)</p>', page)
    assert sorted(changed) == [
        "Changed after its audit event recorded it: decision, reason.",
        "Changed after its audit event recorded it: reviewer, comment, passages expanded.",
    ]


def test_a_comment_is_not_shown_to_an_admin_who_may_not_read_the_answer(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any
) -> None:
    answer_story("t-story", comment="Quoting the restricted passage")
    with tamper() as cursor:  # the cited document became restricted after the decision
        cursor.execute("UPDATE sources_document SET allowed_principals = '{group:hr}' "
                       "WHERE key = 'pricing'")
    page = story_timeline(admin_client)
    assert "Quoting the restricted passage" not in page
    assert "A comment, not shown: the answer cites a document you may not read." in page


def test_the_timeline_of_an_unknown_answer_is_404(admin_client: Any) -> None:
    assert admin_client.get("/audit/answers/nope/").status_code == 404


def test_a_timeline_cut_short_by_the_events_of_its_documents_says_so(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    from reviewqueue.audit import selectors

    answer_story("t-story")
    page = story_timeline(admin_client)
    assert "This answer has a very long history" not in page
    with transaction.atomic():
        audit_record_many([Entry(actor=SYSTEM, action="document.note", object_type="document",
                                 object_id="pricing", document_id="pricing", after={"n": n})
                           for n in range(selectors.TIMELINE_LIMIT)])
    page = story_timeline(admin_client)
    assert "This answer has a very long history" in page


def test_the_page_lists_every_problem_of_a_broken_chain(
    admin_client: Any, chain: Callable[..., Any], tamper: Any
) -> None:
    chain(5)  # seq 2 to 6; seq 1 is the admin's account
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 3")
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = 5")
    verify()
    page = admin_client.get("/audit/").content.decode()
    assert "Broken." in page
    assert "Event #3 is the first bad event" in page
    assert "2 problems in all. Checked 5 events, up to event #6." in page
    assert "2 problems found" in page
    problems = page[page.index('data-testid="verification-problems"'):page.index("</details>")]
    # Each problem by its label, its code kept as the title.
    assert re.findall(r'>#(\d+)</a> <strong title="(\w+)">([^<]+)</strong>:', problems) == [
        ("3", "changed", "Content changed"), ("6", "missing", "Events missing")]
    assert "event #5 is missing before it" in problems


def test_the_page_says_when_only_the_first_problems_are_listed(
    admin_client: Any, bulk: Callable[..., None], tamper: Any
) -> None:
    bulk(119)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory'")
    verify()
    page = admin_client.get("/audit/").content.decode()
    assert "The first 100 of 120 problems found" in page
    assert "120 problems in all" in page
    assert page.count('<strong title="changed">Content changed</strong>') == 100


@pytest.mark.parametrize("query, message", [
    ("before=abc", "before: Enter a whole number."),
    ("after=-1", "after: Ensure this value is greater than or equal to 0."),
    ("before=0", "before: Ensure this value is greater than or equal to 1."),
])
def test_a_bad_paging_cursor_is_refused_by_name(
    admin_client: Any, query: str, message: str
) -> None:
    response = admin_client.get(f"/audit/?{query}")
    assert response.status_code == 400
    assert message in response.content.decode()


# --- time zones ---------------------------------------------------------------------------------


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_the_list_names_the_time_zone_of_its_times(
    admin_client: Any, bulk: Callable[..., None]
) -> None:
    # bulk() adds 3 ms: the event falls on 12:00:00 UTC, 21:00:00 in Tokyo.
    bulk(1, start=dt.datetime(2026, 10, 1, 11, 59, 59, 997000, tzinfo=dt.UTC))
    page = admin_client.get("/audit/?since=2026-10-01&until=2026-10-01").content.decode()
    assert "Time (Asia/Tokyo)" in page
    assert "2026-10-01 21:00:00" in page
    assert "export timestamps are UTC" in page


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_alert_and_verification_times_name_their_zone(
    admin_client: Any, chain: Callable[..., Any], tamper: Any
) -> None:
    from django.utils import timezone

    chain(2)
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' WHERE seq = 2")
    verify()
    alert = AuditAlert.objects.get()
    page = admin_client.get("/audit/").content.decode()
    assert f"{timezone.localtime(alert.created_at):%Y-%m-%d %H:%M} JST" in page
    assert f"Last verified {timezone.localtime(alert.run.finished_at):%Y-%m-%d %H:%M} JST" in page


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_the_timeline_names_the_time_zone_of_its_times(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    from django.utils import timezone

    answer = answer_story("t-story")
    page = story_timeline(admin_client)
    assert "Times are in Asia/Tokyo." in page
    assert f"{timezone.localtime(answer.created_at):%Y-%m-%d %H:%M:%S} JST" in page


def test_a_row_whose_audit_event_was_edited_is_not_said_to_have_changed(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any
) -> None:
    """The decision is intact; its event was rewritten. The event is marked, and the decision
    is not blamed for differing from what the rewritten event says."""
    answer = answer_story("t-story")
    event = AuditEvent.objects.get(action="decision.approve", trace_id="t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET after = jsonb_set(after, '{reviewer}', "
                       "'\"mallory\"') WHERE seq = %s", [event.seq])
    page = story_timeline(admin_client)
    assert "does not match its hash" in page
    assert 'data-against-log="changed"' not in page
    [unvouched] = re.findall(r'data-against-log="unvouched">([^<]*)<', page)
    assert unvouched == (f"Its audit event, #{event.seq}, does not match its own hash: it "
                         "cannot show whether this was changed.")
    # The verdicts' own events are intact: each still matches.
    assert page.count('data-against-log="same"') == answer.verdicts.count()


def test_a_decision_no_audit_event_recorded_is_said_to_be_unvouched(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any
) -> None:
    """A second approval written straight into the table (decisions forbid only UPDATE and
    DELETE), and the real one's event deleted: neither has an event, so nothing vouches for
    either, and the timeline says so rather than showing them as any other."""
    answer = answer_story("t-story")
    real = answer.decisions.get()
    event = AuditEvent.objects.get(action="decision.approve", trace_id="t-story")
    with tamper() as cursor:
        cursor.execute(
            "INSERT INTO reviews_decision (action, comment, reject_reason, revisions_used, "
            "read_passages, created_at, answer_id, reviewer_id, version_id, verdict_id) "
            "SELECT 'approve', 'looks fine', '', '[]', true, now(), answer_id, reviewer_id, "
            "version_id, verdict_id FROM reviews_decision WHERE id = %s", [real.pk])
    page = story_timeline(admin_client)
    missing = re.findall(r'data-against-log="missing">([^<]*)<', page)
    assert missing == ["No audit event recorded this: it was not made through ReviewQueue, or "
                       "its event was taken out of the log. Nothing vouches for it."]
    assert page.count('data-against-log="same"') == answer.verdicts.count() + 1
    with tamper() as cursor:
        cursor.execute("DELETE FROM audit_auditevent WHERE seq = %s", [event.seq])
    page = story_timeline(admin_client)
    assert len(re.findall(r'data-against-log="missing"', page)) == 2


def test_the_verdict_of_an_edit_is_set_beside_the_edit_event_that_recorded_it(
    admin_client: Any, answer_story: Callable[..., Any], tamper: Any, reviewer: Any,
    submit: Callable[..., Any],
) -> None:
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.models import Answer
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    answer_story("t-story")
    response = submit("t-edit", answer="The trial lasts 14 days [d1].", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r2", "span": "p1"},
    ], claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert response.json()["status"] == "held", response.content
    answer = Answer.objects.get(trace_id="t-edit")
    answer_decide(trace_id="t-edit", user=reviewer, actor=Actor.of_user(reviewer),
                  data=DecisionInput(action="edit", verdict_id=answer.current_verdict_id,
                                     text="The trial lasts 21 days [d2].",
                                     claims=[{"key": "trial_days", "value": 21, "cite": "d2"}]))
    answer.refresh_from_db()
    edited_verdict = answer.current_verdict_id
    assert AuditEvent.objects.get(action="decision.edit").after["verdict"] == edited_verdict

    def checks() -> list[str]:
        page = admin_client.get("/audit/answers/t-edit/").content.decode()
        return re.findall(r'data-against-log="(\w+)"', page)

    # Two verdicts (ingest, edit) and the decision: each beside its event.
    assert checks() == ["same", "same", "same"]
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_verdict SET decision = 'abstain' WHERE id = %s",
                       [edited_verdict])
    assert sorted(checks()) == ["changed", "same", "same"]
