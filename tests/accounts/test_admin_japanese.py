"""The admin speaks the admin's language: Django's own words there are Japanese for a Japanese
browser, and so must be ReviewQueue's refusals, action names and help beside them (the token
and user pages, the dead letters' retry), not English in the middle of a Japanese page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import token_issue
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
