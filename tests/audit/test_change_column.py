"""The Change column of the audit list reads as text: one line per field, labelled, with the
value before and after where the event records both. The log and its exports keep the JSON."""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor, audit_record

pytestmark = pytest.mark.django_db

DASH = "\u2013"  # shown for no value


def _cell(client: Any, action: str) -> str:
    """The Change cell of the newest `action` event on the audit list."""
    page = client.get("/audit/", {"action": action}).content.decode()
    found = re.search(r'<td class="change">(.*?)</td>', page, re.S)
    assert found is not None, page
    return found.group(1)


def _read(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", fragment))).strip()


def change_of(client: Any, action: str) -> list[str]:
    """The lines of that cell as a person reads them (a line cut short: its summary)."""
    lines = re.findall(r"<(div|summary)>(.*?)</\1>", _cell(client, action), re.S)
    return [_read(line) for _tag, line in lines]


def whole_values(client: Any, action: str) -> list[str]:
    """The lines cut short, in full, as they open."""
    return [_read(line) for line in re.findall(r"<code>(.*?)</code>", _cell(client, action),
                                                re.S)]


@pytest.fixture
def held(publish: Callable[..., Any], submit: Callable[..., Any]) -> Any:
    """Answer t-1, held: its two sources disagree on the trial it cites one of."""
    from reviewqueue.reviews.models import Answer

    for document, days in (("pricing", 14), ("pricing-eu", 30)):
        publish(document, "r1", facts=[{"key": "trial_days", "value": days, "span": "p1",
                                        "valid_from": "2026-01-01", "valid_until": None}])
    response = submit("t-1", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
    ])
    assert response.json()["status"] == "held", response.content
    return Answer.objects.get(trace_id="t-1")


def _decide(answer: Any, reviewer: Any, action: str, **data: Any) -> Any:
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    return answer_decide(trace_id=answer.trace_id, user=reviewer,
                         actor=Actor.of_user(reviewer),
                         data=DecisionInput(action=action, verdict_id=answer.current_verdict_id,
                                            **data))


