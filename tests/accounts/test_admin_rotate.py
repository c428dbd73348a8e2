"""An admin rotates a leaked token of their own from the admin: the ticked token is revoked and
its successor, with the same holder, name and scopes, is shown once on the page that answers the
action. Another's token is only revoked there: its successor would be shown to the admin, and
with it what its holder may read and do."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from rest_framework.test import APIClient

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import token_issue
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM

pytestmark = pytest.mark.django_db

TOKENS = "/admin/accounts/apitoken/"


def _issue(user: Any, name: str, scopes: list[str]) -> ApiToken:
    raw = token_issue(user=user, actor=SYSTEM, name=name, scopes=scopes)
    return ApiToken.objects.get(digest=ApiToken.digest_of(raw))


def _rotate(client: Client, *tokens: ApiToken) -> Any:
    return client.post(TOKENS, {"action": "rotate_selected",
                                "_selected_action": [t.pk for t in tokens]})


def _shown_token(page: str) -> str:
    [raw] = re.findall(r'<code data-new-token>(rq_[^<]+)</code>', page)
    return raw


def _messages(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_successor_is_shown_once_and_works_and_the_old_token_stops(
    admin_client: Client, admin_user: Any
) -> None:
    old = _issue(admin_user, "dashboard", ["read"])
    response = _rotate(admin_client, old)
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    raw = _shown_token(page)
    assert "shown only on this page" in page
    new = ApiToken.objects.get(digest=ApiToken.digest_of(raw))
    assert (new.user_id, new.name, new.scopes) == (admin_user.pk, "dashboard", ["read"])
    assert new.prefix in page and old.prefix in page
    old.refresh_from_db()
    assert old.revoked_at is not None and new.revoked_at is None

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert api.get("/api/v1/queue").status_code != 401
    api.credentials(HTTP_AUTHORIZATION="Token stale-" + old.prefix)
    assert api.get("/api/v1/queue").status_code == 401

    events = AuditEvent.objects.filter(action__in=["token.revoked", "token.issued"],
                                       actor="user:ada")
    assert sorted((e.action, e.actor, e.object_id) for e in events) == sorted([
        ("token.revoked", "user:ada", str(old.pk)),
        ("token.issued", "user:ada", str(new.pk)),
    ])
    # The page that showed it once is not the place to find it again.
    assert raw not in admin_client.get(f"{TOKENS}{new.pk}/change/").content.decode()


def test_it_rotates_the_ticked_token_not_one_sharing_its_prefix(
    admin_client: Client, admin_user: Any
) -> None:
    ticked = _issue(admin_user, "dashboard", ["read"])
    other = _issue(admin_user, "scripts", ["read"])
    ApiToken.objects.filter(pk=other.pk).update(prefix=ticked.prefix)
    raw = _shown_token(_rotate(admin_client, ticked).content.decode())
    assert ApiToken.objects.get(digest=ApiToken.digest_of(raw)).name == "dashboard"
    assert ApiToken.objects.get(pk=other.pk).revoked_at is None


def test_two_ticked_tokens_are_refused_and_nothing_changes(
    admin_client: Client, admin_user: Any
) -> None:
    first = _issue(admin_user, "dashboard", ["read"])
    second = _issue(admin_user, "scripts", ["read"])
    response = _rotate(admin_client, first, second)
    assert response.status_code == 302
    assert _messages(response) == [
        "Rotate one token at a time: its successor is shown once, on its own page."]
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 2
    assert not AuditEvent.objects.filter(action="token.revoked").exists()


def test_a_revoked_token_is_not_rotated(admin_client: Client, admin_user: Any) -> None:
    token = _issue(admin_user, "dashboard", ["read"])
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=token.created_at)
    response = _rotate(admin_client, token)
    assert response.status_code == 302
    assert _messages(response) == [
        "token: it has been revoked; issue a new one with manage.py issue_token"]
    assert ApiToken.objects.filter(user=admin_user).count() == 1


@pytest.mark.parametrize("holder", ["service", "hr_reviewer"])
def test_anothers_token_is_not_rotated_here_so_its_successor_is_never_shown_to_the_admin(
    admin_client: Client, holder: str, request: Any
) -> None:
    # A service reads every answer, an HR reviewer HR's: the admin would read them too, and
    # act in their name, holding the successor.
    user = request.getfixturevalue(holder)
    token = _issue(user, "publisher", ["read"])
    response = _rotate(admin_client, token)
    assert response.status_code == 302
    assert "rq_" not in response.content.decode()
    assert _messages(response) == [
        "Only your own tokens are rotated here: another's successor would be shown to you, and "
        "with it what its holder may read and do. Revoke it here, and have its successor issued "
        "to its holder with manage.py rotate_token."]
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    assert ApiToken.objects.filter(user=user).count() == 1
    assert not AuditEvent.objects.filter(action__in=["token.revoked", "token.issued"],
                                         actor="user:ada").exists()


def test_a_reviewer_with_staff_access_cannot_rotate(
    client: Client, reviewer: Any, service: Any
) -> None:
    token = _issue(service, "publisher", ["publish"])
    reviewer.is_staff = True
    reviewer.save(update_fields=["is_staff"])
    client.force_login(reviewer)
    response = _rotate(client, token)
    assert response.status_code in (302, 403)
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    assert ApiToken.objects.filter(user=service).count() == 1


def test_the_list_says_which_of_the_two_rows_still_works(
    admin_client: Client, admin_user: Any
) -> None:
    old = _issue(admin_user, "dashboard", ["read"])
    raw = _shown_token(_rotate(admin_client, old).content.decode())
    new = ApiToken.objects.get(digest=ApiToken.digest_of(raw))
    page = admin_client.get(TOKENS).content.decode()
    rows = {prefix: " ".join(re.sub(r"<[^>]+>", " ", row).split())
            for prefix in (old.prefix, new.prefix)
            for row in re.findall(rf"<tr>.*?{prefix}.*?</tr>", page, re.S)}
    assert "dashboard read active" in rows[new.prefix]
    assert "dashboard read revoked 20" in rows[old.prefix]
