"""The admin speaks the admin's language: Django's own words there are Japanese for a Japanese
browser, and so must be ReviewQueue's refusals, action names and help beside them (the token
and user pages, the dead letters' retry), not English in the middle of a Japanese page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import token_issue
from reviewqueue.audit.models import VerificationRun
from reviewqueue.audit.services import SYSTEM

pytestmark = pytest.mark.django_db

TOKENS = "/admin/accounts/apitoken/"


def _issue(user: Any, name: str) -> ApiToken:
    raw = token_issue(user=user, actor=SYSTEM, name=name, scopes=["read"])
    return ApiToken.objects.get(digest=ApiToken.digest_of(raw))


@pytest.fixture
def japanese_admin(admin_user: Any) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="ja")
    client.force_login(admin_user)
    return client


def test_a_refused_rotation_is_said_in_japanese(japanese_admin: Client, service: Any) -> None:
    first, second = _issue(service, "a"), _issue(service, "b")
    response = japanese_admin.post(TOKENS, {"action": "rotate_selected",
                                            "_selected_action": [first.pk, second.pk]},
                                   follow=True)
    page = response.content.decode()
    assert "操作" in page  # Django's admin is in Japanese...
    assert "Rotate one token at a time" not in page  # ...and so is the refusal


def test_the_dead_letters_retry_action_is_named_in_japanese(japanese_admin: Client) -> None:
    page = japanese_admin.get("/admin/jobs/deadletter/").content.decode()
    assert "操作" in page
    assert "Send the selected tasks again" not in page


def test_the_admin_index_names_reviewqueues_areas_in_japanese(japanese_admin: Client) -> None:
    # Each area's heading on the admin's first page (and in its breadcrumbs) is the app's name.
    page = japanese_admin.get("/admin/").content.decode()
    assert "サイト管理" in page  # Django's own heading is Japanese...
    for english in ("Accounts and tokens", "Answers and reviews", "Audit log and quarantine",
                    "Background jobs"):
        assert english not in page  # ...and so are ReviewQueue's areas beside it
    for japanese in ("アカウントとトークン", "回答とレビュー", "監査ログと隔離",
                     "バックグラウンドジョブ", "情報源"):
        assert japanese in page


def test_an_areas_own_admin_page_is_titled_in_japanese(japanese_admin: Client) -> None:
    page = japanese_admin.get("/admin/audit/").content.decode()
    assert "監査ログと隔離" in page and "Audit log and quarantine" not in page


def test_admin_lists_name_states_and_triggers_in_japanese(japanese_admin: Client) -> None:
    # The filters beside each list offer every choice, rows or not; a row's cell shows the same.
    now = timezone.now()
    VerificationRun.objects.create(started_at=now, finished_at=now, ok=True,
                                   trigger=VerificationRun.Trigger.MANUAL)
    runs = japanese_admin.get("/admin/audit/verificationrun/").content.decode()
    assert "監査ページから依頼" in runs and "Requested on the audit page" not in runs
    assert "夜間ジョブ" in runs and "Nightly job" not in runs
    chunks = japanese_admin.get("/admin/jobs/jobchunk/").content.decode()
    assert "Dead-lettered" not in chunks and ">Pending<" not in chunks
    deliveries = japanese_admin.get("/admin/webhooks/webhookdelivery/").content.decode()
    assert "送信待ち" in deliveries and "Waiting for an attempt" not in deliveries
    assert "Given up" not in deliveries