def test_an_approval_says_who_moved_the_answer_from_held_to_approved(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    answer = answer_story("t-story", comment="Checked with sales")
    decision = answer.decisions.get()
    lines = change_of(admin_client, "decision.approve")
    assert lines[:2] == ["status: Held for review → Approved", "reviewer: alice"]
    assert f"decision id: {decision.pk}" in lines
    assert "passages expanded: no" in lines
    assert "revisions: pricing r1, pricing-eu r2" in lines
    # No reject reason on an approval: no line saying there is none.
    assert not [line for line in lines if line.startswith("reason:")]
    # The comment's digest is told by its start, and shown whole when its line is opened.
    digest = AuditEvent.objects.get(action="decision.approve").after["comment_sha256"]
    assert f"comment (SHA-256): {digest[:11]}…" in lines
    assert whole_values(admin_client, "decision.approve") == [digest]


def test_a_rejection_names_the_reviewers_reason(
    admin_client: Any, held: Any, reviewer: Any
) -> None:
    _decide(held, reviewer, "reject", reject_reason="incorrect", comment="Trial is 14 days")
    lines = change_of(admin_client, "decision.reject")
    assert lines[:3] == ["status: Held for review → Rejected", "reviewer: alice",
                         "reason: The answer is wrong"]


def test_an_edit_the_gate_still_holds_says_which_verdict_and_version_it_rests_on_now(
    admin_client: Any, held: Any, reviewer: Any
) -> None:
    first_verdict, first_version = held.current_verdict_id, held.current_version_id
    result = _decide(held, reviewer, "edit", text="In the US, the trial lasts 14 days [d1].",
                     claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert change_of(admin_client, "decision.edit") == [
        "status: Held for review",  # unchanged: the edited version still needs a look
        "reviewer: alice",
        "passages expanded: no",
        f"decision id: {result.decision.pk}",
        f"verdict: {first_verdict} → {result.verdict.pk}",
        f"decided on verdict: {first_verdict}",
        "new verdict's decision: Needs review",
        "version: 2",
        f"version id: {first_version} → {result.verdict.version_id}",
        "revisions: pricing r1, pricing-eu r1",
        "new verdict's revisions: pricing r1, pricing-eu r1",
        # what the audit check compares the verdict and the edited version with
        f"verdict (SHA-256): {result.verdict.content_sha256()[:11]}…",
        f"text and claims (SHA-256): {result.verdict.version.content_sha256()[:11]}…",
    ]


def test_a_verdict_names_its_decision_reason_and_cause(admin_client: Any, held: Any) -> None:
    lines = change_of(admin_client, "answer.ingested")
    assert lines == [f"status: {DASH} → Held for review", "decision: Needs review",
                     "reason: Conflicting sources", "cause: Ingested",
                     f"verdict: {DASH} → {held.current_verdict_id}",
                     "revisions: pricing r1, pricing-eu r1",
                     f"verdict (SHA-256): {held.current_verdict.content_sha256()[:11]}…",
                     f"text and claims (SHA-256): "
                     f"{held.current_version.content_sha256()[:11]}…",
                     f"body submitted (SHA-256): {held.body_digest[:11]}…",
                     "audit sample: no"]


def test_a_published_revision_reads_as_the_revision_it_replaced_and_what_it_holds(
    admin_client: Any, publish: Callable[..., Any]
) -> None:
    publish("pricing", "r1")
    publish("pricing", "r2", principals=["group:sales", "group:support"])
    lines = change_of(admin_client, "revision.published")
    digest = AuditEvent.objects.filter(action="revision.published").latest("seq") \
        .after["body_digest"]
    assert lines == ["current revision: r1 → r2",
                     "revision number: 2", "owner: olivia",
                     "readers: group:sales, group:support", "facts: 1", "passages: 1",
                     f"body (SHA-256): {digest[:11]}…"]


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_a_lease_taken_over_says_whose_it_was_and_that_it_had_lapsed(
    admin_client: Any, held: Any, reviewer: Any, make_user: Callable[..., Any]
) -> None:
    from reviewqueue.reviews.models import ReviewItem
    from reviewqueue.reviews.services.leases import lease_claim

    bob = make_user("bob", "reviewer")
    lease_claim(answer=held, user=bob, actor=Actor.of_user(bob))
    lapsed = timezone.now() - dt.timedelta(minutes=5)
    ReviewItem.objects.filter(answer=held).update(lease_until=lapsed)
    until = lease_claim(answer=held, user=reviewer, actor=Actor.of_user(reviewer)).until
    assert until is not None
    tokyo = dt.timezone(dt.timedelta(hours=9))  # the Time column's zone, as the lease's ends
    assert change_of(admin_client, "lease.claimed") == [
        "lease holder: bob → alice",
        f"lease until: {lapsed.astimezone(tokyo):%Y-%m-%d %H:%M:%S} → "
        f"{until.astimezone(tokyo):%Y-%m-%d %H:%M:%S}",
        "lease expired: yes (before)",
    ]


def test_a_revoked_token_names_its_owner_and_prefix(admin_client: Any, reviewer: Any) -> None:
    from reviewqueue.accounts.models import ApiToken
    from reviewqueue.accounts.services import token_issue, tokens_revoke

    token_issue(user=reviewer, actor=Actor("system", "system"), scopes=["read"])
    prefix = ApiToken.objects.get(user=reviewer).prefix
    tokens_revoke(actor=Actor("system", "system"), prefix=prefix)
    assert change_of(admin_client, "token.revoked") == [
        "revoked: no → yes", "user: alice", f"token prefix: {prefix}"]


def test_a_re_evaluation_request_names_its_scope_and_trigger(
    admin_client: Any, admin_user: Any, held: Any,
) -> None:
    from reviewqueue.jobs.services import job_start_for_document

    job_start_for_document(document_key="pricing", trigger="manual",
                           actor=Actor.of_user(admin_user), user=admin_user)
    assert change_of(admin_client, "reevaluation.requested")[:2] == [
        "scope: Answers citing a document or claiming one of its keys",
        "trigger: Re-evaluated on request"]


def _record(action: str, **fields: Any) -> AuditEvent:
    with transaction.atomic():
        return audit_record(actor=Actor("user", "user:alice"), action=action,
                            object_type="answer", object_id="t-x", **fields)


def test_a_field_it_does_not_know_shows_by_its_name_and_nested_values_compactly(
    admin_client: Any,
) -> None:
    _record("x.imported", after={"batch": {"rows": [1, 2], "source": None}, "checked": True,
                                 "pairs": [["a", 1], ["b", 2]]})
    assert change_of(admin_client, "x.imported") == [
        f"batch: rows: [1, 2], source: {DASH}", "checked: yes", "pairs: [a, 1], [b, 2]"]


def test_a_long_value_is_cut_short_and_shown_whole_when_its_line_opens(
    admin_client: Any,
) -> None:
    url = "https://hooks.example.test/" + "a" * 80
    _record("webhook.endpoint_registered", after={"url": url, "active": True})
    lines = change_of(admin_client, "webhook.endpoint_registered")
    assert lines == [f"URL: {url[:47]}…", "active: yes"]
    assert whole_values(admin_client, "webhook.endpoint_registered") == [url]


def test_values_and_names_that_hold_markup_show_as_text(admin_client: Any) -> None:
    script = "<script>alert(1)</script>"
    _record("x.hostile", before={"status": script},
            after={"status": "approved", "<img src=x onerror=alert(1)>": script,
                   "long": script * 10})
    cell = _cell(admin_client, "x.hostile")
    assert "<script" not in cell and "<img" not in cell
    assert change_of(admin_client, "x.hostile") == [
        f"status: {script} → Approved", f"<img src=x onerror=alert(1)>: {script}",
        f"long: {(script * 10)[:47]}…"]
    assert whole_values(admin_client, "x.hostile") == [script * 10]


def test_an_event_that_records_no_change_has_an_empty_cell(admin_client: Any) -> None:
    _record("user.password_changed")
    assert change_of(admin_client, "user.password_changed") == []


def test_the_timeline_shows_each_event_as_the_list_does(
    admin_client: Any, answer_story: Callable[..., Any]
) -> None:
    """An answer's timeline reads its events' changes in the same lines, not as JSON."""
    answer_story("t-story", comment="Checked with sales")
    page = admin_client.get("/audit/answers/t-story/").content.decode()
    approval = page[page.index("decision.approve"):]
    lines = [_read(line) for _tag, line in re.findall(
        r"<(div|summary)>(.*?)</\1>", approval[:approval.index("</li>")], re.S)]
    assert lines[:2] == ["status: Held for review → Approved", "reviewer: alice"]
    assert "{&quot;" not in page and '{"status"' not in page
