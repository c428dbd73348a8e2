"""The Django admin changes accounts only through the audited services.

A review found that an admin could widen a token's scopes, make a reviewer superuser, change
groups (which decide roles and what a user may read) or delete a user, all with no audit event.
Here ada (an admin) tries each of those through the admin's own forms, and uses the actions that
remain: revoke tokens, deactivate users, change a password.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.accounts.services import token_issue, user_create_or_update, user_password_set
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM

pytestmark = pytest.mark.django_db

User = get_user_model()
TOKENS = "/admin/accounts/apitoken/"
USERS = "/admin/auth/user/"
GROUPS = "/admin/auth/group/"


@pytest.fixture
def token(service: Any) -> ApiToken:
    token_issue(user=service, actor=SYSTEM, scopes=["read"])
    return ApiToken.objects.get(user=service)


def events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("seq"))


def run_action(client: Client, base: str, action: str, *ids: int, **extra: Any) -> Any:
    return client.post(base, {"action": action, "_selected_action": list(ids), **extra})


# --- API tokens -------------------------------------------------------------------------------

def test_an_admin_cannot_widen_a_tokens_scopes(admin_client: Client, token: ApiToken) -> None:
    response = admin_client.post(f"{TOKENS}{token.pk}/change/", {
        "user": token.user_id, "name": "", "scopes": '["read", "publish", "review"]',
        "prefix": token.prefix, "digest": token.digest})
    assert response.status_code == 403
    token.refresh_from_db()
    assert token.scopes == ["read"]


def test_an_admin_cannot_set_a_tokens_revoked_time_in_the_form(
    admin_client: Client, token: ApiToken
) -> None:
    page = admin_client.get(f"{TOKENS}{token.pk}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert 'name="revoked_at' not in page.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is None


def test_an_admin_cannot_delete_a_token(admin_client: Client, token: ApiToken) -> None:
    assert admin_client.post(f"{TOKENS}{token.pk}/delete/", {"post": "yes"}).status_code == 403
    run_action(admin_client, TOKENS, "delete_selected", token.pk, post="yes")
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_the_token_admin_has_no_add_form(admin_client: Client, service: Any) -> None:
    assert admin_client.get(f"{TOKENS}add/").status_code == 403
    assert admin_client.post(f"{TOKENS}add/", {"user": service.pk, "scopes": '["publish"]'}
                             ).status_code == 403
    assert not ApiToken.objects.exists()


def test_the_token_list_says_tokens_are_issued_with_the_command(
    admin_client: Client, token: ApiToken
) -> None:
    page = admin_client.get(TOKENS).content.decode()
    assert "manage.py issue_token" in page
    assert "Revoke selected tokens" in page
    assert "delete_selected" not in page


def test_revoking_selected_tokens_is_audited_with_the_admin_as_actor(
    admin_client: Client, token: ApiToken
) -> None:
    response = run_action(admin_client, TOKENS, "revoke_selected", token.pk)
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    [event] = events("token.revoked")
    assert (event.actor, event.object_id) == ("user:ada", str(token.pk))
    assert event.after["prefix"] == token.prefix


def test_revoking_leaves_a_token_that_shares_the_prefix_active(
    admin_client: Client, service: Any
) -> None:
    """Prefixes are short and not unique: the action revokes the ticked token, not every
    token whose prefix happens to match."""
    token_issue(user=service, actor=SYSTEM)
    token_issue(user=service, actor=SYSTEM)
    ticked, other = ApiToken.objects.order_by("pk")
    ApiToken.objects.filter(pk=other.pk).update(prefix=ticked.prefix)
    run_action(admin_client, TOKENS, "revoke_selected", ticked.pk)
    assert ApiToken.objects.get(pk=ticked.pk).revoked_at is not None
    assert ApiToken.objects.get(pk=other.pk).revoked_at is None


def test_revoking_a_revoked_token_again_writes_no_second_event(
    admin_client: Client, token: ApiToken
) -> None:
    run_action(admin_client, TOKENS, "revoke_selected", token.pk)
    first = ApiToken.objects.get(pk=token.pk).revoked_at
    response = run_action(admin_client, TOKENS, "revoke_selected", token.pk)
    assert response.status_code == 302
    assert ApiToken.objects.get(pk=token.pk).revoked_at == first
    assert len(events("token.revoked")) == 1


def test_a_token_can_be_revoked_from_its_own_page(admin_client: Client, token: ApiToken) -> None:
    page = admin_client.get(f"{TOKENS}{token.pk}/change/").content.decode()
    assert "Revoke selected tokens" in page
    response = admin_client.post(f"{TOKENS}{token.pk}/change/", {
        "CHANGE_FORM-action": "revoke_selected", "_selected_action": token.pk})
    assert response.status_code == 302
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    assert [e.actor for e in events("token.revoked")] == ["user:ada"]


# --- Users ------------------------------------------------------------------------------------

def test_an_admin_cannot_make_a_reviewer_superuser_in_the_change_form(
    admin_client: Client, reviewer: Any
) -> None:
    admin_group = Group.objects.get(name="admin")
    response = admin_client.post(f"{USERS}{reviewer.pk}/change/", {
        "username": "alice", "is_active": "on", "is_staff": "on", "is_superuser": "on",
        "groups": [admin_group.pk], "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert response.status_code == 403
    reviewer.refresh_from_db()
    assert (reviewer.is_superuser, reviewer.is_staff) == (False, False)
    assert list(reviewer.groups.values_list("name", flat=True)) == ["reviewer"]


def test_the_user_page_shows_access_read_only_and_where_roles_are_set(
    admin_client: Client, hr_reviewer: Any
) -> None:
    page = admin_client.get(f"{USERS}{hr_reviewer.pk}/change/").content.decode()
    assert 'name="_save"' not in page
    for field in ("is_superuser", "is_staff", "is_active", "groups", "username"):
        assert f'name="{field}"' not in page
    assert "hr" in page  # the groups are shown
    assert "manage.py adduser NAME --role ROLE --group GROUP" in page
    # The stored password hash is not printed; the link to a new password is.
    assert hr_reviewer.password not in page
    assert f"{USERS}{hr_reviewer.pk}/password/" in page


def test_the_user_list_says_where_roles_are_set(admin_client: Client, reviewer: Any) -> None:
    page = admin_client.get(USERS).content.decode()
    assert "manage.py adduser" in page
    assert "Deactivate selected users" in page
    assert "delete_selected" not in page


def test_an_admin_cannot_add_a_user_in_the_admin(admin_client: Client) -> None:
    assert admin_client.get(f"{USERS}add/").status_code == 403
    response = admin_client.post(f"{USERS}add/", {
        "username": "mallory", "usable_password": "true",
        "password1": "a-long-password-1", "password2": "a-long-password-1"})
    assert response.status_code == 403
    assert not User.objects.filter(username="mallory").exists()


def test_an_admin_cannot_delete_a_user(admin_client: Client, reviewer: Any) -> None:
    assert admin_client.post(f"{USERS}{reviewer.pk}/delete/", {"post": "yes"}).status_code == 403
    run_action(admin_client, USERS, "delete_selected", reviewer.pk, post="yes")
    assert User.objects.filter(pk=reviewer.pk).exists()


def test_a_user_keeps_their_tokens_when_the_admin_tries_to_delete_them(
    admin_client: Client, token: ApiToken
) -> None:
    admin_client.post(f"{USERS}{token.user_id}/delete/", {"post": "yes"})
    assert ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).exists()


def test_deactivating_selected_users_goes_through_the_service(
    admin_client: Client, token: ApiToken
) -> None:
    response = run_action(admin_client, USERS, "deactivate_selected", token.user_id)
    assert response.status_code == 302
    assert not User.objects.get(pk=token.user_id).is_active
    [deactivated] = events("user.deactivated")
    assert (deactivated.actor, deactivated.object_id) == ("user:ada", "rag-service")
    # The service also revokes their tokens, and says so in the log.
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    assert [e.actor for e in events("token.revoked")] == ["user:ada"]


def test_a_deactivated_user_is_signed_out(admin_client: Client, reviewer: Any) -> None:
    alice = Client()
    alice.force_login(reviewer)
    assert alice.get("/").status_code == 200
    run_action(admin_client, USERS, "deactivate_selected", reviewer.pk)
    assert alice.get("/").status_code == 302


def test_select_all_does_not_deactivate_the_admin_doing_it(
    admin_client: Client, admin_user: Any, reviewer: Any, owner: Any
) -> None:
    response = run_action(admin_client, USERS, "deactivate_selected", reviewer.pk,
                          select_across="1")
    assert response.status_code == 302
    assert dict(User.objects.values_list("username", "is_active")) == {
        "ada": True, "alice": False, "olivia": False}
    assert admin_client.get(USERS).status_code == 200


def test_deactivating_an_inactive_user_again_writes_no_second_event(
    admin_client: Client, reviewer: Any
) -> None:
    run_action(admin_client, USERS, "deactivate_selected", reviewer.pk)
    run_action(admin_client, USERS, "deactivate_selected", reviewer.pk)
    assert len(events("user.deactivated")) == 1


def test_a_reactivated_user_signs_in_again_but_their_old_tokens_stay_revoked(
    admin_client: Client, reviewer: Any, token_client: Any
) -> None:
    from reviewqueue.accounts.services import token_issue
    from reviewqueue.audit.services import SYSTEM

    secret = token_issue(user=reviewer, actor=SYSTEM)
    run_action(admin_client, USERS, "deactivate_selected", reviewer.pk)
    response = run_action(admin_client, USERS, "reactivate_selected", reviewer.pk)
    assert response.status_code == 302
    assert User.objects.get(pk=reviewer.pk).is_active
    [back] = events("user.reactivated")
    assert (back.actor, back.object_id, back.after) == ("user:ada", "alice", {"active": True})
    alice = Client()
    assert alice.login(username="alice", password="pw-for-tests-only")
    assert alice.get("/").status_code == 200
    old = Client(HTTP_AUTHORIZATION=f"Token {secret}")
    assert old.get("/api/v1/queue").status_code == 401


def test_reactivating_an_active_user_writes_nothing(admin_client: Client, reviewer: Any) -> None:
    run_action(admin_client, USERS, "reactivate_selected", reviewer.pk)
    assert events("user.reactivated") == []


def test_the_command_reactivates_a_user(reviewer: Any) -> None:
    import io

    from django.core.management import call_command

    from reviewqueue.accounts.services import user_deactivate
    from reviewqueue.audit.services import SYSTEM

    user_deactivate(user=reviewer, actor=SYSTEM)
    out = io.StringIO()
    call_command("reactivate_user", "alice", stdout=out)
    assert out.getvalue() == "alice reactivated\n"
    assert User.objects.get(pk=reviewer.pk).is_active
    call_command("reactivate_user", "alice", stdout=out)
    assert out.getvalue().endswith("alice was already active\n")


# --- Passwords --------------------------------------------------------------------------------

def change_password(client: Client, user: Any, password: str, **extra: Any) -> Any:
    return client.post(f"{USERS}{user.pk}/password/",
                       {"password1": password, "password2": password, **extra})


def test_an_admin_changes_a_password_and_it_is_audited(
    admin_client: Client, reviewer: Any
) -> None:
    response = change_password(admin_client, reviewer, "a-new-long-password")
    assert response.status_code == 302
    reviewer.refresh_from_db()
    assert reviewer.check_password("a-new-long-password")
    [event] = events("user.password_changed")
    assert (event.actor, event.object_id) == ("user:ada", "alice")
    assert "a-new-long-password" not in str([event.before, event.after])


def test_a_changed_password_signs_the_user_out_elsewhere(
    admin_client: Client, reviewer: Any
) -> None:
    alice = Client()
    alice.force_login(reviewer)
    change_password(admin_client, reviewer, "a-new-long-password")
    assert alice.get("/").status_code == 302


def test_an_admin_changing_their_own_password_stays_signed_in(
    admin_client: Client, admin_user: Any
) -> None:
    change_password(admin_client, admin_user, "a-new-long-password")
    assert admin_client.get(USERS).status_code == 200


@pytest.mark.parametrize(("password", "said"), [
    ("password123", "This password is too common."),
    ("8675309012", "This password is entirely numeric."),
    ("alice2026", "The password is too similar to the username."),
])
def test_a_password_guessed_from_a_list_or_the_name_is_refused(
    admin_client: Client, reviewer: Any, password: str, said: str
) -> None:
    # Sign-ins are throttled per name, but a list of common passwords tried once on every
    # account from many addresses is not: such a password must never be set.
    response = change_password(admin_client, reviewer, password)
    assert response.status_code == 200
    assert said in response.content.decode()
    reviewer.refresh_from_db()
    assert reviewer.check_password("pw-for-tests-only")


def test_the_password_page_cannot_turn_password_sign_in_off(
    admin_client: Client, reviewer: Any
) -> None:
    page = admin_client.get(f"{USERS}{reviewer.pk}/password/").content.decode()
    assert "unset-password" not in page and "usable_password" not in page
    response = admin_client.post(f"{USERS}{reviewer.pk}/password/",
                                 {"usable_password": "false", "unset-password": "1"})
    assert response.status_code == 200  # the form again, asking for the password
    reviewer.refresh_from_db()
    assert reviewer.check_password("pw-for-tests-only")
    assert events("user.password_changed") == []


def test_a_token_only_account_gets_no_password_from_the_admin(admin_client: Client) -> None:
    """Such an account (adduser without --password) would then sign in on the pages."""
    service = user_create_or_update(username="feed-bot", role=Role.SERVICE, groups=[],
                                    password=None, actor=SYSTEM)
    assert not service.has_usable_password()
    assert admin_client.get(f"{USERS}{service.pk}/password/").status_code == 403
    assert change_password(admin_client, service, "a-new-long-password").status_code == 403
    service.refresh_from_db()
    assert not service.has_usable_password()


def test_mismatched_passwords_change_nothing(admin_client: Client, reviewer: Any) -> None:
    response = admin_client.post(f"{USERS}{reviewer.pk}/password/",
                                 {"password1": "a-new-long-password", "password2": "other-one"})
    assert response.status_code == 200
    assert response.context["form"].errors["password2"][0].startswith("The two password fields")
    reviewer.refresh_from_db()
    assert reviewer.check_password("pw-for-tests-only")


# --- Groups -----------------------------------------------------------------------------------

@pytest.fixture
def hr(hr_reviewer: Any) -> Group:
    return Group.objects.get(name="hr")


def test_an_admin_cannot_rename_a_group(admin_client: Client, hr: Group) -> None:
    response = admin_client.post(f"{GROUPS}{hr.pk}/change/", {"name": "everyone"})
    assert response.status_code == 403
    assert Group.objects.filter(name="hr").exists()


def test_an_admin_cannot_delete_a_group(admin_client: Client, hr: Group) -> None:
    assert admin_client.post(f"{GROUPS}{hr.pk}/delete/", {"post": "yes"}).status_code == 403
    run_action(admin_client, GROUPS, "delete_selected", hr.pk, post="yes")
    assert Group.objects.filter(pk=hr.pk).exists()


def test_an_admin_cannot_add_a_group(admin_client: Client) -> None:
    assert admin_client.post(f"{GROUPS}add/", {"name": "finance"}).status_code == 403
    assert not Group.objects.filter(name="finance").exists()


def test_the_group_page_says_where_groups_are_set(admin_client: Client, hr: Group) -> None:
    page = admin_client.get(f"{GROUPS}{hr.pk}/change/").content.decode()
    assert 'name="_save"' not in page
    assert "manage.py adduser NAME --role ROLE --group GROUP" in page


def test_a_reviewer_cannot_open_the_account_admin(
    reviewer: Any, make_user: Callable[..., Any]
) -> None:
    client = Client()
    client.force_login(reviewer)
    response = client.post(USERS, {"action": "deactivate_selected",
                                   "_selected_action": [reviewer.pk]})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    reviewer.refresh_from_db()
    assert reviewer.is_active


def test_the_password_service_refuses_an_account_without_a_password() -> None:
    """The rule holds for any caller of the service, not only for the admin page."""
    bot = user_create_or_update(username="feed-bot", role=Role.SERVICE, groups=[],
                                password=None, actor=SYSTEM)
    with pytest.raises(ValueError, match="no password to change"):
        user_password_set(user=bot, password="a-new-long-password", actor=SYSTEM)
    bot.refresh_from_db()
    assert not bot.has_usable_password()
    assert events("user.password_changed") == []


def test_an_admin_changing_their_own_password_from_the_header_is_audited(
    admin_client: Client, admin_user: Any
) -> None:
    admin_user.set_password("old-pass-for-tests")
    admin_user.save()
    admin_client.force_login(admin_user)
    response = admin_client.post("/admin/password_change/", {
        "old_password": "old-pass-for-tests", "new_password1": "N3w-pass-for-tests!",
        "new_password2": "N3w-pass-for-tests!"})
    assert response.status_code == 302
    [changed] = events("user.password_changed")
    assert (changed.actor, changed.object_id) == ("user:ada", "ada")
    assert "N3w-pass" not in str(changed.before) + str(changed.after)
    # A refused change records nothing.
    admin_client.post("/admin/password_change/", {
        "old_password": "wrong", "new_password1": "x", "new_password2": "y"})
    assert len(events("user.password_changed")) == 1
