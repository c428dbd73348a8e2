from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from reviewqueue.accounts.models import ApiToken
from reviewqueue.audit.models import AuditEvent
from tests.conftest import revision_body

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def test_adduser_gives_the_role_and_groups_as_principals(db: Any) -> None:
    from django.contrib.auth import get_user_model

    from reviewqueue.accounts.principals import user_principals

    call_command("adduser", "hana", "--role", "reviewer", "--group", "hr", stdout=StringIO())
    user = get_user_model().objects.get(username="hana")
    assert user_principals(user) == {"user:hana", "group:reviewer", "group:hr"}
    assert AuditEvent.objects.filter(action="user.created", object_id="hana").exists()


@pytest.mark.parametrize("group", ["admin", "service", "owner"])
def test_adduser_refuses_an_extra_group_named_after_a_role(db: Any, group: str) -> None:
    from django.contrib.auth import get_user_model

    from reviewqueue.accounts.roles import user_roles

    call_command("adduser", "mallory", "--role", "reviewer", stdout=StringIO())
    with pytest.raises(CommandError, match=f"--group: {group} is a role, not a group"):
        call_command("adduser", "mallory", "--role", "reviewer", "--group", "hr",
                     "--group", group, stdout=StringIO())
    user = get_user_model().objects.get(username="mallory")
    assert user_roles(user) == {"reviewer"}
    assert sorted(user.groups.values_list("name", flat=True)) == ["reviewer"]


def test_issue_token_prints_a_token_that_is_stored_only_hashed(service: Any) -> None:
    out = StringIO()
    call_command("issue_token", "rag-service", stdout=out)
    raw = out.getvalue().strip()
    token = ApiToken.objects.get()
    assert raw not in (token.digest, token.prefix)
    assert token.digest == ApiToken.digest_of(raw)
    assert set(token.scopes) == {"publish", "submit", "read"}
    assert raw not in str(list(AuditEvent.objects.values_list("after", flat=True)))


def test_issue_token_refuses_a_label_too_long_and_issues_nothing(service: Any) -> None:
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("issue_token", "rag-service", "--label", "l" * 300, stdout=out)
    assert str(raised.value) == ("--label: Ensure this value has at most 100 characters "
                                 "(it has 300).")
    assert out.getvalue() == "" and not ApiToken.objects.exists()


def test_issue_token_narrows_the_role_s_scopes_and_never_widens_them(service: Any,
                                                                     owner: Any) -> None:
    out = StringIO()
    call_command("issue_token", "rag-service", "--scope", "publish", stdout=out)
    assert ApiToken.objects.get().scopes == ["publish"]
    with pytest.raises(CommandError, match="scope: review is not given by rag-service's role; "
                                           "it may have publish, read, submit"):
        call_command("issue_token", "rag-service", "--scope", "read", "--scope", "review",
                     stdout=StringIO())
    with pytest.raises(CommandError, match="scope: publish is not given by olivia's role"):
        call_command("issue_token", "olivia", "--scope", "publish", stdout=StringIO())
    assert ApiToken.objects.count() == 1


@pytest.mark.parametrize("header", ["{key}", "Bearer {key}"])
def test_a_key_sent_without_the_token_word_is_told_how_to_send_it(
    service: Any, header: str
) -> None:
    from reviewqueue.accounts.services import token_issue
    from reviewqueue.audit.services import SYSTEM

    raw = token_issue(user=service, actor=SYSTEM)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header.format(key=raw))
    response = client.get("/api/v1/answers/none")
    assert response.status_code == 401
    assert "Send the key as 'Authorization: Token <key>'" in response.json()["detail"]


def test_a_revoked_token_stops_working(service: Any, owner: Any) -> None:
    out = StringIO()
    call_command("issue_token", "rag-service", stdout=out)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {out.getvalue().strip()}")
    url = "/api/v1/documents/d/revisions/r1"
    assert api.put(url, revision_body(), format="json").status_code == 201
    call_command("revoke_token", "--user", "rag-service", stdout=StringIO())
    assert api.put(url, revision_body(), format="json").status_code == 401


@pytest.mark.parametrize("option", ["--prefix", "--user"])
def test_revoking_with_an_empty_name_says_which_option_is_empty(service: Any, option: str,
                                                                token_client: Any) -> None:
    api = token_client(service)
    with pytest.raises(CommandError, match=f"{option} is empty"):
        call_command("revoke_token", option, "", stdout=StringIO())  # an unset shell variable
    assert api.get("/api/v1/answers/nope").status_code == 404  # nothing was revoked


def test_rotating_keeps_the_scopes_and_retires_the_old_token(
    service: Any, token_client: Any
) -> None:
    old = token_client(service, scopes=["read"])
    out = StringIO()
    call_command("rotate_token", "rag-service", stdout=out)
    new = APIClient()
    new.credentials(HTTP_AUTHORIZATION=f"Token {out.getvalue().strip()}")
    assert old.get("/api/v1/answers/nope").status_code == 401
    assert new.get("/api/v1/answers/nope").status_code == 404
    assert ApiToken.objects.filter(revoked_at__isnull=True).get().scopes == ["read"]


