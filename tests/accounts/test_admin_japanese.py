"""The admin speaks the admin's language: Django's own words there are Japanese for a Japanese
browser, and so must be ReviewQueue's refusals, action names and help beside them (the token
and user pages, the dead letters' retry), the names of its models and the headers of their
columns, not English in the middle of a Japanese page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import token_issue
from reviewqueue.audit.models import VerificationRun
from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import Job
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

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


def test_a_rotation_of_anothers_token_is_refused_in_japanese(japanese_admin: Client,
                                                            service: Any) -> None:
    token = _issue(service, "publisher")
    page = japanese_admin.post(TOKENS, {"action": "rotate_selected",
                                        "_selected_action": [token.pk]},
                               follow=True).content.decode()
    assert "差し替えられるのは自分のトークンだけです" in page
    assert "Only your own tokens" not in page


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


def test_the_admin_index_names_reviewqueues_models_in_japanese(japanese_admin: Client) -> None:
    # Each model's entry on the first page is its plural name, which Django only capitalises.
    page = japanese_admin.get("/admin/").content.decode()
    for english in ("Api tokens", "Audit events", "Quarantined payloads", "Verification runs",
                    "Job chunks", "Dead letters", ">Answers<", "Review items", ">Verdicts<",
                    ">Documents<", ">Revisions<", "Webhook deliveries", "Webhook endpoints"):
        assert english not in page
    for japanese in ("API トークン", "監査イベント", "隔離されたリクエスト本文", "デッドレター",
                     "ジョブのチャンク", "レビューキューの項目", "判定結果", "リビジョン",
                     "Webhook の配信", "Webhook エンドポイント"):
        assert japanese in page


def _columns(page: str) -> set[str]:
    """The texts of a list's column headers (each a link that sorts by it, or plain text)."""
    return {text.strip() for text in re.findall(
        r'<th scope="col"[^>]*>.*?<div class="text">(?:<a [^>]*>|<span>)?([^<]*)<', page,
        re.DOTALL)}


def test_admin_lists_head_their_columns_in_japanese(
    japanese_admin: Client, service: Any, publish: Any, submit: Any
) -> None:
    publish()
    assert submit("t-1").status_code == 201
    _issue(service, "ci")
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.com/rq", secret="s" * 32)
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event_type="answer.status_changed", trace_id="t-1", payload={},
        next_attempt_at=timezone.now())
    WebhookAttempt.objects.create(delivery=delivery, number=1, started_at=timezone.now(),
                                  duration_ms=120, status_code=502, error="Bad gateway")

    answers = _columns(japanese_admin.get("/admin/reviews/answer/").content.decode())
    assert {"トレース ID", "状態", "インデックスリリース", "状態の変更日時"} <= answers
    assert not {"Trace id", "Status", "Index release", "Status changed at"} & answers

    tokens = _columns(japanese_admin.get(TOKENS).content.decode())
    assert {"接頭辞", "ユーザー", "名前", "作成日時", "最終使用日時"} <= tokens
    assert not {"Prefix", "User", "Name", "Created at", "Last used at"} & tokens

    deliveries_page = japanese_admin.get("/admin/webhooks/webhookdelivery/").content.decode()
    deliveries = _columns(deliveries_page)
    assert {"作成日時", "エンドポイント", "イベントの種類", "トレース ID", "試行回数",
            "最後のステータスコード", "最後のエラー", "配信日時"} <= deliveries
    assert not {"Event type", "Trace id", "Attempts", "Last status code", "Delivered at"} & (
        deliveries)
    assert "Webhook の配信" in deliveries_page and "webhook deliveries" not in deliveries_page

    # One delivery's own page: its fields and the table of its attempts.
    page = japanese_admin.get(f"/admin/webhooks/webhookdelivery/{delivery.pk}/change/")
    text = page.content.decode()
    assert "イベントの種類" in text and "所要時間" in text and "試行番号" in text
    assert "Event type" not in text and "Duration ms" not in text


def test_a_change_page_explains_its_fields_in_japanese(
    japanese_admin: Client, service: Any
) -> None:
    # The help under a field is the model's help text: Japanese beside the Japanese label.
    token = _issue(service, "ci")
    page = japanese_admin.get(f"{TOKENS}{token.pk}/change/").content.decode()
    assert "接頭辞" in page  # the field's label...
    assert "トークンを見分けるための先頭の数文字" in page  # ...and its help
    assert "First characters, for recognising a token" not in page


def test_a_job_page_explains_its_counts_in_japanese(japanese_admin: Client) -> None:
    job = Job.objects.create(scope=Job.Scope.VALIDITY, trigger="validity", actor="system",
                             actor_type="system")
    page = japanese_admin.get(f"/admin/jobs/job/{job.pk}/change/").content.decode()
    assert "再評価できなかった回答の数" in page and "新しい判定結果が付いた回答の数" in page
    assert "Answers that could not be" not in page and "Answers re-evaluated" not in page


def test_the_rotated_token_page_is_in_japanese(japanese_admin: Client, admin_user: Any) -> None:
    old = _issue(admin_user, "publisher")
    page = japanese_admin.post(TOKENS, {"action": "rotate_selected",
                                        "_selected_action": [old.pk]}).content.decode()
    assert f"<strong>ada</strong> のトークン <code>{old.prefix}…</code>" in page
    assert "publisher" in page and "を失効させました" in page
    assert "表示されるのはこのページだけです" in page and "トークンの一覧に戻る" in page
    for english in ("is revoked", "shown only on this page", "Back to the tokens",
                    "<dt>Token</dt>", "<dt>Scopes</dt>"):
        assert english not in page


def test_the_password_page_is_in_japanese(japanese_admin: Client, reviewer: Any) -> None:
    page = japanese_admin.get(f"/admin/auth/user/{reviewer.pk}/password/").content.decode()
    assert "<strong>alice</strong> の新しいパスワードを入力してください" in page
    assert "Enter a new password" not in page and "recorded in the audit log" not in page
