"""Mails link the page to open at the address people open ReviewQueue at (SITE_URL), and each
owner asked about an answer gets a mail of their own.

A mail that said "(/owner/)" named a path no mail reader can open; and a hand-off mailed to
every owner at once showed each of them the others' addresses.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core import mail

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

SITE = "https://reviewqueue.example.com"
# Japanese mail puts the address between full-width brackets.
OPEN, CLOSE = "\N{FULLWIDTH LEFT PARENTHESIS}", "\N{FULLWIDTH RIGHT PARENTHESIS}"


@pytest.fixture
def site(settings: Any) -> str:
    settings.SITE_URL = SITE
    return SITE


def with_mail(user: Any, address: str) -> Any:
    user.email = address
    user.save(update_fields=["email"])
    return user


def test_a_conflict_mail_links_the_owner_page_at_the_site_address(
    site: str, publish: Any, owner: Any, make_user: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_mail(owner, "olivia@example.test")
    make_user("oscar", "owner")
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", facts=[fact("trial_days", 14)])
        publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])

    body = next(m.body for m in mail.outbox if m.to == ["olivia@example.test"])
    assert f"on your owner page ({site}/owner/)" in body


def test_each_owner_asked_gets_a_mail_of_their_own_linking_their_page(
    site: str, hold: Any, login: Any, reviewer: Any, owner: Any, make_user: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_mail(owner, "olivia@example.test")
    oscar = with_mail(make_user("oscar", "owner"), "oscar@example.test")
    from reviewqueue.sources.models import Document

    # Each of the two documents the held answer cites has its own owner.
    Document.objects.filter(key="pricing-eu").update(owner=oscar)
    trace = hold()
    with django_capture_on_commit_callbacks(execute=True):
        response = login(reviewer).post(f"/answers/{trace}/send-to-owner",
                                        {"note": "Which trial length is right?"})
    assert response.status_code == 302

    asked = [m for m in mail.outbox if "asks you about" in m.subject]
    assert sorted(m.to for m in asked) == [["olivia@example.test"], ["oscar@example.test"]]
    assert all(m.cc == [] and m.bcc == [] for m in asked)
    assert all(f"on your owner page ({site}/owner/)" in m.body for m in asked)


def test_the_reply_mail_links_the_answer_page_at_the_site_address(
    site: str, hold: Any, login: Any, reviewer: Any, owner: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_mail(reviewer, "alice@example.test")
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which one?"})
    with django_capture_on_commit_callbacks(execute=True):
        response = login(owner).post(f"/answers/{trace}/owner-reply", {"reply": "The EU one."})

    replies = [m for m in mail.outbox if m.to == ["alice@example.test"]]
    assert replies, (response.status_code, [m.subject for m in mail.outbox])
    assert f"the reply is on its page ({site}/answers/{trace}/)" in replies[-1].body


def test_a_site_address_that_is_no_address_stops_the_start() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(DJANGO_SETTINGS_MODULE="reviewqueue.settings", DEBUG="0",
               SITE_URL="reviewqueue.example.com/owner")
    result = subprocess.run([sys.executable, "-c", "import django; django.setup()"],
                            cwd=Path(__file__).resolve().parents[2], env=env,
                            capture_output=True, text=True, timeout=120)

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SITE_URL must be an http:// or https:// address" in result.stderr


# --- Mail in the recipient's language -----------------------------------------------------------


def choose_language(login: Any, user: Any, language: str) -> None:
    """The person picks `language` from the language menu."""
    response = login(user).post("/language", {"language": language, "next": "/"})
    assert response.status_code == 302


def test_the_language_chosen_from_the_menu_is_the_one_mail_is_written_in(
    site: str, publish: Any, owner: Any, make_user: Any, login: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_mail(owner, "olivia@example.test")
    oscar = with_mail(make_user("oscar", "owner"), "oscar@example.test")
    choose_language(login, oscar, "ja")
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", facts=[fact("trial_days", 14)])
        publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])

    to_oscar = next(m for m in mail.outbox if m.to == ["oscar@example.test"])
    to_olivia = next(m for m in mail.outbox if m.to == ["olivia@example.test"])
    assert to_oscar.subject == "[ReviewQueue] trial_days で矛盾が見つかりました"
    assert "文書どうしの値が食い違っています" in to_oscar.body
    # The section named is the heading of the page in that language.
    assert (f"所有者ページ{OPEN}{site}/owner/{CLOSE}の「あなたの文書の矛盾」で解決してください"
            in to_oscar.body)
    assert to_olivia.subject == "[ReviewQueue] Conflict opened on trial_days"
    assert "under 'Conflicts in your documents'" in to_olivia.body


def test_signing_in_on_a_japanese_page_keeps_japanese_for_mail(
    site: str, hold: Any, login: Any, reviewer: Any, owner: Any, client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_mail(owner, "olivia@example.test")
    owner.set_password("pass-olivia-1234")
    owner.save()
    response = client.post("/accounts/login/", {"username": "olivia",
                                                "password": "pass-olivia-1234"},
                           HTTP_ACCEPT_LANGUAGE="ja")
    assert response.status_code == 302
    trace = hold()
    with django_capture_on_commit_callbacks(execute=True):
        login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "どちらが正しい?"})

    [asked] = [m for m in mail.outbox if m.to == ["olivia@example.test"]]
    assert asked.subject == f"[ReviewQueue] レビュアーから {trace} について質問が届いています"
    assert "メモ: どちらが正しい?" in asked.body
    assert (f"所有者ページ{OPEN}{site}/owner/{CLOSE}の「レビュアーから送られた回答」にあります"
            in asked.body)


def test_an_owner_replying_in_english_writes_to_a_japanese_reviewer_in_japanese(
    site: str, hold: Any, login: Any, reviewer: Any, owner: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with_mail(reviewer, "alice@example.test")
    choose_language(login, reviewer, "ja")
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which one?"})
    with django_capture_on_commit_callbacks(execute=True):
        login(owner).post(f"/answers/{trace}/owner-reply", {"reply": "The EU one."},
                          HTTP_ACCEPT_LANGUAGE="en")

    [reply] = [m for m in mail.outbox if m.to == ["alice@example.test"]]
    assert reply.subject == f"[ReviewQueue] olivia さんが {trace} について返信しました"
    assert f"返信は回答のページ{OPEN}{site}/answers/{trace}/{CLOSE}にあります" in reply.body


@pytest.mark.parametrize("site_url", ["", SITE])
def test_a_deployment_without_a_site_address_is_warned_by_its_check(site_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(DJANGO_SETTINGS_MODULE="reviewqueue.settings", DEBUG="0", HTTPS="1",
               ALLOWED_HOSTS="reviewqueue.example.com", SITE_URL=site_url)
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy"],
                            cwd=Path(__file__).resolve().parents[2], env=env,
                            capture_output=True, text=True, timeout=120)

    said = result.stdout + result.stderr
    assert ("reviewqueue.W001" in said) == (not site_url), said
    if not site_url:
        assert "SITE_URL is not set" in said
