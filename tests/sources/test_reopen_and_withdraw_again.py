"""What an owner is told after acting on a conflict or a document that already moved on: a
reopened conflict counts as open from its reopening, and withdrawing a withdrawn document
says that nothing happened."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import Actor
from reviewqueue.jobs.models import Job
from reviewqueue.sources.conflicts import conflict_dismiss
from reviewqueue.sources.models import Conflict

pytestmark = pytest.mark.django_db



def opened_in_inbox(client: Any, conflict: Conflict) -> str:
    page = client.get("/owner/").content.decode()
    found = re.search(
        rf'data-conflict="{conflict.pk}">.*?<span class="muted" data-since>'
        r"((?:re)?opened [^<]*)</span>", page, re.S)
    assert found, page
    return found.group(1)


def test_a_conflict_reopened_today_says_it_reopened_just_now(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    Conflict.objects.filter(pk=two_owners_disagree.pk).update(
        opened_at=timezone.now() - dt.timedelta(days=92))
    conflict_dismiss(conflict_id=two_owners_disagree.pk, reason="both valid",
                     user=owner, actor=Actor.of_user(owner))
    client.force_login(owner)

    response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/reopen")
    assert response.status_code == 302
    assert opened_in_inbox(client, two_owners_disagree) == "reopened just now"


def test_withdrawing_a_document_already_withdrawn_says_nothing_changed(
    client: Any, owner: Any, publish: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    publish("pricing")
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"},
                            follow=True)
    assert "Document withdrawn. Answers citing it are re-evaluated." in first.content.decode()
    jobs = Job.objects.count()

    # The same form again, from a tab opened before the withdrawal.
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"},
                            follow=True)
    page = again.content.decode()
    assert again.redirect_chain == [("/owner/documents/pricing/", 302)]
    assert "This document was already withdrawn; nothing changed." in page
    assert "Answers citing it are re-evaluated" not in page
    assert Job.objects.count() == jobs
    assert AuditEvent.objects.filter(action="document.withdrawn").count() == 1