def test_deactivating_a_user_ends_their_session(client: Any, reviewer: Any) -> None:
    client.force_login(reviewer)
    assert client.get("/").status_code == 200
    call_command("deactivate_user", "alice", stdout=StringIO())
    response = client.get("/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_sign_in_is_throttled_after_repeated_failures(
    client: Any, reviewer: Any, settings: Any
) -> None:
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
        assert response.status_code == 200
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": "pw-for-tests-only"}
    )
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()


def test_a_token_over_its_rate_limit_gets_429(service_api: Any, settings: Any) -> None:
    settings.API_RATE_LIMIT = "3/min"
    codes = [service_api.get("/api/v1/answers/none").status_code for _ in range(5)]
    assert codes[:3] == [404, 404, 404]
    assert codes[3:] == [429, 429]


def test_check_deploy_passes_with_production_settings() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env.update(
        DEBUG="0",
        HTTPS="1",
        SECRET_KEY="kq8$Vf93j#K2!aP0qzv7LmN4wR6tY1uI3oE5sD8gH0jKlZxCvBnMpQ",
        ALLOWED_HOSTS="reviewqueue.example",
        DATABASE_URL=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        EMAIL_HOST="smtp.reviewqueue.example",
        SITE_URL="https://reviewqueue.example",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


# Every cookie the product sets, as a browser served over HTTPS gets it: the language menu's
# cookie is read by the server alone, like the session's.
_COOKIES_OVER_HTTPS = """
import django
django.setup()
from django.test import Client
client = Client()
client.get("/accounts/login/", secure=True)
client.post("/language", {"language": "ja", "next": "/accounts/login/"}, secure=True)
for name, cookie in sorted(client.cookies.items()):
    print(name, cookie["secure"] is True, cookie["httponly"] is True, cookie["samesite"])
"""


def test_every_cookie_served_over_https_is_secure_and_same_site() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(DJANGO_SETTINGS_MODULE="reviewqueue.settings", DEBUG="0", HTTPS="1")
    result = subprocess.run([sys.executable, "-c", _COOKIES_OVER_HTTPS], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["csrftoken True False Lax",
                                          "django_language True True Lax"], result.stdout


def test_pages_carry_a_content_security_policy_without_inline_script(client: Any) -> None:
    policy = client.get("/accounts/login/")["Content-Security-Policy"]
    script = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "'self'" in script
    assert "unsafe-inline" not in script


def _directive(response: Any, name: str) -> str:
    policy = response["Content-Security-Policy"]
    return next(d.strip() for d in policy.split(";") if d.strip().startswith(name + " "))


@pytest.mark.parametrize("url", ["/accounts/login/", "/", "/admin/"])
def test_pages_allow_no_inline_style(admin_client: Any, url: str) -> None:
    # No page of ours has one: an inline style allowed would let injected markup restyle a
    # page, or read its attributes out through CSS selectors.
    assert _directive(admin_client.get(url), "style-src") == "style-src 'self'"


def test_the_api_docs_alone_keep_their_inline_style(admin_client: Any) -> None:
    response = admin_client.get("/api/docs/")
    assert response.status_code == 200
    # drf-spectacular's Swagger UI page sets its layout in a <style> element.
    assert _directive(response, "style-src") == "style-src 'self' 'unsafe-inline'"
    assert _directive(response, "script-src") == "script-src 'self'"


@pytest.mark.parametrize("command", ["issue_token", "rotate_token"])
def test_no_token_is_made_for_a_deactivated_user(service: Any, command: str,
                                                 token_client: Any) -> None:
    token_client(service)  # rotate_token needs one to rotate
    call_command("deactivate_user", "rag-service", stdout=StringIO())
    tokens = ApiToken.objects.count()
    out = StringIO()
    with pytest.raises(CommandError, match="'rag-service' is deactivated: "
                                           "reactivate_user rag-service first"):
        call_command(command, "rag-service", stdout=out)
    assert out.getvalue() == "" and ApiToken.objects.count() == tokens


def test_adduser_says_whether_it_created_or_updated_and_what_it_took_away(db: Any) -> None:
    """Run on a name already taken, it updates that user: it says so, names the groups the
    user leaves, and refuses a password the validators refuse, changing nothing."""
    from django.contrib.auth import get_user_model

    def adduser(*args: str) -> str:
        out = StringIO()
        call_command("adduser", *args, stdout=out)
        return out.getvalue().strip()

    assert adduser("hana", "--role", "reviewer", "--group", "hr") == "hana created: hr, reviewer"
    assert adduser("hana", "--role", "reviewer") == "hana updated: reviewer; no longer in hr"
    with pytest.raises(CommandError, match="--password: This password is too short"):
        adduser("hana", "--role", "reviewer", "--password", "x")
    with pytest.raises(CommandError, match="--password: This password is too common"):
        adduser("hana", "--role", "reviewer", "--password", "password123")
    assert not get_user_model().objects.get(username="hana").has_usable_password()
    assert (adduser("hana", "--role", "reviewer", "--password", "long-enough-password")
            == "hana updated: reviewer; password changed")


def test_adduser_gives_an_existing_owner_the_email_given(make_user: Any) -> None:
    """An owner made without an address gets no conflict or hand-off mail; the admin's user
    page is read-only, so this is the way to give them one."""
    olivia = make_user("olivia", "owner")
    assert olivia.email == ""
    out = StringIO()
    call_command("adduser", "olivia", "--role", "owner", "--email", "olivia@example.com",
                 stdout=out)
    assert out.getvalue().strip() == "olivia updated: owner; email now olivia@example.com"
    olivia.refresh_from_db()
    assert olivia.email == "olivia@example.com"


def test_adduser_leaves_an_existing_users_email_alone_without_email(db: Any) -> None:
    from django.contrib.auth import get_user_model

    call_command("adduser", "olivia", "--role", "owner", "--email", "olivia@example.com",
                 stdout=StringIO())
    out = StringIO()
    call_command("adduser", "olivia", "--role", "owner", stdout=out)
    assert out.getvalue().strip() == "olivia updated: owner"
    assert get_user_model().objects.get(username="olivia").email == "olivia@example.com"


@pytest.mark.parametrize(("name", "said"), [
    ("", "This field cannot be blank."),
    ("bob smith/x", "Enter a valid username. This value may contain only letters, numbers, and "
                    "@/./+/-/_ characters."),
    ("a" * 200, "Ensure this value has at most 150 characters (it has 200)."),
])
def test_adduser_refuses_a_name_no_user_can_have_and_creates_nothing(
    db: Any, name: str, said: str
) -> None:
    from django.contrib.auth import get_user_model

    with pytest.raises(CommandError) as raised:
        call_command("adduser", name, "--role", "reviewer", stdout=StringIO())
    assert str(raised.value) == f"name: {said}"
    assert not get_user_model().objects.exists()
    assert not AuditEvent.objects.filter(object_type="user").exists()


def test_adduser_still_updates_an_account_whose_name_the_rules_now_refuse(db: Any) -> None:
    """The name rules are for new accounts: one made before them is still managed."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create(username="bob smith")
    out = StringIO()
    call_command("adduser", "bob smith", "--role", "reviewer", stdout=out)
    assert out.getvalue().strip() == "bob smith updated: reviewer"


@pytest.mark.parametrize(("group", "said"), [
    ("", "'': This field cannot be blank."),
    ("g" * 200, f"'{'g' * 200}': Ensure this value has at most 150 characters (it has 200)."),
])
def test_adduser_refuses_a_group_no_group_can_be_and_creates_nothing(
    db: Any, group: str, said: str
) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    with pytest.raises(CommandError) as raised:
        call_command("adduser", "rita", "--role", "reviewer", "--group", "hr", "--group", group,
                     stdout=StringIO())
    assert str(raised.value) == f"--group: {said}"
    assert not get_user_model().objects.exists()
    assert not Group.objects.filter(name__in=["hr", group]).exists()


@pytest.mark.parametrize(("email", "said"), [
    ("notanemail", "Enter a valid email address."),
    ("e" * 300 + "@x.com", "Ensure this value has at most 254 characters (it has 306)."),
])
def test_adduser_refuses_an_email_that_is_no_address_and_keeps_the_one_there(
    db: Any, email: str, said: str
) -> None:
    from django.contrib.auth import get_user_model

    call_command("adduser", "olivia", "--role", "owner", "--email", "olivia@example.com",
                 stdout=StringIO())
    with pytest.raises(CommandError) as raised:
        call_command("adduser", "olivia", "--role", "owner", "--email", email,
                     stdout=StringIO())
    assert str(raised.value) == f"--email: {said}"
    assert get_user_model().objects.get(username="olivia").email == "olivia@example.com"


def test_adduser_records_an_email_change_without_the_address(make_user: Any) -> None:
    make_user("olivia", "owner")
    for address in ("olivia@example.com", "olivia@example.com", "o.li@example.com"):
        call_command("adduser", "olivia", "--role", "owner", "--email", address,
                     stdout=StringIO())
    changes = AuditEvent.objects.filter(action="user.email_changed", object_id="olivia")
    # The same address given again changes nothing and records nothing.
    assert [(e.before, e.after) for e in changes.order_by("seq")] == [
        ({"has_email": False}, {"has_email": True}), ({"has_email": True}, {"has_email": True})]
