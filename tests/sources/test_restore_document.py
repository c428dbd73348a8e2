"""An owner undoes a withdrawal from the document's page: the last revision is current again,
the answers citing it are checked again, and a withdrawn document keeps its title."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Conflict, Document

pytestmark = pytest.mark.django_db



def verdict_of(trace_id: str) -> tuple[str, str]:
    answer = Answer.objects.select_related("current_verdict").get(trace_id=trace_id)
    return answer.current_verdict.decision, answer.current_verdict.trigger


def test_an_owner_restores_a_withdrawn_document_and_its_answers_are_checked_again(
    client: Any, owner: Any, publish: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    publish("pricing", principals=["group:sales"], title="Pricing <and> plans")
    with django_capture_on_commit_callbacks(execute=True):
        assert submit("t-1", asked_by=["group:sales"]).status_code == 201
    assert verdict_of("t-1") == ("candidate", "ingest")
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    assert verdict_of("t-1") == ("abstain", "withdrawal")
    # Its audit event says what changed both ways, as the restoration's does.
    withdrawn = AuditEvent.objects.get(action="document.withdrawn")
    assert (withdrawn.before, withdrawn.after) == (
        {"current_revision": "r1", "withdrawn": False},
        {"current_revision": None, "withdrawn": True})

    # Withdrawn, it is still known by its last title, escaped, in the inbox and on its page.
    inbox = client.get("/owner/").content.decode()
    assert re.search(r'href="/owner/documents/pricing/">Pricing &lt;and&gt; plans</a> '
                     r'<code class="muted small">pricing</code> <span class="badge">withdrawn',
                     inbox), inbox
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "<h1>Pricing &lt;and&gt; plans</h1>" in page
    assert "Restore revision r1" in page and "data-restore>" in page

    with django_capture_on_commit_callbacks(execute=True):
        restored = client.post("/owner/documents/pricing/restore", follow=True)
    assert restored.redirect_chain[0][0].startswith("/owner/progress?documents=pricing&since=")
    assert "Restored revision r1. Answers citing it are re-evaluated." in (
        restored.content.decode())
    document = Document.objects.select_related("current_revision").get(key="pricing")
    assert (document.current_revision.revision, document.withdrawn_at,
            document.allowed_principals) == ("r1", None, ["group:sales"])
    # The same inputs as at ingest, so the verdict of then is current again, and the log
    # says so rather than seem to go back to an older verdict.
    assert verdict_of("t-1") == ("candidate", "ingest")
    again = AuditEvent.objects.filter(action="verdict.created").latest("seq")
    assert again.after["verdict"] < again.before["verdict"]
    assert again.after["earlier_verdict"] is True
    assert "earlier_verdict" not in AuditEvent.objects.filter(
        action="verdict.created").earliest("seq").after
    event = AuditEvent.objects.get(action="document.restored")
    assert (event.document_id, event.before, event.after) == (
        "pricing", {"current_revision": None, "withdrawn": True},
        {"current_revision": "r1", "withdrawn": False})
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "data-restore>" not in page and "Withdraw the document" in page
    # Its history lists the withdrawal and the restore, newest first, with who did them.
    history = page.split("<h2>History</h2>", 1)[1].split("</ul>", 1)[0]
    lines = [" ".join(re.sub(r"<[^>]+>|[0-9:-]{5,}", "", li).split())
             for li in history.split("</li>")[:-1]]
    assert lines == ["Restored on UTC · by olivia", "Withdrawn on UTC · by olivia",
                     "r1 · UTC (the source says it was updated ) · by rag-service"]
    # The same button again, from a tab opened before the restore: nothing happens.
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post("/owner/documents/pricing/restore", follow=True)
    assert again.redirect_chain == [("/owner/documents/pricing/", 302)]
    assert "This document is not withdrawn; nothing changed." in again.content.decode()
    assert AuditEvent.objects.filter(action="document.restored").count() == 1


def test_restoring_a_document_opens_the_conflict_its_withdrawal_closed(
    client: Any, owner: Any, two_owners_disagree: Conflict,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    two_owners_disagree.refresh_from_db()
    assert two_owners_disagree.status == Conflict.Status.CLOSED
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/pricing/restore")
    two_owners_disagree.refresh_from_db()
    assert two_owners_disagree.status == Conflict.Status.OPEN
    assert "Conflict on trial_days" in client.get("/owner/documents/pricing/").content.decode()


def test_only_who_manages_the_document_may_restore_it(
    client: Any, owner: Any, make_user: Any, publish: Any, reviewer: Any,
) -> None:
    publish("pricing")
    client.force_login(owner)
    client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    client.force_login(make_user("oscar", "owner"))
    assert client.post("/owner/documents/pricing/restore").status_code == 404
    client.force_login(reviewer)
    assert client.post("/owner/documents/pricing/restore").status_code == 403
    assert Document.objects.get(key="pricing").withdrawn_at is not None
    assert not AuditEvent.objects.filter(action="document.restored").exists()


def test_titles_and_history_cost_the_same_queries_however_many_withdrawals(
    client: Any, owner: Any, publish: Any,
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    client.force_login(owner)
    publish("pricing")
    publish("faq", title="FAQ")
    publish("terms", title="Terms")
    client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    page, inbox = queries("/owner/documents/pricing/"), queries("/owner/")
    for _ in range(3):
        client.post("/owner/documents/pricing/restore")
        client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    client.post("/owner/documents/terms/withdraw", {"confirm": "terms"})
    assert queries("/owner/documents/pricing/") == page
    assert queries("/owner/") == inbox
    history = client.get("/owner/documents/pricing/").content.decode().split(
        "<h2>History</h2>", 1)[1]
    assert history.count("data-withdrawn-at") == 4 and history.count("data-restored-at") == 3


def test_a_publish_says_it_ended_a_withdrawal_and_says_nothing_of_one_otherwise(
    client: Any, owner: Any, publish: Any, admin_client: Any,
) -> None:
    publish("pricing")
    publish("pricing", revision="r2")
    second = AuditEvent.objects.filter(action="revision.published").latest("seq")
    assert "withdrawn" not in second.before and "withdrawn" not in second.after
    client.force_login(owner)
    client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    publish("pricing", revision="r3")
    third = AuditEvent.objects.filter(action="revision.published").latest("seq")
    assert (third.before["withdrawn"], third.after["withdrawn"]) == (True, False)

    page = admin_client.get("/audit/?action=revision.published").content.decode()
    changes = [re.sub(r"<[^>]+>", " ", cell) for cell in
               re.findall(r'<td class="change">(.*?)</td>', page, re.S)]
    assert len(changes) == 3
    assert [" ".join(c.split()).count("withdrawn") for c in changes] == [1, 0, 0]
    assert "withdrawn: yes → no" in " ".join(changes[0].split())
